"""Across pages: running headers and footers, hyphenated words, and the text of a line.

*Furniture* — running headers, footers and page numbers — is a line at the top or the
bottom of a page, apart from the text, whose text, with its numbers taken as one, is
printed at the same height on other pages too (see :func:`mark_furniture`). Such lines
leave the text; they would otherwise glue ``Annual report 2024 · page 7`` to the next
paragraph.

A word hyphenated at a line end is joined to its rest on the next line. Whether the hyphen
stays is decided by the document itself: it stays when the hyphenated spelling occurs
elsewhere in it (``day-to-day``) or when either part is not a lower-case word (``--gen-
suppressions``), and goes when the joined word occurs elsewhere or both parts are plain
lower-case letters (``manage-`` ``ment``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from operator import attrgetter

from fissure.parse.captions import caption_title
from fissure.parse.pdf_layout import HYPHEN, Line

__all__ = ["Hyphens", "char_unit", "line_text", "mark_furniture"]

_EDGE = 0.15  # share of the page height at the top and at the bottom where furniture sits
_EDGE_LINES = 3  # furniture is among the first or last three lines of a page
_SAME_PLACE = 4.0  # points
_APART = 0.8  # of its font size: the gap between furniture and the text …
_CLOSE = 0.2  # … or this, for furniture in smaller type than the text
_SMALLER = 0.88
_DIGITS = re.compile(r"\d+")
_ROMAN = re.compile(r"[ivxlcdm]+", re.IGNORECASE)
_LETTERS = re.compile(r"[^\W\d_]+")
_TEXT = attrgetter("text")


def _shape(text: str) -> str:
    """A line's text with every number the same: "Page 3 of 9" ~ "Page 4 of 9"."""
    text = " ".join(text.lower().split())
    if _ROMAN.fullmatch(text):
        return "#"
    return _DIGITS.sub("#", text)


