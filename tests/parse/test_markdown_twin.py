"""The compiled walk (``fissure.parse._mdwalk``) gives the Python walk's Blocks, exactly.

``markdown_events`` walks pulldown-cmark's events with the compiled Walker and TreeBuilder
when they are built; here the same texts go through both, and every field of every Block
must be equal, the type of ``level`` included (the Python builder stores the
``MarkdownLevel`` members themselves). The texts: every Markdown file of the repository,
the Node.js API docs where the machine has them, the edge cases and generated documents of
``test_markdown_events``, at offset 0 and shifted.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.parse.test_markdown_events import _markdown_files, documents

from fissure.parse import markdown_events
from fissure.parse.text import line_starts
from fissure.types import Block

pytestmark = pytest.mark.skipif(
    markdown_events._walk is None or not markdown_events.available(),
    reason="the compiled walk is not built, or pyromark is off",
)


def _rows(blocks: tuple[Block, ...] | None, depth: int = 0) -> list[tuple[object, ...]] | None:
    if blocks is None:
        return None
    rows: list[tuple[object, ...]] = []
    for b in blocks:
        meta = sorted(b.metadata.items())
        rows.append((depth, b.kind, b.start, b.end, b.level, type(b.level), b.title, meta))
        rows.extend(_rows(b.children, depth + 1) or [])
    return rows


def assert_twins(text: str, offset: int = 0) -> None:
    compiled = _rows(markdown_events.markdown_blocks(text, offset))
    walk, markdown_events._walk = markdown_events._walk, None
    try:
        python = _rows(markdown_events.markdown_blocks(text, offset))
    finally:
        markdown_events._walk = walk
    assert compiled == python


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: p.name)
def test_real_files(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    assert_twins(text)
    assert_twins(text, 11)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "---\na: 1\n---\n# h\n\n- x\n- y\n",  # front matter: the walk starts past it
        "# a\x00b\n\nx\x00y\n\n- \x00\n```a\x00b\nx\n```\n",
        "a\rb\r\r# h\r- x\r",
        "# é\n\n|é|b|\n|-|-|\n|ü|x|\n\n**Table 1**\n\n| a |\n|---|\n| 1 |\n",
        "# `a` <b>x</b> [l](u) ![i *j*](p) &copy; \\* [r]\n\n[r]: /x\n",
        "# " + "long words " * 60 + "\n",
        "| a | b |\na|b\n|---|---|\n",  # handed to markdown-it: None from both
        "> - " * 12 + "x\n",
        "- a\n\n  - b\n\n    ```\n    x\n    ```\n[d]: /u\n> q\n",
        "Title\n===\n\n***\n\n    code\n\n<div>\nx\n</div>\n",
    ],
)
def test_edge_cases(text: str) -> None:
    assert_twins(text)
    assert_twins(text, 3)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_generated_documents(text: str) -> None:
    assert_twins(text)


# Lines for the top-level scanner: what it builds itself (plain paragraph lines, ATX
# headings, fences, HTML comments) next to everything that must stop it or end its blocks
# (list markers, quotes, setext underlines, tables, long HTML blocks, indented fences).
_SCANNED = st.sampled_from(
    ["", "", "", "plain words", "Plain `code` and *em*", "`tick` start", "é ü 中文 line",
     "(paren) line", "# h", "## h `c` [l](u)", "### h [ref]", "#nohash", "#### h ![i](p)",
     "```", "```js", "~~~", "````", "```a`b", "  ```", "    ```", "<!-- c -->", "<!--",
     "-->", "<!-->", "<div>", "<pre>", "</pre>", "<script>", "<p>x</p>", "- item", "* item",
     "+ item", "1. item", "2) item", "10 apples", "> quote", "===", "---", "***", "___",
     "| a | b |", "|---|---|", "a | b", "[ref]: /u", "    indented", "\tindented", "  two",
     "\\# escaped", "!bang", "&amp; x", "x  ", "[ref]", "a\\", "  - nested", "<!-- a", "b -->",
     "* `a` {b|c}", "  * nested", "    * deeper", "    text", "      more", "   odd", "  * `x`",
     "    - other bullet", "*  two spaces", "* [ref]: /u", "  ---", "    ===", "  :-:", "*\tx",
     "> more words", "> - x", "> # h", "> ---", ">", ">  two", "> `c` x", "> a | b", "> ```"]
)  # fmt: skip


@st.composite
def scanned_documents(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_SCANNED, max_size=40))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scanned_documents())
def test_scanned_documents(text: str) -> None:
    assert_twins(text)


def _segments(text: str) -> list[tuple[int, int, int, int]]:
    return markdown_events._walk.segments(text, line_starts(text))  # type: ignore[union-attr]


def test_segments_tile_the_lines_in_order() -> None:
    text = "# T\n\npara\nmore\n\n```js\nx\n\n```\n<!-- a\nb -->\n- a\n\n  b\n\nafter\n"
    kinds = [(k, a, b) for k, a, b, _ in _segments(text)]
    # heading, paragraph, code, html comment, the list (with its indented paragraph)
    # delegated up to the clean point before "after", then "after" itself
    assert kinds == [(1, 0, 1), (0, 2, 4), (2, 5, 9), (3, 9, 11), (4, 11, 15), (0, 15, 16)]


@pytest.mark.parametrize(
    "text",
    [
        "- a\n  ```\n\nfree\n```\n\nnot free\n",  # a fence that may be open: run to the end
        "para\n<pre>\n\nx\n</pre>\n\ny\n",
        "<script>\n\nx\n</script>\n\ny\n",
        "<div>\n* x\n\n  ```\n\nfoo\n",  # the bullet is HTML: the fence is the top level's
        "| a |\n|---|\n* x\n\n  ```\n\nfoo\n",
    ],
)
def test_unsure_runs_go_to_the_end(text: str) -> None:
    assert _segments(text)[-1][0] == 4
    assert_twins(text)


@pytest.mark.parametrize(
    "text",
    [
        "* item\n\n  ```js\n  x\n\n  ```\n\nafter\n\n# h\n",
        "* a\n  * b\n\n   ```\n   y\n   ```\n- c\n  <pre>\n\n  </pre>\n\nafter\n",
    ],
)
def test_fences_inside_top_level_items_end_with_them(text: str) -> None:
    assert [k for k, *_ in _segments(text)][:2] == [4, 0]  # the list, then "after"
    assert_twins(text)


def _walks_whole(text: str) -> None:
    """The scanner refuses ``text`` (the old walk takes all of it); the twins agree."""
    builder = markdown_events._builder(text, line_starts(text), 0, 0)
    assert not markdown_events._walk.walk_segments(  # type: ignore[union-attr]
        builder, text, 0, markdown_events._events
    )
    assert_twins(text)


def test_heading_with_a_reference_walks_the_whole_text() -> None:
    text = "# See [ref]\n\ntext\n\n- # in [ref] list\n\n[ref]: /u\n"
    _walks_whole(text)
    (section,) = markdown_events.markdown_blocks(text) or ()
    assert section.title == "See [ref]"


_LIST_LINE = st.sampled_from(
    ["* `a` {b|c}", "* text", "  * nested", "    * deeper", "      * deepest", "  cont",
     "    cont", "      cont", "        cont", "- other", "  - other", "+ plus", "* [l](u) x",
     "  `code` more", "  1. ordered", "  2019 words", "  > quote", "  ```", "  <!-- c -->",
     "  # h", "   three", " one", "  | a |", "  --|--", "    ---", "  ***", "  [r]: /u", "",
     "* **b**", "* ", "*", "  *", "\t* tab", "  \tx", "* é ü", "  : colon"]
)  # fmt: skip


@st.composite
def list_documents(draw: st.DrawFn) -> str:
    head = draw(st.sampled_from(["", "para\n\n", "# h\n"]))
    first = draw(st.sampled_from(["* first", "- first", "+ first"]))
    body = draw(st.lists(_LIST_LINE, max_size=12))
    after = draw(st.sampled_from(["", "\n", "\n\nafter\n", "\n\n- x\n", "\n\n  x\n", "\n\n1. x\n",
                                  "\n\n\n* y\n", "\n\n[r]: /u\n"]))  # fmt: skip
    return head + "\n".join([first, *body]) + after


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(list_documents())
def test_list_documents(text: str) -> None:
    assert_twins(text)


def test_one_paragraph_quotes_are_built_by_the_scanner() -> None:
    text = "> Stability: 2 - Stable\n> more\n\n> # h\n\nafter\n"
    assert [k for k, *_ in _segments(text)] == [6, 4, 0]
    assert_twins(text)


def test_tight_lists_are_built_by_the_scanner() -> None:
    text = "* `a` {b|c}\n  * nested\n    wrapped\n  * two\n* three\n\nafter\n"
    assert [k for k, *_ in _segments(text)] == [5, 0]
    assert_twins(text)


@given(st.text(alphabet="ab\n\r é", max_size=60))
def test_line_starts(text: str) -> None:
    assert markdown_events._walk.line_starts(text) == line_starts(text)  # type: ignore[union-attr]


def test_heading_with_a_reference_in_a_delegated_run() -> None:
    _walks_whole("# Plain\n\n> ## quoted [ref]\n\nafter\n\n[ref]: /u\n")


_QUOTE_LINE = st.sampled_from(
    ["> more", "> `c` text", ">", "> ", ">  two", "> - item", "> # h", "> ---", "> ===",
     "> ```", "> <div>", "> 1. x", "> a | b", "> :-:", "lazy", "", "  indented", "> > deep",
     "> é", "> [r]: /u", ">\ttab", "> *em*", "> 2019 was"]
)  # fmt: skip


@st.composite
def quote_documents(draw: st.DrawFn) -> str:
    head = draw(st.sampled_from(["", "para\n\n", "# h\n", "* x\n\n"]))
    first = draw(st.sampled_from(["> Stability: 2", "> `x` y", "> plain"]))
    body = draw(st.lists(_QUOTE_LINE, max_size=6))
    after = draw(st.sampled_from(["", "\n", "\n\nafter\n", "\n\n> again\n", "\n\n  x\n"]))
    return head + "\n".join([first, *body]) + after


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(quote_documents())
def test_quote_documents(text: str) -> None:
    assert_twins(text)
