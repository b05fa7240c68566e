"""Section headings of a PDF: from its outline (bookmarks) when it has one, else from the
layout.

An outline entry names a title, a page and usually a height on it. It is matched to the
printed line(s) on that page whose letters and digits spell the title (a heading broken
over two lines, "Chapter 3 Usage" for "Usage", "1.  Introduction" for "1. Introduction"),
the nearest to the entry's height winning; an entry with no such line still starts its
section, at the first line below its height. Depth is the outline's nesting.

Without an outline, a heading is a short line with a word in it that does not end like a
sentence and is set larger than the body text (the size most characters have) and bold or
numbered like ``2.1`` (or much larger), or bold and standing apart (a gap above it) or
numbered. Consecutive heading lines of one style are one heading; a table of contents'
entries ("2 Usage 7" where "2 Usage" follows) are not headings. Depth follows the
numbering (``2.1`` is 2) where headings are numbered, else the style: larger sizes rank
higher, bold above regular.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from fissure.parse.captions import caption_title
from fissure.parse.pdf_layout import Line

__all__ = ["Mark", "apply_outline", "find_headings", "read_outline"]

MAX_DEPTH = 9
_MAX_MARKS = 5000
_MAX_HEADING_CHARS = 150
_BIGGER = 1.12  # a heading is set at least this much larger than the body text …
_MUCH_BIGGER = 1.3  # … and this much when it is neither bold nor numbered
_WORD = re.compile(r"[^\W\d_]{3}")
_PAGE_NUMBER = re.compile(r"\s+\d+$")
# "2.1 Parsing", "Chapter 3 Usage", "A.2 Limits" (a lone capital only with a dot: "A. Scope");
# a section number has at most three digits at its head ("2019 Revenue" is a table's row).
_NUMBERED = re.compile(
    r"(?:(?i:chapter|part|section|appendix)\s+)?"
    r"(\d{1,3}(?:\.\d+)*|[A-Z](?:\.\d+)+|[A-Z]\.)\.?\s+\S"
)
# A line that ends in a figure written with separators, or in two numbers: a row of data.
_FIGURES = re.compile(
    r"\s[-+−(]?[$€£]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?\)?$|\s[-+−(]?\d+(?:\.\d+)?%\)?$"
    r"|\s\S*\d\S*\s+\S*\d\S*$"
)
_SENTENCE_END = re.compile(r"[.,;:!?]$")
_KEY = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class Mark:
    """One outline entry: ``depth`` 1 is top level; ``y`` is in PDF coordinates."""

    depth: int
    title: str
    page: int
    y: float | None


def read_outline(document: Any) -> list[Mark]:
    """The outline entries of a ``pypdfium2.PdfDocument`` that point at a page."""
    marks: list[Mark] = []
    for bookmark in document.get_toc(max_depth=MAX_DEPTH):
        if len(marks) >= _MAX_MARKS:
            break
        title = " ".join((bookmark.get_title() or "").split())
        dest = bookmark.get_dest() or _action_dest(document, bookmark)
        page = dest.get_index() if dest is not None else None
        if not title or page is None or not 0 <= page < len(document):
            continue
        mode, pos = dest.get_view()
        marks.append(Mark(min(bookmark.level + 1, MAX_DEPTH), title, page, _view_y(mode, pos)))
    return marks


def _action_dest(document: Any, bookmark: Any) -> Any:
    """The destination of a bookmark that points through a GoTo action instead."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    action = pdfium_c.FPDFBookmark_GetAction(bookmark)
    if not action or pdfium_c.FPDFAction_GetType(action) != pdfium_c.PDFACTION_GOTO:
        return None
    raw = pdfium_c.FPDFAction_GetDest(document, action)
    return pdfium.PdfDest(raw, document) if raw else None


def _view_y(mode: int, pos: list[float]) -> float | None:
    """The height a destination shows at the top of the window, when it names one."""
    if mode == 1 and len(pos) >= 2:  # XYZ left top zoom
        return pos[1]
    if mode in (3, 7) and pos:  # FitH / FitBH top
        return pos[0]
    if mode == 5 and len(pos) >= 4:  # FitR left bottom right top
        return pos[3]
    return None


def _key(text: str) -> str:
    return _KEY.sub("", text).lower()


def apply_outline(marks: list[Mark], pages: list[list[Line]], tops: list[float]) -> int:
    """Make the lines the outline points at headings (``role = "heading"``), or have
    the sections start there (``Line.opens``). Returns how many entries were printed."""
    printed = 0
    for mark in marks:
        lines = [ln for ln in pages[mark.page] if ln.role == "text"]
        y = None if mark.y is None else tops[mark.page] - mark.y
        found = _match(mark.title, lines, y)
        if found is not None:
            first, count = found
            head = lines[first]
            head.role, head.depth, head.title = "heading", mark.depth, mark.title
            head.merged = lines[first + 1 : first + count]
            for extra in head.merged:
                extra.role = "merged"
            printed += 1
            continue
        anchor = _anchor(pages, mark.page, y)
        if anchor is not None:
            anchor.opens.append((mark.depth, mark.title))
    return printed


def _match(title: str, lines: list[Line], y: float | None) -> tuple[int, int] | None:
    """``(first line, line count)`` of the printed title, or ``None``."""
    want = _key(title)
    if not want:
        return None
    best: tuple[int, float, int, int] | None = None
    for i, line in enumerate(lines):
        have = _key(line.text)
        if not have:
            continue
        found = _spelled(want, have, lines, i)
        if found is None:
            continue
        score, count = found
        distance = 0.0 if y is None else abs(line.top - y)
        if best is None or (score, distance) < best[:2]:
            best = (score, distance, i, count)
    return None if best is None else (best[2], best[3])


