"""Chunk boundaries in PDFs: page breaks and section starts are hard cuts (a table that
goes on over the page stays one unit), and what is embedded with its headings line fits
the budget.

Each PDF is written by the test (:mod:`tests.pdfgen`), small enough that without those
rules the packer would put all of it in one chunk.
"""

from __future__ import annotations

import numpy as np

from fissure import Chunker
from fissure.ingest.workers import Outcome
from fissure.ingest.writer import embed_outcomes
from fissure.parse import pdf
from fissure.parse.pdf_write import PAGE_SEPARATOR
from fissure.types import Chunk, Document
from tests.chunk_checks import assert_chunk_invariants
from tests.conftest import get_sizer
from tests.pdf_samples import LEFT, long_table, paragraph
from tests.pdfgen import Pdf


def heading(page, y: float, title: str) -> float:  # type: ignore[no-untyped-def]
    page.text(LEFT, y, title, font="bold", size=16)
    return y - 30


def chunks_of(data: bytes, **settings: object) -> tuple[Document, list[Chunk]]:
    doc = pdf.parse(data, source="t.pdf")
    chunker = Chunker(**settings)
    chunks = chunker.chunk_document(doc)
    assert_chunk_invariants(doc, chunker, chunks)
    return doc, chunks


def two_pages_one_section() -> bytes:
    """One section whose two short paragraphs sit on two pages."""
    doc = Pdf()
    p1 = doc.page()
    y = heading(p1, 700, "1 Rivers")
    paragraph(p1, y, ["The river rises in the hills and runs south to the sea."])
    p2 = doc.page()
    paragraph(p2, 700, ["The mill by the river grinds wheat from the northern farms."])
    return doc.to_bytes()


def test_a_chunk_does_not_run_across_a_page_break() -> None:
    doc, chunks = chunks_of(two_pages_one_section())
    assert PAGE_SEPARATOR in doc.text
    assert [c.page for c in chunks] == [1, 2]
    assert not any("\f" in c.text for c in chunks)
    assert chunks[0].metadata["cut"] == "page"  # what ended the first chunk
    assert [c.headings for c in chunks] == [("1 Rivers",), ("1 Rivers",)]  # still its section


def test_a_table_that_goes_on_over_the_page_stays_one_chunk() -> None:
    data, rows = long_table(6, ruled=True, pages=2, continued=True)
    _, chunks = chunks_of(data)
    (table,) = [c for c in chunks if "R000" in c.text]
    assert "R005" in table.text and "\f" in table.text  # both pages' rows, together


def short_sections() -> bytes:
    """Short sections on one page, the second with a subsection right under its heading."""
    doc = Pdf()
    p = doc.page()
    y = heading(p, 720, "1 Alpha")
    y = paragraph(p, y, ["Alpha speaks of the river and its banks in spring."])
    y = heading(p, y, "2 Beta")
    y = heading(p, y, "2.1 Mills")
    y = paragraph(p, y, ["Beta is about the mill that stands by the water."])
    y = heading(p, y, "3 Gamma")
    paragraph(p, y, ["Gamma tells of the bridge built after the flood."])
    return doc.to_bytes()


def test_sections_are_not_packed_under_another_sections_breadcrumb() -> None:
    _, chunks = chunks_of(short_sections())
    by_start = {c.text.split("\n")[0]: c.headings for c in chunks}
    # The heading "2 Beta" is not left alone: it opens the chunk of its first subsection,
    # whose breadcrumb is then the section that holds all of the chunk.
    assert by_start == {
        "1 Alpha": ("1 Alpha",),
        "2 Beta": ("2 Beta",),
        "3 Gamma": ("3 Gamma",),
    }
    beta = next(c for c in chunks if c.text.startswith("2 Beta"))
    assert "2.1 Mills" in beta.text and "Gamma" not in beta.text
    assert next(c for c in chunks if c.text.startswith("1 Alpha")).metadata["cut"] == "section 1"


class Recorder:
    """An embedder that keeps what it was given."""

    dim, max_tokens, model_id = 2, 254, "recorder"

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return np.ones((len(texts), 2), dtype=np.float32)


def long_section() -> bytes:
    """A section with a long title and a few paragraphs that fill the budget."""
    doc = Pdf()
    p = doc.page()
    y = heading(p, 720, "4 Findings on regional offices and staff")
    line = "The offices in the north kept their staff while the south hired more."
    for _ in range(4):
        y = paragraph(p, y, [line, line])
    return doc.to_bytes()


def test_what_is_embedded_with_its_headings_line_fits_the_budget() -> None:
    budget = 40
    doc, chunks = chunks_of(long_section(), max_tokens=budget, embed_headings=True)
    assert chunks[0].headings == ("4 Findings on regional offices and staff",)
    recorder = Recorder()
    embed_outcomes(recorder, [Outcome("t.pdf", chunks)], embed_headings=True)
    count = get_sizer("minilm").count
    assert all(t.startswith(chunks[0].headings[0] + "\n") for t in recorder.texts)
    assert max(count(t) for t in recorder.texts) <= budget
    # The chunk says what it counted: its own tokens, and the headings line's.
    for c in chunks:
        assert c.n_tokens + c.metadata["headings_tokens"] <= budget
