"""Plain text: blank-line separated paragraphs, and MediaWiki-style ``= Title =`` headings.

This is also every other parser's last resort, so it must accept any string quickly. The
helpers here (line starts, paragraph spans) are shared by the other text parsers so that all
of them agree on what a line is; they trim by :mod:`fissure.spans`' policies.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from enum import IntEnum
from itertools import accumulate

import numpy as np

from fissure import limits
from fissure.spans import trim, trim_lines
from fissure.types import Block, Document

MIME = "text/plain"

# A line break as Python's tokenizer, markdown-it and docutils all see it (not str.splitlines,
# which also breaks on form feeds and U+2028 and would disagree with them).
_NEWLINE = re.compile(r"\r\n|\r|\n")
# One or more blank lines between two text lines.
_PARAGRAPH_BREAK = re.compile(r"(?:\r\n|\r|\n)(?:[ \t\f\v]*(?:\r\n|\r|\n))+")
# A MediaWiki heading line: `== Title ==`, or WikiText-103's spaced `= = Title = =`; the runs
# of `=` on both sides must match (checked in code), the title is not blank and has no `=`
# at its ends. Anchored per line (re.M); the title is group 2.
_WIKI_HEADING = re.compile(
    r"^[ \t]*(=(?:[ \t]?=){0,5})[ \t]*([^=\s](?:[^\r\n]*?[^=\s])?)[ \t]*(=(?:[ \t]?=){0,5})[ \t]*$",
    re.M,
)


class TextLevel(IntEnum):
    """Boundary ranks in plain text (lower is stronger)."""

    PARAGRAPH = 10


# A wiki heading's level is its number of `=` (1 to 6), the same scale as Markdown's H1-H6.
WIKI_HEADING_LEVELS = range(1, 7)


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts; ``line_starts(text)[i]`` is line ``i`` (0-based)."""
    if "\r" in text:
        return [0, *(m.end() for m in _NEWLINE.finditer(text))]
    if text.isascii():  # a byte is a character: the breaks found by numpy (twice as fast)
        breaks = np.flatnonzero(np.frombuffer(text.encode("ascii"), dtype=np.uint8) == 10)
        starts = [0]
        starts += (breaks + 1).tolist()
        return starts
    # Only "\n" breaks lines: the running sum of the line lengths, all in C (3x faster).
    rows = text.split("\n")
    rows.pop()  # the text after the last break starts no new line
    return list(accumulate(map((1).__add__, map(len, rows)), initial=0))


def line_end(text: str, starts: list[int], line: int) -> int:
    """Offset just past the content of 0-based ``line``, before its line break."""
    if line + 1 >= len(starts):
        return len(text)
    end = starts[line + 1]
    if text[end - 1] == "\n":
        end -= 1
        if end > starts[line] and text[end - 1] == "\r":
            end -= 1
    elif text[end - 1] == "\r":
        end -= 1
    return end


def line_of(starts: list[int], offset: int) -> int:
    """0-based line that contains ``offset``."""
    return bisect_right(starts, offset) - 1


def paragraph_spans(
    text: str, start: int = 0, end: int | None = None, *, limit: int | None = None
) -> list[tuple[int, int]]:
    """Spans of the blank-line separated paragraphs in ``text[start:end]``.

    A span starts at the beginning of its first non-blank line (indentation kept) and ends
    after its last non-space character. With ``limit``, at most that many are found.
    """
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in _PARAGRAPH_BREAK.finditer(text, start, end):
        _add_paragraph(text, cursor, match.start(), spans)
        cursor = match.end()
        if limit is not None and len(spans) >= limit:
            return spans
    _add_paragraph(text, cursor, end, spans)
    return spans


