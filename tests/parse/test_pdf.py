"""The PDF parser: pages, paragraphs, damaged and encrypted files."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest
from tests.chunk_checks import corpus_maker
from tree_checks import assert_valid_tree, walk

from fissure.errors import InputError
from fissure.parse import pdf
from fissure.types import Document

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
maker = corpus_maker()
GOOD = maker.make_pdf(maker.REPORT_PAGES)


def assert_tree(doc: Document) -> None:
    assert_valid_tree(doc)
    for block in walk(doc.blocks):
        assert 1 <= block.metadata["page"] <= doc.metadata["pages"], block


def test_pages_and_paragraphs() -> None:
    doc = pdf.parse(GOOD, source="report.pdf")
    assert_tree(doc)
    assert doc.metadata == {"pages": 2}  # no headings, tables, furniture or warnings
    assert [(b.kind, b.metadata["page"]) for b in doc.blocks] == [
        ("paragraph", 1), ("paragraph", 1), ("paragraph", 1), ("paragraph", 2), ("paragraph", 2),
    ]  # fmt: skip
    assert doc.text.count(pdf.PAGE_SEPARATOR) == 1
    first = [doc.text[p.start : p.end] for p in doc.blocks[:3]]
    assert first == [
        "Quarterly report",
        "Sales rose in every region this quarter.\nThe café line sold best.",
        "Costs stayed flat; margins improved by two points.",
    ]
    assert doc.blocks[3].level == pdf.PdfLevel.BLOCK


def test_committed_sample_matches_the_generator() -> None:
    doc = pdf.parse((CORPUS / "pdf" / "report.pdf").read_bytes(), source="report.pdf")
    assert doc.text == pdf.parse(GOOD, source="report.pdf").text


def test_unreadable_page_is_a_warning() -> None:
    broken = GOOD.replace(b"/Kids [4 0 R 6 0 R] /Count 2", b"/Kids [4 0 R 6 0 R 99 0 R] /Count 3")
    doc = pdf.parse(broken, source="broken.pdf")
    assert [b.metadata["page"] for b in doc.blocks] == [1, 1, 1, 2, 2]
    assert doc.metadata["pages"] == 3
    assert doc.metadata["warnings"] == ["page 3: unreadable (Failed to load page.)"]


def test_encrypted_pdf_says_so() -> None:
    encrypt = (
        b"/Encrypt << /Filter /Standard /V 1 /R 2 /O <"
        + b"11" * 32
        + b"> /U <"
        + b"22" * 32
        + b"> /P -4 >> /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>]"
    )
    locked = GOOD.replace(b"/Root 1 0 R >>", b"/Root 1 0 R " + encrypt + b" >>")
    assert locked != GOOD
    with pytest.raises(InputError, match="encrypted and needs a password"):
        pdf.parse(locked, source="locked.pdf")


def test_pdf_without_text_asks_for_ocr() -> None:
    with pytest.raises(InputError, match="OCR"):
        pdf.parse(maker.make_pdf([[], []]), source="scan.pdf")


@pytest.mark.parametrize("seed", range(12))
def test_damaged_bytes_give_a_clear_error_or_a_partial_result(seed: int) -> None:
    rng = random.Random(seed)
    damaged = bytearray(GOOD)
    if seed % 3 == 0:
        damaged = damaged[: rng.randrange(len(GOOD))]
    elif seed % 3 == 1:
        for _ in range(20):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
    else:
        start = rng.randrange(len(damaged) - 100)
        damaged[start : start + 100] = rng.randbytes(100)
    started = time.perf_counter()
    try:
        doc = pdf.parse(bytes(damaged), source="damaged.pdf")
    except InputError as exc:
        assert "damaged.pdf" in str(exc)
    else:
        assert_tree(doc)
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("data", [b"", b"%PDF-1.4\n", os.urandom(4096), b"not a pdf at all"])
def test_garbage_is_an_input_error(data: bytes) -> None:
    with pytest.raises(InputError, match="not a readable PDF|no page"):
        pdf.parse(data, source="junk.pdf")
