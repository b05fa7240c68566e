"""Markdown (CommonMark + GFM tables + YAML front matter) through markdown-it-py.

markdown-it reports every block token's source lines (``token.map``), so offsets come from
line numbers and are exact by construction; nothing is searched for in the text. Inline
parsing is switched off for the document (it is most of markdown-it's cost and blocks do not
need it) and run only on heading text, to turn ``## The *fast* path`` into a plain title.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from fissure import limits
from fissure.parse import markdown_events as _events
from fissure.parse.mdtree import MarkdownLevel, TreeBuilder, plain_title
from fissure.parse.text import line_starts, nest_sections, with_wiki_headings
from fissure.types import Block, Document

MIME = "text/markdown"
__all__ = ["MIME", "MarkdownLevel", "markdown_blocks", "markdown_it_blocks", "parse"]


# Container tokens that become blocks; other containers (thead, td …) are looked through.
_CONTAINERS = {
    "heading_open": "heading",
    "paragraph_open": "paragraph",
    "blockquote_open": "blockquote",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "list_item_open": "item",
    "table_open": "table",
}
_LEAVES = {
    "fence": "code",
    "code_block": "code",
    "html_block": "html",
    "hr": "thematic_break",
    "front_matter": "front_matter",
}


@cache
def _block_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
    md.disable("inline")
    return md


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
    blocks = _events.markdown_blocks(text, offset) if _events.available() else None
    return markdown_it_blocks(text, offset) if blocks is None else blocks


def markdown_it_blocks(text: str, offset: int = 0) -> tuple[Block, ...]:
    """:func:`markdown_blocks` through markdown-it-py (the pure Python path)."""
    builder = TreeBuilder(text, line_starts(text), offset)
    for token in _block_parser().parse(text):
        _feed(builder, token)
    return nest_sections(with_wiki_headings(text, builder.blocks(), offset))


def _feed(builder: TreeBuilder, token: Token) -> None:
    """One markdown-it token into the tree: its ``map`` is the block's line span."""
    if token.nesting == 1:
        first, last = token.map if token.map else (0, 0)
        if token.type == "tr_open" and token.map:
            builder.open_row(first, last)
            return
        kind = _CONTAINERS.get(token.type) if token.map else None
        level = int(token.tag[1]) if kind == "heading" else None
        builder.open(kind, first, last, level)
    elif token.nesting == -1:
        builder.close()
    elif token.type == "inline" and builder.stack[-1].kind == "heading":
        builder.set_title(plain_title(token.content))
    elif token.type in _LEAVES and token.map:
        first, last = token.map
        builder.leaf(_LEAVES[token.type], first, last, _leaf_metadata(token))


def _leaf_metadata(token: Token) -> dict[str, Any]:
    if token.type == "fence":
        info = token.info.strip()
        return {"lang": info.split()[0] if info else None, "fenced": True}
    if token.type == "code_block":
        return {"lang": None, "fenced": False}
    if token.type == "front_matter":
        return {"format": "yaml"}
    return {}
