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
from tests.parse.test_markdown_events import _markdown_files, documents

from fissure.parse import markdown_events
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
