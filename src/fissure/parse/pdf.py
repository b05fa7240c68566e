"""PDF → text with sections, paragraphs, tables and code, page numbers kept.

pdfium (through pypdfium2) reads each page's words with their positions
(:mod:`~fissure.parse.pdf_layout`). Across pages, running headers, footers and page
numbers are found and left out (:mod:`~fissure.parse.pdf_text`); each page is read column
by column; tables are found by pdfplumber where a page shows one
(:mod:`~fissure.parse.pdf_tables`); headings come from the outline, else from the layout
(:mod:`~fissure.parse.pdf_headings`); scanned pages go through Tesseract
(:mod:`~fissure.parse.pdf_ocr`).

``Document.text`` is the text fissure writes from that: paragraphs apart by a blank line,
their lines as printed, with words hyphenated at a line end joined, ligatures spelled out
and whitespace made plain; table rows one per line, cells joined by `` | ``; code (a
monospaced paragraph) spaced as printed; pages apart by ``"\\n\\f\\n"``. Every block
carries ``metadata["page"]`` (1-based). A page pdfium cannot read is skipped and named in
``metadata["warnings"]``; a file with nothing readable raises :class:`InputError`.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from fissure.errors import InputError
from fissure.parse import pdf_ocr
from fissure.parse.pdf_headings import apply_outline, find_headings, read_outline
from fissure.parse.pdf_layout import Line, page_lines, reading_order
from fissure.parse.pdf_tables import aligned_runs, graphics, place, tables_on
from fissure.parse.pdf_text import mark_furniture
from fissure.parse.pdf_write import PAGE_SEPARATOR, PdfLevel, write
from fissure.parse.pdfguard import check_streams
from fissure.types import Document

__all__ = ["PAGE_SEPARATOR", "PdfLevel", "parse"]

_SCAN_SHARE = 0.3  # a page without text whose images cover this much of it is a scan


@dataclass
class _Pages:
    """What reading the pages found."""

    lines: list[list[Line]] = field(default_factory=list)
    sizes: list[tuple[float, float]] = field(default_factory=list)  # width, height
    tops: list[float] = field(default_factory=list)  # media box top, PDF coordinates
    ruled: list[bool] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    scans: list[int] = field(default_factory=list)  # scanned pages read by OCR
    unread_scans: list[int] = field(default_factory=list)  # scanned pages without OCR


def parse(
    data: bytes, *, source: str, mime: str = "application/pdf", tables: bool = True
) -> Document:
    """Extract a PDF's text and structure.

    Args:
        data: The file's bytes.
        source: Path or URI, recorded on the Document.
        mime: Recorded on the Document.
        tables: Look for tables (pdfplumber, on the pages that show one).

    Returns:
        A Document whose blocks are ``section``\\s (title from the outline or the
        heading; first child the ``heading``) holding ``paragraph``, ``code`` and
        ``table`` blocks (a ``caption``, then ``row``\\s, header rows marked
        ``metadata["header"]``); without headings, those blocks at the top level.
        ``metadata`` has ``pages``, ``headings`` (``outline`` or ``layout``) when there
        are any, ``tables``, ``furniture`` (running lines left out, numbers as ``#``),
        ``ocr_pages`` and ``warnings`` where they apply.

    Raises:
        InputError: The bytes are not a PDF pdfium can open, the PDF needs a password, a
            scanned page needs OCR that is not installed, or no page has any text.
    """
    import pypdfium2 as pdfium

    check_streams(data, source=source)  # a stream bomb is refused before pdfium inflates it
    try:
        document = pdfium.PdfDocument(bytes(data))
    except pdfium.PdfiumError as exc:
        raise _open_error(source, exc) from None
    try:
        pages = _read_pages(document)
        marks = read_outline(document)
    finally:
        document.close()
    _refuse_unreadable(source, pages)
    metadata: dict[str, Any] = {"pages": len(pages.lines)}
    furniture = mark_furniture(pages.lines, [h for _, h in pages.sizes])
    found = _find_tables(data, pages) if tables else 0
    for k, lines in enumerate(pages.lines):
        pages.lines[k] = reading_order(lines, *pages.sizes[k])
    if len(marks) > 1:
        apply_outline(marks, pages.lines, pages.tops)
        metadata["headings"] = "outline"
    elif find_headings(pages.lines):
        metadata["headings"] = "layout"
    text, blocks = write(pages.lines)
    if found:
        metadata["tables"] = found
    if furniture:
        metadata["furniture"] = furniture[:20]
    if pages.scans:
        metadata["ocr_pages"] = pages.scans
    if pages.warnings:
        metadata["warnings"] = pages.warnings
    return Document.from_text(text, source=source, mime=mime, blocks=blocks, metadata=metadata)


def _open_error(source: str, exc: Exception) -> InputError:
    message = str(exc)
    if "password" in message.lower():
        return InputError(
            f"{source}: the PDF is encrypted and needs a password; decrypt it first "
            "(for example: qpdf --decrypt --password=… in.pdf out.pdf)"
        )
    return InputError(
        f"{source}: not a readable PDF ({message}); check that the file is complete and "
        "really a PDF"
    )


def _read_pages(document: Any) -> _Pages:
    """Every page's lines; a page that fails becomes a warning and no lines."""
    pages = _Pages()
    for index in range(len(document)):
        lines: list[Line] = []
        size, top, ruled = (612.0, 792.0), 792.0, False
        try:
            page = document[index]
            try:
                size, top = page.get_size(), page.get_mediabox()[3]
                lines = page_lines(page, page.get_textpage(), index + 1)
                shown = graphics(page)
                ruled = shown.ruled
                if not lines and shown.image_share >= _SCAN_SHARE:
                    lines = _scanned(page, index + 1, pages)
            finally:
                page.close()
        except Exception as exc:  # pdfium reports damage as assorted errors; skip the page
            pages.warnings.append(f"page {index + 1}: unreadable ({exc or type(exc).__name__})")
            lines = []
        pages.lines.append(lines)
        pages.sizes.append((float(size[0]), float(size[1])))
        pages.tops.append(float(top))
        pages.ruled.append(ruled)
    return pages


def _scanned(page: Any, number: int, pages: _Pages) -> list[Line]:
    """A scanned page's lines by OCR, or none (and a note) where OCR is missing."""
    if pdf_ocr.missing() is not None:
        pages.unread_scans.append(number)
        return []
    lines = pdf_ocr.ocr_lines(page, number)
    pages.scans.append(number)
    return lines


def _refuse_unreadable(source: str, pages: _Pages) -> None:
    if pages.unread_scans:
        shown = ", ".join(map(str, pages.unread_scans[:10]))
        more = " …" if len(pages.unread_scans) > 10 else ""
        raise InputError(
            f"{source}: page {shown}{more} is scanned (no text layer) and needs OCR, but "
            f"{pdf_ocr.missing()}; {pdf_ocr.INSTALL}"
        )
    if not any(pages.lines):
        detail = f" ({'; '.join(pages.warnings)})" if pages.warnings else ""
        scans = " (OCR found none on its scanned pages)" if pages.scans else ""
        raise InputError(
            f"{source}: no page of this PDF has extractable text{scans}{detail}; if it is "
            "a scan, run OCR on it first (for example with ocrmypdf)"
        )


def _find_tables(data: bytes, pages: _Pages) -> int:
    """Find tables on the pages that show one; returns how many were placed."""
    plumber: Any = None
    found = 0
    for k, lines in enumerate(pages.lines):
        regions = [lines[a : b + 1] for a, b in aligned_runs(lines)]
        ruled = pages.ruled[k]
        if not (ruled or regions) or k + 1 in pages.scans:
            continue
        try:
            if plumber is None:
                import pdfplumber

                plumber = pdfplumber.open(io.BytesIO(data))
            tables = tables_on(plumber.pages[k], ruled, regions)
        except Exception as exc:  # pdfminer's own errors on a page pdfium could read
            pages.warnings.append(f"page {k + 1}: table finder failed ({type(exc).__name__})")
            continue
        place(lines, tables)
        found += sum(1 for ln in lines if ln.role == "table")
    if plumber is not None:
        plumber.close()
    return found
