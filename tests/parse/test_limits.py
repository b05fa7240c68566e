"""Parsers under fissure.limits: bombs refused before parsing, work bounded, fallbacks said.

The caps are patched small here, so a few kilobytes show what megabytes would; every
document must still chunk with the invariants (exact slices, budget, coverage), because a
cap coarsens the structure and never drops text.
"""

from __future__ import annotations

import io
import zipfile
import zlib

import pytest
from tests.chunk_checks import assert_chunk_invariants, corpus_maker

from fissure import Chunker, limits
from fissure.errors import InputError, LimitError
from fissure.limits import Limits
from fissure.parse import registry
from fissure.parse.archive import check_zip
from fissure.parse.htmldepth import cap_depth
from fissure.parse.pdfguard import check_streams

CHUNKER = Chunker(max_tokens=48)


def _chunks_whole(data: bytes, name: str) -> dict:
    document = registry.parse(data, name)
    assert_chunk_invariants(document, CHUNKER, CHUNKER.chunk_document(document))
    return document.metadata


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in members.items():
            out.writestr(name, data)
    return buffer.getvalue()


# ----------------------------------------------------------------------------- archives


def test_a_zip_member_past_the_ratio_is_refused_with_the_limits_named():
    bomb = _zip({"word/document.xml": b"<w:document>" + b" " * 20_000_000 + b"</w:document>"})
    with pytest.raises(LimitError, match=r"document\.xml inflates past .*ratio .*--max-inflate-mb"):
        check_zip(bomb, kind="DOCX", source="b.docx")


def test_the_inflate_limit_counts_the_whole_archive_and_can_be_raised():
    parts = {f"word/part{i}.xml": bytes(range(256)) * 4096 for i in range(3)}  # 1 MiB each
    archive = _zip(parts)
    with limits.using(Limits(max_inflate_mb=2)), pytest.raises(LimitError, match="2 MiB"):
        check_zip(archive, kind="DOCX", source="a.docx")
    with limits.using(Limits(max_inflate_mb=4)):
        check_zip(archive, kind="DOCX", source="a.docx")