def _add_paragraph(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    # Leading blank lines (possible at the very start) are skipped whole, so the span
    # begins at a line start and keeps that line's indentation.
    start, stop = trim_lines(text, start, end)
    if stop > start:
        spans.append((start, stop))


def paragraph_blocks(
    text: str, start: int = 0, end: int | None = None, *, kind: str = "paragraph"
) -> tuple[Block, ...]:
    """One block per paragraph of ``text[start:end]``."""
    return tuple(
        Block(kind, s, e, TextLevel.PARAGRAPH) for s, e in paragraph_spans(text, start, end)
    )


def wiki_headings(
    text: str, start: int = 0, end: int | None = None
) -> list[tuple[int, int, int, str]]:
    """MediaWiki-style heading lines in ``text[start:end]``: ``(start, end, level, title)``.

    ``= Title =`` is level 1, ``== Title ==`` (or WikiText-103's ``= = Title = =``) level 2,
    and so on to 6. A line counts only when its runs of ``=`` match on both sides; the span
    runs from the first ``=`` to the last.
    """
    end = len(text) if end is None else end
    found: list[tuple[int, int, int, str]] = []
    for match in _WIKI_HEADING.finditer(text, start, end):
        opening, closing = match.group(1), match.group(3)
        level = opening.count("=")
        if level != closing.count("=") or level not in WIKI_HEADING_LEVELS:
            continue
        found.append((match.start(1), match.end(3), level, " ".join(match.group(2).split())))
    return found


def split_wiki_headings(text: str, block: Block, offset: int = 0) -> list[Block]:
    """A leaf ``block`` split at its wiki heading lines (see :func:`wiki_headings`).

    The result replaces the block: ``heading`` blocks (level = number of ``=``, title = the
    heading text) and, between them, the rest of the block as blocks of its own kind, trimmed
    like paragraphs. A block without heading lines comes back unchanged.

    Args:
        text: The text the block is in.
        block: The block, with offsets into ``text`` shifted by ``offset``.
        offset: Where ``text`` starts in the document (a notebook cell's Markdown).
    """
    heads = wiki_headings(text, block.start - offset, block.end - offset)
    if not heads:
        return [block]
    out: list[Block] = []
    cursor = block.start - offset
    for h_start, h_end, level, title in heads:
        out.extend(_pieces(text, block, cursor, h_start, offset))
        meta = {"syntax": "wiki"}
        out.append(Block("heading", h_start + offset, h_end + offset, level, title, (), meta))
        cursor = h_end
    out.extend(_pieces(text, block, cursor, block.end - offset, offset))
    return out


def _pieces(text: str, block: Block, start: int, end: int, offset: int) -> list[Block]:
    """``text[start:end]`` as one block of ``block``'s kind, without surrounding blanks."""
    start, stop = trim(text, start, end)
    if stop <= start:
        return []
    return [
        Block(block.kind, start + offset, stop + offset, block.level, block.title, (),
              block.metadata)
    ]  # fmt: skip


def with_wiki_headings(text: str, blocks: Sequence[Block], offset: int = 0) -> list[Block]:
    """``blocks`` with every childless paragraph split at its wiki heading lines (see
    :func:`split_wiki_headings`); other blocks are kept as they are."""
    if "=" not in text:
        return list(blocks)
    out: list[Block] = []
    for block in blocks:
        # a paragraph without "=" has no heading line (found without copying or a regex)
        if (
            block.kind == "paragraph"
            and not block.children
            and text.find("=", block.start - offset, block.end - offset) >= 0
        ):
            out.extend(split_wiki_headings(text, block, offset))
        else:
            out.append(block)
    return out


def heading_rank(block: Block) -> tuple[int, str | None] | None:
    """(level, title) of a ``heading`` block; ``None`` for any other block."""
    return (block.level, block.title) if block.kind == "heading" else None


def nest_sections(
    blocks: list[Block],
    heading: Callable[[Block], tuple[int, str | None] | None] = heading_rank,
) -> tuple[Block, ...]:
    """Wrap each heading and what follows it, up to the next heading of the same or a
    stronger level, in a ``section`` block with the heading's level and title.

    Args:
        blocks: Sibling blocks in document order.
        heading: Says which blocks open a section, with its (level, title).
    """
    root: list[Block] = []
    stack: list[tuple[int, str | None, list[Block]]] = []

    def close() -> None:
        level, title, children = stack.pop()
        section = Block(
            "section", children[0].start, children[-1].end, level, title, tuple(children)
        )
        (stack[-1][2] if stack else root).append(section)

    for block in blocks:
        rank = heading(block)
        if rank is not None:
            while stack and stack[-1][0] >= rank[0]:
                close()
            stack.append((rank[0], rank[1], [block]))
        else:
            (stack[-1][2] if stack else root).append(block)
    while stack:
        close()
    return tuple(root)


def parse(text: str, *, source: str) -> Document:
    """Parse plain text into paragraph blocks.

    Args:
        text: The decoded document.
        source: Its path or URI.

    Returns:
        A document whose blocks are its paragraphs (kind ``paragraph``), nested in
        ``section`` blocks where the text has MediaWiki-style heading lines
        (``= Title =``, ``== Section ==``, WikiText-103's ``= = Section = =``). Past
        :data:`fissure.limits.MAX_BLOCKS` paragraphs, no blocks (the splitter finds the
        paragraphs itself) and ``metadata["fallback"]`` says so.
    """
    spans = paragraph_spans(text, limit=limits.MAX_BLOCKS + 1)
    if len(spans) > limits.MAX_BLOCKS:  # each block costs a few hundred bytes
        why = (f"over {limits.MAX_BLOCKS:,} paragraphs: split by the text's paragraphs and "
               "lines without blocks")  # fmt: skip
        return Document.from_text(text, source=source, mime=MIME, metadata={"fallback": why})
    paragraphs = [Block("paragraph", s, e, TextLevel.PARAGRAPH) for s, e in spans]
    blocks = nest_sections(with_wiki_headings(text, paragraphs))
    return Document.from_text(text, source=source, mime=MIME, blocks=blocks)
