"""The compiled word loop (``fissure.parse._pdfwords``) gives the Python loop's lines, exactly.

``page_lines`` runs the compiled loop when it is built; here every page goes through both
(``_page_lines_py`` is the Python one) over the same pdfium text page, and the lines must be
equal: the same grouping, the same ``Line`` fields and, for every word, its text and the
bits of its four coordinates. Each page is read as pdfium's text asks (its text positions
translated to character indices or not) and again with the translation, so that both
paths of the index call are taken. The pages: the committed PDFs, the generated samples,
pages whose text runs up, down and upside down (the turned frames), the PDFs under
/usr/share/doc where the machine has them, and made-up texts over a real page, which reach
every branch of the tokenizer (line breaks, odd whitespace, lone and inner hyphen marks,
characters that cleaning drops, words without a box).
"""

from __future__ import annotations

import gzip
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.pdf_samples import (
    LEFT,
    RULED_ROWS,
    UNRULED_ROWS,
    columns_around_table,
    columns_page,
    handbook,
    long_table,
)
from tests.pdfgen import Pdf

from fissure._compiled import reasons
from fissure.parse import pdf_layout
from fissure.parse.pdf_frame import frame_of

pytestmark = pytest.mark.skipif(
    pdf_layout._words is None,
    reason=f"the compiled word loop is off: {reasons().get('fissure.parse._pdfwords')}",
)

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "pdf"
DOCS = sorted(p for pattern in ("*.pdf", "*.pdf.gz") for p in Path("/usr/share/doc").rglob(pattern))
XS = [LEFT, LEFT + 150, LEFT + 300, LEFT + 420]


def _rows(lines: list[pdf_layout.Line]) -> list[tuple[Any, ...]]:
    """Everything a line holds; coordinates by their bits (``float.hex`` refuses non-floats)."""
    return [
        (
            ln.page,
            ln.size.hex(),
            ln.bold,
            ln.mono,
            ln.starts,
            ln.ocr,
            ln.role,
            ln.row,
            [(w.text, w.x0.hex(), w.x1.hex(), w.top.hex(), w.bottom.hex()) for w in ln.words],
        )
        for ln in lines
    ]


def assert_twins(text: str, textpage: Any, frame: Any, number: int, mapped: bool) -> int:
    """Both loops over one page; the number of lines."""
    assert pdf_layout._words is not None
    boxes = pdf_layout._Boxes(textpage.raw, frame, mapped)
    compiled = pdf_layout._words.page_lines(text, boxes, number, pdf_layout._line)
    python = pdf_layout._page_lines_py(text, boxes, number)
    assert _rows(compiled) == _rows(python)
    return len(python)


def _pages(data: bytes) -> Iterator[tuple[int, Any, Any]]:
    document = pdfium.PdfDocument(data)
    try:
        for k in range(len(document)):
            page = document[k]
            textpage = page.get_textpage()
            try:
                yield k + 1, page, textpage
            finally:
                textpage.close()
                page.close()
    finally:
        document.close()


def check_document(data: bytes) -> Counter[str]:
    """Every page of a PDF through both loops, as pdfium asks and with positions translated."""
    seen: Counter[str] = Counter()
    for number, page, textpage in _pages(data):
        text = textpage.get_text_range()
        frame = frame_of(page, textpage)
        mapped = len(text) != textpage.count_chars()
        for translate in sorted({mapped, True}):
            seen["lines"] += assert_twins(text, textpage, frame, number, translate)
        seen["pages"] += 1
        seen["mapped"] += mapped
        seen[f"turn {frame.turn}"] += 1
        seen["marks"] += sum(text.count(m) for m in pdf_layout._MARK_CHARS)
    return seen


def _turned(turn: int) -> bytes:
    """Two lines of text turned so that the page must be read turned by ``turn`` degrees."""
    if turn == 90:  # a landscape design drawn up a portrait page, as pdfgen draws it
        pdf = Pdf(width=792, height=612)
        page = pdf.page()
        page.turned = True
    else:
        pdf = Pdf()
        page = pdf.page()
        page.ops.append({180: b"q -1 0 0 -1 612 792 cm", 270: b"q 0 -1 1 0 0 792 cm"}[turn])
    page.text(LEFT, 500, "Enquiries by topic, turned", font="bold", size=14)
    page.text(LEFT, 470, "Topic number 1   137   1.5% of the \ufb01rst well-", size=10)
    page.text(LEFT, 456, "known series", size=10)
    if turn != 90:
        page.ops.append(b"Q")
    return pdf.to_bytes()


