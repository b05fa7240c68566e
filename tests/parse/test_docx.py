"""The DOCX parser: heading sections, paragraphs, lists, tables, damaged files."""

from __future__ import annotations

import io
import os
import re
import zipfile
from pathlib import Path

import pytest
from tests.chunk_checks import corpus_maker
from tree_checks import assert_valid_tree, walk

from fissure import Chunker
from fissure.errors import InputError
from fissure.parse import docx as docx_parser
from fissure.types import Document

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


maker = corpus_maker()


@pytest.fixture(scope="module")
def notes() -> Document:
    doc = docx_parser.parse(maker.make_docx(), source="notes.docx")
    assert_valid_tree(doc)
    return doc


def test_sections_follow_heading_styles(notes: Document) -> None:
    (title,) = notes.blocks
    assert (title.kind, title.title, title.level) == ("section", "Field notes", 0)
    sections = [b for b in title.children if b.kind == "section"]
    assert [(s.title, s.level) for s in sections] == [("Methods", 1), ("Results", 1)]
    assert [b.title for b in sections[0].children if b.kind == "section"] == ["Equipment"]
    assert notes.text[sections[0].start : sections[0].end] == (
        "Methods\n\nWe counted birds at dawn for ten days.\n\nEquipment\n\n- Binoculars\n- Notebook"
    )
    assert notes.metadata["title"] == "Field notes"


def test_tables_lists_and_paragraphs(notes: Document) -> None:
    blocks = list(walk(notes.blocks))
    (table,) = [b for b in blocks if b.kind == "table"]
    rows = [notes.text[r.start : r.end] for r in table.children]
    assert rows == ["Species | Count", "Heron | 4", "Kingfisher | 2"]
    assert all(r.kind == "row" for r in table.children)
    (bullets,) = [b for b in blocks if b.kind == "list"]
    assert [notes.text[i.start : i.end] for i in bullets.children] == ["- Binoculars", "- Notebook"]
    paragraphs = [notes.text[b.start : b.end] for b in blocks if b.kind == "paragraph"]
    assert paragraphs[0] == "Notes from the spring survey of the river café."
    assert paragraphs[-1] == "Herons outnumbered kingfishers two to one."


def test_committed_sample_parses() -> None:
    doc = docx_parser.parse((CORPUS / "docx" / "report.docx").read_bytes(), source="report.docx")
    assert_valid_tree(doc)
    assert "Kingfisher | 2" in doc.text


def test_merged_cells_count_once() -> None:
    import docx

    document = docx.Document()
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 2)).text = "Wide header"
    for cell, value in zip(table.rows[1].cells, "abc", strict=True):
        cell.text = value
    out = io.BytesIO()
    document.save(out)
    doc = docx_parser.parse(out.getvalue(), source="merged.docx")
    assert doc.text == "Wide header\na | b | c"


def test_deep_heading_levels_and_headings_ending_lists() -> None:
    import docx

    document = docx.Document()
    for level in range(1, 10):
        document.add_heading(f"Level {level}", level=level)
        document.add_paragraph(f"item {level}", style="List Number")
    out = io.BytesIO()
    document.save(out)
    doc = docx_parser.parse(out.getvalue(), source="deep.docx")
    assert_valid_tree(doc)
    depth, blocks = 0, doc.blocks
    while blocks:
        sections = [b for b in blocks if b.kind == "section"]
        if not sections:
            break
        depth, blocks = depth + 1, sections[0].children
    assert depth == 9
    assert "1. item 9" in doc.text


def _corrupt_document_xml() -> bytes:
    source = zipfile.ZipFile(io.BytesIO(maker.make_docx()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                data = data[: len(data) // 2]
            target.writestr(item, data)
    return out.getvalue()


@pytest.mark.parametrize(
    "data",
    [b"", os.urandom(2048), b"PK\x03\x04 truncated zip", "truncated"],
    ids=["empty", "random", "zip-header", "truncated"],
)
def test_damaged_files_without_text_are_input_errors(data: bytes | str) -> None:
    if data == "truncated":
        data = maker.make_docx()[:3000]
    with pytest.raises(InputError, match="not a readable DOCX"):
        docx_parser.parse(data, source="bad.docx")  # type: ignore[arg-type]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z0-9]+", text))


def test_xml_cut_short_degrades_to_the_paragraphs_it_still_has(notes: Document) -> None:
    doc = docx_parser.parse(_corrupt_document_xml(), source="cut.docx")
    assert "paragraphs read as plain text" in doc.metadata["fallback"]
    assert doc.text and _words(doc.text) < _words(notes.text)  # the first half, no more
    assert notes.text.startswith(doc.text.split("\n\n")[0])
    assert all(b.kind == "paragraph" and b.metadata["docx_fallback"] for b in doc.blocks)


@pytest.mark.parametrize("stage", ["paragraph", "table"])
def test_a_failure_reading_structure_keeps_every_word(
    stage: str, notes: Document, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*_: object) -> None:
        raise RuntimeError("injected")

    monkeypatch.setattr(docx_parser._Writer, stage, fail)
    doc = docx_parser.parse(maker.make_docx(), source="notes.docx")
    assert "RuntimeError: injected" in doc.metadata["fallback"]
    assert _words(notes.text) <= _words(doc.text)
    chunks = Chunker(max_tokens=32).chunk_document(doc)
    assert chunks and all("injected" in c.metadata["docx_fallback"] for c in chunks)
