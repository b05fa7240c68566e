"""Scanned PDF pages (an image and no text layer) read by Tesseract OCR.

Optional: it needs the ``tesseract`` program (Debian: ``apt-get install tesseract-ocr``;
``scripts/install-tesseract.sh`` does it for the tests) and ``pytesseract`` (``pip install
'fissure[ocr]'``). Without them a PDF with scanned pages is refused with an error that says
"needs OCR" and how to install it, so it lands in the dead-letter queue and can be retried
once OCR is there, rather than losing those pages quietly. ``FISSURE_OCR=off`` does the
same on purpose; ``FISSURE_OCR_LANG`` names Tesseract's languages (default ``eng``).

The page is rendered by pdfium at 300 dpi (less for a page so large that the image would
pass 40 megapixels) and Tesseract's words become the same :class:`Line`\\s as a text page's;
its paragraphs start new paragraphs.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from fissure.parse.pdf_layout import HYPHEN, Line, Word, clean

__all__ = ["INSTALL", "missing", "ocr_lines"]

INSTALL = (
    "install Tesseract (apt-get install tesseract-ocr) and pytesseract "
    "(pip install 'fissure[ocr]'), then retry"
)
_DPI = 300
_MAX_PIXELS = 40e6
_LANG = os.environ.get("FISSURE_OCR_LANG", "eng")


@cache
def missing() -> str | None:
    """Why OCR cannot run here, or ``None`` when it can (``FISSURE_OCR=off`` turns it
    off, say to keep a run fast and send scans to the dead-letter queue instead)."""
    if os.environ.get("FISSURE_OCR", "").lower() in ("off", "0", "no", "false"):
        return "OCR is turned off (FISSURE_OCR=off)"
    try:
        import pytesseract
    except ImportError:
        return "pytesseract is not installed (pip install 'fissure[ocr]')"
    try:
        pytesseract.get_tesseract_version()
    except Exception:  # TesseractNotFoundError, or a binary that does not start
        return "the tesseract program is not installed (apt-get install tesseract-ocr)"
    return None


def ocr_lines(page: Any, number: int) -> list[Line]:
    """The words Tesseract reads on a rendered page, as lines (top-down points).

    Args:
        page: A ``pypdfium2.PdfPage``.
        number: Its 1-based page number.
    """
    import pytesseract

    width, height = page.get_size()
    scale = min(_DPI / 72, (_MAX_PIXELS / max(width * height, 1.0)) ** 0.5)
    image = page.render(scale=scale, grayscale=True).to_pil()
    data = pytesseract.image_to_data(image, lang=_LANG, output_type=pytesseract.Output.DICT)
    rows: list[tuple[list[Word], bool]] = []  # each line's words, and whether it opens a block
    key: tuple[int, int, int] | None = None
    block: int | None = None
    for k, raw in enumerate(data["text"]):
        text = clean(raw or "")
        if not text.strip() or float(data["conf"][k]) < 0:
            continue
        x0, top = data["left"][k] / scale, data["top"][k] / scale
        word = Word(text, x0, x0 + data["width"][k] / scale, top, top + data["height"][k] / scale)
        here = (data["block_num"][k], data["par_num"][k], data["line_num"][k])
        if here != key:
            # A new block of Tesseract's starts a paragraph; its own paragraphs are less
            # sure than the line spacing, which decides the rest as on a text page.
            rows.append(([word], here[0] != block))
            key, block = here, here[0]
        else:
            rows[-1][0].append(word)
    lines = []
    for words, starts in rows:
        last = words[-1]
        if len(last.text) > 1 and last.text.endswith("-") and last.text[-2].isalpha():
            last.text = last.text[:-1] + HYPHEN  # Tesseract keeps a line-end hyphen as is
        size = max(w.bottom - w.top for w in words)
        lines.append(Line(words, number, size, starts=starts, ocr=True))
    return lines