def _shifted(data: bytes) -> bytes:
    """The pages with a media box whose corner is off the origin (the same length of bytes,
    so the cross-reference table stays right): the frame then subtracts other numbers."""
    box = b"/MediaBox [0 0 612.00 792.00]"
    assert box in data
    return data.replace(box, b"/MediaBox [-3.7 9.13 608 801]")


SAMPLES = {
    "handbook": lambda: handbook(),
    "handbook-shifted": lambda: _shifted(handbook()),
    "columns-interleaved": lambda: columns_page(interleaved=True),
    "columns": lambda: columns_page(interleaved=False),
    "around-ruled": lambda: columns_around_table(RULED_ROWS, XS, ruled=True),
    "around-unruled": lambda: columns_around_table(UNRULED_ROWS, XS, ruled=False),
    "long-table": lambda: long_table(60, ruled=True, pages=2)[0],
}


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.pdf")), ids=lambda p: p.name)
def test_the_committed_pdfs(path: Path) -> None:
    assert check_document(path.read_bytes())["lines"] > 0


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_generated_samples(name: str) -> None:
    seen = check_document(SAMPLES[name]())
    assert seen["lines"] > 0
    if name.startswith("handbook"):
        assert seen["marks"] >= 4  # its line-end hyphens, as pdfium marks them


@pytest.mark.parametrize("shifted", [False, True], ids=["origin", "shifted"])
@pytest.mark.parametrize("turn", [90, 180, 270])
def test_turned_pages(turn: int, shifted: bool) -> None:
    seen = check_document(_shifted(_turned(turn)) if shifted else _turned(turn))
    assert seen[f"turn {turn}"] == 1 and seen["lines"] > 0


@pytest.mark.parametrize("path", DOCS, ids=str)
def test_the_machines_pdfs(path: Path) -> None:
    data = path.read_bytes()
    seen = check_document(gzip.decompress(data) if path.suffix == ".gz" else data)
    assert seen["lines"] > 0


def test_page_lines_runs_the_twin_and_the_python_loop_alike(monkeypatch: pytest.MonkeyPatch):
    for number, page, textpage in _pages(handbook()):
        compiled = _rows(pdf_layout.page_lines(page, textpage, number))
        with monkeypatch.context() as patch:
            patch.setattr(pdf_layout, "_words", None)
            python = _rows(pdf_layout.page_lines(page, textpage, number))
        assert compiled == python and compiled


def test_the_twins_constants_are_the_python_loops():
    """The compiled tokenizer is written for this pattern and these marks."""
    assert pdf_layout._TOKEN.pattern == (
        r"(\r\n|\r|\n)|[^\s\ufffe\x02\u00ad]+[\ufffe\x02\u00ad]?|[\ufffe\x02\u00ad]"
    )
    assert pdf_layout._MARK_CHARS == "\ufffe\x02\u00ad"
    assert pdf_layout.HYPHEN == "\ufffe"


# Made-up texts over real pages: words, every kind of break and whitespace, marks alone, at
# word ends and inside lines, ligatures and characters that cleaning drops (words of them
# only), astral characters, and texts longer than the page (positions without a box).
ALPHABET = list("abcXYZ09.-") + [
    " ",
    "\t",
    "\r",
    "\n",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x85",
    "\xa0",
    "\u2028",
    "\u3000",
    "\ufffe",
    "\x02",
    "\xad",
    "\ufb01",
    "\ufb03",
    "\u200b",
    "\ufeff",
    "\x00",
    "\x01",
    "\x7f",
    "é",
    "\u4e2d",
    "\U0001d400",
]
PAGES = {"handbook": _shifted(handbook()), "turned": _turned(90), "upside down": _turned(180)}


@pytest.fixture(scope="module")
def real_pages() -> Iterator[list[tuple[Any, Any, int]]]:
    documents = [pdfium.PdfDocument(data) for data in PAGES.values()]
    pages = [doc[0] for doc in documents]
    textpages = [page.get_textpage() for page in pages]
    frames = [frame_of(p, tp) for p, tp in zip(pages, textpages, strict=True)]
    assert [f.turn for f in frames] == [0, 90, 180] and frames[0].left != 0
    yield [(tp, f, k + 1) for k, (tp, f) in enumerate(zip(textpages, frames, strict=True))]
    for closing in (*textpages, *pages, *documents):
        closing.close()


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(st.sampled_from(ALPHABET), max_size=120), which=st.integers(0, 2))
def test_made_up_texts(real_pages: list[tuple[Any, Any, int]], text: str, which: int) -> None:
    textpage, frame, number = real_pages[which]
    for mapped in (False, True):
        assert_twins(text, textpage, frame, number, mapped)
