"""Scanned PDF pages: read by Tesseract where it is installed; refused with "needs OCR"
(a dead letter, nothing lost quietly) where it is not.

The scan is made here: pdfium renders a text page of the handbook sample to grey pixels,
and a new PDF holds only that image, as a scanner would write it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from tests.chunk_checks import assert_chunk_invariants, corpus_maker
from tests.conftest import get_sizer
from tests.pdf_samples import handbook
from tests.pdfgen import Pdf

from fissure import Chunker
from fissure.errors import InputError
from fissure.parse import pdf, pdf_ocr

NO_OCR = pdf_ocr.missing()


def scanned(text_pages: int = 0) -> bytes:
    """``text_pages`` pages with a text layer, then page 1 of the handbook as a scan."""
    image = pdfium.PdfDocument(handbook())[0].render(scale=150 / 72, grayscale=True).to_pil()
    out = Pdf()
    for _ in range(text_pages):
        out.page().text(72, 700, "Cover letter for the scanned field notes.", size=11)
    out.scan(image.convert("L").tobytes(), image.width, image.height)
    return out.to_bytes()


@pytest.fixture
def ocr_off(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("FISSURE_OCR", "off")
    pdf_ocr.missing.cache_clear()
    yield
    monkeypatch.delenv("FISSURE_OCR")
    pdf_ocr.missing.cache_clear()


@pytest.mark.skipif(NO_OCR is not None, reason=f"no OCR here: {NO_OCR}")
def test_a_scanned_page_is_read_by_ocr() -> None:
    doc = pdf.parse(scanned(), source="scan.pdf")
    assert doc.metadata["ocr_pages"] == [1]
    assert "management" in doc.text and "day-to-day" in doc.text  # hyphens joined there too
    assert "rough terrain" in doc.text
    assert doc.metadata["headings"] == "layout"
    assert doc.blocks[0].kind == "paragraph"  # the running header, one page: not furniture
    titles = [b.title for b in doc.blocks if b.kind == "section"]
    assert titles[:1] == ["1 Introduction"]
    chunker = Chunker(max_tokens=48, sizer=get_sizer("minilm"))
    assert_chunk_invariants(doc, chunker, chunker.chunk_document(doc))


@pytest.mark.skipif(NO_OCR is not None, reason=f"no OCR here: {NO_OCR}")
def test_a_scan_among_text_pages() -> None:
    doc = pdf.parse(scanned(text_pages=2), source="mixed.pdf")
    assert doc.metadata["ocr_pages"] == [3]
    pages = doc.text.split(pdf.PAGE_SEPARATOR)
    assert pages[0] == "Cover letter for the scanned field notes."
    assert "1 Introduction" in pages[2]


def test_without_ocr_a_scan_needs_ocr(ocr_off: None) -> None:
    with pytest.raises(InputError, match=r"page 1 is scanned .* needs OCR") as caught:
        pdf.parse(scanned(), source="scan.pdf")
    message = str(caught.value)
    assert "FISSURE_OCR=off" in message
    assert "apt-get install tesseract-ocr" in message and "pip install 'fissure[ocr]'" in message


def test_without_ocr_a_mixed_file_is_refused_not_cut(ocr_off: None) -> None:
    with pytest.raises(InputError, match="page 3 is scanned"):
        pdf.parse(scanned(text_pages=2), source="mixed.pdf")


def test_a_scan_becomes_a_dead_letter_saying_needs_ocr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.ingest.conftest import run

    monkeypatch.setenv("FISSURE_OCR", "off")  # the workers inherit it
    root = tmp_path / "docs"
    root.mkdir()
    (root / "scan.pdf").write_bytes(scanned())
    (root / "notes.txt").write_text("A page of notes that needs no OCR at all.\n")
    summary = run(root, tmp_path / "store")
    (failure,) = summary.failures
    assert Path(failure.source).name == "scan.pdf" and failure.stage == "parse"
    assert "needs OCR" in failure.message
    assert summary.listed == 2 and summary.documents == 1  # notes.txt stored


def test_blank_pages_are_not_scans() -> None:
    maker = corpus_maker()
    with pytest.raises(InputError, match="no page of this PDF has extractable text"):
        pdf.parse(maker.make_pdf([[], []]), source="blank.pdf")
