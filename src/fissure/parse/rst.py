"""reStructuredText: section titles by their adornments, and the blocks between them.

A line scanner rather than docutils: docutils reports no character offsets (only unreliable
line numbers, none for many nodes) and stops or rewrites on markup errors, while section
adornments are simple to recognise on their own. The rules follow docutils: a title is a
non-indented text line under a blank line (or the start), with an underline, optionally an
overline, of one repeated punctuation character; styles rank in order of first appearance.
"""

from __future__ import annotations

import re
from enum import IntEnum
from typing import Any

from fissure import limits
from fissure.parse.text import line_end, line_starts, nest_sections, paragraph_spans
from fissure.types import Block, Document

MIME = "text/x-rst"

_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1+[ \t]*")
_DIRECTIVE = re.compile(r"\.\. +([\w:-]+)::(.*)")
_CODE_DIRECTIVES = {"code", "code-block", "sourcecode", "literalinclude"}


class RstLevel(IntEnum):
    """Boundary ranks in reStructuredText (lower is stronger).

    The n-th adornment style to appear ranks ``SECTION + n - 1`` (capped at ``DEEPEST``).
    """

    SECTION = 1
    DEEPEST = 9
    BLOCK = 10  # paragraph, directive, literal code


def parse(text: str, *, source: str) -> Document:
    """Parse reStructuredText into nested sections, directives, code and paragraphs.

    Args:
        text: The decoded document.
        source: Its path or URI.

    Returns:
        A document of ``section`` blocks (title = section title, first child = the
        ``heading`` block with its adornments) around ``paragraph``, ``directive`` and
        ``code`` blocks.

    Raises:
        ValueError: Over :data:`fissure.limits.MAX_LINES` lines or
            :data:`fissure.limits.MAX_BLOCKS` blocks (the registry then parses the text as
            plain text, and says why).
    """
    if text.count("\n") > limits.MAX_LINES:
        raise ValueError(f"reStructuredText of more than {limits.MAX_LINES:,} lines")
    starts = line_starts(text)
    rows = [text[starts[i] : line_end(text, starts, i)] for i in range(len(starts))]
    headings = _headings(text, starts, rows)
    blocks: list[Block] = []
    cursor = 0
    for heading in headings:
        blocks.extend(_body_blocks(text, cursor, heading.start))
        blocks.append(heading)
        cursor = heading.end
    blocks.extend(_body_blocks(text, cursor, len(text)))
    if len(blocks) > limits.MAX_BLOCKS:
        raise ValueError(f"reStructuredText of more than {limits.MAX_BLOCKS:,} blocks")
    return Document.from_text(text, source=source, mime=MIME, blocks=nest_sections(blocks))


def _headings(text: str, starts: list[int], rows: list[str]) -> list[Block]:
    styles: dict[tuple[str, bool], int] = {}
    found: list[Block] = []
    line = 0
    while line < len(rows):
        match = _title_at(rows, line)
        if match is None:
            line += 1
            continue
        first, title_line, last, char = match
        style = (char, first != title_line)
        rank = styles.setdefault(style, min(RstLevel.SECTION + len(styles), RstLevel.DEEPEST))
        end = line_end(text, starts, last)
        found.append(Block("heading", starts[first], end, rank, rows[title_line].strip()))
        line = last + 1
    return found


def _title_at(rows: list[str], line: int) -> tuple[int, int, int, str] | None:
    """(first line, title line, last line, adornment char) of a title starting at ``line``."""
    if line > 0 and rows[line - 1].strip():
        return None  # a title follows a blank line; otherwise it is part of a paragraph
    over = _adornment(rows[line])
    if over and line + 2 < len(rows):
        title, under = rows[line + 1], _adornment(rows[line + 2])
        if title.strip() and under and under[0] == over[0] and not _adornment(title):
            return line, line + 1, line + 2, over[0]
    if over or line + 1 >= len(rows):
        return None
    title, under = rows[line], _adornment(rows[line + 1])
    if not under or not title.strip() or title[0].isspace():
        return None
    if len(under) < len(title.rstrip()) and len(under) < 4:
        return None  # too short to be an underline: docutils reads this as text
    return line, line, line + 1, under[0]


def _adornment(row: str) -> str | None:
    stripped = row.rstrip()
    if len(stripped) >= 2 and _ADORNMENT.fullmatch(row):
        return stripped
    return None


def _body_blocks(text: str, start: int, end: int) -> list[Block]:
    """Paragraph-level blocks of a section body; indented continuations join the directive
    or the ``::`` literal block they belong to."""
    blocks: list[Block] = []
    open_kind: str | None = None  # "directive" or "code" while indented paragraphs may join
    for s, e in paragraph_spans(text, start, end, limit=limits.MAX_BLOCKS + 1):
        indented = text[s] in " \t"
        if indented and open_kind:
            last = blocks[-1]
            blocks[-1] = Block(last.kind, last.start, e, last.level, None, (), last.metadata)
            continue
        directive = _DIRECTIVE.match(text, s, e)
        if directive:
            blocks.append(Block("directive", s, e, RstLevel.BLOCK, None, (), _meta(directive)))
            open_kind = "directive"
        elif indented and blocks and text[blocks[-1].end - 2 : blocks[-1].end] == "::":
            blocks.append(Block("code", s, e, RstLevel.BLOCK, None, (), {"lang": None}))
            open_kind = "code"
        else:
            blocks.append(Block("paragraph", s, e, RstLevel.BLOCK))
            open_kind = None
    return blocks


def _meta(directive: re.Match[str]) -> dict[str, Any]:
    name, argument = directive.group(1), directive.group(2).strip()
    metadata: dict[str, Any] = {"directive": name}
    if name in _CODE_DIRECTIVES:
        metadata["lang"] = argument.split()[0] if argument else None
    return metadata