def _spelled(want: str, have: str, lines: list[Line], i: int) -> tuple[int, int] | None:
    """How well line ``i`` (and up to three after it) spells ``want``: (score, lines)."""
    if have == want:
        return 0, 1
    if want.startswith(have) and len(have) >= 3:
        joined = have
        for j in range(i + 1, min(i + 4, len(lines))):
            joined += _key(lines[j].text)
            if joined == want:
                return 1, j - i + 1
            if not want.startswith(joined):
                break
    short = len(have) <= len(want) + 12
    if short and (have.endswith(want) or have.startswith(want)) and len(want) >= 3:
        return 2, 1
    if want.endswith(have) and len(have) >= max(4, len(want) // 2):
        return 2, 1
    return None


def _anchor(pages: list[list[Line]], page: int, y: float | None) -> Line | None:
    """The first line of text at or below ``y`` on ``page``, else on a later page."""
    for number in range(page, len(pages)):
        for line in pages[number]:
            if line.role in ("text", "heading", "table") and (
                number > page or y is None or line.top >= y - 2
            ):
                return line
    return None


# ----------------------------------------------------------------------------- layout


def find_headings(pages: list[list[Line]]) -> int:
    """Mark headings found from the layout; returns how many."""
    text = [ln for lines in pages for ln in lines if ln.role == "text" and not ln.mono]
    if not text:
        return 0
    sizes: Counter[float] = Counter()
    for line in text:
        sizes[round(line.size * 2) / 2] += len(line.text)
    body = sizes.most_common(1)[0][0]
    heads: list[Line] = []
    for lines in pages:
        flow = [ln for ln in lines if ln.role in ("text", "table")]
        for k, line in enumerate(flow):
            if line.role == "text" and _is_heading(line, flow, k, body):
                heads.append(line)
    heads = _not_contents(_merge_runs(heads, pages))
    plain = [h for h in heads if h.size < _BIGGER * body and not _NUMBERED.match(h.text)]
    if len(plain) > 0.25 * len(text):  # bold lines everywhere: they are not all headings
        heads = [h for h in heads if h not in plain]
    _set_depths(heads)
    for head in heads:
        head.role = "heading"
    return len(heads)


def _is_heading(line: Line, flow: list[Line], k: int, body: float) -> bool:
    text = line.text
    if (
        line.row  # a table's row, found as a table or not
        or _FIGURES.search(text)  # "Total assets 1,234", "Revenue 2019 2020"
        or len(text) > _MAX_HEADING_CHARS
        or _SENTENCE_END.search(text)
        or not any(ch.isalpha() for ch in text)
        or caption_title(text) is not None
    ):
        return False
    if _WORD.search(text) is None:
        return False  # a formula's pieces ("X−1", "k=0") set large
    numbered = _NUMBERED.match(text) is not None
    if line.size >= _BIGGER * body:
        return line.bold or numbered or line.size >= _MUCH_BIGGER * body
    if not line.bold:
        return False
    return numbered or _apart(flow, k, body)


def _apart(flow: list[Line], k: int, body: float) -> bool:
    """Whether a line stands apart from the one above it (or opens the page)."""
    if k == 0:
        return True
    above = flow[k - 1]
    return flow[k].top - above.bottom > 0.45 * body or above.bold != flow[k].bold


def _merge_runs(heads: list[Line], pages: list[list[Line]]) -> list[Line]:
    """One heading per run of consecutive heading lines of one style."""
    chosen = {id(h) for h in heads}
    out: list[Line] = []
    for lines in pages:
        previous: Line | None = None
        for line in lines:
            if id(line) not in chosen:
                if line.role != "furniture":
                    previous = None
                continue
            if (
                previous is not None
                and abs(previous.size - line.size) <= 0.05 * line.size
                and previous.bold == line.bold
                and line.top - previous.bottom < 0.8 * line.size
                and not _NUMBERED.match(line.text)
                and len(previous.merged) < 3
            ):
                previous.merged.append(line)
                line.role = "merged"
                continue
            out.append(line)
            previous = line
    return out


def _not_contents(heads: list[Line]) -> list[Line]:
    """Without the entries of a table of contents: a heading candidate that ends in a
    number where a later one reads the same without it ("2 Usage 7", then "2 Usage")."""
    keys = [_key(h.text) for h in heads]
    later: set[str] = set()
    keep: list[Line] = []
    for head, key in zip(heads[::-1], keys[::-1], strict=True):
        trimmed = _PAGE_NUMBER.sub("", head.text)
        if trimmed != head.text and _key(trimmed) in later:
            continue
        later.add(key)
        keep.append(head)
    return keep[::-1]


def _set_depths(heads: list[Line]) -> None:
    styles = sorted({(round(h.size * 2) / 2, h.bold) for h in heads}, reverse=True)
    rank = {style: i + 1 for i, style in enumerate(styles)}
    numbered: dict[tuple[float, bool], Counter[int]] = {}
    for h in heads:
        m = _NUMBERED.match(h.text)
        if m:
            style = (round(h.size * 2) / 2, h.bold)
            numbered.setdefault(style, Counter())[m.group(1).count(".") + 1] += 1
    use_numbers = sum(sum(c.values()) for c in numbered.values()) * 2 >= len(heads)
    for h in heads:
        style = (round(h.size * 2) / 2, h.bold)
        m = _NUMBERED.match(h.text)
        if use_numbers and m:
            h.depth = m.group(1).count(".") + 1
        elif use_numbers and style in numbered:
            h.depth = numbered[style].most_common(1)[0][0]
        else:
            h.depth = rank[style]
        h.depth = min(h.depth, MAX_DEPTH)
