"""Degrade, never drop: a failure anywhere in the structured PDF path costs structure,
never text. Each stage is made to fail in turn (on one page, or for the whole document);
the document still parses, every printed word is still in its text, and the fallback is
named in the document's metadata and in the metadata of the chunks of the pages it hit.
"""

from __future__ import annotations

import re

import pytest
from tests.pdf_samples import LEFT, LEFT_COLUMN, RIGHT_COLUMN, columns_around_table, handbook
from tree_checks import walk

from fissure import Chunker
from fissure.parse import pdf, pdf_write
from fissure.types import Document

HANDBOOK = handbook()
STRADDLING_ROWS = [
    ["Region", "Staff", "Offices", "Sites"],
    ["North", "120", "4", "9"],
    ["South", "80", "3", "7"],
    ["East", "45", "2", "5"],
]


def straddling_table() -> bytes:
    return columns_around_table(STRADDLING_ROWS, [LEFT, LEFT + 150, 340, 460, 540], ruled=True)


def letters(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def assert_nothing_lost(doc: Document, reference: Document) -> None:
    """Every word of the structured parse is in the degraded one (spelled out in its
    letters: a plain page keeps a line-end hyphen where the structured one joins)."""
    have = letters(doc.text)
    for word in set(re.findall(r"[A-Za-z0-9]+", reference.text)):
        assert letters(word) in have, word


def test_a_table_straddling_the_gutter_is_read_whole() -> None:
    doc = pdf.parse(straddling_table(), source="straddle.pdf")
    tables = [b for b in walk(doc.blocks) if b.kind == "table"]
    assert len(tables) == 1
    rows = [doc.text[r.start : r.end] for r in tables[0].children if r.kind == "row"]
    assert rows == [" | ".join(r) for r in STRADDLING_ROWS]
    assert "pdf_fallback" not in doc.metadata
    # The columns around it are still read column by column.
    assert doc.text.index(LEFT_COLUMN[3]) < doc.text.index(RIGHT_COLUMN[0])


def _fail(*_: object, **__: object) -> None:
    raise RuntimeError("injected")


def _fail_on_page(real, page: int, position: int):  # type: ignore[no-untyped-def]
    """``real``, failing when its argument at ``position`` is page ``page``'s."""

    def wrapped(*args, **kwargs):  # type: ignore[no-untyped-def]
        arg = args[position]
        number = arg if isinstance(arg, int) else (arg[0].page if arg else None)  # or lines
        if number == page:
            raise RuntimeError("injected")
        return real(*args, **kwargs)

    return wrapped


REFERENCE = pdf.parse(HANDBOOK, source="handbook.pdf")

PAGE_STAGES = {
    # stage named in the note: (function in fissure.parse.pdf, its argument that tells the page)
    "layout": ("page_lines", 2),
    "tables": ("tables_on", 2),
    "rules": ("rules", None),  # read on ruled pages only: page 2 is the one
    "reading order": ("reading_order", 0),
}


@pytest.mark.parametrize("stage", sorted(PAGE_STAGES))
def test_a_stage_failing_on_one_page_costs_only_that_page(
    stage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, position = PAGE_STAGES[stage]
    real = getattr(pdf, name)
    monkeypatch.setattr(pdf, name, _fail if position is None else _fail_on_page(real, 2, position))
    doc = pdf.parse(HANDBOOK, source="handbook.pdf")
    assert_nothing_lost(doc, REFERENCE)
    notes = doc.metadata["pdf_fallback"]
    assert any(n.startswith(f"page 2: {stage} failed (RuntimeError: injected)") for n in notes)
    assert "PDF structure" in doc.metadata["fallback"]
    # Other pages keep their structure: the outline's headings are still there.
    titles = {b.title for b in walk(doc.blocks) if b.kind == "section"}
    assert "1 Introduction" in titles and "3 Survey notes" in titles
    chunks = Chunker(max_tokens=64).chunk_document(doc)
    hit = [c for c in chunks if c.page == 2]
    assert hit and all(stage in c.metadata["pdf_fallback"] for c in hit)
    assert not any("pdf_fallback" in c.metadata for c in chunks if c.page != 2)


DOCUMENT_STAGES = {
    "outline": ("read_outline", "1 Introduction"),
    "running headers": ("mark_furniture", "1 Introduction"),
    "headings": ("apply_outline", None),
}


@pytest.mark.parametrize("stage", sorted(DOCUMENT_STAGES))
def test_a_document_wide_stage_failing_is_left_out(
    stage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, kept_title = DOCUMENT_STAGES[stage]
    monkeypatch.setattr(pdf, name, _fail)
    doc = pdf.parse(HANDBOOK, source="handbook.pdf")
    assert_nothing_lost(doc, REFERENCE)
    notes = doc.metadata["pdf_fallback"]
    assert len(notes) == 4 and all(f"{stage} failed" in n for n in notes)
    titles = {b.title for b in walk(doc.blocks) if b.kind == "section"}
    if kept_title:  # the layout's headings stand in for the outline's
        assert kept_title in titles
    else:
        assert not titles
    chunks = Chunker(max_tokens=64).chunk_document(doc)
    assert all(stage in c.metadata["pdf_fallback"] for c in chunks)


def test_writing_a_page_that_fails_is_written_again_as_plain_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = pdf_write._Writer.rows

    def rows(self, table, first_on_page):  # type: ignore[no-untyped-def]
        if self.meta["page"] == 2:
            raise RuntimeError("injected")
        return real(self, table, first_on_page)

    monkeypatch.setattr(pdf_write._Writer, "rows", rows)
    doc = pdf.parse(HANDBOOK, source="handbook.pdf")
    assert_nothing_lost(doc, REFERENCE)
    assert doc.metadata["pdf_fallback"] == [
        "page 2: writing failed (RuntimeError: injected); page written as plain text"
    ]
    page2 = [b for b in walk(doc.blocks) if b.metadata.get("page") == 2]
    assert [b.kind for b in page2] == ["paragraph"]
    assert "Quarter Revenue Cost" in doc.text[page2[0].start : page2[0].end]
    assert any(b.kind == "table" for b in walk(doc.blocks))  # page 3's table is intact


def test_when_even_plain_writing_fails_the_document_is_its_plain_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pdf_write._Writer, "page", _fail)
    monkeypatch.setattr(pdf_write._Writer, "plain", _fail)
    doc = pdf.parse(HANDBOOK, source="handbook.pdf")
    assert_nothing_lost(doc, REFERENCE)
    assert doc.blocks == ()
    assert doc.text.count(pdf.PAGE_SEPARATOR) == 3
    chunks = Chunker(max_tokens=64).chunk_document(doc)
    assert "".join(c.text for c in chunks).replace("\n", "").replace("\f", "")


def test_a_document_whose_every_page_fails_its_layout_is_read_as_plain_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pdf, "page_lines", _fail)
    doc = pdf.parse(HANDBOOK, source="handbook.pdf")  # every page's layout fails
    assert_nothing_lost(doc, REFERENCE)
    assert len(doc.metadata["pdf_fallback"]) == 4
    assert doc.metadata["fallback"].startswith("PDF structure: 4 of 4 pages as plain text")
