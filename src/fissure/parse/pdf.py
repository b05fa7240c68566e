"""PDF → text per page, with ``page`` blocks and ``paragraph`` children.

pdfium (through pypdfium2) extracts each page's text. Pages are joined by ``"\\n\\f\\n"``
(a form feed on its own line) so a page boundary is visible in the text itself. Paragraphs
are found from the layout: a blank line, or a gap between lines clearly wider than the
page's usual line spacing. A page pdfium cannot read is skipped and named in
``metadata["warnings"]``; a file with nothing readable raises :class:`InputError`.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from fissure.errors import InputError
from fissure.parse.pdfguard import check_streams
from fissure.types import Block, Document

__all__ = ["PAGE_SEPARATOR", "PdfLevel", "parse"]

PAGE_SEPARATOR = "\n\f\n"


class PdfLevel(IntEnum):
    """Rank of the boundary in front of a PDF block; lower is stronger."""

    PAGE = 1
    PARAGRAPH = 2


# A line gap this many times the page's typical line spacing starts a new paragraph.
_GAP_FACTOR = 1.4


def parse(data: bytes, *, source: str, mime: str = "application/pdf") -> Document:
    """Extract a PDF's text page by page.

    Args:
        data: The file's bytes.
        source: Path or URI, recorded on the Document.
        mime: Recorded on the Document.

    Returns:
        A Document whose blocks are ``page`` blocks (title ``"page N"``,
        ``metadata["page"]`` = N, 1-based) with ``paragraph`` children. ``metadata`` has
        ``pages`` (the page count) and, when some pages could not be read, ``warnings``.

    Raises:
        InputError: The bytes are not a PDF pdfium can open, the PDF needs a password,
            or no page has any extractable text (a scan needs OCR first).
    """
    import pypdfium2 as pdfium

    check_streams(data, source=source)  # a stream bomb is refused before pdfium inflates it
    try:
        document = pdfium.PdfDocument(bytes(data))
    except pdfium.PdfiumError as exc:
        raise _open_error(source, exc) from None
    try:
        pages, warnings = _read_pages(document)
    finally:
        document.close()
    if not any(lines for lines in pages):
        detail = f" ({'; '.join(warnings)})" if warnings else ""
        raise InputError(
            f"{source}: no page of this PDF has extractable text{detail}; if it is a scan, "
            "run OCR on it first (for example with ocrmypdf)"
        )
    text, blocks = _assemble(pages)
    metadata: dict[str, Any] = {"pages": len(pages)}
    if warnings:
        metadata["warnings"] = warnings
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


def _read_pages(document: Any) -> tuple[list[list[list[str]]], list[str]]:
    """Each page as paragraphs of lines; a page that fails becomes a warning."""
    pages: list[list[list[str]]] = []
    warnings: list[str] = []
    for index in range(len(document)):
        try:
            page = document[index]
            try:
                pages.append(_paragraphs(page.get_textpage()))
            finally:
                page.close()
        except Exception as exc:  # pdfium reports damage as assorted errors; skip the page
            warnings.append(f"page {index + 1}: unreadable ({exc or type(exc).__name__})")
            pages.append([])
    return pages, warnings


def _paragraphs(textpage: Any) -> list[list[str]]:
    """Split a page's lines into paragraphs by blank lines and wide line gaps."""
    raw = textpage.get_text_range()
    lines = raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    # Char boxes line up with the text only when pdfium returned one char per index.
    gaps = _wide_gaps(textpage, lines, raw) if len(raw) == textpage.count_chars() else set()
    paragraphs: list[list[str]] = []
    current: list[str] = []
    for i, line in enumerate(lines):
        line = line.rstrip()
        if (not line.strip() or i in gaps) and current:
            paragraphs.append(current)
            current = []
        if line.strip():
            current.append(line)
    if current:
        paragraphs.append(current)
    return paragraphs


def _wide_gaps(textpage: Any, lines: list[str], raw: str) -> set[int]:
    """Lines that sit much further below the previous line than usual, or above it."""
    tops: list[float | None] = []
    index = 0
    for line in lines:
        first = len(line) - len(line.lstrip())
        tops.append(textpage.get_charbox(index + first, loose=True)[3] if line.strip() else None)
        # pdfium numbers "\r\n" as two chars.
        index += len(line) + (2 if raw.startswith("\r\n", index + len(line)) else 1)
    steps: dict[int, float] = {}
    for i in range(1, len(tops)):
        above, top = tops[i - 1], tops[i]
        if above is not None and top is not None:
            steps[i] = above - top
    downward = [step for step in steps.values() if step > 0]
    if len(downward) < 2:
        return set()
    # The lower quartile, not the median: on a page of short paragraphs most steps are
    # paragraph gaps, and the tight line spacing is the rarer value.
    limit = _GAP_FACTOR * sorted(downward)[len(downward) // 4]
    return {i for i, step in steps.items() if step > limit or step < 0}


def _assemble(pages: list[list[list[str]]]) -> tuple[str, tuple[Block, ...]]:
    """Join pages and paragraphs into the text, recording every block's offsets."""
    parts: list[str] = []
    blocks: list[Block] = []
    pos = 0
    for number, paragraphs in enumerate(pages, start=1):
        if number > 1:
            parts.append(PAGE_SEPARATOR)
            pos += len(PAGE_SEPARATOR)
        page_start = pos
        children: list[Block] = []
        for i, lines in enumerate(paragraphs):
            if i:
                parts.append("\n\n")
                pos += 2
            paragraph = "\n".join(lines)
            children.append(Block("paragraph", pos, pos + len(paragraph), PdfLevel.PARAGRAPH))
            parts.append(paragraph)
            pos += len(paragraph)
        if children:
            blocks.append(
                Block(
                    "page",
                    page_start,
                    pos,
                    PdfLevel.PAGE,
                    f"page {number}",
                    tuple(children),
                    {"page": number},
                )
            )
    return "".join(parts), tuple(blocks)
