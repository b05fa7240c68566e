"""The HTML parser: readable text, dropped chrome, heading hierarchy, element paths."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tree_checks import assert_valid_tree, walk

from fissure.errors import InputError
from fissure.parse import html
from fissure.types import Document

SAMPLE = Path(__file__).resolve().parents[1] / "corpus" / "html" / "guide.html"


def assert_tree(doc: Document) -> None:
    """A valid tree in which every block has its element path."""
    assert_valid_tree(doc)
    for block in walk(doc.blocks):
        assert block.metadata["path"].startswith("html>"), block


@pytest.fixture(scope="module")
def guide() -> Document:
    doc = html.parse(SAMPLE.read_text(encoding="utf-8"), source=str(SAMPLE))
    assert_tree(doc)
    return doc


def test_chrome_is_dropped(guide: Document) -> None:
    for dropped in (
        "analytics",
        "font-family",
        "Home",
        "Shop",
        "Subscribe",
        "Related",
        "©",
        "Enable JavaScript",
        "Brewing guide",
    ):
        assert dropped not in guide.text, dropped
    assert guide.metadata["title"] == "Brewing guide"


def test_heading_hierarchy(guide: Document) -> None:
    (top,) = guide.blocks
    assert (top.kind, top.title, top.level) == ("section", "Brewing coffee at home", 1)
    subsections = [c for c in top.children if c.kind == "section"]
    assert [s.title for s in subsections] == ["Choosing beans", "Brewing"]
    assert [c.title for c in subsections[0].children if c.kind == "section"] == ["Storage"]
    assert subsections[0].children[0].kind == "heading"
    assert guide.text[subsections[0].start : subsections[0].end].startswith("Choosing beans\n\n")
    assert "Storage" in guide.text[subsections[0].start : subsections[0].end]
    assert "Heat water" not in guide.text[subsections[0].start : subsections[0].end]


def test_paragraphs_lists_tables_and_code(guide: Document) -> None:
    blocks = list(walk(guide.blocks))
    paragraphs = [guide.text[b.start : b.end] for b in blocks if b.kind == "paragraph"]
    assert paragraphs[0].startswith("Good coffee needs fresh beans, clean water")
    assert "\n" not in paragraphs[0]  # source line breaks are whitespace
    assert (
        paragraphs[1]
        == "Buy whole beans roasted within the last month.\nGrind just before brewing."
    )
    rows = [guide.text[b.start : b.end] for b in blocks if b.kind == "row"]
    assert rows == [
        "Method | Grind | Time",
        "French press | coarse | 4 min",
        "Pour-over | medium | 3 min",
        "Espresso | fine | 25 s",
    ]
    (table,) = [b for b in blocks if b.kind == "table"]
    assert table.title == "Grind size by method"
    assert table.metadata["path"] == "html>body>main>article>table"
    caption, *table_rows = table.children
    assert (caption.kind, guide.text[caption.start : caption.end]) == (
        "caption",
        "Grind size by method",
    )
    assert [c.metadata["path"] for c in table_rows][:2] == [
        "html>body>main>article>table>thead>tr",
        "html>body>main>article>table>tbody>tr",
    ]
    assert [bool(c.metadata.get("header")) for c in table_rows] == [True, False, False, False]
    items = [guide.text[b.start : b.end] for b in blocks if b.kind == "item"]
    assert items[0] == "- Light roasts taste bright and fruity."
    assert items[1].startswith("- Dark roasts taste bitter and smoky.\n  - Espresso")
    assert "1. Heat water to 94 °C." in items
    (code,) = [b for b in blocks if b.kind == "code"]
    assert guide.text[code.start : code.end] == (
        "def ratio(coffee_g, water_ml):\n    return water_ml / coffee_g"
    )
    assert code.metadata["language"] == "python"


def test_nested_list_is_a_child_of_its_item(guide: Document) -> None:
    lists = [b for b in walk(guide.blocks) if b.kind == "list"]
    outer = lists[0]
    assert [c.kind for c in outer.children] == ["item", "item"]
    nested = outer.children[1].children
    assert [b.kind for b in nested] == ["list"]
    assert nested[0].metadata["path"] == "html>body>main>article>ul>li>ul"


def test_headings_outside_sections_and_loose_text() -> None:
    doc = html.parse(
        "<body>Intro text <b>bold</b><div><h2>Two</h2>After two<h1>One</h1><p>p</p></div></body>",
        source="x",
    )
    assert_tree(doc)
    assert doc.text == "Intro text bold\n\nTwo\n\nAfter two\n\nOne\n\np"
    assert [(b.kind, b.title) for b in doc.blocks] == [
        ("paragraph", None),
        ("section", "Two"),
        ("section", "One"),
    ]


def test_scripts_inside_paragraphs_and_empty_input() -> None:
    doc = html.parse("<p>keep<script>drop()</script> this</p>", source="x")
    assert doc.text == "keep this"
    assert html.parse("", source="x").text == ""
    assert html.parse("<html><body><script>x</script></body></html>", source="x").blocks == ()


@pytest.mark.parametrize(
    "page",
    [
        "<div>" * 10_000 + "<h2>Deep</h2><p>deep text</p>" + "</div>" * 10_000,
        "<span>" * 10_000 + "inline" + "</span>" * 10_000,
        "<blockquote>" * 10_000 + "quoted",
        "<table><tr><td>" * 2_000 + "cell",
        "<ul><li>item" * 2_000,
    ],
    ids=["divs", "spans", "blockquotes", "tables", "lists"],
)
def test_deep_nesting_does_not_crash(page: str) -> None:
    started = time.perf_counter()
    doc = html.parse(page, source="deep.html")
    assert_tree(doc)
    assert doc.text
    depth, blocks = 0, doc.blocks
    while blocks:
        depth, blocks = depth + 1, blocks[-1].children
    assert depth <= 64  # consumers may recurse over the tree
    assert time.perf_counter() - started < 10


def test_bytes_are_refused_with_a_fix() -> None:
    with pytest.raises(InputError, match="decode it first"):
        html.parse(b"<p>x</p>", source="x")  # type: ignore[arg-type]