def mark_furniture(pages: list[list[Line]], heights: list[float]) -> list[str]:
    """Mark running headers, footers and page numbers (``role = "furniture"``).

    Candidates are the outermost lines of each page, then the next ones in where those
    were furniture: in the top or bottom 15% of the page, set apart from the text by
    most of a line, holding a word or a number. A candidate is furniture when its text
    (numbers as ``#``) stands at the same height on 2 pages of a short document or 3 of a
    longer one (a second or third line in: on a fifth of the pages).

    Args:
        pages: Each page's lines.
        heights: Each page's height in points.

    Returns:
        The distinct texts marked (with their numbers as ``#``), in order of first sight.
    """
    filled = sum(1 for lines in pages if lines)
    if filled < 2:
        return []
    rows = [_rows(sorted(lines, key=lambda ln: ln.top)) for lines in pages]
    marked: list[str] = []
    for depth in range(_EDGE_LINES):
        need = 2 if filled < 6 else 3
        if depth:
            need = max(need, -(-filled // 5))
        places: dict[str, list[tuple[int, float, Line]]] = defaultdict(list)
        for number, (page_rows, height) in enumerate(zip(rows, heights, strict=True)):
            for line in _candidates(page_rows, height, depth):
                places[_shape(line.text)].append((number, line.top, line))
        for shape, seen in places.items():
            for _, top, line in seen:
                if len({n for n, t, _ in seen if abs(t - top) <= _SAME_PLACE}) >= need:
                    line.role = "furniture"
                    if shape not in marked:
                        marked.append(shape)
    return marked


def _candidates(rows: list[list[Line]], height: float, depth: int) -> list[Line]:
    """The lines of the row ``depth`` in from the top and from the bottom (lines on one
    baseline are one row: a header's date on the left and title in the middle), where
    all rows further out are furniture and this one stands apart from the text in the
    margin zone."""
    found = []
    for side in (rows, rows[::-1]):
        if len(side) <= depth + 1 or any(ln.role != "furniture" for r in side[:depth] for ln in r):
            continue
        row, inner = side[depth], side[depth + 1]
        top = side is rows
        for line in row:
            gap = min(ln.top for ln in inner) - line.bottom if top else (
                line.top - max(ln.bottom for ln in inner))  # fmt: skip
            in_zone = line.bottom <= _EDGE * height if top else line.top >= (1 - _EDGE) * height
            shape = _shape(line.text)
            worded = shape == "#" or _LETTERS.search(shape) is not None
            # A caption is no furniture, though a long table repeats it on every page.
            named = caption_title(line.text) is not None
            # Apart from the text by most of a line, or by less when set smaller than it.
            smaller = line.size < _SMALLER * max(ln.size for ln in inner)
            apart = gap >= (_CLOSE if smaller else _APART) * line.size
            if in_zone and worded and not named and apart and line.role == "text":
                found.append(line)
    return found


def _rows(lines: list[Line]) -> list[list[Line]]:
    """Lines (sorted by top) grouped by baseline."""
    rows: list[list[Line]] = []
    for line in lines:
        if rows and abs(line.top - rows[-1][0].top) < 0.5 * max(line.size, 1.0):
            rows[-1].append(line)
        else:
            rows.append([line])
    return rows


class Hyphens:
    """Decides line-end hyphens from the words the document uses elsewhere.

    Args:
        pages: Every page's lines (their words are the vocabulary).
    """

    def __init__(self, pages: list[list[Line]]) -> None:
        self.pages = pages
        self._words: Counter[str] | None = None

    @property
    def words(self) -> Counter[str]:
        """How often each word occurs (counted on the first join: most pages need none)."""
        if self._words is None:
            # Counted as printed first, then folded: far fewer distinct words than words.
            printed: Counter[str] = Counter()
            for lines in self.pages:
                for line in lines:
                    printed.update(map(_TEXT, line.words))
            words: Counter[str] = Counter()
            for text, n in printed.items():
                if not text.endswith(HYPHEN):
                    words[text.lower().strip(".,;:!?()[]\"'")] += n
            self._words = words
        return self._words

    def join(self, left: str, right: str) -> str:
        """The word ``left`` (ending in the hyphen mark) and ``right`` make together."""
        head = left[:-1] if left.endswith(HYPHEN) else left
        head = head[:-1] if head.endswith("-") else head  # a real hyphen pdfium did not mark
        core = right.rstrip(".,;:!?)]\"'")
        h = _LETTERS.search(head[::-1])
        tail = h.group()[::-1] if h and h.start() == 0 else ""
        lead = _LETTERS.match(core)
        hyphenated = f"{head}-{core}".lower().lstrip("([\"'")
        joined = f"{head}{core}".lower().lstrip("([\"'")
        if self.words[hyphenated]:
            return f"{head}-{right}"
        if self.words[joined]:
            return head + right
        plain = (
            tail
            and lead is not None
            and lead.group() == core
            and "-" not in head
            and core[:1].islower()
            and tail[-1:].islower()
        )
        return head + right if plain else f"{head}-{right}"


def line_text(line: Line, unit: float | None = None, left: float = 0.0) -> str:
    """The printed text of a line: words joined by single spaces, or, for a monospaced
    line with ``unit`` (the width of one character), spaced as printed, indented from
    ``left`` (the left edge of its block)."""
    if not line.mono or unit is None or unit <= 0:
        return " ".join(w.text for w in line.words)
    parts: list[str] = []
    at = left
    for w in line.words:
        gap = max(1 if parts else 0, round((w.x0 - at) / unit))
        parts.append(" " * min(gap, 200) + w.text)
        at = w.x1
    return "".join(parts)


def char_unit(lines: list[Line]) -> float | None:
    """The width of one character in monospaced ``lines`` (median over words)."""
    widths = sorted((w.x1 - w.x0) / len(w.text) for ln in lines for w in ln.words if w.text)
    return widths[len(widths) // 2] if widths else None
