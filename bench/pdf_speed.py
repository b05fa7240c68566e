"""PDF parsing throughput in pages per second per core, with and without table finding.

Usage::

    python -m bench.pdf_speed                 # 5 repeats (what bench/results/formats.md has)
    python -m bench.pdf_speed --repeats 1 --pages 20 --out /tmp/pdf   # a smoke pass

Three inputs, so that the cost of table finding shows where it is paid and where not:

- *text only*: the Rust books' prose set as PDF pages (``tests/corpus/make_binary.make_pdf``),
  no rules, no columns: table finding may cost only its checks here;
- *manuals*: the real PDFs under ``/usr/share/doc`` (TeX, DocBook and texinfo manuals, a
  paper with booktabs tables), each parsed whole;
- *tables*: generated pages of ruled and unruled tables (``tests/pdf_samples.long_table``)
  and the committed Chromium-printed budget report.

Times are process CPU seconds (``time.process_time``) of ``fissure.parse.pdf.parse`` with
``tables=True`` and ``tables=False``, and of plain pdfium text extraction (open, each
page's text page and its text: what a naive splitter reads), one thread, median over
repeats, the modes taking turns; pages per second per core is pages divided by that, and
"× plain" is a mode's time over plain extraction's. "Finder pages" counts the pages where
the table finder ran (rules that make a grid, or white channels down three lines).
"""

from __future__ import annotations

import argparse
import gzip
import shlex
import statistics
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from bench import corpora, environment

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"


def _text_only(pages: int) -> list[tuple[str, bytes]]:
    from tests.corpus.make_binary import make_pdf

    out: list[list[list[str]]] = [[]]
    lines_on_page = 0
    for paragraph in corpora.prose_paragraphs(10**8):
        text = paragraph.encode("cp1252", "ignore").decode("cp1252")
        lines = textwrap.wrap(" ".join(text.split()), 90)[:40]
        if lines_on_page + len(lines) > 44:
            if len(out) == pages:
                break
            out.append([])
            lines_on_page = 0
        out[-1].append(lines)
        lines_on_page += len(lines) + 1
    return [("rust-book.pdf", make_pdf(out))]


def _manuals() -> list[tuple[str, bytes]]:
    found = []
    for path in sorted(Path("/usr/share/doc").rglob("*.pdf*")):
        if path.suffix in (".pdf", ".gz") and path.name.endswith((".pdf", ".pdf.gz")):
            data = path.read_bytes()
            found.append((path.name, gzip.decompress(data) if path.suffix == ".gz" else data))
    return found


def _tables(pages: int) -> list[tuple[str, bytes]]:
    from tests.pdf_samples import long_table

    per = max(1, pages // 2)
    ruled, _ = long_table(30 * per, ruled=True, pages=per, continued=True)
    unruled, _ = long_table(40 * per, ruled=False, pages=per)
    budget = (ROOT / "tests" / "corpus" / "pdf" / "budget.pdf").read_bytes()
    return [("ruled.pdf", ruled), ("unruled.pdf", unruled), ("budget.pdf", budget)]


def _pages(documents: list[tuple[str, bytes]]) -> int:
    import pypdfium2 as pdfium

    total = 0
    for _, data in documents:
        doc = pdfium.PdfDocument(data)
        total += len(doc)
        doc.close()
    return total


def _finder_pages(documents: list[tuple[str, bytes]]) -> tuple[int, int]:
    """Pages where the table finder ran, and tables placed, with ``tables=True``."""
    from fissure.parse import pdf

    ran = found = 0
    original = pdf.tables_on

    def counting(*args: Any, **kw: Any) -> Any:
        nonlocal ran
        ran += 1
        return original(*args, **kw)

    pdf.tables_on = counting  # type: ignore[assignment]
    try:
        for name, data in documents:
            found += pdf.parse(data, source=name).metadata.get("tables", 0)
    finally:
        pdf.tables_on = original  # type: ignore[assignment]
    return ran, found


def build_inputs(pages: int) -> dict[str, list[tuple[str, bytes]]]:
    """The three inputs (see the module docstring); one this machine lacks is left out."""
    inputs = {
        "text only (generated)": _text_only(pages),
        "manuals (/usr/share/doc)": _manuals(),
        "tables (generated + Chromium)": _tables(max(4, pages // 10)),
    }
    return {k: v for k, v in inputs.items() if v}


def measure(inputs: dict[str, list[tuple[str, bytes]]], repeats: int) -> list[dict[str, Any]]:
    """CPU seconds per input and mode, medians over ``repeats``."""
    from fissure.parse import pdf

    def parse_all(documents: list[tuple[str, bytes]], mode: str) -> float:
        start = time.process_time()
        for name, data in documents:
            if mode == "plain":
                _plain_text(data)
            else:
                pdf.parse(data, source=name, tables=mode == "on")
        return time.process_time() - start

    rows = []
    for name, documents in inputs.items():
        parse_all(documents, "on")  # warm-up: imports, pdfplumber, fonts
        times: dict[str, list[float]] = {"plain": [], "off": [], "on": []}
        for _ in range(repeats):
            for mode in times:
                times[mode].append(parse_all(documents, mode))
        ran, found = _finder_pages(documents)
        rows.append({
            "input": name, "documents": len(documents), "pages": _pages(documents),
            **{mode: statistics.median(t) for mode, t in times.items()},
            "finder_pages": ran, "tables": found,
        })  # fmt: skip
    return rows


def _plain_text(data: bytes) -> None:
    """pdfium's plain text of every page, as a naive splitter reads a PDF."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(data)
    for index in range(len(doc)):
        page = doc[index]
        textpage = page.get_textpage()
        textpage.get_text_range()
        textpage.close()
        page.close()
    doc.close()


def section(rows: list[dict[str, Any]], command: str) -> str:
    """The Markdown section for ``formats.md``."""
    lines = [
        "## PDF pages per second per core, with and without table finding",
        "",
        f"`{command}` (see `bench/pdf_speed.py`): `fissure.parse.pdf.parse`, process CPU "
        "time, one thread, median.",
        "",
        "| input | docs | pages | pages/s, plain pdfium | pages/s, tables off | pages/s, "
        "tables on | off × plain | on × plain | finder pages | tables |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        plain, off, on = (r["pages"] / r[m] for m in ("plain", "off", "on"))
        lines.append(
            f"| {r['input']} | {r['documents']} | {r['pages']:,} | {plain:,.0f} | {off:,.0f} "
            f"| {on:,.0f} | {r['off'] / r['plain']:.2f} | {r['on'] / r['plain']:.2f} "
            f"| {r['finder_pages']} | {r['tables']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> str:
    """Measure and print the section; write it to ``--out``/pdf_speed.md."""
    environment.prepare()
    parser = argparse.ArgumentParser(
        prog="python -m bench.pdf_speed",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pages", type=int, default=200, help="pages of the text-only input")
    parser.add_argument("--out", type=Path, default=None, help="folder for pdf_speed.md")
    args = parser.parse_args(argv)
    inputs = build_inputs(args.pages)
    command = f"python -m bench.pdf_speed {shlex.join(sys.argv[1:] if argv is None else argv)}"
    page = section(measure(inputs, args.repeats), command.strip())
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "pdf_speed.md").write_text(page, encoding="utf-8")
    print(page)
    return page


if __name__ == "__main__":
    main()
