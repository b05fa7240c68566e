"""Tables in PDFs: ruled and unruled, with captions above and below, as table blocks with
one row per row and the header row known; their chunks carry the header in context.

Generated PDFs place every cell (``tests/pdf_samples.py``); a real layout comes from
headless Chromium printing an HTML table, with its running header, footer and page
numbers on, where Chromium is installed (``scripts/install-chromium.sh``).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from tests.chunk_checks import corpus_maker
from tests.conftest import get_sizer
from tests.pdf_samples import RULED_ROWS, UNRULED_ROWS, handbook, long_table
from tests.split.test_tables import assert_table_chunks, row_spans
from tree_checks import walk

from fissure import Chunker
from fissure.parse import pdf
from fissure.types import Block, Document

HANDBOOK = pdf.parse(handbook(), source="handbook.pdf")


def tables(doc: Document) -> list[Block]:
    return [b for b in walk(doc.blocks) if b.kind == "table"]


def rows_of(doc: Document, table: Block) -> list[str]:
    return [doc.text[r.start : r.end] for r in table.children if r.kind == "row"]


def test_a_ruled_table_with_its_caption_above() -> None:
    table = tables(HANDBOOK)[0]
    assert table.title == "Table 1: Revenue by quarter"
    assert table.metadata["page"] == 2
    assert rows_of(HANDBOOK, table) == [" | ".join(r) for r in RULED_ROWS]
    caption, header, *body = table.children
    assert caption.kind == "caption" and HANDBOOK.text[caption.start : caption.end] == table.title
    assert header.metadata.get("header") and not any(r.metadata.get("header") for r in body)


def test_an_unruled_table_with_its_caption_below() -> None:
    table = tables(HANDBOOK)[1]
    assert table.title == "Table 2: Staff by region"  # printed after the table
    assert rows_of(HANDBOOK, table) == [" | ".join(r) for r in UNRULED_ROWS]
    assert HANDBOOK.text.count("Table 2: Staff by region") == 1  # moved, not copied


def test_table_finding_can_be_turned_off_and_loses_no_text() -> None:
    plain = pdf.parse(handbook(), source="handbook.pdf", tables=False)
    assert not tables(plain)
    for row in RULED_ROWS + UNRULED_ROWS:
        assert " ".join(row) in plain.text


def test_text_pages_have_no_tables() -> None:
    maker = corpus_maker()
    assert not tables(pdf.parse(maker.make_pdf(maker.REPORT_PAGES), source="report.pdf"))
    assert not tables(pdf.parse(handbook(), source="h.pdf").__class__.from_text("x"))


@pytest.mark.parametrize("ruled", [True, False], ids=["ruled", "unruled"])
@pytest.mark.parametrize(("tokenizer", "budget"), [("minilm", 48), ("cl100k_base", 80)])
def test_long_table_chunks_carry_the_header_and_stay_in_budget(
    ruled: bool, tokenizer: str, budget: int
) -> None:
    data, rows = long_table(90, ruled=ruled, pages=3)
    doc = pdf.parse(data, source="figures.pdf")
    found = tables(doc)
    assert len(found) == 3  # one a page, each with its caption and its header row
    chunker = Chunker(strategy="structural", max_tokens=budget, sizer=get_sizer(tokenizer))
    header = " | ".join(rows[0])
    for n, table in enumerate(found):
        assert table.title == f"Table 3: Figures by region, part {n + 1}"
        lines = rows_of(doc, table)
        assert lines[0] == header
        assert_table_chunks(doc, chunker, header, row_spans(doc, lines), table.title)
    body = [" | ".join(r) for r in rows[1:]]
    assert [line for t in found for line in rows_of(doc, t)[1:]] == body


@pytest.mark.parametrize("ruled", [True, False], ids=["ruled", "unruled"])
def test_a_table_continued_over_pages_is_one_table(ruled: bool) -> None:
    data, rows = long_table(90, ruled=ruled, pages=3, continued=True)
    doc = pdf.parse(data, source="figures.pdf")
    (table,) = tables(doc)
    assert table.title == "Table 3: Figures by region"
    lines = rows_of(doc, table)
    assert lines == [" | ".join(r) for r in rows]  # the repeated header rows left out
    pages = [r.metadata["page"] for r in table.children if r.kind == "row"]
    assert pages[0] == 1 and pages[-1] == 3 and pages == sorted(pages)
    chunker = Chunker(strategy="structural", max_tokens=64, sizer=get_sizer("minilm"))
    chunks = assert_table_chunks(doc, chunker, lines[0], row_spans(doc, lines), table.title)
    last = [c for c in chunks if c.page == 3]
    assert last and all(c.context.endswith("\n" + lines[0]) for c in last)


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(
    _chromium() is None, reason="Chromium not installed (scripts/install-chromium.sh)"
)
def test_a_table_printed_by_chromium(tmp_path: Path) -> None:
    html = tmp_path / "budget.html"
    html.write_text(corpus_maker().BUDGET_HTML, encoding="utf-8")
    out = tmp_path / "budget.pdf"
    subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
         "--generate-pdf-document-outline", f"--print-to-pdf={out}", html.as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    doc = pdf.parse(out.read_bytes(), source="budget.pdf")
    assert doc.metadata["headings"] == "outline"
    found = tables(doc)
    assert [t.title for t in found] == [
        "Table 1: Spending by department (million EUR)",
        "Table 2: Staff by office",
    ]  # table 1 runs over two pages, one block; table 2 has no rules
    printed = [line for t in found for line in rows_of(doc, t)]
    assert printed[0] == "Department | 2023 | 2024 | Change"
    for k in range(1, 61):  # every row, once, though the table runs over pages
        assert sum(line.startswith(f"Department {k:02d} (") for line in printed) == 1, k
    assert "budget.html" not in doc.text  # Chromium's footer: the file's address
    assert doc.metadata["pages"] > 1 and "furniture" in doc.metadata
