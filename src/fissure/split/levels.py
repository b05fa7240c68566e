"""Where text may be cut, from strongest to weakest boundary.

Each level turns a span into interior cut positions; parts between cuts tile the span
(whitespace stays inside the parts and is trimmed only when chunks are emitted).

| Level     | cut before …                                   | rank (:mod:`fissure.ranks`) |
|-----------|------------------------------------------------|-----------------------------|
| paragraph | the first line after one or more blank lines   | ``BLOCK``                   |
| line      | the character after a line break               | ``LINE``                    |
| sentence  | a sentence start found by nupunkt              | ``SENTENCE``                |
| word      | the first character after a whitespace run     | ``WORD``                    |
| char      | any grapheme boundary (chosen by budget)       | ``CHAR``                    |

A separator of ``recursive`` ranks as a gap between blocks (``Rank.GAP``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate, islice

import numpy as np

from fissure._compiled import twin
from fissure.ranks import Boundary, Rank
from fissure.size.textindex import TextIndex

CutFinder = Callable[[TextIndex, int, int], list[int]]


@dataclass(frozen=True, slots=True)
class Cuts:
    """A ranked way to find the interior cut positions of ``index.text[start:end]``."""

    boundary: Boundary
    find: CutFinder
    literal: str | None = None  # the separator, for a literal separator level

    @property
    def name(self) -> str:
        """The boundary's name, e.g. ``paragraph`` or ``separator '\\n\\n'``."""
        return self.boundary.name


def _between(positions: Callable[[TextIndex], np.ndarray]) -> CutFinder:
    def find(index: TextIndex, start: int, end: int) -> list[int]:
        arr = positions(index)
        lo = int(np.searchsorted(arr, start, side="right"))
        hi = int(np.searchsorted(arr, end, side="left"))
        return arr[lo:hi].tolist()

    return find


def _sentences(index: TextIndex, start: int, end: int) -> list[int]:
    import nupunkt

    spans = nupunkt.sent_spans(index.text[start:end])
    return [start + a for a, _ in spans[1:] if 0 < a < end - start]


def separator_cuts(separator: str, *, regex: bool = False) -> Cuts:
    """Cut in front of every occurrence of ``separator`` (it stays with the next part)."""
    name = Boundary(f"separator {separator!r}", Rank.GAP)
    if not regex:
        return Cuts(name, _literal_cuts(separator), separator)
    pattern = re.compile(separator)

    def find(index: TextIndex, start: int, end: int) -> list[int]:
        return [
            m.start() for m in pattern.finditer(index.text, start, end) if start < m.start() < end
        ]

    return Cuts(name, find)


def _literal_cuts(separator: str) -> CutFinder:
    """Cuts in front of a plain string, from ``str.split``'s piece lengths (the same
    non-overlapping, left-to-right occurrences as a regex search, found in C)."""
    step = len(separator)

    def find(index: TextIndex, start: int, end: int) -> list[int]:
        pieces = index.text[start:end].split(separator)
        if len(pieces) < 2:
            return []
        # Occurrence k starts after pieces 0..k and k earlier separators.
        at = accumulate([n + step for n in map(len, pieces[:-1])], initial=start - step)
        return [p for p in islice(at, 1, None) if start < p]

    return find


# A line break is ``\r\n``, a lone ``\r`` or ``\n`` (as in TextIndex.line_starts).
_BREAK = r"(?:\r\n|\r(?!\n)|\n)"
# A break, a blank line (only whitespace) and its break, then a line with visible text.
_PARAGRAPH_START = re.compile(rf"{_BREAK}[^\S\r\n]*{_BREAK}(?=[^\S\r\n]*\S)")
# The same for text without "\r": a literal first character lets the regex engine skip ahead.
_PARAGRAPH_START_LF = re.compile(r"\n[^\S\n]*\n(?=[^\S\n]*\S)")
_LEADING_BLANK = re.compile(rf"[^\S\r\n]*{_BREAK}(?=[^\S\r\n]*\S)")
_LINE_START = re.compile(_BREAK)


def _paragraph_cuts(index: TextIndex, start: int, end: int) -> list[int]:
    """TextIndex.paragraph_starts inside ``(start, end)``, found by regex over that span
    alone (the index's arrays cost a pass over the whole document)."""
    text = index.text
    # From two breaks back: the line holding `start` may be a blank line (or `start` may
    # sit inside a \r\n), and the break in front of that line belongs to the match.
    pos = start
    for _ in range(2):
        pos = max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos), 0)
    pos = max(0, pos - 1)
    found = []
    if pos == 0:  # the first line has no break in front of it
        m = _LEADING_BLANK.match(text)
        if m:
            found.append(m.end())
    pattern = _PARAGRAPH_START if "\r" in text else _PARAGRAPH_START_LF
    for m in pattern.finditer(text, pos):  # the lookahead may read past `end`
        p = m.end()
        if p >= end:
            break
        found.append(p)
    return [p for p in found if start < p < end]


def _compiled_paragraph_cuts(scan: Callable[[str, int, int], list[int]]) -> CutFinder:
    """:func:`_paragraph_cuts` by the compiled ``scan`` (see _split.pyx)."""

    def cuts(index: TextIndex, start: int, end: int) -> list[int]:
        return scan(index.text, start, end)

    return cuts


def _line_cuts(index: TextIndex, start: int, end: int) -> list[int]:
    """TextIndex.line_starts inside ``(start, end)``, by regex over that span alone."""
    text = index.text
    if "\r" not in text:
        return _newline_cuts(text, start, end)
    found = (m.end() for m in _LINE_START.finditer(text, max(0, start - 1), end))
    return [p for p in found if start < p < end]


def _newline_cuts(text: str, start: int, end: int) -> list[int]:
    """Positions after each ``\n`` inside ``(start, end)``, from ``str.split`` lengths."""
    lines = text[start:end].split("\n")
    at = accumulate(map(len, lines[:-1]), lambda p, n: p + n + 1, initial=start)
    return [p for p in islice(at, 1, None) if p < end]


_split = twin("fissure.split._split")
_paragraphs = _paragraph_cuts if _split is None else _compiled_paragraph_cuts(_split.paragraph_cuts)

PARAGRAPH = Cuts(Boundary("paragraph", Rank.BLOCK), _paragraphs)
LINE = Cuts(Boundary("line", Rank.LINE), _line_cuts)
SENTENCE = Cuts(Boundary("sentence", Rank.SENTENCE), _sentences)
WORD = Cuts(Boundary("word", Rank.WORD), _between(lambda ix: ix.word_starts))

PROSE: Sequence[Cuts] = (PARAGRAPH, LINE, SENTENCE, WORD)
CODE: Sequence[Cuts] = (PARAGRAPH, LINE, WORD)

_JOINERS = frozenset("\u200d\ufe0e\ufe0f")


def is_grapheme_break(text: str, i: int) -> bool:
    """Whether cutting in front of ``text[i]`` keeps user-perceived characters whole.

    A close approximation of Unicode grapheme rules: never before a combining mark,
    joiner, variation selector or skin-tone modifier, never after a zero-width joiner,
    never inside CRLF.
    """
    if i <= 0 or i >= len(text):
        return True
    ch, prev = text[i], text[i - 1]
    if ch in _JOINERS or prev == "\u200d" or (prev == "\r" and ch == "\n"):
        return False
    if 0x1F3FB <= ord(ch) <= 0x1F3FF:
        return False
    return not unicodedata.category(ch).startswith("M")
