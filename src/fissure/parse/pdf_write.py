"""Write a PDF's lines, in reading order, as ``Document.text`` with its Block tree.

Consecutive lines of text make a paragraph until the spacing widens (a step half again
the page's usual one), the size or the font family changes, a bullet starts a line or the
page ends. Words hyphenated at a line end are joined (see :class:`~.pdf_text.Hyphens`); a
monospaced paragraph is ``code``, spaced as printed. A table that goes on at the top of
the next page (same columns, no title of its own) stays one ``table`` block, a repeated
header row left out, so that its rows on the later page carry the header and title too.
"""

from __future__ import annotations

import re
from enum import IntEnum
from typing import Any

from fissure.parse.outline import LINE_GAP, Outline
from fissure.parse.pdf_layout import HYPHEN, Line
from fissure.parse.pdf_tables import Table
from fissure.parse.pdf_text import Hyphens, char_unit, line_text

__all__ = ["PAGE_SEPARATOR", "PageFailed", "PdfLevel", "write"]

PAGE_SEPARATOR = "\n\f\n"


class PdfLevel(IntEnum):
    """Rank of the boundary in front of a PDF block; lower is stronger."""

    H1 = 1
    H2 = 2
    H3 = 3
    H4 = 4
    H5 = 5
    H6 = 6
    H7 = 7
    H8 = 8
    H9 = 9
    BLOCK = 10  # paragraph, code, table, caption
    ROW = 11  # table row


_GAP_FACTOR = 1.4  # a line step this many times the page's usual one starts a paragraph
_SIZE_CHANGE = 0.15
_OCR_SIZE_CHANGE = 1.0  # never: an OCR line of short letters ("rain.") looks smaller
_BULLET = re.compile(r"[•◦▪●∙‣⁃■□➢►✓]")
_SKIPPED = frozenset({"furniture", "covered", "merged"})


class PageFailed(Exception):
    """Writing a page failed; ``number`` is the page (1-based), ``cause`` the error."""

    def __init__(self, number: int, cause: Exception) -> None:
        super().__init__(f"page {number}: {type(cause).__name__}: {cause}")
        self.number, self.cause = number, cause


def write(
    pages: list[list[Line]],
    *,
    plain: dict[int, str] | None = None,
    notes: dict[int, str] | None = None,
) -> tuple[str, tuple[Any, ...]]:
    """The document text and its top-level blocks.

    Args:
        pages: Each page's lines, in reading order.
        plain: Pages (1-based) to write as this text instead, one paragraph each, where
            the structured path failed.
        notes: What fell back on a page (1-based), recorded as ``pdf_fallback`` in the
            metadata of each of its blocks.

    Raises:
        PageFailed: Writing a page failed.
    """
    writer = _Writer(Hyphens(pages))
    plain, notes = plain or {}, notes or {}
    number = 0
    try:
        for number, lines in enumerate(pages, start=1):
            if number > 1:
                writer.out.request_gap(PAGE_SEPARATOR)
            writer.meta = {"page": number}
            if number in notes:
                writer.meta["pdf_fallback"] = notes[number]
            if number in plain:
                writer.plain(plain[number])
            else:
                writer.page(number, lines)
        return writer.finish()
    except Exception as exc:
        raise PageFailed(max(number, 1), exc) from exc


