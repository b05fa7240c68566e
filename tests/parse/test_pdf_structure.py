"""PDF structure: outline and layout headings, breadcrumbs with pages, hyphen joins,
running headers and footers, two columns; chunk invariants on every corpus PDF.

The PDFs are written at test time (``tests/pdf_samples.py``), so each fact checked here is
one the test put there; real PDFs (the corpus, and those under /usr/share/doc where this
machine has them) are checked for the invariants.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from tests.chunk_checks import assert_chunk_invariants
from tests.conftest import get_sizer
from tests.pdf_samples import HEADER, LEFT_COLUMN, RIGHT_COLUMN, columns_page, handbook
from tests.pdfgen import Pdf
from tree_checks import assert_valid_tree, walk

from fissure import Chunker
from fissure.parse import parse, pdf
from fissure.types import Block, Document

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "pdf"
WITH_OUTLINE = pdf.parse(handbook(outline=True), source="handbook.pdf")
WITHOUT_OUTLINE = pdf.parse(handbook(outline=False), source="handbook.pdf")


def sections(doc: Document) -> list[tuple[int, str | None, str | None]]:
    """(nesting depth, title, printed heading) of every section, in order."""
    found = []
    stack: list[tuple[Block, int]] = [(b, 1) for b in reversed(doc.blocks)]
    while stack:
        block, depth = stack.pop()
        if block.kind == "section":
            head = block.children[0]
            printed = doc.text[head.start : head.end] if head.kind == "heading" else None
            found.append((depth, block.title, printed))
        stack.extend((c, depth + 1) for c in reversed(block.children))
    return found


def test_outline_headings_nest_and_match_the_printed_lines() -> None:
    doc = WITH_OUTLINE
    assert_valid_tree(doc)
    assert doc.metadata["headings"] == "outline"
    assert sections(doc) == [
        (1, "1 Introduction", "1 Introduction"),
        (2, "1.1 Scope", "1.1 Scope"),
        (1, "2 Usage", "2 Usage"),
        # Printed over two lines, one heading.
        (2, "2.1 Parsing the reports of every region", "2.1 Parsing the reports of every region"),
        (2, "2.2 Unprinted part", None),  # in the outline only: starts at its height
        (1, "3 Survey notes", "3 Survey notes"),
    ]
    unprinted = next(b for b in walk(doc.blocks) if b.title == "2.2 Unprinted part")
    assert doc.text[unprinted.start : unprinted.end].startswith("The south gained two offices")


def test_chunks_get_breadcrumbs_and_keep_their_page() -> None:
    chunks = Chunker(max_tokens=40).chunk_document(WITH_OUTLINE)
    staff = next(c for c in chunks if c.text.startswith("Table 2: Staff by region"))
    assert staff.headings == (
        "2 Usage", "2.1 Parsing the reports of every region", "Table 2: Staff by region",
    )  # fmt: skip
    assert staff.page == 3
    assert staff.context == (
        "handbook.pdf › 2 Usage › 2.1 Parsing the reports of every region › "
        "Table 2: Staff by region"
    )
    south = next(c for c in chunks if c.text.startswith("The south gained"))
    assert (south.headings, south.page) == (("2 Usage", "2.2 Unprinted part"), 3)
    scope = next(c for c in chunks if c.text.startswith("1.1 Scope"))
    assert (scope.headings, scope.page) == (("1 Introduction", "1.1 Scope"), 1)
    assert all(c.page is not None for c in chunks)
    assert not any(h.startswith("page ") for c in chunks for h in c.headings)


def test_layout_headings_from_size_weight_and_numbering() -> None:
    doc = WITHOUT_OUTLINE
    assert_valid_tree(doc)
    assert doc.metadata["headings"] == "layout"
    assert sections(doc) == [
        (1, "1 Introduction", "1 Introduction"),
        (2, "1.1 Scope", "1.1 Scope"),
        (3, "Note on safety", "Note on safety"),  # bold, set apart, body size
        (1, "2 Usage", "2 Usage"),
        (2, "2.1 Parsing the reports of every region", "2.1 Parsing the reports of every region"),
        (1, "3 Survey notes", "3 Survey notes"),
    ]
    # Table captions and table rows are not headings, though short and bold.
    titles = [t for _, t, _ in sections(doc)]
    assert not any(t and t.startswith(("Table", "Quarter", "Region")) for t in titles)


def test_a_table_of_contents_and_formula_pieces_are_not_headings() -> None:
    maker = Pdf()
    page = maker.page()
    page.text(72, 720, "Contents", font="bold", size=16)
    page.text(72, 700, "1 Overview 2", font="bold", size=11)
    page.text(72, 686, "2 Details 3", font="bold", size=11)
    page.text(72, 640, "X-1", font="bold", size=20)  # the big sigma of a formula, say
    page.text(72, 620, "Body text follows here, set at the ordinary size.", size=11)
    for n, title in ((1, "1 Overview"), (2, "2 Details")):
        page = maker.page()
        page.text(72, 720, title, font="bold", size=16)
        page.text(72, 690, f"Text of part {n}, at the ordinary size of the body.", size=11)
    doc = pdf.parse(maker.to_bytes(), source="toc.pdf")
    assert [t for _, t, _ in sections(doc)] == ["Contents", "1 Overview", "2 Details"]


def test_hyphenated_words_ligatures_and_whitespace() -> None:
    text = WITH_OUTLINE.text
    assert "the management\nof the teams on a day-to-day\nbasis" in text  # joined; kept
    assert "first chapter of a well-known\nseries" in text  # the document has well-known
    assert "rough terrain." in text
    assert "Odd spacing here." in text
    for odd in ("\ufffe", "\x02", "\xad", "\ufb01", "\xa0", "  "):
        assert odd not in text.replace("\n\f\n", "\n"), repr(odd)


def test_a_soft_hyphen_at_a_line_end_joins_the_word() -> None:
    maker = Pdf()
    page = maker.page()
    page.lines(72, 700, ["The parser handles hyphen\xad", "ation of long words well."], size=11)
    doc = pdf.parse(maker.to_bytes(), source="soft.pdf")
    assert doc.text == "The parser handles hyphenation\nof long words well."


def test_running_headers_footers_and_page_numbers_are_left_out() -> None:
    doc = WITH_OUTLINE
    assert HEADER not in doc.text and "Page 2 of 4" not in doc.text
    assert doc.metadata["furniture"] == ["acme corp · field handbook #", "page # of #"]
    # Each page's text starts with its own first line, not with the header glued to it.
    pages = doc.text.split(pdf.PAGE_SEPARATOR)
    assert [p.split("\n")[0] for p in pages] == [
        "1 Introduction", "2 Usage", "2.1 Parsing the reports of every region", "3 Survey notes",
    ]  # fmt: skip


def test_a_line_repeated_inside_the_page_stays() -> None:
    maker = Pdf()
    for n in range(4):
        page = maker.page()
        page.text(72, 700, ["North", "South", "East", "West"][n] + " opens this page.", size=11)
        page.text(72, 400, "Repeated remark in the middle of the page.", size=11)
        page.text(72, 380, f"And a closing line for page {n + 1}.", size=11)
    doc = pdf.parse(maker.to_bytes(), source="repeat.pdf")
    assert doc.text.count("Repeated remark in the middle of the page.") == 4
    assert "furniture" not in doc.metadata


@pytest.mark.parametrize("interleaved", [False, True], ids=["column-order", "line-order"])
def test_two_columns_are_read_column_by_column(interleaved: bool) -> None:
    doc = pdf.parse(columns_page(interleaved=interleaved), source="columns.pdf")
    assert doc.text == "\n".join(LEFT_COLUMN) + "\n\n" + "\n".join(RIGHT_COLUMN)


def test_one_column_is_left_in_order() -> None:
    pages = handbook()
    doc = pdf.parse(pages, source="handbook.pdf")
    assert doc.text.index("1 Introduction") < doc.text.index("1.1 Scope")
    assert doc.text.index("Table 1") < doc.text.index("Revenue grew")


# ----------------------------------------------------------------------------- invariants


def _real_pdfs() -> list[Path]:
    found = sorted(CORPUS.glob("*.pdf"))
    for pattern in ("*.pdf", "*.pdf.gz"):
        found += sorted(Path("/usr/share/doc").rglob(pattern))
    return found


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


PDFS = _real_pdfs()
CHUNKERS = [("minilm", 48), ("minilm", 254), ("cl100k_base", 100), ("chars", 400)]


@pytest.mark.parametrize("path", [p for p in PDFS if p.is_relative_to(CORPUS)], ids=str)
@pytest.mark.parametrize(("tokenizer", "budget"), CHUNKERS)
def test_invariants_on_every_corpus_pdf(path: Path, tokenizer: str, budget: int) -> None:
    document = parse(_read(path), path.name)
    assert_valid_tree(document)
    chunker = Chunker(strategy="structural", max_tokens=budget, sizer=get_sizer(tokenizer))
    assert_chunk_invariants(document, chunker, chunker.chunk_document(document))


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in PDFS if not p.is_relative_to(CORPUS)], ids=str)
def test_invariants_on_the_machines_pdfs(path: Path) -> None:
    """Real manuals and papers (TeX, DocBook, texinfo), where this machine has them."""
    document = parse(_read(path), path.name)
    assert_valid_tree(document)
    for tokenizer, budget in (("minilm", 254), ("cl100k_base", 64)):
        chunker = Chunker(strategy="structural", max_tokens=budget, sizer=get_sizer(tokenizer))
        assert_chunk_invariants(document, chunker, chunker.chunk_document(document))


@pytest.mark.parametrize("strategy", ["recursive", "sentence", "fixed", "structural"])
def test_every_strategy_keeps_offsets_on_a_structured_pdf(strategy: str) -> None:
    chunker = Chunker(strategy=strategy, max_tokens=32, sizer=get_sizer("minilm"))
    assert_chunk_invariants(WITH_OUTLINE, chunker, chunker.chunk_document(WITH_OUTLINE))
