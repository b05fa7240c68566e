"""PDF → text with sections, paragraphs, tables and code, page numbers kept.

pdfium (through pypdfium2) reads each page's words with their positions
(:mod:`~fissure.parse.pdf_layout`). Across pages, running headers, footers and page
numbers are found and left out (:mod:`~fissure.parse.pdf_text`); each page is read column
by column; tables are found where a page shows one: grids from the page's rules
(:mod:`~fissure.parse.pdf_rules`, pdfplumber's table algorithm on pdfium's paths), others
from the aligned words (:mod:`~fissure.parse.pdf_tables`); headings come from the outline,
else from the layout (:mod:`~fissure.parse.pdf_headings`); scanned pages go through
Tesseract (:mod:`~fissure.parse.pdf_ocr`).

``Document.text`` is the text fissure writes from that: paragraphs apart by a blank line,
their lines as printed, with words hyphenated at a line end joined, ligatures spelled out
and whitespace made plain; table rows one per line, cells joined by `` | ``; code (a
monospaced paragraph) spaced as printed; pages apart by ``"\\n\\f\\n"``. Every block
carries ``metadata["page"]`` (1-based). A page pdfium cannot read is skipped and named in
``metadata["warnings"]``; a file with nothing readable raises :class:`InputError`.

Degrade, never drop: every stage of the structured path runs under a guard. A stage that
fails on one page (reading its words, finding its tables, ordering its columns, writing
it) sends that page to pdfium's plain text; a stage that fails for the whole document (the
outline, running lines, headings) is left out. Each such fallback is named in
``metadata["pdf_fallback"]`` (one line per page or stage, also summed up in
``metadata["fallback"]``) and in the ``pdf_fallback`` metadata of the page's blocks, which
chunks carry. A document is lost only when no page has any text at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fissure.errors import InputError
from fissure.parse import pdf_ocr
from fissure.parse.pdf_frame import Frame, frame_of
from fissure.parse.pdf_headings import Mark, apply_outline, find_headings, read_outline
from fissure.parse.pdf_layout import Line, clean, page_lines, reading_order
from fissure.parse.pdf_rules import Edge, graphics, grids, ruled, rules
from fissure.parse.pdf_runs import aligned_runs
from fissure.parse.pdf_tables import place, split_at_grids, tables_on
from fissure.parse.pdf_text import mark_furniture
from fissure.parse.pdf_write import PAGE_SEPARATOR, PageFailed, PdfLevel, write
from fissure.parse.pdfguard import check_streams
from fissure.types import Document

__all__ = ["PAGE_SEPARATOR", "PdfLevel", "parse"]

_HYPHEN_MARKS = str.maketrans({"\ufffe": "-", "\x02": "-", "\u00ad": "-"})
_SCAN_SHARE = 0.3  # a page without text whose images cover this much of it is a scan
_TYPEWRITTEN = 0.8  # share of monospaced lines that makes a document typewritten
_TYPEWRITTEN_LINES = 20  # lines a document needs before it can be called so
_RULE_PATHS = 6  # path objects on a page before its rules are read segment by segment


@dataclass
class _Pages:
    """What reading the pages found."""

    lines: list[list[Line]] = field(default_factory=list)
    sizes: list[tuple[float, float]] = field(default_factory=list)  # width, height
    tops: list[float] = field(default_factory=list)  # media box top, PDF coordinates
    rules: list[list[Edge]] = field(default_factory=list)  # where rules make a grid
    warnings: list[str] = field(default_factory=list)
    scans: list[int] = field(default_factory=list)  # scanned pages read by OCR
    unread_scans: list[int] = field(default_factory=list)  # scanned pages without OCR
    texts: list[str] = field(default_factory=list)  # pdfium's plain text: the fallback
    plain: set[int] = field(default_factory=set)  # 1-based pages written as plain text
    notes: dict[int, str] = field(default_factory=dict)  # 1-based page: what fell back

    def fall_back(self, number: int, stage: str, exc: BaseException, *, plain: bool) -> None:
        """Record that ``stage`` failed on page ``number`` (1-based; 0 for the whole
        document) and, with ``plain``, that the page is to be written as plain text."""
        why = f"{stage} failed ({type(exc).__name__}: {str(exc)[:200]})"
        why += "; page written as plain text" if plain else f"; {stage} left out"
        for page in range(1, len(self.lines) + 1) if number == 0 else (number,):
            self.notes[page] = f"{self.notes[page]}; {why}" if page in self.notes else why
        if plain:
            self.plain.add(number)


def parse(
    data: bytes, *, source: str, mime: str = "application/pdf", tables: bool = True
) -> Document:
    """Extract a PDF's text and structure.

    Args:
        data: The file's bytes.
        source: Path or URI, recorded on the Document.
        mime: Recorded on the Document.
        tables: Look for tables (on the pages whose rules make a grid or whose lines
            align in columns).

    Returns:
        A Document whose blocks are ``section``\\s (title from the outline or the
        heading; first child the ``heading``) holding ``paragraph``, ``code`` and
        ``table`` blocks (a ``caption``, then ``row``\\s, header rows marked
        ``metadata["header"]``); without headings, those blocks at the top level.
        ``metadata`` has ``pages``, ``headings`` (``outline`` or ``layout``) when there
        are any, ``tables``, ``furniture`` (running lines left out, numbers as ``#``),
        ``ocr_pages``, ``warnings``, and ``pdf_fallback`` with ``fallback`` (what fell
        back to plain text or was left out, see the module) where they apply.

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
        pages = _read_pages(document, tables)
        marks = _outline(document, pages)
    finally:
        document.close()
    _refuse_unreadable(source, pages)
    metadata: dict[str, Any] = {"pages": len(pages.lines)}
    if _typewritten(pages.lines):
        metadata["typewritten"] = True
    furniture = _furniture(pages)
    aligned = _rows(pages)
    found = _find_tables(pages, aligned) if tables else 0
    for k, lines in enumerate(pages.lines):
        try:
            pages.lines[k] = reading_order(lines, *pages.sizes[k])
        except Exception as exc:  # degrade, never drop: this page as plain text
            pages.fall_back(k + 1, "reading order", exc, plain=True)
    found_headings = _headings(pages, marks)
    if found_headings:
        metadata["headings"] = found_headings
    text, blocks = _write(pages)
    if pages.notes:
        metadata["pdf_fallback"] = [f"page {n}: {why}" for n, why in sorted(pages.notes.items())]
        metadata["fallback"] = _summary(pages)
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


def _read_pages(document: Any, tables: bool) -> _Pages:
    """Every page's lines and plain text, and with ``tables`` the rules of a page whose
    rules make a grid. A page whose text pdfium cannot give becomes a warning and no
    lines; one whose layout fails is written as its plain text."""
    pages = _Pages()
    for index in range(len(document)):
        lines: list[Line] = []
        size, top, text = (612.0, 792.0), 792.0, ""
        edges: list[Edge] = []
        try:
            page = document[index]
            try:
                textpage = page.get_textpage()
                text = textpage.get_text_range()
                frame = frame_of(page, textpage)
                size, top = frame.size, frame.top
                lines, edges = _layout(page, textpage, frame, index + 1, text, pages, tables)
            finally:
                page.close()
        except Exception as exc:  # pdfium reports damage as assorted errors; skip the page
            pages.warnings.append(f"page {index + 1}: unreadable ({exc or type(exc).__name__})")
            lines = []
        pages.lines.append(lines)
        pages.texts.append(_plain_text(text))
        pages.sizes.append((float(size[0]), float(size[1])))
        pages.tops.append(float(top))
        pages.rules.append(edges)
    return pages


def _layout(
    page: Any, textpage: Any, frame: Frame, number: int, text: str, pages: _Pages, tables: bool
) -> tuple[list[Line], list[Edge]]:
    """A page's positioned lines (none, the page to be written as its plain text, when
    reading them fails but pdfium has its text) and, with ``tables``, its rules where they
    make a grid."""
    try:
        lines = page_lines(page, textpage, number, text, frame)
        shown = graphics(page)
    except Exception as exc:
        if not text.strip():
            raise
        pages.fall_back(number, "layout", exc, plain=True)
        return [], []
    if not lines and shown.image_share >= _SCAN_SHARE:
        return _scanned(page, number, pages), []
    if not tables or not (shown.ruled or shown.paths >= _RULE_PATHS):
        return lines, []
    try:  # rules drawn in pieces (a path a cell side) make a grid only when joined
        edges = rules(page, frame)
        return lines, edges if shown.ruled or ruled(edges) else []
    except Exception as exc:
        pages.fall_back(number, "rules", exc, plain=False)
        return lines, []


def _typewritten(pages: list[list[Line]]) -> bool:
    """Whether the document is set in a monospaced font throughout (a typewritten report,
    a text file printed): then a monospaced line says nothing of code, and every line is
    read as text, so that its tables are found as tables. Such a document has 80% of its
    lines or more monospaced (others here: manuals with code at most 31%)."""
    lines = [line for page in pages for line in page]
    if len(lines) < _TYPEWRITTEN_LINES or sum(ln.mono for ln in lines) < _TYPEWRITTEN * len(lines):
        return False
    for line in lines:
        line.typed, line.mono = line.mono, False
    return True


def _plain_text(text: str) -> str:
    """pdfium's text of a page, as a page written without layout shows it: its lines as
    pdfium gives them, whitespace made plain, a hyphen mark printed as the hyphen."""
    text = text.translate(_HYPHEN_MARKS)
    lines = (" ".join(clean(line).split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _outline(document: Any, pages: _Pages) -> list[Mark]:
    try:
        return read_outline(document)
    except Exception as exc:  # a damaged outline: headings come from the layout instead
        pages.fall_back(0, "outline", exc, plain=False)
        return []


def _furniture(pages: _Pages) -> list[str]:
    try:
        return mark_furniture(pages.lines, [h for _, h in pages.sizes])
    except Exception as exc:
        for lines in pages.lines:
            for line in lines:
                line.role = "text" if line.role == "furniture" else line.role
        pages.fall_back(0, "running headers", exc, plain=False)
        return []


def _headings(pages: _Pages, marks: list[Mark]) -> str | None:
    """Mark headings from the outline, else from the layout; which, or ``None``. A failure
    leaves the document without headings."""
    try:
        if len(marks) > 1:
            apply_outline(marks, pages.lines, pages.tops)
            return "outline"
        return "layout" if find_headings(pages.lines) else None
    except Exception as exc:
        for lines in pages.lines:
            for line in lines:
                if line.role in ("heading", "merged"):
                    line.role, line.depth, line.title, line.merged = "text", 0, None, []
                line.opens = []
        pages.fall_back(0, "headings", exc, plain=False)
        return None


def _write(pages: _Pages) -> tuple[str, tuple[Any, ...]]:
    """The text and blocks; a page whose writing fails is written again as plain text.
    If even that fails, the document is its pages' plain text, without blocks."""
    while True:
        plain = {n: pages.texts[n - 1] for n in pages.plain if 0 < n <= len(pages.texts)}
        try:
            return write(pages.lines, plain=plain, notes=pages.notes)
        except PageFailed as failed:
            if failed.number in pages.plain:
                pages.fall_back(0, "writing", failed.cause, plain=True)
                break
            pages.fall_back(failed.number, "writing", failed.cause, plain=True)
    pages.plain.update(range(1, len(pages.texts) + 1))
    return PAGE_SEPARATOR.join(pages.texts), ()


def _summary(pages: _Pages) -> str:
    plain = sorted(n for n in pages.plain if n)
    shown = ", ".join(map(str, plain[:10])) + (" …" if len(plain) > 10 else "")
    parts = [f"{len(plain)} of {len(pages.lines)} pages as plain text ({shown})"] if plain else []
    whole = {why for n, why in pages.notes.items() if n not in pages.plain}
    parts += sorted(whole)[:3]
    return "PDF structure: " + "; ".join(parts)


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
    if not any(pages.lines) and not any(pages.texts):
        detail = f" ({'; '.join(pages.warnings)})" if pages.warnings else ""
        scans = " (OCR found none on its scanned pages)" if pages.scans else ""
        raise InputError(
            f"{source}: no page of this PDF has extractable text{scans}{detail}; if it is "
            "a scan, run OCR on it first (for example with ocrmypdf)"
        )


def _rows(pages: _Pages) -> list[list[list[Line]]]:
    """Each page's runs of lines with aligned cells, marked ``Line.row`` (read whole,
    never headings, whether or not a table is found in them)."""
    regions: list[list[list[Line]]] = []
    for k, lines in enumerate(pages.lines):
        try:
            runs = [lines[a : b + 1] for a, b in aligned_runs(lines)]
        except Exception as exc:
            pages.fall_back(k + 1, "aligned rows", exc, plain=False)
            runs = []
        for run in runs:
            for line in run:
                line.row = True
        regions.append(runs)
    return regions


def _find_tables(pages: _Pages, aligned: list[list[list[Line]]]) -> int:
    """Find tables on the pages that show one; returns how many were placed."""
    found = 0
    for k, lines in enumerate(pages.lines):
        regions, edges = aligned[k], pages.rules[k]
        if not (edges or regions) or k + 1 in pages.scans:
            continue
        try:
            found_grids = grids(edges) if edges else []  # read once, by both
            lines = pages.lines[k] = split_at_grids(lines, found_grids)
            place(lines, tables_on(found_grids, regions, lines))
        except Exception as exc:  # the page without tables
            for line in lines:
                if line.role in ("table", "covered"):
                    line.role, line.table = "text", None
            pages.fall_back(k + 1, "tables", exc, plain=False)
            continue
        found += sum(1 for ln in lines if ln.role == "table")
    return found
