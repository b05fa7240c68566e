"""A PDF page's text as positioned lines of words, read through pdfium.

pdfium gives a page's text in one call and the box of any character by index. Boxes are
asked for only at the ends of words (two calls a word, not one a character), which is
enough to place words and lines, measure the gaps between them and find columns. Font
facts (bold, monospaced) are asked once a line. Coordinates are points from the top-left
corner of the page as it is read: the media box, turned where the page's text runs
sideways (:mod:`~fissure.parse.pdf_frame`); on an unturned page they are pdfplumber's, so
its table boxes compare directly.

pdfium joins a line that ends in a hyphen to the next one and marks the join with
``\\ufffe`` (older builds: ``\\x02``); such a word is split back at the mark here, so that
each line holds what is printed on it and the hyphen is decided later, for the whole
document (see :mod:`fissure.parse.pdf_text`).
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fissure._compiled import twin
from fissure.parse.pdf_frame import Frame, frame_of

__all__ = ["HYPHEN", "Line", "Word", "clean", "page_lines", "reading_order"]

HYPHEN = "\ufffe"  # a line-end hyphen, as pdfium marks it (also for "\x02" and soft hyphens)
# A word ends at whitespace or just after a hyphen mark (what follows it is printed on the
# next line, or, for a soft hyphen that was not used, is the rest of the same word).
_TOKEN = re.compile(r"(\r\n|\r|\n)|[^\s\ufffe\x02\u00ad]+[\ufffe\x02\u00ad]?|[\ufffe\x02\u00ad]")
_MARK_CHARS = "\ufffe\x02\u00ad"
# Ligatures spelled out; zero-width and control characters dropped (pdfium's hyphen marks
# are handled before this applies). Other whitespace is a word boundary anyway.
_CLEAN = str.maketrans(
    {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
     "\ufb05": "ft", "\ufb06": "st", "\u200b": None, "\u200c": None, "\u200d": None,
     "\u2060": None, "\ufeff": None, **{chr(c): None for c in range(32)}, "\x7f": None}
)  # fmt: skip
# Bold families, by name (TeX's bold fonts are "CMBX12", "SFBX1000" …).
_BOLD = re.compile(r"bold|black|heavy|semibold|demi|cmbx|sfbx|lmbx|cmssbx|\+?bx\d")
# Monospaced families, by name (TeX's typewriter fonts often lack the fixed-pitch flag).
_MONO = re.compile(
    r"mono|monl|courier|consol|code|typewriter|fixed|cmtt|lmtt|sftt|menlo|inconsolata"
)
_FORCE_BOLD = 1 << 18  # FPDF_FONT_FORCEBOLD in the flags of FPDFText_GetFontInfo
_FIXED_PITCH = 1


def clean(text: str) -> str:
    """Ligatures spelled out; zero-width and control characters dropped."""
    return text.translate(_CLEAN)


@dataclass(slots=True)
class Word:
    """A run of non-space characters and its box."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float


@dataclass(slots=True)
class Line:
    """Words printed on one baseline of one page.

    Attributes:
        words: In reading order.
        page: 1-based page number.
        size: Typical height of the line's characters (their font's box), in points.
        bold: The line's first and last words are in a bold font.
        mono: Its first word is in a monospaced font.
        starts: The line begins a new paragraph whatever the spacing says (OCR knows).
        ocr: Read by OCR: its size is its letters' height, which varies more.
        role: What the line turned out to be: ``text``, ``furniture`` (a running header,
            footer or page number), ``heading`` or ``table``.
        row: The line is one of three or more whose words a white channel separates into
            short cells: a table's row, whether or not the table finder kept the table. It
            is read whole and never taken for a heading.
    """

    words: list[Word]
    page: int
    size: float
    bold: bool = False
    mono: bool = False
    starts: bool = False
    ocr: bool = False
    role: str = "text"
    depth: int = 0  # for headings: 1 = top level
    title: str | None = None  # for headings found in the outline: the outline's title
    merged: list[Line] = field(default_factory=list)  # later lines of a multi-line heading
    opens: list[tuple[int, str]] = field(default_factory=list)  # sections starting here
    table: Any = None  # for the line where a table is written: the table
    row: bool = False  # one of a run of lines with aligned cells (a table's row, found or not)
    typed: bool = False  # monospaced in a typewritten document (mono is then False)
    # The line's box (top-down; ``top`` is higher on the page), from its words, once.
    x0: float = field(init=False)
    x1: float = field(init=False)
    top: float = field(init=False)
    bottom: float = field(init=False)

    def __post_init__(self) -> None:
        words = self.words
        self.x0, self.x1 = words[0].x0, words[-1].x1
        self.top = min(w.top for w in words)
        self.bottom = max(w.bottom for w in words)

    @property
    def text(self) -> str:
        """The line's words joined by single spaces."""
        return " ".join(w.text for w in self.words)


