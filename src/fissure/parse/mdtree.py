"""The Markdown block tree, built from line spans by either Markdown parser.

Both parsers (markdown-it-py in :mod:`fissure.parse.markdown`, pulldown-cmark through
``pyromark`` in :mod:`fissure.parse.markdown_events`) reduce every block to the 0-based lines
it covers and call the same :class:`TreeBuilder`, so spans, clipping, table captions and
header rows are decided once and the two paths give the same Blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from functools import cache
from typing import Any

from markdown_it import MarkdownIt

from fissure.parse.captions import caption_title
from fissure.parse.text import line_end
from fissure.spans import trim_end
from fissure.types import Block


class MarkdownLevel(IntEnum):
    """Boundary ranks in Markdown (lower is stronger)."""

    FRONT_MATTER = 0
    H1 = 1
    H2 = 2
    H3 = 3
    H4 = 4
    H5 = 5
    H6 = 6
    THEMATIC_BREAK = 7
    BLOCK = 10  # paragraph, code, table, list, blockquote, html
    ITEM = 11
    ROW = 12


TITLE_SOURCE_LIMIT = 500  # a "title" longer than this is a paragraph; don't inline-parse it

LEVELS = {
    "item": MarkdownLevel.ITEM,
    "row": MarkdownLevel.ROW,
    "thematic_break": MarkdownLevel.THEMATIC_BREAK,
    "front_matter": MarkdownLevel.FRONT_MATTER,
}


class Disagree(Exception):
    """pulldown-cmark builds a structure markdown-it-py (rightly) would not: let it parse."""


@dataclass
class _Frame:
    kind: str | None  # None: a container looked through (its children go to the parent)
    first_line: int
    last_line: int  # exclusive
    children: list[Block] = field(default_factory=list)
    level: int = MarkdownLevel.BLOCK
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class TreeBuilder:
    """Nested blocks with character offsets from open / close / leaf calls on line spans."""

    def __init__(self, text: str, starts: list[int], offset: int) -> None:
        self.text, self.starts, self.offset = text, starts, offset
        self.root = _Frame("root", 0, len(starts))
        self.stack: list[_Frame] = [self.root]

    def open(self, kind: str | None, first: int, last: int, level: int | None = None) -> None:
        """Start a container over lines ``[first, last)``; ``kind=None`` is looked through."""
        if level is None:
            level = LEVELS.get(kind or "", MarkdownLevel.BLOCK)
        self.stack.append(_Frame(kind, first, last, level=level))

    def open_row(self, first: int, last: int) -> None:
        """Start a table row; the table's first row is its header (``metadata["header"]``)."""
        self.open("row", first, last)
        table = next(f for f in reversed(self.stack) if f.kind == "table")
        self.stack[-1].metadata["header"] = not table.children

    def set_title(self, title: str) -> None:
        """Title the innermost open container (a heading)."""
        self.stack[-1].title = title

    def close(self) -> None:
        """End the innermost container and add it (or, looked through, its children)."""
        frame = self.stack.pop()
        if frame.kind is None:
            self.stack[-1].children.extend(frame.children)
        else:
            self._add(self._close(frame))

    def leaf(self, kind: str, first: int, last: int, metadata: dict[str, Any]) -> None:
        """Add a block without children over lines ``[first, last)``."""
        start, end = self._span(first, last)
        level = LEVELS.get(kind, MarkdownLevel.BLOCK)
        self._add(Block(kind, start, end, level, None, (), metadata))

    def blocks(self) -> list[Block]:
        """The top-level blocks built so far."""
        return self.root.children

    def _span(self, first: int, last: int) -> tuple[int, int]:
        start = self.starts[first]
        end = line_end(self.text, self.starts, max(first, last - 1))
        start, end = trim_end(self.text, start, end)
        return start + self.offset, end + self.offset

    def _close(self, frame: _Frame) -> Block:
        start, end = self._span(frame.first_line, frame.last_line)
        children = _fit(frame.children, start, end)
        if frame.kind == "table" and children and children[0].metadata.get("header"):
            children = _widen_header(self.text, self.offset, children, end)
        if frame.kind == "table":
            frame.title = self._caption()
        if len(children) == 1 and (children[0].start, children[0].end) == (start, end):
            children = list(children[0].children)  # a child that is the whole block adds nothing
        return Block(
            frame.kind or "block", start, end, frame.level, frame.title, tuple(children),
            frame.metadata,
        )  # fmt: skip

    def _caption(self) -> str | None:
        """A table's title: the paragraph just before it, when it reads like a caption."""
        siblings = self.stack[-1].children
        before = siblings[-1] if siblings else None
        if before is None or before.kind != "paragraph":
            return None
        text = self.text[before.start - self.offset : before.end - self.offset]
        return caption_title(text, markdown=True)

    def _add(self, block: Block) -> None:
        if block.end > block.start:
            self.stack[-1].children.append(block)


def _fit(children: list[Block], start: int, end: int) -> list[Block]:
    """Children clipped to their parent and kept strictly ordered.

    The parsers' line spans nest correctly in practice; this guards the tree invariant
    against any corner case rather than trusting it.
    """
    fitted: list[Block] = []
    cursor = start
    for child in children:
        if child.start >= cursor and child.end <= end:
            fitted.append(child)
            cursor = child.end
    return fitted


def _widen_header(text: str, offset: int, rows: list[Block], end: int) -> list[Block]:
    """Extend the header row over the ``|---|---|`` delimiter line, so no cut separates them."""
    header = rows[0]
    stop = rows[1].start if len(rows) > 1 else end
    widened = trim_end(text, header.start - offset, stop - offset)[1] + offset
    return [
        Block("row", header.start, widened, header.level, None, (), header.metadata),
        *rows[1:],
    ]


@cache
def _inline_parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


def plain_title(source: str) -> str:
    """A heading's inline Markdown as plain text (what markdown-it's inline rules keep).

    Both paths title a heading so where they cannot read it off events alike.
    """
    tokens = _inline_parser().parseInline(source[:TITLE_SOURCE_LIMIT])
    parts: list[str] = []
    for token in tokens:
        for child in token.children or ():
            if child.type in ("text", "code_inline"):
                parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parts.append(" ")
            elif child.type == "image":
                parts.append(child.content)
    return " ".join("".join(parts).split())
