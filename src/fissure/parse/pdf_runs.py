"""Runs of aligned lines on a PDF page: the rows of a table without rules.

A table without rules is at least :data:`MIN_ROWS` consecutive lines with a channel of
white space running down them: an x-range at least :data:`CHANNEL` font sizes wide
between figures (:data:`WORD_CHANNEL` between words) that no word touches (dot leaders
count as white; an empty first cell keeps the channel open).
This module finds such runs and the channels of a set of lines; :mod:`.pdf_tables` makes
the tables. The thresholds are the constants below.
"""

from __future__ import annotations

import re

from fissure.parse.captions import caption_title
from fissure.parse.pdf_layout import HYPHEN, Line

__all__ = [
    "MIN_ROWS",
    "aligned_runs",
    "channel",
    "column_edges",
    "inked",
    "parts",
    "phrases",
    "white",
]

# After a sentence, a justified line's space may be as wide as a narrow channel.
_SENTENCE = re.compile(r"[.!?:;,]$")
_LEADER_END = re.compile(r"(?:\.{4,}|(?:\. ?){4,}|…{2,})$")
# A number as a table prints it (one decimal point: "7.1.1" numbers a section).
_FIGURE = re.compile(r"[-+−(]?[$€£¥]?\d[\d,]*(?:\.\d+)?%?\)?")
_LEADER_LAST = (".", "…")  # the last character of a word that _LEADER_END can end
_MAX_HEADER_ROWS = 6  # printed lines a header may take
_FAR = 1e6  # the margins' outer edge, for white space before a line's first word
MIN_ROWS = 3
# Of the font size: wider than a word space (0.25-0.33); a justified line's wider spaces do
# not line up three lines deep. Figures set tight ("2,799,250 2,815,544", 5 points apart at
# 8.5 points) part at 0.45 and not at 0.6 (ICDAR us-018, us-025; bench.pdf_tables), but
# a gap of that width beside a word is a justified line's space (TeX manuals: a running
# header, a heading and a paragraph's line read as a table): there the gap is WORD_CHANNEL.
# A typewritten line's space is as wide as a letter (0.6): there a channel is wider.
CHANNEL = 0.45
WORD_CHANNEL = 0.6
TYPED_CHANNEL = 0.6
LONG_CELL = 30  # characters


def aligned_runs(lines: list[Line]) -> list[tuple[int, int]]:
    """``(first, last)`` indexes of runs of at least three consecutive lines that a
    channel of white space runs down: an x-range at least ``CHANNEL`` font sizes wide that
    no word of any of the lines touches, with words on both sides of it in most of them.
    That is a column edge of a table without rules. A line with empty cells keeps the
    channels open (the white space before its first word and after its last counts), but
    a run neither starts nor ends with a line whose words sit in one column. Justified
    prose has no such channel three lines deep; two columns of text do, but their cells
    are long (and are read as columns instead); monospaced lines are code."""
    runs: list[tuple[int, int]] = []
    frees = [white(line) for line in lines]  # once a line: a failed run starts again
    shapes: dict[int, bool | None] = {}

    def row_like(k: int) -> bool | None:
        """Whether line ``k`` has short pieces; ``None`` for a line in one piece (the
        first line of a wrapped label says nothing about the run it sits in)."""
        if k not in shapes:
            shapes[k] = _row_like(lines[k]) if inner(frees[k]) else None
        return shapes[k]

    i = 0
    while i < len(lines):
        j, free, shape = i, frees[i], row_like(i)
        while inner(free) and j + 1 < len(lines) and lines[j + 1].page == lines[i].page:
            nxt = overlap(free, frees[j + 1], channel(lines[i]))
            if not inner(nxt) or _shape(lines[j + 1], row_like(j + 1), free) not in (None, shape):
                break  # a table's rows end where two columns of prose go on, and so on
            free, j = nxt, j + 1
        first, last = _trimmed(lines, i, j, inner(free))
        if last - first + 1 >= MIN_ROWS and _tabular(lines[first : last + 1], inner(free)):
            floor = runs[-1][1] + 1 if runs else 0
            runs.append((_header_lines(lines, first, floor), last))
            i = last + 1
        else:
            i += 1
    return runs


