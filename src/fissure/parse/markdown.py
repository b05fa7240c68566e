"""Markdown (CommonMark + GFM tables + YAML front matter) through markdown-it-py.

markdown-it reports every block token's source lines (``token.map``), so offsets come from
line numbers and are exact by construction; nothing is searched for in the text. Inline
parsing is switched off for the document (it is most of markdown-it's cost and blocks do not
need it) and run only on heading text, to turn ``## The *fast* path`` into a plain title.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from functools import cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from fissure import limits
from fissure.parse.captions import caption_title
from fissure.parse.text import (
    line_end,
    line_starts,
    nest_sections,
    with_wiki_headings,
)
from fissure.spans import trim_end
from fissure.types import Block, Document

MIME = "text/markdown"
_TITLE_SOURCE_LIMIT = 500  # a "title" longer than this is a paragraph; don't inline-parse it


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


# Container tokens that become blocks; other containers (thead, td …) are looked through.
_CONTAINERS = {
    "heading_open": "heading",
    "paragraph_open": "paragraph",
    "blockquote_open": "blockquote",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "list_item_open": "item",
    "table_open": "table",
    "tr_open": "row",
}
_LEAVES = {
    "fence": "code",
    "code_block": "code",
    "html_block": "html",
    "hr": "thematic_break",
    "front_matter": "front_matter",
}
_LEVELS = {
    "item": MarkdownLevel.ITEM,
    "row": MarkdownLevel.ROW,
    "thematic_break": MarkdownLevel.THEMATIC_BREAK,
    "front_matter": MarkdownLevel.FRONT_MATTER,
}


@cache
def _block_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
    md.disable("inline")
    return md


@cache
def _inline_parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


@dataclass
class _Frame:
    kind: str | None  # None: a container looked through (its children go to the parent)
    first_line: int
    last_line: int  # exclusive
    children: list[Block] = field(default_factory=list)
    level: int = MarkdownLevel.BLOCK
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def parse(text: str, *, source: str) -> Document:
    """Parse Markdown into nested sections and their blocks.

    Args:
        text: The decoded document.
        source: Its path or URI.

    Returns:
        A document whose top-level blocks are front matter, blocks before the first heading
        and ``section`` blocks (title = heading text, first child = the ``heading`` block).
        Besides ATX and setext headings, a top-level paragraph line written as a MediaWiki
        heading (``= Title =``, ``== Section ==``, WikiText-103's ``= = Section = =``) is a
        heading of that many ``=``.

    Raises:
        ValueError: Over :data:`fissure.limits.MAX_MARKDOWN_LINES` lines (markdown-it keeps
            up to 2 KB of tokens per line); the registry then parses it as plain text.
    """
    if text.count("\n") > limits.MAX_MARKDOWN_LINES:
        raise ValueError(f"Markdown of more than {limits.MAX_MARKDOWN_LINES:,} lines")
    return Document.from_text(text, source=source, mime=MIME, blocks=markdown_blocks(text))


def markdown_blocks(text: str, offset: int = 0) -> tuple[Block, ...]:
    """The Block tree of Markdown ``text``, with offsets shifted by ``offset``.

    The shift lets a container format (a notebook's Markdown cell) embed the tree.
    """
    starts = line_starts(text)
    builder = _TreeBuilder(text, starts, offset)
    for token in _block_parser().parse(text):
        builder.feed(token)
    return nest_sections(with_wiki_headings(text, builder.root.children, offset))


class _TreeBuilder:
    """Turns markdown-it's flat token stream into nested blocks with character offsets."""

    def __init__(self, text: str, starts: list[int], offset: int) -> None:
        self.text, self.starts, self.offset = text, starts, offset
        self.root = _Frame("root", 0, len(starts))
        self.stack: list[_Frame] = [self.root]

    def feed(self, token: Token) -> None:
        if token.nesting == 1:
            kind = _CONTAINERS.get(token.type) if token.map else None
            first, last = token.map if token.map else (0, 0)
            frame = _Frame(kind, first, last, level=_LEVELS.get(kind or "", MarkdownLevel.BLOCK))
            if token.type == "tr_open" and self.stack[-1].kind is None and token.map:
                frame.metadata["header"] = self._in_thead()
            if kind == "heading":
                frame.level = int(token.tag[1])
            self.stack.append(frame)
        elif token.nesting == -1:
            frame = self.stack.pop()
            if frame.kind is None:
                self.stack[-1].children.extend(frame.children)
            else:
                self._add(self._close(frame))
        elif token.type == "inline" and self.stack[-1].kind == "heading":
            self.stack[-1].title = _plain_title(token.content)
        elif token.type in _LEAVES and token.map:
            self._add(self._leaf(token))

    def _in_thead(self) -> bool:
        # The row's parent frame is the looked-through thead or tbody; ask the token stream's
        # shape instead of keeping more state: a header row is the table's first row.
        table = next(f for f in reversed(self.stack) if f.kind == "table")
        return not table.children

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

    def _leaf(self, token: Token) -> Block:
        kind = _LEAVES[token.type]
        start, end = self._span(*token.map)  # type: ignore[misc]
        metadata: dict[str, Any] = {}
        if token.type == "fence":
            info = token.info.strip()
            metadata = {"lang": info.split()[0] if info else None, "fenced": True}
        elif token.type == "code_block":
            metadata = {"lang": None, "fenced": False}
        elif token.type == "front_matter":
            metadata = {"format": "yaml"}
        return Block(kind, start, end, _LEVELS.get(kind, MarkdownLevel.BLOCK), None, (), metadata)

    def _add(self, block: Block) -> None:
        if block.end > block.start:
            self.stack[-1].children.append(block)


def _fit(children: list[Block], start: int, end: int) -> list[Block]:
    """Children clipped to their parent and kept strictly ordered.

    markdown-it's line maps nest correctly in practice; this guards the tree invariant
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


def _plain_title(source: str) -> str:
    tokens = _inline_parser().parseInline(source[:_TITLE_SOURCE_LIMIT])
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