def test_too_many_members_and_a_dtd_are_refused():
    many = _zip({f"m{i}": b"" for i in range(limits.MAX_ENTRIES + 1)})
    with pytest.raises(LimitError, match="members"):
        check_zip(many, kind="DOCX", source="m.docx")
    laughs = _zip({"word/document.xml": b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "a">]><d/>'})
    with pytest.raises(LimitError, match="DTD"):
        check_zip(laughs, kind="DOCX", source="l.docx")


def test_the_corpus_docx_passes_and_a_broken_zip_is_an_input_error():
    docx = (corpus_maker().HERE / "docx" / "report.docx").read_bytes()
    check_zip(docx, kind="DOCX", source="report.docx")
    with pytest.raises(InputError, match="zip container is damaged"):
        check_zip(docx[:200], kind="DOCX", source="cut.docx")


# ----------------------------------------------------------------------------- PDF


def _stream_pdf(body: bytes, extra: bytes = b"", filters: bytes = b"/FlateDecode") -> bytes:
    stream = zlib.compress(body)
    if filters.startswith(b"[/ASCIIHexDecode"):
        stream = stream.hex().encode() + b">"
    return corpus_maker().write_pdf({
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [] /Count 0 >>",
        3: b"<< /Length %d /Filter %s %s>>\nstream\n" % (len(stream), filters, extra) + stream
           + b"\nendstream",
    })  # fmt: skip


def test_a_pdf_stream_bomb_is_refused_and_images_are_not_inflated():
    bomb = _stream_pdf(b" " * 30_000_000)
    with pytest.raises(LimitError, match=r"stream object 3 0 inflates past"):
        check_streams(bomb, source="b.pdf")
    check_streams(_stream_pdf(b"\x00" * 30_000_000, b"/Subtype /Image "), source="img.pdf")
    hexed = _stream_pdf(b" " * 30_000_000, filters=b"[/ASCIIHexDecode /FlateDecode]")
    with pytest.raises(LimitError):
        check_streams(hexed, source="h.pdf")


def test_the_corpus_pdf_passes_and_a_bomb_fails_through_the_registry():
    check_streams((corpus_maker().HERE / "pdf" / "report.pdf").read_bytes(), source="r.pdf")
    with pytest.raises(LimitError):
        registry.parse(_stream_pdf(b" " * 30_000_000), "b.pdf")


# ----------------------------------------------------------------------------- structure


def test_html_nesting_is_capped_and_the_text_kept():
    html = "<div>" * 600 + "deep words" + "</div>" * 600
    out, depth = cap_depth(html, 512)
    assert depth == 600 and out.count("<div>") == 512 and "deep words" in out
    assert cap_depth("<p>x" * 2000, 512)[1] == 0  # implied ends
    assert cap_depth("<svg>" + "<path/>" * 2000 + "</svg>", 512)[1] == 1
    assert cap_depth("<div/>" * 600, 512)[1] == 600  # in HTML a self-closed div stays open
    assert cap_depth("<!--" + "<div>" * 600, 512)[1] == 0
    meta = _chunks_whole(html.encode(), "deep.html")
    assert "600 elements deep" in meta["fallback"]


def test_huge_code_and_python_fall_back(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(limits, "MAX_AST_CHARS", 200)
    monkeypatch.setattr(limits, "MAX_TREE_SITTER_BYTES", 400)
    source = b"def f(x):\n    return [" + b", ".join(b"%d" % i for i in range(60)) + b"]\n"
    assert "tree-sitter" in _chunks_whole(source, "mid.py")["fallback"]
    longer = source + b"# " + b"x" * 400 + b"\n"
    assert "plain text" in _chunks_whole(longer, "big.py")["fallback"]
    assert "syntax trees" in _chunks_whole(b"function f() {}\n" * 40, "big.js")["fallback"]


@pytest.mark.parametrize(
    ("name", "data", "said"),
    [
        ("rows.csv", b"a,b\n" + b"1,2\n" * 50, "grouped into rows"),
        ("items.json", b"[" + b",".join([b'{"k": 1}'] * 30) + b"]", "more than 10 keys"),
        ("keys.yaml", b"".join(b"k%d: 1\n" % i for i in range(30)), "more than 10 keys"),
        ("paras.txt", b"word\n\n" * 30, "over 10 paragraphs"),
        ("page.html", b"<p>word</p>" * 30, "over 10 blocks"),
        ("list.md", b"- item\n" * 30, "Markdown of more than 10 lines"),
    ],
)
def test_too_many_blocks_coarsen_the_structure(
    monkeypatch: pytest.MonkeyPatch, name: str, data: bytes, said: str
):
    monkeypatch.setattr(limits, "MAX_BLOCKS", 10)
    monkeypatch.setattr(limits, "MAX_MARKDOWN_LINES", 10)
    assert said in _chunks_whole(data, name)["fallback"]


def test_csv_groups_keep_every_record_inside_a_block(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(limits, "MAX_BLOCKS", 10)
    text = "a,b\n" + "".join(f"{i},x\n" for i in range(95))
    document = registry.parse(text.encode(), "r.csv")
    (table,) = document.blocks  # the header and the row groups are the table's children
    rows = [b for b in table.children if b.kind == "rows"]
    assert len(rows) == 10 and rows[0].metadata["rows"] == (1, 10)
    assert rows[-1].metadata["rows"] == (91, 95)
    assert document.text[rows[-1].start : rows[-1].end] == "\n".join(
        f"{i},x" for i in range(90, 95)
    )


def test_notebooks_with_too_many_or_malformed_cells_fall_back(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(limits, "MAX_CELLS", 2)
    cell = b'{"cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": []}'
    many = b'{"cells": [' + b",".join([cell] * 3) + b'], "metadata": {}, "nbformat": 4, ' \
           b'"nbformat_minor": 5}'  # fmt: skip
    assert "more than 2 cells" in _chunks_whole(many, "n.ipynb")["fallback"]
    broken = many.replace(b'"cell_type": "code", ', b"", 1)
    monkeypatch.setattr(limits, "MAX_CELLS", 20)
    assert "cell 0 has cell_type None" in _chunks_whole(broken, "n.ipynb")["fallback"]


def test_breadcrumbs_on_chunks_are_bounded():
    keys = [f"k{depth}- " + "fault " * 300 for depth in range(30)]  # each over the budget
    text = "".join('{"' + k + '": ' for k in keys) + '"leaf value"' + "}" * 30
    chunks = Chunker(max_tokens=16).chunk_document(registry.parse(text.encode(), "b.json"))
    for chunk in chunks:
        assert len(chunk.headings) <= limits.MAX_HEADINGS
        assert all(len(h) <= limits.MAX_HEADING_CHARS for h in chunk.headings)
        assert len(chunk.context or "") <= (limits.MAX_HEADING_CHARS + 3) * (
            limits.MAX_HEADINGS + 1
        )
    deepest = next(c for c in chunks if "leaf value" in c.text)
    assert deepest.headings[:2] == (keys[0][:199] + "…", keys[1][:199] + "…")
    assert len(deepest.headings) == limits.MAX_HEADINGS
    assert deepest.headings[2] == "…" and deepest.headings[-1].startswith("k29-")


def test_a_block_tree_thousands_deep_is_packed_without_exhausting_the_stack():
    from fissure.types import Block, Document

    text = "fault line " * 3000
    block = Block("paragraph", 0, 10)
    for _ in range(3000):
        block = Block("section", 0, len(text) - 1, 1, "t", (block,))
    document = Document.from_text(text, blocks=(block,))
    chunker = Chunker(max_tokens=16)
    assert_chunk_invariants(document, chunker, chunker.chunk_document(document))
    nested_lists = b"<ul>" * 3000 + b"deep item" + b"</ul>" * 3000
    _chunks_whole(nested_lists, "lists.html")