def _header_lines(lines: list[Line], first: int, floor: int) -> int:
    """Where a run's table starts once the header lines just above it are taken in: up
    to :data:`_MAX_HEADER_ROWS` lines of short pieces, close above it and within its
    width, that a spanning or wrapped header cell kept out of the run (they cross its
    channels); not a caption."""
    run = lines[first:]
    x0, x1 = min(ln.x0 for ln in run[:3]), max(ln.x1 for ln in run[:3])
    k = first
    while k > floor and first - k < _MAX_HEADER_ROWS:
        line, below = lines[k - 1], lines[k]
        close = 0 <= below.top - line.bottom <= 1.2 * max(line.size, below.size)
        inside = line.x0 >= x0 - 2 and line.x1 <= x1 + 2
        if not (close and inside and line.role == "text" and not line.mono):
            break
        if caption_title(line.text) is not None or not _row_like(line):
            break
        k -= 1
    return k


def _trimmed(
    lines: list[Line], i: int, j: int, channels: list[tuple[float, float]]
) -> tuple[int, int]:
    """The run ``i..j`` without the lines at either end whose words all fall between the
    same two channels: inside a table such a line is a label row ("Assets"), at its ends
    a caption or the short last line of a paragraph."""
    edges = [(a + b) / 2 for a, b in channels]

    def columns(line: Line) -> int:
        return len({sum(1 for x in edges if w.x0 > x) for w in line.words})

    while j > i and columns(lines[j]) < 2:
        j -= 1
    while i < j and columns(lines[i]) < 2:
        i += 1
    return i, j


def inner(free: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The gaps with words on both sides (not the margins :func:`white` adds)."""
    return [(a, b) for a, b in free if a > -_FAR and b < _FAR]


def white(line: Line) -> list[tuple[float, float]]:
    """The white spaces of a line: the wide gaps between its words and the margins on
    either side of them (none for code). Dot leaders are white: ``Revenue ........ 1,234``
    has a gap from the label to the number. White beside a word counts narrower than
    beside a figure, by half of :data:`WORD_CHANNEL` less :data:`CHANNEL` a side (a gap
    of 0.6 font sizes between words or 0.45 between figures is a channel), so that
    channels run down between figures set tight and not through a justified line."""
    if line.role != "text" or line.mono or not line.words:
        return []
    pad = _pad(line)
    spans = [(x0, x1, t, 0.0 if _FIGURE.fullmatch(t) else pad) for x0, x1, t in inked(line)]
    return [
        (-_FAR, spans[0][0] - spans[0][3]),
        *[
            (a1 + a_pad, b0 - b_pad)
            for (_, a1, a, a_pad), (b0, _, _, b_pad) in zip(spans, spans[1:], strict=False)
            if b0 - a1 >= (line.size if _SENTENCE.search(a) else channel(line) + a_pad + b_pad)
        ],
        (spans[-1][1] + spans[-1][3], _FAR),
    ]


def _pad(line: Line) -> float:
    """How much narrower white beside a word counts than beside a figure, a side."""
    return 0.0 if line.typed else (WORD_CHANNEL - CHANNEL) / 2 * line.size


def parts(line: Line, left: str, right: str, gap: float) -> bool:
    """Whether a gap of ``gap`` points between the words ``left`` and ``right`` parts two
    cells, as :func:`white` counts a gap after a word that ends no sentence."""
    words = (_FIGURE.fullmatch(left) is None) + (_FIGURE.fullmatch(right) is None)
    return gap >= channel(line) + words * _pad(line)


def inked(line: Line) -> list[tuple[float, float, str]]:
    """``(x0, x1, text)`` of a line's words without their dot leaders (a word of leaders
    alone is left out; a word that ends in them is measured up to its last letter)."""
    out = []
    for w in line.words:
        # Leaders end a word in "." or "…" (a word holds no space): most words are spared
        # the pattern.
        m = _LEADER_END.search(w.text) if w.text[-1:] in _LEADER_LAST else None
        if m is None:
            out.append((w.x0, w.x1, w.text))
        elif m.start() > 0:
            share = m.start() / len(w.text)
            out.append((w.x0, w.x0 + share * (w.x1 - w.x0), w.text[: m.start()]))
    return out or [(w.x0, w.x1, w.text) for w in line.words]


def _shape(line: Line, shape: bool | None, free: list[tuple[float, float]]) -> bool | None:
    """A line's shape inside a run: a line in one piece says nothing (``None``) only where
    it sits in the first column, as the first line of a wrapped label does; elsewhere (a
    title across the page) it is judged as any line."""
    gaps = inner(free)
    if shape is None and not (gaps and line.x1 <= min(a for a, _ in gaps) + 1):
        return _row_like(line)
    return shape


def _row_like(line: Line) -> bool:
    """Whether a line's pieces between its wide gaps are mostly short, as a table row's
    cells are (a line of two columns of prose has two long pieces)."""
    spans = inked(line)
    pieces, current = [], spans[0][2] if spans else ""
    for (_, a1, left), (b0, _, text) in zip(spans, spans[1:], strict=False):
        if parts(line, left, text, b0 - a1):
            pieces.append(current)
            current = text
        else:
            current += " " + text
    pieces.append(current)
    return sum(len(p) < LONG_CELL for p in pieces) * 2 > len(pieces)


def channel(line: Line) -> float:
    """How wide (points) a gap in ``line`` must be to part cells: :data:`CHANNEL` font
    sizes, :data:`TYPED_CHANNEL` on a typewritten line."""
    return (TYPED_CHANNEL if line.typed else CHANNEL) * line.size


def overlap(
    a: list[tuple[float, float]], b: list[tuple[float, float]], wide: float
) -> list[tuple[float, float]]:
    """The parts of ``a``'s gaps that are gaps in ``b`` too, still ``wide`` points wide."""
    out = []
    for x0, x1 in a:
        for y0, y1 in b:
            lo, hi = max(x0, y0), min(x1, y1)
            if hi - lo >= wide:
                out.append((lo, hi))
    return out


