"""CSV and TSV: the header row, then one block per record.

The standard ``csv`` module reports no offsets, so records are delimited by one regex built
from the sniffed dialect: a record ends at a line break outside quotes, which is exactly what
lets a quoted field span lines. ``csv`` still parses the header into column names.

A block costs a few hundred bytes, and millions of six-byte records would cost gigabytes:
past :data:`fissure.limits.MAX_BLOCKS` records, consecutive records are grouped into
``rows`` blocks (about ``MAX_BLOCKS`` of them), cut inside by their lines.
"""

from __future__ import annotations

import csv as stdlib_csv
import re
from array import array
from collections import Counter
from enum import IntEnum

from fissure import limits
from fissure.detect.sniff import suffix_of
from fissure.types import Block, Document

MIME = "text/csv"
_SAMPLE = 65536
# A "header" longer than this is data, not context worth repeating in front of chunks.
_HEADER_CONTEXT_LIMIT = 4096
_NEWLINE = re.compile(r"\r\n|\r|\n")
_DELIMITERS = ",;\t|"
_QUOTED = re.compile(r'"[^"]*"')  # a quoted field, to count delimiters outside quotes
_SNIFF_LINES = 200


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
    starts, ends = _records(text, _record_pattern(delimiter, quote))
    blocks = _blocks(starts, ends)
    metadata: dict[str, object] = {"delimiter": delimiter}
    if len(starts) > limits.MAX_BLOCKS + 1:
        metadata["fallback"] = (
            f"{len(starts) - 1:,} records, over {limits.MAX_BLOCKS:,}: grouped into rows "
            "blocks, cut inside at line breaks"
        )
    if blocks and blocks[0].end - blocks[0].start <= _HEADER_CONTEXT_LIMIT:
        header = text[blocks[0].start : blocks[0].end]
        metadata["header"] = header
        metadata["columns"] = _columns(header, delimiter, quote)
    tree: tuple[Block, ...] = ()
    if blocks:
        start, end = blocks[0].start, blocks[-1].end
        tree = (Block("table", start, end, CsvLevel.TABLE, None, tuple(blocks)),)
    return Document.from_text(text, source=source, mime=MIME, blocks=tree, metadata=metadata)


def _records(text: str, record: re.Pattern[str]) -> tuple[array[int], array[int]]:
    """Where each non-blank record starts and ends (compact arrays: there may be millions)."""
    starts, ends = array("q"), array("q")
    position = 0
    while position < len(text):
        end = record.match(text, position).end()  # type: ignore[union-attr]
        if end > position and text[position:end].strip():
            starts.append(position)
            ends.append(end)
        newline = _NEWLINE.match(text, end)
        position = newline.end() if newline else max(end, position + 1)
    return starts, ends


def _blocks(starts: array[int], ends: array[int]) -> tuple[Block, ...]:
    """The header block, then one ``row`` per record, or ``rows`` of several past the cap."""
    if not starts:
        return ()
    blocks = [Block("header", starts[0], ends[0], CsvLevel.HEADER, None, (), {})]
    n = len(starts) - 1
    group = 1 if n <= limits.MAX_BLOCKS else -(-n // limits.MAX_BLOCKS)
    for first in range(1, n + 1, group):
        last = min(first + group - 1, n)
        if group == 1:
            blocks.append(Block("row", starts[first], ends[first], CsvLevel.ROW, None, (),
                                {"row": first}))  # fmt: skip
        else:
            blocks.append(Block("rows", starts[first], ends[last], CsvLevel.ROW, None, (),
                                {"rows": (first, last)}))  # fmt: skip
    return tuple(blocks)


def _columns(header: str, delimiter: str, quote: str) -> list[str]:
    try:
        return next(stdlib_csv.reader([header], delimiter=delimiter, quotechar=quote), [])
    except stdlib_csv.Error:
        return []


def _dialect(text: str, source: str) -> tuple[str, str]:
    """The delimiter and quote character, from the first lines of the text.

    Not ``csv.Sniffer``: its regular expressions backtrack, and 2 KB of quotes (or 64 KB of
    ``,"a`` lines) take it minutes. Here each candidate delimiter is counted on every line
    with quoted text taken out (one linear pass); the one found the same number of times on
    the most lines wins.
    """
    if suffix_of(source) == ".tsv":
        return "\t", '"'
    sample = text[:_SAMPLE]
    lines = [line for line in _QUOTED.sub("", sample).splitlines() if line.strip()]
    best, score = ",", (0.0, 0)
    for delimiter in _DELIMITERS:
        counts = Counter(line.count(delimiter) for line in lines[:_SNIFF_LINES])
        counts.pop(0, None)
        if not counts:
            continue
        number, lines_with = counts.most_common(1)[0]
        candidate = (lines_with / min(len(lines), _SNIFF_LINES), number)
        if candidate > score:
            best, score = delimiter, candidate
    quote = '"'
    if '"' not in sample and (f"{best}'" in sample or f"'{best}" in sample):
        quote = "'"
    return best, quote


def _record_pattern(delimiter: str, quote: str) -> re.Pattern[str]:
    d, q = re.escape(delimiter), re.escape(quote)
    # A field is quoted ("..." with "" escapes, then anything up to the delimiter) or plain.
    # An unclosed quote makes the first branch fail, and the field is read as plain text.
    field = rf"(?:{q}[^{q}]*(?:{q}{q}[^{q}]*)*{q}[^{d}\r\n]*|[^{d}\r\n]*)"
    return re.compile(rf"{field}(?:{d}{field})*")