class _Writer:
    def __init__(self, hyphens: Hyphens) -> None:
        self.out = Outline()
        self.hyphens = hyphens
        self.table: Table | None = None  # the table still open, which a page may go on
        self.meta: dict[str, Any] = {}

    def page(self, number: int, lines: list[Line]) -> None:
        step = _usual_step(lines)
        paragraph: list[Line] = []
        first = True  # nothing written on this page yet
        for line in lines:
            if line.role in _SKIPPED:
                continue
            if paragraph and (
                line.role != "text" or line.opens or _breaks(paragraph[-1], line, step)
            ):
                self.paragraph(paragraph)
                paragraph = []
            if line.role == "table" and not line.opens:
                self.rows(line.table, first)
            else:
                self.end_table()
                self.block(line, paragraph)
            first = False
        if paragraph:
            self.paragraph(paragraph)

    def plain(self, text: str) -> None:
        """A page as pdfium's plain text: one paragraph, its lines as printed."""
        self.end_table()
        if text:
            self.out.leaf("paragraph", text, level=PdfLevel.BLOCK, metadata=self.meta)

    def block(self, line: Line, paragraph: list[Line]) -> None:
        """Open the sections that start at ``line``; write it if it is a heading or a
        table, else add it to ``paragraph``."""
        out, meta = self.out, self.meta
        for depth, title in line.opens:
            out.heading(depth, title, level=min(depth, 9), metadata=meta, text="")
        if line.role == "heading":
            printed = " ".join(ln.text for ln in [line, *line.merged])
            title = line.title or printed
            out.heading(line.depth, title, level=min(line.depth, 9), metadata=meta,
                        text=printed)  # fmt: skip
        elif line.role == "table":
            self.rows(line.table, False)
        else:
            paragraph.append(line)

    def rows(self, table: Table, first_on_page: bool) -> None:
        """Write a table, or its rows into the open table it continues."""
        if self.table is not None and first_on_page and _continues(self.table, table):
            repeated = table.rows[0] == self.table.rows[0]  # the header, on the new page
            for row in table.rows[table.header if repeated else 0 :]:
                self.row(row, header=False)
            return
        self.end_table()
        meta = self.meta if table.header else {**self.meta, "header_rows": 0}
        if table.stacked:  # a header printed over several rows: one header, joined
            meta = {**meta, "header_rows": table.header, "header_stacked": True}
        self.out.open("table", level=PdfLevel.BLOCK, title=table.title, metadata=meta)
        if table.title:
            self.out.leaf("caption", table.title, level=PdfLevel.BLOCK, metadata=self.meta)
        self.table = table
        for k, row in enumerate(table.rows):
            self.row(row, header=k < table.header)

    def row(self, cells: list[str], *, header: bool) -> None:
        meta = {**self.meta, "header": True} if header else self.meta
        self.out.leaf("row", " | ".join(cells), level=PdfLevel.ROW, metadata=meta, gap=LINE_GAP)

    def end_table(self) -> None:
        if self.table is not None:
            self.out.close()
            self.table = None

    def paragraph(self, lines: list[Line]) -> None:
        self.end_table()
        out, meta = self.out, self.meta
        if lines[0].mono:
            unit, left = char_unit(lines), min(ln.x0 for ln in lines)
            text = "\n".join(line_text(ln, unit, left).rstrip() for ln in lines)
            out.leaf("code", text, level=PdfLevel.BLOCK, metadata={**meta, "lang": None})
            return
        words = [[w.text for w in ln.words] for ln in lines]
        for k in range(len(words) - 1):
            if words[k] and words[k + 1] and _hyphenated(words[k][-1], words[k + 1][0]):
                words[k][-1] = self.hyphens.join(words[k][-1], words[k + 1][0])
                words[k + 1] = words[k + 1][1:]
        text = "\n".join(" ".join(ws) for ws in words if ws).replace(HYPHEN, "-")
        out.leaf("paragraph", text, level=PdfLevel.BLOCK, metadata=meta)

    def finish(self) -> tuple[str, tuple[Any, ...]]:
        self.end_table()
        return self.out.finish()


def _continues(previous: Table, table: Table) -> bool:
    """Whether ``table``, first on its page, goes on with ``previous``, last on the page
    before: as many columns, and no title of its own (or the same one)."""
    same_columns = len(table.rows[0]) == len(previous.rows[0])
    return same_columns and table.title in (None, previous.title)


def _usual_step(lines: list[Line]) -> float:
    """The page's usual distance from one line to the next (lower quartile: on a page of
    short paragraphs most steps are paragraph gaps)."""
    steps = [
        _middle(b) - _middle(a)
        for a, b in zip(lines, lines[1:], strict=False)
        if a.role == b.role == "text" and 0 < _middle(b) - _middle(a) < 3 * max(a.size, 1.0)
    ]
    return sorted(steps)[len(steps) // 4] if len(steps) >= 2 else 0.0


def _middle(line: Line) -> float:
    # The middle, not the top: an OCR line's box starts at its tallest letter.
    return (line.top + line.bottom) / 2


def _breaks(a: Line, b: Line, step: float) -> bool:
    """Whether line ``b`` starts a new paragraph after line ``a``."""
    if b.starts or a.page != b.page or a.mono != b.mono:
        return True
    moved = _middle(b) - _middle(a)
    if moved <= 0 or (step and moved > _GAP_FACTOR * step):
        return True
    change = _SIZE_CHANGE if not (a.ocr or b.ocr) else _OCR_SIZE_CHANGE
    if abs(a.size - b.size) > change * max(a.size, b.size):
        return True
    return _BULLET.match(b.words[0].text) is not None


def _hyphenated(last: str, first: str) -> bool:
    """Whether a line ends in a hyphen that joins its last word to the next line's."""
    if last.endswith(HYPHEN):
        return True
    return len(last) > 1 and last[-1] == "-" and last[-2].isalpha() and first[:1].islower()