class _Boxes:
    """pdfium's character boxes and font facts for one text page, by raw calls."""

    def __init__(self, raw: Any, frame: Frame, mapped: bool) -> None:
        import pypdfium2.raw as pdfium_c

        self.c, self.raw, self.frame = pdfium_c, raw, frame
        # pdfium's text can leave out characters of its character list (NULs, marks):
        # then a text position is translated to a character index, by one more call.
        self.mapped = mapped
        self.rect = pdfium_c.FS_RECTF()
        self.rect_ref = ctypes.byref(self.rect)
        self.name = ctypes.create_string_buffer(128)
        self.flags = ctypes.c_int()
        self.flags_ref = ctypes.byref(self.flags)

    def index(self, position: int) -> int:
        """The character index of a position in the page's text (-1: none)."""
        if not self.mapped:
            return position
        return int(self.c.FPDFText_GetCharIndexFromTextIndex(self.raw, position))

    def box(self, position: int) -> tuple[float, float, float, float] | None:
        """``(x0, x1, top, bottom)`` of the character at a text position, top-down."""
        index = self.index(position)
        if index < 0 or not self.c.FPDFText_GetLooseCharBox(self.raw, index, self.rect_ref):
            return None
        r = self.rect
        x0, x1, top, bottom = self.frame.box(r.left, r.bottom, r.right, r.top)
        return x0, x1, top, bottom

    def font(self, position: int) -> tuple[bool, bool]:
        """Whether a character's font is bold, and whether it is monospaced."""
        index = self.index(position)
        if index < 0:
            return False, False
        n = self.c.FPDFText_GetFontInfo(self.raw, index, self.name, 128, self.flags_ref)
        name = self.name.raw[: max(0, min(n, 128) - 1)].decode("latin-1").lower()
        flags = self.flags.value
        weight = self.c.FPDFText_GetFontWeight(self.raw, index)
        bold = weight >= 600 or bool(flags & _FORCE_BOLD) or _BOLD.search(name) is not None
        mono = bool(flags & _FIXED_PITCH) or _MONO.search(name) is not None
        return bold, mono


def page_lines(
    page: Any, textpage: Any, number: int, text: str | None = None, frame: Frame | None = None
) -> list[Line]:
    """The lines of one page, in pdfium's order (content order, which is mostly reading
    order; columns are sorted out later), placed in the page's reading frame (turned so
    that its text stands upright, :mod:`~fissure.parse.pdf_frame`).

    A hyphen mark or a jump to another baseline inside one of pdfium's lines starts a
    new line. The word loop (``_page_lines_py``, or its compiled twin ``_pdfwords``) runs
    for every word of every page, so it binds what it calls.

    Args:
        page: A ``pypdfium2.PdfPage``.
        textpage: Its ``PdfTextPage``.
        number: The 1-based page number, recorded on each line.
        text: The page's text, when the caller has it already.
        frame: The page's frame, when the caller has it already.
    """
    text = textpage.get_text_range() if text is None else text
    frame = frame_of(page, textpage) if frame is None else frame
    boxes = _Boxes(textpage.raw, frame, len(text) != textpage.count_chars())
    if _words is not None:
        return _words.page_lines(text, boxes, number, _line)
    return _page_lines_py(text, boxes, number)


