"""Character spans ``(start, end)`` of one text: trimming them, and which chunks hold a piece.

**Trim.** Every place that drops whitespace from the ends of a span calls one of the
policies here and gets the adjusted span back, so offsets travel on and are never found
again with ``str.find`` (STYLE.md, habit 4). Whitespace is what ``str.isspace`` says, the
class that ``str.strip``, the regex ``\\s`` and CPython's ``Py_UNICODE_ISSPACE`` (which the
compiled twins use) share. The policies, by name (:data:`TRIMS`):

* ``all`` (:func:`trim`): whitespace off both ends — chunks, sentences, baseline windows.
* ``end`` (:func:`trim_end`): trailing whitespace only; the start stays where the structure
  put it — a heading, a code entity, a cell.
* ``lines`` (:func:`trim_lines`): whole blank lines off the front, whitespace off the end;
  the first visible line keeps its indentation — a paragraph block, so that a code-like
  paragraph still starts at its line's start.

A span with nothing visible trims to an empty span (``start == end``); which end it
collapses to is part of each policy's definition below.

**Join.** :func:`sharing` links sub-chunk pieces (the sentence pieces of multi-vector
retrieval) to the chunks they overlap; ingest and the evaluator both call it, so what
``fissure query --sub-weight`` ranks is what the evaluator's ``+sub`` rows measure.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate

Span = tuple[int, int]
Trim = Callable[[str, int, int], Span]

_VISIBLE = re.compile(r"\S")
# Lines of nothing but whitespace (\s is str.isspace), each with its line break.
_BLANK_LINES = re.compile(r"(?:[^\S\r\n]*(?:\r\n|\r|\n))*")
_LOOK_BACK = 64  # characters rstripped at a time at first: a whitespace tail is short


def visible_start(text: str, start: int, end: int) -> int:
    """The first position in ``[start, end)`` that is not whitespace, else ``end``
    (``start`` itself when ``end <= start``). The left half of :func:`trim`, searched at
    C speed: for spans whose ends are looked up one at a time (the size tables)."""
    if start >= end or not text[start].isspace():  # the usual case: no search
        return start
    found = _VISIBLE.search(text, start, end)
    return found.start() if found else end


def visible_end(text: str, start: int, end: int) -> int:
    """The end of the last character in ``[start, end)`` that is not whitespace, else
    ``start`` (``end`` itself when ``end <= start``). The right half of :func:`trim`.

    Looks back in growing windows, so the cost is that of the whitespace tail at C speed,
    never of the whole span (a chunk's span can be megabytes long).
    """
    if end <= start or not text[end - 1].isspace():
        return end
    width = _LOOK_BACK
    while True:
        lo = max(start, end - width)
        kept = len(text[lo:end].rstrip())
        if kept or lo == start:
            return lo + kept
        end, width = lo, width * 4


def trim(text: str, start: int, end: int) -> Span:
    """Policy ``all``: ``text[start:end]`` without leading and trailing whitespace, the
    same as ``(s, visible_end(text, s, end))`` with ``s = visible_start(text, start, end)``.

    Nothing visible: ``(end, end)``. ``end <= start``: the span unchanged. The packer asks
    this for every candidate chunk, whose ends are mostly visible or a line break and an
    indentation away from it: a step per character beats a search there.
    """
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def trim_end(text: str, start: int, end: int) -> Span:
    """Policy ``end``: ``text[start:end]`` without trailing whitespace; the start stays.

    Nothing visible: ``(start, start)``.
    """
    return start, visible_end(text, start, end)


def trim_lines(text: str, start: int, end: int) -> Span:
    """Policy ``lines``: whole blank lines off the front (the first visible line keeps its
    indentation) and whitespace off the end.

    A line ends at ``\\n``, ``\\r\\n`` or ``\\r``. Nothing visible: ``(end, end)``.
    """
    found = _BLANK_LINES.match(text, start, end)  # always matches (maybe nothing)
    first = found.end() if found else start
    if first < end and not text[end - 1].isspace():  # the usual paragraph: no more to do
        return first, end
    stop = visible_end(text, first, end)
    if stop > first or start >= end:
        return first, stop
    return end, end


TRIMS: dict[str, Trim] = {"all": trim, "end": trim_end, "lines": trim_lines}
"""The trim policies by name (see the module's docstring)."""


def sharing(chunks: Sequence[Span], pieces: Sequence[Span]) -> list[list[int]]:
    """For each piece, the chunks that share at least one character with it, as indices
    into ``chunks`` in order of ``(start, end)``.

    A piece belongs to every chunk it overlaps: with overlapping chunks, one inside the
    overlap belongs to both; one that straddles a cut belongs to the chunks on either side.
    A piece's score stands in for its chunks in ``fissure query --sub-weight`` (a chunk
    ranks by its best piece), and a chunk that holds part of a matching sentence hands the
    reader part of the answer. Containment (only chunks that hold a piece wholly) was
    measured too and is worse: it leaves the 7-11 % of sentence pieces that straddle a cut
    to no chunk, and on Chroma's benchmark it lost recall and IoU (``+sub=0.4+subsize=30``
    with structural:120, token recall@5 75.42 against 75.68; with structural:120:30, whose
    chunks overlap, 75.87 against 76.51). An empty piece shares nothing.

    Args:
        chunks: Chunk spans, in any order, overlapping or not.
        pieces: Piece spans, in any order.

    Returns:
        One list per piece (empty when no chunk shares a character with it).
    """
    order = sorted(range(len(chunks)), key=lambda k: chunks[k])
    starts = [chunks[k][0] for k in order]
    # reach[i]: the furthest end of the chunks up to i in start order, so the first chunk
    # that can reach into a piece is found by bisection, overlapping chunks or not.
    reach = list(accumulate((chunks[k][1] for k in order), max))
    out: list[list[int]] = []
    for s, e in pieces:
        owners: list[int] = []
        i = bisect_right(reach, s)
        while s < e and i < len(order) and starts[i] < e:
            if chunks[order[i]][1] > s:
                owners.append(order[i])
            i += 1
        out.append(owners)
    return out