def _tabular(lines: list[Line], channels: list[tuple[float, float]]) -> bool:
    """Whether the cells between the channels are short, as a table's are: a column of
    long cells beside another of long cells is two columns of text."""
    edges = sorted((a + b) / 2 for a, b in channels)
    columns: list[list[int]] = [[] for _ in range(len(edges) + 1)]
    for line in lines:
        cells = [""] * (len(edges) + 1)
        for w in line.words:
            k = sum(1 for x in edges if w.x0 > x)
            cells[k] += w.text + " "
        for k, cell in enumerate(cells):
            columns[k].append(len(cell))
    if min(sum(1 for n in c if n) for c in columns) * 2 < len(lines):
        return False  # a column empty in most lines: indentation, not a table
    medians = [sorted(c)[len(c) // 2] for c in columns]
    return sum(1 for m in medians if m >= LONG_CELL) < 2


def phrases(line: Line) -> list[tuple[float, float, list[str]]]:
    """``(x0, x1, words)`` of each run of words in ``line`` whose gaps part no cells
    (:func:`parts`). Dot leaders count as white: they stay in the
    words (a table of contents is told by them) but do not stretch the run."""
    out: list[tuple[float, float, list[str]]] = []
    for w in line.words:
        text, x1 = w.text.replace(HYPHEN, "-"), w.x1
        leaders = _LEADER_END.search(w.text) if w.text[-1:] in _LEADER_LAST else None
        if leaders is not None:
            if leaders.start() == 0 and out:  # leaders alone: white after the run
                out[-1][2].append(text)
                continue
            x1 = w.x0 + leaders.start() / len(w.text) * (w.x1 - w.x0)
        if out and not parts(line, out[-1][2][-1], text, w.x0 - out[-1][1]):
            out[-1] = (out[-1][0], max(out[-1][1], x1), [*out[-1][2], text])
        else:
            out.append((w.x0, x1, [text]))
    return out


def column_edges(lines: list[Line]) -> list[float]:
    """The middles of the white channels that run down ``lines``."""
    free = white(lines[0])
    for line in lines[1:]:
        free = overlap(free, white(line), channel(lines[0]))
    return [(a + b) / 2 for a, b in inner(free)]