def _page_lines_py(text: str, boxes: _Boxes, number: int) -> list[Line]:
    """The word loop of :func:`page_lines`, in pure Python (``_pdfwords`` does the same
    in C and gives the same lines)."""
    frame = boxes.frame
    left, top = frame.left, frame.top
    turned = frame.box if frame.turn else None
    get, raw, ref, r = boxes.c.FPDFText_GetLooseCharBox, boxes.raw, boxes.rect_ref, boxes.rect
    index = boxes.index if boxes.mapped else None
    out: list[Line] = []
    words: list[Word] = []
    fonts: list[int] = []
    for m in _TOKEN.finditer(text):
        if m.lastindex:  # one of pdfium's line breaks
            if words:
                out.append(_line(words, fonts, boxes, number))
                words, fonts = [], []
            continue
        a, b = m.span()
        marked = text[b - 1] in _MARK_CHARS
        if marked and b - a == 1:  # a mark on its own: it belongs to the word before
            if words and not words[-1].text.endswith(HYPHEN):
                words[-1].text += HYPHEN
            continue
        i, j = a, (b - 2 if marked else b - 1)
        if index is not None:
            i, j = index(i), index(j)
        if i < 0 or not get(raw, i, ref):
            if not words:
                continue
            x0 = x1 = words[-1].x1  # no box: where the word before ends
            w_top, w_bottom = words[-1].top, words[-1].bottom
        elif turned is None:
            x0, w_top, w_bottom, x1 = r.left - left, top - r.top, top - r.bottom, r.right - left
            if j != i and j >= 0 and get(raw, j, ref):
                x1 = r.right - left
        else:
            x0, x1, w_top, w_bottom = turned(r.left, r.bottom, r.right, r.top)
            if j != i and j >= 0 and get(raw, j, ref):
                x1 = turned(r.left, r.bottom, r.right, r.top)[1]
        token = (text[a : b - 1] if marked else m.group()).translate(_CLEAN)
        if not token:
            continue
        w = Word(token + HYPHEN if marked else token, x0, max(x1, x0), w_top, w_bottom)
        if words:
            last = words[-1]
            middle = (w_top + w_bottom) / 2
            if not last.top - 1 <= middle <= last.bottom + 1:  # another baseline
                out.append(_line(words, fonts, boxes, number))
                words, fonts = [], []
            elif last.text.endswith(HYPHEN):
                # A mark inside a line (a soft hyphen that was not used): one word.
                last.text = last.text[:-1] + w.text
                last.x1 = w.x1
                continue
        words.append(w)
        fonts.append(a)
    if words:
        out.append(_line(words, fonts, boxes, number))
    return out


