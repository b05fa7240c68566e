"""pulldown-cmark's builder (``markdown_events``) gives markdown-it-py's Blocks, exactly.

Every Markdown file in the repository (the test corpus, docs, READMEs), the Node.js API docs
that ``bench.format_peers`` reads (where the machine has them) and generated documents that
mix every block construct both parsers know go through both builders; the trees must be
equal in every field of every Block, metadata included. The generated set avoids only the
documented CommonMark disagreements (``docs/markdown-parsers.md``), each pinned by a test here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fissure.parse import markdown, markdown_events
from fissure.types import Block

pytestmark = pytest.mark.skipif(not markdown_events.available(), reason="pyromark is off")

ROOT = Path(__file__).resolve().parents[2]
NODE_DOCS = Path("/usr/share/doc/nodejs/api")


def flat(blocks: tuple[Block, ...], depth: int = 0) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    for b in blocks:
        meta = sorted(b.metadata.items())
        rows.append((depth, b.kind, b.start, b.end, b.level, b.title, meta))
        rows.extend(flat(b.children, depth + 1))
    return rows


def assert_same(text: str) -> None:
    old = flat(markdown.markdown_it_blocks(text))
    new = flat(markdown.markdown_blocks(text))  # pulldown-cmark, or markdown-it where it is right
    first = next((i for i, (n, o) in enumerate(zip(new, old, strict=False)) if n != o), None)
    assert new == old, (first, new[first:][:2], old[first:][:2]) if first is not None else None


def _markdown_files() -> list[Path]:
    tracked = [p for p in ROOT.rglob("*.md") if ".git" not in p.parts and ".venv" not in p.parts]
    return sorted(tracked) + sorted(NODE_DOCS.glob("*.md"))


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_real_files_give_identical_blocks(path: Path) -> None:
    assert_same(path.read_text(encoding="utf-8", errors="replace"))


def test_offsets_shift_the_same() -> None:
    text = "# A\n\n- x\n- y\n\n| a |\n|---|\n| 1 |\n"
    assert flat(markdown.markdown_blocks(text, 7)) == flat(markdown.markdown_it_blocks(text, 7))


# Lines of every construct, in containers (quotes, list items), to be shuffled together.
_INLINE = st.sampled_from(
    ["word", "two words", "*em* and **strong**", "`code`", "[link](u)", "![alt *x*](i.png)",
     "a\\*b", "&amp; &copy;", "<b>html</b>", "<http://a.b>", "x  ", "é ü 中文", "trailing #",
     "tab\there", "[ref][r]", "~~s~~", "a | b"]
)  # fmt: skip
_LEAD = st.sampled_from(
    ["", "# ", "## ", "###### ", "#", "- ", "* ", "+ ", "1. ", "2) ", "> ", "> > ", "  ", "    ",
     "\t", "   - ", "  1. ", ">- ", "-\t"]
)  # fmt: skip
_WHOLE = st.sampled_from(
    ["", "", "", "---", "***", "===", "- - -", "```", "```js x", "~~~", "````", "    code",
     "<div>", "</div>", "<!-- c -->", "| a | b |", "|---|---|", "| 1 | 2 |", "a|b", "--|--",
     "[r]: http://x", "   ", "\t", "> ", ">", "...", "- ", "1.", "<pre>", "</pre>"]
)  # fmt: skip
_LINE = st.one_of(st.tuples(_LEAD, _INLINE).map("".join), _WHOLE)


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_LINE, max_size=30))
    if draw(st.booleans()):
        head = draw(st.lists(st.sampled_from(["a: 1", "", "---", "..."]), max_size=4))
        lines = ["---", *head, *lines]
    return draw(st.sampled_from(["\n", "\r\n"])).join(lines) + draw(st.sampled_from(["", "\n"]))


# The documented disagreements (docs/markdown-parsers.md), where pulldown-cmark follows the
# CommonMark / GFM specs and markdown-it-py does not: a line right after a link reference
# definition, an empty list item before two blank lines, a "table" whose header is a heading.
_KNOWN = re.compile(
    r"\[r\]: http://x\r?\n[^\r\n]*\S"
    r"|(^|\n)[ \t>]*([-*+]|\d+[.)])[ \t]*\r?\n([ \t]*\r?\n){2}"
    r"|(^|\n)[ \t>]*#+[ \t][^\r\n]*\|[^\r\n]*\r?\n[ \t>]*[|:-][ \t|:-]*(\r?\n|$)"
)


@pytest.mark.parametrize(
    ("text", "kinds", "markdown_it_kinds"),
    [
        # CommonMark 4.7: a definition is part of a paragraph's text, so the next line
        # continues that paragraph (commonmark.js: <p>word</p>); markdown-it opens a block.
        ("[r]: http://x\n    word\n", ["paragraph"], ["code"]),
        ("[r]: http://x\n- \n", ["paragraph"], ["list"]),
        ("[r]: http://x\n</pre>\n", ["paragraph"], ["html"]),
        # GFM 4.10: a table's header row is a paragraph's line; an ATX heading is no
        # paragraph, so this is a heading and a paragraph (markdown-it: one table).
        ("## a | b\n--|--\n", ["section"], ["table"]),
        ("> # a | b\n> --|--\n", ["blockquote"], ["blockquote"]),
        # CommonMark 5.3: blank lines between items do not end a list (since 0.26); after
        # an empty item and two blank lines markdown-it ends it, so one list there is two.
        ("1.\n\n\n1. word\n", ["list"], ["list", "list"]),
        ("- \n\n\n- x\n", ["list"], ["list", "list"]),
    ],
)
def test_documented_disagreements(text: str, kinds: list[str], markdown_it_kinds: list[str]):
    assert _KNOWN.search(text)
    assert [b.kind for b in markdown.markdown_blocks(text)] == kinds
    assert [b.kind for b in markdown.markdown_it_blocks(text)] == markdown_it_kinds


@pytest.mark.parametrize(
    "text",
    [
        "| a | b |\na|b\n|---|---|\n",  # a table interrupting a paragraph (GFM, markdown-it)
        "| a | b |\n|---|---|\n    tab\n",  # a code-indented line after a table
        "- a | b\n--|--\n",  # a list item's line, a lazy delimiter row (markdown-it: a table)
        "> a | b\n|---|\n",  # the same in a quote
        "> " * 30 + "x\n",  # deeper than markdown-it's nesting limit (it drops the rest)
        "> - " * 12 + "x\n",
        "".join("  " * i + "- a\n" for i in range(25)),
    ],
)
def test_where_pulldown_differs_markdown_it_parses(text: str) -> None:
    assert markdown_events.markdown_blocks(text) is None  # pulldown-cmark hands it over
    assert_same(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_generated_documents_give_identical_blocks(text: str) -> None:
    assume(not _KNOWN.search(text))
    assert_same(text)


@pytest.mark.parametrize(
    "text",
    [
        "# a\x00b\n\nx\x00y\n\n- \x00\n```a\x00b\nx\n```\n",  # NUL: markdown-it reads U+FFFD
        "a\rb\r\r# h\r- x\r",  # old Mac line breaks
        "\ufeff# h\n\nx\n",
        "# h\u2028x\n\npara\x0c\n\n\x0c\n",
        "\t- a\n\t\t- b\n",
        "# é\n\n|é|b|\n|-|-|\n|ü|x|\n",  # byte ranges past non-ASCII text
        "Title\n---\n\n  ```py\n  x\n ```\n",
        "# a #\n## b ##   \n### c \\#\n\\# x\n",
        "````\n```\n````\n",
        "```a\\*b &amp; c\nx\n```\n",  # the info string as written
        "# `a` <b>x</b> [l](u) ![i *j*](p) &copy; \\*\n",
        "# " + "long words " * 60 + "\n",  # a title over 500 characters
        "- x\n  | a |\n  |---|\n",  # a "table" under a tight item's line
    ],
)
def test_edge_cases_give_identical_blocks(text: str) -> None:
    assert_same(text)
