"""What a chunk that continues a table carries in front of it: the table's header row.

Parsers of every format with tables (Markdown, HTML, DOCX, CSV, PDF) emit a ``table``
block whose children are ``row`` blocks (CSV: a ``header`` block, then rows); a header row
says so in ``metadata["header"]``, and where no row does, the first row is taken as the
header — unless the table block says ``metadata["header_rows"] == 0`` (a PDF table whose
first row already holds figures). A table that does not fit is packed row by row like
any block; a chunk that starts after the header then gets the header line in its
``context`` (after the breadcrumb, which holds the table's title or caption), counted
inside the budget and embedded with the chunk, so that ``| Q3 | 4.2 | 3.9 |`` still says
what its columns are. A header stacked over several printed lines (a PDF table says
``header_stacked``) is carried joined column by column, by the chunks that hold it too,
where it fits: their lines do not spell ``to air kg/year``.
Where to cut stays the parser's business; this module only says what a table chunk must
leave room for.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from fissure.types import Block

__all__ = ["TableHeads", "has_tables", "table_spans"]

_ROWS = frozenset({"row", "header"})


def has_tables(blocks: Sequence[Block]) -> bool:
    """Whether any block of the tree is a ``table`` with at least two rows."""
    stack = list(blocks)
    while stack:
        block = stack.pop()
        if block.kind == "table" and sum(c.kind in _ROWS for c in block.children) > 1:
            return True
        stack.extend(block.children)
    return False


def table_spans(blocks: Sequence[Block]) -> list[tuple[int, int]]:
    """Where the tree's ``table`` blocks lie: their spans merged where they overlap (a
    table inside a table's cell), in order, so a position is in a table when it is in one
    of these."""
    spans = []
    stack = list(blocks)
    while stack:
        block = stack.pop()
        if block.kind == "table":
            spans.append((block.start, block.end))
        stack.extend(block.children)
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


class TableHeads:
    """The header of each table, found once per table.

    Args:
        text: The document text the blocks index into.
        blocks: Its Block tree, for :meth:`stacked_inside`.
    """

    def __init__(self, text: str, blocks: Sequence[Block] = ()) -> None:
        self.text = text
        self._found: dict[int, tuple[int, str, bool] | None] = {}
        stacked = []
        stack = list(blocks)
        while stack:
            block = stack.pop()
            if block.kind == "table" and block.metadata.get("header_stacked"):
                stacked.append((block.start, id(block), block))
            stack.extend(block.children)
        stacked.sort(key=lambda t: t[:2])
        self._stacked = [t[2] for t in stacked]
        self._stacked_starts = [t[0] for t in stacked]

    def stacked_inside(self, start: int, end: int) -> str | None:
        """The joined header of the first table with a stacked header that starts inside
        ``start``-``end`` (a chunk that holds the table's start but starts before it)."""
        k = bisect_left(self._stacked_starts, start)
        if k == len(self._stacked) or self._stacked_starts[k] >= end:
            return None
        table = self._stacked[k]
        return self.line_for(table, table.start)

    def line_for(self, table: Block, start: int) -> str | None:
        """The header line to carry in front of a chunk starting at ``start`` inside
        ``table``, or ``None`` when the chunk starts at or before the header (it holds the
        header itself, unless the header is stacked over several printed lines: then the
        chunk carries them joined column by column too, which its lines do not spell) or
        the table has no body."""
        key = id(table)
        if key not in self._found:
            self._found[key] = self._head(table)
        head = self._found[key]
        if head is None or (start < head[0] and not head[2]):
            return None
        return head[1]

    def _head(self, table: Block) -> tuple[int, str, bool] | None:
        """Where the table's body starts, its header line(s) joined by `` / `` (or column
        by column, :func:`_joined`, where the parser says they are stacked), and whether
        the chunk that holds the header carries the line too (a stacked header joined)."""
        rows = [c for c in table.children if c.kind in _ROWS]
        if len(rows) < 2 or table.metadata.get("header_rows") == 0:
            return None  # the parser knows the table has no header (its first row is data)
        marked = [r for r in rows if r.kind == "header" or r.metadata.get("header")]
        head = marked if marked and len(marked) < len(rows) else rows[:1]
        lines = []
        for row in head:
            # The first line only: a Markdown header row also spans its |---| line.
            first = self.text[row.start : row.end].strip().split("\n", 1)[0].strip()
            if first:
                lines.append(first)
        if not lines:
            return None
        if table.metadata.get("header_stacked"):
            joined = _joined(lines)
            return head[-1].end, joined, joined not in lines
        return head[-1].end, " / ".join(lines), False


def _joined(lines: list[str]) -> str:
    """Header rows stacked over one another (a PDF table says ``header_stacked``) as one
    line: column by column where every row with cells has as many ``|`` cells (``| 2023 |
    2024`` over ``Region | $m | $m`` is ``Region | 2023 $m | 2024 $m``), after the lines
    across the whole table (a spanning title row), else the rows apart by `` / ``."""
    rows = [[cell.strip() for cell in line.split("|")] for line in lines]
    titles = [r[0] for r in rows if len(r) == 1]  # a line across the whole table
    rows = [r for r in rows if len(r) > 1]
    if not rows or len({len(r) for r in rows}) != 1:
        return " / ".join(lines)
    columns = zip(*rows, strict=True)
    joined = " | ".join(" ".join(c for c in column if c) for column in columns).strip()
    return " / ".join([*titles, joined])
