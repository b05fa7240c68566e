"""CSV and TSV: the header row, then one block per record.

The standard ``csv`` module reports no offsets, so records are delimited by one regex built
from the sniffed dialect: a record ends at a line break outside quotes, which is exactly what
lets a quoted field span lines. ``csv`` still parses the header into column names.
"""

from __future__ import annotations

import csv as stdlib_csv
import re
from enum import IntEnum

from fissure.detect.sniff import suffix_of
from fissure.types import Block, Document

MIME = "text/csv"
_SAMPLE = 65536
# A "header" longer than this is data, not context worth repeating in front of chunks.
_HEADER_CONTEXT_LIMIT = 4096
_NEWLINE = re.compile(r"\r\n|\r|\n")


class CsvLevel(IntEnum):
    """Boundary ranks in CSV (lower is stronger)."""

    TABLE = 8
    HEADER = 9
    ROW = 10


def parse(text: str, *, source: str) -> Document:
    """Parse CSV (or TSV, by ``.tsv`` name or sniffing) into a header and row blocks.

    Args:
        text: The decoded document.
        source: Its path or URI.

    Returns:
        A document with one ``table`` block holding a ``header`` block, then ``row``
        blocks (``metadata["row"]`` is the 1-based record number after the header); a
        chunk that continues the table carries the header line in its context.
        ``Document.metadata`` carries ``header`` (the header line's text), ``columns`` and
        ``delimiter``.
    """
    delimiter, quote = _dialect(text, source)
    record = _record_pattern(delimiter, quote)
    blocks: list[Block] = []
    position, number = 0, 0
    while position < len(text):
        end = record.match(text, position).end()  # type: ignore[union-attr]
        if end > position and text[position:end].strip():
            kind, level = ("header", CsvLevel.HEADER) if not blocks else ("row", CsvLevel.ROW)
            row = {"row": number} if blocks else {}
            blocks.append(Block(kind, position, end, level, None, (), row))
            number += 1
        newline = _NEWLINE.match(text, end)
        position = newline.end() if newline else max(end, position + 1)
    metadata: dict[str, object] = {"delimiter": delimiter}
    if blocks and blocks[0].end - blocks[0].start <= _HEADER_CONTEXT_LIMIT:
        header = text[blocks[0].start : blocks[0].end]
        metadata["header"] = header
        metadata["columns"] = _columns(header, delimiter, quote)
    tree: tuple[Block, ...] = ()
    if blocks:
        start, end = blocks[0].start, blocks[-1].end
        tree = (Block("table", start, end, CsvLevel.TABLE, None, tuple(blocks)),)
    return Document.from_text(text, source=source, mime=MIME, blocks=tree, metadata=metadata)


def _columns(header: str, delimiter: str, quote: str) -> list[str]:
    try:
        return next(stdlib_csv.reader([header], delimiter=delimiter, quotechar=quote), [])
    except stdlib_csv.Error:
        return []


def _dialect(text: str, source: str) -> tuple[str, str]:
    if suffix_of(source) == ".tsv":
        return "\t", '"'
    try:
        dialect = stdlib_csv.Sniffer().sniff(text[:_SAMPLE], delimiters=",;\t|")
    except stdlib_csv.Error:
        return ",", '"'
    return dialect.delimiter, dialect.quotechar or '"'


def _record_pattern(delimiter: str, quote: str) -> re.Pattern[str]:
    d, q = re.escape(delimiter), re.escape(quote)
    # A field is quoted ("..." with "" escapes, then anything up to the delimiter) or plain.
    # An unclosed quote makes the first branch fail, and the field is read as plain text.
    field = rf"(?:{q}[^{q}]*(?:{q}{q}[^{q}]*)*{q}[^{d}\r\n]*|[^{d}\r\n]*)"
    return re.compile(rf"{field}(?:{d}{field})*")
