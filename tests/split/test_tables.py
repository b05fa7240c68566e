"""Tables in every format: whole when they fit, cut between rows when not, and every chunk
that continues a table carries the title and header row in its embedded context.

The same seeded tables are written as Markdown, HTML, DOCX and CSV (PDF tables are tested
in ``tests/parse/test_pdf_tables.py`` through the same ``assert_table_chunks``). Rows are
located independently of the parsers: by their text, which every format writes on one line
with cells joined by its own separator.
"""

from __future__ import annotations

import io
import random

import pytest

from fissure import Chunk, Chunker, Document
from fissure.parse import parse
from fissure.types import Block
from tests.chunk_checks import assert_chunk_invariants
from tests.conftest import get_sizer

WORDS = ("north south east west revenue cost staff office plant store region total").split()  # noqa: SIM905
BUDGETS = [("minilm", 48), ("minilm", 96), ("cl100k_base", 40), ("cl100k_base", 400)]


def make_table(rng: random.Random, rows: int) -> tuple[str, list[str], list[list[str]]]:
    """A title, a header and body rows; some cells long enough to make rows oversize."""
    header = ["Region", "Quarter", "Revenue", "Note"]
    body = []
    for i in range(rows):
        note = " ".join(rng.choice(WORDS) for _ in range(rng.choice([1, 2, 3, 40])))
        body.append([f"R{i}", f"Q{rng.randint(1, 4)}", f"{rng.uniform(1, 9):.1f}", note])
    return "Table 7: Revenue by region", header, body


def as_markdown(title: str, header: list[str], body: list[list[str]]) -> bytes:
    lines = ["# Results", "", "Before the table.", "", title, ""]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join([*lines, "", "After the table.", ""]).encode()


def as_html(title: str, header: list[str], body: list[list[str]]) -> bytes:
    head = "".join(f"<th>{c}</th>" for c in header)
    rows = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in body)
    return (
        f"<html><body><h1>Results</h1><p>Before the table.</p><table><caption>{title}"
        f"</caption><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
        "<p>After the table.</p></body></html>"
    ).encode()