def _line(words: list[Word], fonts: list[int], boxes: _Boxes, number: int) -> Line:
    heights = sorted(w.bottom - w.top for w in words)
    bold, mono = boxes.font(fonts[0])
    if bold and len(fonts) > 1:
        bold = boxes.font(fonts[-1])[0]
    return Line(list(words), number, heights[len(heights) // 2], bold, mono)


# The compiled twin of the word loop (or None): asked for here, below the names it imports.
_words = twin("fissure.parse._pdfwords")


# ----------------------------------------------------------------------------- columns

_MIN_SIDE = 3  # lines on each side of a gutter for the page to have two columns
_MIN_CHARS = 15  # average characters per line on each side: text, not a table's cells
_EDGE = 0.035  # share of the page height at top and bottom that holds only running lines


def reading_order(lines: list[Line], width: float, height: float) -> list[Line]:
    """The page's lines column by column.

    A gutter is a vertical band in the middle of the page that no line's text crosses,
    with at least three lines of text on either side. Lines that span it (a title, a wide
    table), running headers and footers and lines at the very top and bottom cut it into
    bands; within a band with lines on both sides the left column is read before the
    right one, and a line that pdfium joined across the gutter is split there. Elsewhere
    pdfium's order stands. A table, and a row of aligned cells (``Line.row``) that was not
    found as one, is never split: where it reaches across the gutter it cuts the band, so
    that a row's label stays with its values.
    """
    gutter = _gutter(lines, width)
    if gutter is None:
        return lines
    order = {id(line): k for k, line in enumerate(lines)}
    ordered: list[Line] = []
    band: list[Line] = []
    for line in sorted(lines, key=lambda ln: ln.top):
        edge = line.bottom < _EDGE * height or line.top > (1 - _EDGE) * height
        if edge or line.role == "furniture" or _spans(line, gutter):
            ordered += _band(band, gutter, order)
            ordered.append(line)
            band = []
        else:
            band.append(line)
    return ordered + _band(band, gutter, order)


def _band(lines: list[Line], gutter: float, order: dict[int, int]) -> list[Line]:
    """A band's lines: left column then right, when both hold two lines or more."""
    left: list[Line] = []
    right: list[Line] = []
    for line in lines:
        lw = [w for w in line.words if w.x1 <= gutter]
        rw = [w for w in line.words if w.x1 > gutter]
        if lw:
            left.append(_part(line, lw) if rw else line)
        if rw:
            right.append(_part(line, rw) if lw else line)
    if len(left) >= 2 and len(right) >= 2:
        return left + right
    return sorted(lines, key=lambda ln: order[id(ln)])


def _spans(line: Line, gutter: float) -> bool:
    """Whether a line reaches across the gutter and must be read whole."""
    if line.role == "table" and line.table is not None:
        return bool(line.table.x0 < gutter < line.table.x1)
    if line.row or line.role in ("table", "covered"):
        return line.x0 < gutter < line.x1
    return any(a < gutter < b for a, b in _covered(line))


def _covered(line: Line) -> list[tuple[float, float]]:
    """The spans of a line's text, words closer than its font size taken together."""
    spans: list[tuple[float, float]] = []
    for w in line.words:
        if spans and w.x0 - spans[-1][1] < line.size:
            spans[-1] = (spans[-1][0], max(spans[-1][1], w.x1))
        else:
            spans.append((w.x0, w.x1))
    return spans


def _gutter(lines: list[Line], width: float) -> float | None:
    """The x of the best gutter, or ``None`` for a page of one column."""
    text = [ln for ln in lines if ln.role == "text" and ln.words and not ln.row]
    n = len(text)
    if n < _MIN_SIDE or width <= 0:
        return None
    xs = np.arange(0.3 * width, 0.7 * width, 4.0)
    crossing = np.zeros(len(xs), dtype=np.int64)
    for line in text:
        for a, b in _covered(line):
            crossing += (xs > a) & (xs < b)
    if crossing.min() > 0.2 * n:
        return None  # the common case: every line runs across the middle
    x0 = np.array([ln.x0 for ln in text])
    x1 = np.array([ln.x1 for ln in text])
    left = (x0[None, :] < xs[:, None]).sum(axis=1) - crossing
    right = (x1[None, :] > xs[:, None]).sum(axis=1) - crossing
    side = np.where(crossing <= 0.2 * n, np.minimum(left, right), 0)
    k = int(side.argmax())
    if side[k] < _MIN_SIDE:
        return None
    x = float(xs[k])
    if _chars(text, x, True) < _MIN_CHARS or _chars(text, x, False) < _MIN_CHARS:
        return None  # short pieces either side: a table's columns, not text columns
    return x


def _chars(lines: list[Line], x: float, left: bool) -> float:
    """Average characters per line on one side of ``x``, over the lines with text there."""
    counts = [sum(len(w.text) + 1 for w in ln.words if (w.x1 <= x) == left) for ln in lines]
    counts = [c for c in counts if c]
    return sum(counts) / len(counts) if counts else 0.0


def _part(line: Line, words: list[Word]) -> Line:
    """One side of a text line split at the gutter (tables and rows are never split)."""
    return Line(words, line.page, line.size, line.bold, line.mono, line.starts, line.ocr,
                line.role, row=line.row, typed=line.typed)  # fmt: skip