def as_docx(title: str, header: list[str], body: list[list[str]]) -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Results", level=1)
    document.add_paragraph("Before the table.")
    document.add_paragraph(title, style="Caption")
    table = document.add_table(rows=len(body) + 1, cols=len(header))
    for row, cells in zip(table.rows, [header, *body], strict=True):
        for cell, value in zip(row.cells, cells, strict=True):
            cell.text = value
    document.add_paragraph("After the table.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def as_csv(title: str, header: list[str], body: list[list[str]]) -> bytes:
    return "\n".join(",".join(r) for r in [header, *body]).encode() + b"\n"


FORMATS = {
    "md": (as_markdown, " | ", True),
    "html": (as_html, " | ", True),
    "docx": (as_docx, " | ", True),
    "csv": (as_csv, ",", False),  # CSV has no title
}


def row_spans(document: Document, lines: list[str]) -> list[tuple[int, int]]:
    """Where each row's text sits in the document (in order, searched forward)."""
    spans, at = [], 0
    for line in lines:
        start = document.text.index(line, at)
        spans.append((start, start + len(line)))
        at = start + len(line)
    return spans


def assert_table_chunks(
    document: Document,
    chunker: Chunker,
    header_line: str,
    rows: list[tuple[int, int]],
    title: str | None,
) -> list[Chunk]:
    """The table is whole if it fits; else cut only between rows (or inside an oversize
    row, which says so); every chunk starting after the header carries title and header
    in an embedded context that fits the budget with the chunk."""
    chunks = chunker.chunk_document(document)
    assert_chunk_invariants(document, chunker, chunks)
    budget, count = chunker.settings.budget, chunker.sizer._fn
    table_start, table_end = rows[0][0], rows[-1][1]
    for c in chunks:
        inside = [(s, e) for s, e in rows if s < c.end < e]
        if inside:
            s, e = inside[0]
            assert c.metadata.get("oversize") == "row", (c.metadata, c.text[-60:])
            assert count(document.text[s:e]) > budget - c.metadata.get("context_tokens", 0)
        continues = table_start < c.start < table_end and c.start >= rows[1][0]
        if not continues:
            continue
        assert c.context is not None and c.context.endswith(header_line), c.context
        if title and c.context != header_line:  # the header alone: all that fits half
            assert title in c.context
        if "context_tokens" in c.metadata:
            assert c.n_tokens + c.metadata["context_tokens"] <= budget
            assert c.embedding_text() == f"{c.context}\n{c.text}"
        else:  # only a row that alone fills the budget goes without its context
            assert c.metadata["context_dropped"], c.metadata
            assert c.n_tokens + count(c.context + "\n") > budget
    # The table block (with its caption, where the format has one) holding these rows.
    table = next(t for t in tables(document.blocks) if t.start <= rows[0][0] < t.end)
    if count(document.text[table.start : table.end]) <= budget:
        assert any(c.start <= table.start and table.end <= c.end for c in chunks)
    return chunks


def tables(blocks: tuple[Block, ...]) -> list[Block]:
    found = []
    for block in blocks:
        found += [block] if block.kind == "table" else tables(block.children)
    return found


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(("tokenizer", "budget"), BUDGETS)
def test_tables_in_every_format(fmt: str, seed: int, tokenizer: str, budget: int) -> None:
    write, sep, titled = FORMATS[fmt]
    rng = random.Random(seed)
    title, header, body = make_table(rng, rows=rng.choice([3, 12, 40]))
    document = parse(write(title, header, body), f"table.{fmt}")
    lines = [sep.join(r) for r in [header, *body]]
    if fmt == "md":
        lines = [f"| {line} |" for line in lines]
    chunker = Chunker(strategy="structural", max_tokens=budget, sizer=get_sizer(tokenizer))
    chunks = assert_table_chunks(
        document, chunker, lines[0], row_spans(document, lines), title if titled else None
    )
    contexts = [c.context for c in chunks if c.context and "\n" in c.context]
    small = [x for x in contexts if 2 * chunker.sizer._fn(x + "\n") <= budget]
    if count_rows_split(chunks, document, lines) > 1 and small:
        assert any("context_tokens" in c.metadata for c in chunks)


def count_rows_split(chunks: list[Chunk], document: Document, lines: list[str]) -> int:
    """How many chunks hold body rows."""
    spans = row_spans(document, lines)[1:]
    return sum(any(c.start <= s < c.end for s, _ in spans) for c in chunks)


def test_a_table_that_fits_is_one_chunk_with_its_neighbours_apart() -> None:
    title, header, body = "Table 1: Staff", ["Office", "Staff"], [["Oslo", "4"], ["Rome", "9"]]
    document = parse(as_html(title, header, body), "t.html")
    chunks = Chunker(max_tokens=254).chunk_document(document)
    (table_chunk,) = [c for c in chunks if "Oslo | 4" in c.text]
    assert "Office | Staff" in table_chunk.text and "Rome | 9" in table_chunk.text
    assert "context_tokens" not in table_chunk.metadata  # it holds its header itself


def test_the_context_names_the_columns_of_a_continuing_chunk() -> None:
    body = [[f"Q{i % 4 + 1}", f"{i}.2", f"{i}.9"] for i in range(60)]
    document = parse(as_html("Table 2: Quarterly figures", ["Quarter", "Revenue", "Cost"], body),
                     "q.html")  # fmt: skip
    chunks = Chunker(max_tokens=64).chunk_document(document)
    later = [c for c in chunks if c.text.startswith("Q") and "Quarter | Revenue" not in c.text]
    assert len(later) > 3
    for c in later:
        assert c.embedding_text().split("\n")[:2] == [
            "Table 2: Quarterly figures",
            "Quarter | Revenue | Cost",
        ]
        assert c.n_tokens + c.metadata["context_tokens"] <= 64


def test_with_prepend_context_a_continuing_chunk_leads_with_the_whole_line() -> None:
    """The file › breadcrumb line every chunk gets with ``prepend_context`` comes first on
    a continuing table chunk too; without it the table's title and header are enough."""
    body = [[f"Q{i % 4 + 1}", f"{i}.2", f"{i}.9"] for i in range(60)]
    document = parse(as_html("Table 2: Quarterly figures", ["Quarter", "Revenue", "Cost"], body),
                     "q.html")  # fmt: skip
    chunks = Chunker(max_tokens=96, prepend_context=True).chunk_document(document)
    later = [c for c in chunks if c.text.startswith("Q") and "Quarter | Revenue" not in c.text]
    assert len(later) > 3
    for c in later:
        assert c.embedding_text().split("\n")[:2] == [
            "q.html › Results › Table 2: Quarterly figures",
            "Quarter | Revenue | Cost",
        ]
        assert c.n_tokens + c.metadata["context_tokens"] <= 96


def test_other_strategies_do_not_pin_table_context() -> None:
    body = [[f"Q{i}", f"{i}.2", f"{i}.9"] for i in range(60)]
    document = parse(as_csv("", ["Quarter", "Revenue", "Cost"], body), "q.csv")
    for strategy in ("recursive", "sentence"):
        chunks = Chunker(strategy=strategy, max_tokens=40).chunk_document(document)
        assert not any("context_tokens" in c.metadata for c in chunks), strategy


def test_table_spans_merge_nested_tables_in_order() -> None:
    from fissure.split.tables import table_spans

    inner = Block("table", 12, 18)
    outer = Block("table", 10, 40, children=(Block("row", 10, 20, children=(inner,)),))
    blocks = (Block("paragraph", 0, 9), outer, Block("section", 41, 90, children=(
        Block("table", 50, 60), Block("table", 60, 70))))  # fmt: skip
    assert table_spans(blocks) == [(10, 40), (50, 60), (60, 70)]


def test_reserve_outside_tables_is_zero_without_a_lookup() -> None:
    text = "# T\n\nIntro words here.\n\n| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 30
    chunker = Chunker(strategy="structural", max_tokens=40, tokenizer="chars")
    document = parse(text.encode(), "t.md")
    reserve = chunker._reserve(chunker._placer(document))
    assert reserve is not None
    table = text.index("| a |")
    assert reserve(0) == reserve(table - 2) == 0
    assert reserve(text.index("| 1 |", table + 40)) > 0  # a body row owes the header
