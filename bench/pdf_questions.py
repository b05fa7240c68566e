"""The PDF benchmark's corpus and questions (see :mod:`bench.pdf_eval`).

The corpus is the real PDFs under ``/usr/share/doc`` and Rust reference / Cargo book pages
printed by headless Chromium; the questions are made by program where the truth is known:
table cells from the HTML's own tables, and outline sections answered by the first twelve
words under the heading as pdfminer reads them.
"""

from __future__ import annotations

import gzip
import random
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path
from typing import Any

RUST_DOCS = Path("/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html")
HTML_PAGES = [
    "reference/tokens.html", "reference/inline-assembly.html", "reference/type-layout.html",
    "reference/expressions.html", "reference/conditional-compilation.html",
    "cargo/reference/environment-variables.html", "cargo/reference/profiles.html",
    "cargo/reference/registry-web-api.html", "reference/linkage.html",
]  # fmt: skip
# Sections whose opening words are a list of page numbers, not text that answers anything.
_SKIPPED_SECTIONS = re.compile(r"contents|index|list of (tables|figures)", re.IGNORECASE)
_ALNUM = re.compile(r"[^0-9a-z]+")


def norm(text: str) -> str:
    """Letters and digits only, lower case, NFKC: what every extractor agrees on."""
    return _ALNUM.sub("", unicodedata.normalize("NFKC", text).lower())


def build_corpus(folder: Path, quick: bool) -> dict[str, Path]:
    """Copy the real PDFs and print the HTML pages; name → PDF path."""
    folder.mkdir(parents=True, exist_ok=True)
    docs: dict[str, Path] = {}
    for path in sorted(Path("/usr/share/doc").rglob("*.pdf*")):
        if not path.name.endswith((".pdf", ".pdf.gz")):
            continue
        data = path.read_bytes()
        data = gzip.decompress(data) if path.suffix == ".gz" else data
        if quick and len(data) > 300_000:
            continue
        target = folder / path.name.removesuffix(".gz")
        target.write_bytes(data)
        docs[target.name] = target
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    for page in HTML_PAGES[: 2 if quick else None]:
        source = RUST_DOCS / page
        if chromium is None or not source.is_file():
            continue
        target = folder / (page.replace("/", "-").removesuffix(".html") + ".pdf")
        if not target.is_file():
            subprocess.run(
                [chromium, "--headless", "--no-sandbox", "--disable-gpu",
                 "--generate-pdf-document-outline", f"--print-to-pdf={target}", source.as_uri()],
                check=True, capture_output=True, timeout=180,
            )  # fmt: skip
        docs[target.name] = target
    return docs


# ----------------------------------------------------------------------------- questions


def table_questions(rng: random.Random, per_page: int) -> tuple[list[dict[str, Any]], dict]:
    """Cell questions and the ground-truth rows of every HTML page's tables."""
    from selectolax.lexbor import LexborHTMLParser

    questions: list[dict[str, Any]] = []
    rows_of: dict[str, list[list[str]]] = {}
    for page in HTML_PAGES:
        source = RUST_DOCS / page
        if not source.is_file():
            continue
        doc = page.replace("/", "-").removesuffix(".html") + ".pdf"
        tree = LexborHTMLParser(source.read_text(encoding="utf-8", errors="replace"))
        text = norm(tree.body.text() if tree.body else "")
        found, rows_of[doc] = [], []
        for table in tree.css("main table"):
            header = [" ".join(th.text().split()) for th in table.css("thead th")]
            body = [
                [" ".join(td.text().split()) for td in tr.css("td")] for tr in table.css("tbody tr")
            ]
            body = [r for r in body if len(r) == len(header) and r[0]]
            if len(header) < 2 or len(body) < 2:
                continue
            rows_of[doc] += [header, *body]
            heading = _heading_before(table)
            keys = [r[0] for r in body]
            for row in body:
                for col in range(1, len(header)):
                    cell = row[col]
                    if len(norm(cell)) < 3 or text.count(norm(cell)) != 1 or keys.count(row[0]) > 1:
                        continue
                    found.append({
                        "doc": doc, "kind": "table", "answer": cell, "row": row[0],
                        "column": header[col], "heading": heading,
                        "question": f"{heading}: what is the {header[col]} of {row[0]}?",
                    })  # fmt: skip
        rng.shuffle(found)
        questions += found[:per_page]
    return questions, rows_of


def _heading_before(node: Any) -> str:
    """The nearest heading before ``node`` in document order."""
    heading = ""
    for el in node.parser.css("h1, h2, h3, h4, table"):
        if el.mem_id == node.mem_id:
            break
        if el.tag != "table":
            heading = " ".join(el.text().split())
    return heading


def section_questions(docs: dict[str, Path], rng: random.Random, per_doc: int) -> list[dict]:
    """Questions on outline sections: the first twelve words under each heading (pdfminer),
    when twelve come before the next heading of the outline."""
    import pdfplumber
    import pypdfium2 as pdfium

    out: list[dict[str, Any]] = []
    for name, path in docs.items():
        document = pdfium.PdfDocument(str(path))
        title = (document.get_metadata_value("Title") or name.removesuffix(".pdf")).strip()
        marks = []
        for bm in document.get_toc(max_depth=6):
            dest = bm.get_dest()
            if dest is not None and dest.get_index() is not None:
                marks.append((" ".join(bm.get_title().split()), dest.get_index()))
        document.close()
        if len(marks) < 2:
            continue
        rng.shuffle(marks)
        found = []
        with pdfplumber.open(path) as plumber:
            titles = frozenset(norm(h) for h, _ in marks)
            for heading, page in marks:
                text = plumber.pages[page].extract_text() or ""
                answer = _words_after(text, heading, titles - {norm(heading)})
                if answer and not _SKIPPED_SECTIONS.search(heading) and ".." not in answer:
                    found.append({
                        "doc": name, "kind": "section", "answer": answer, "heading": heading,
                        "question": f"What does the {title} say about {heading}?",
                    })  # fmt: skip
                if len(found) >= per_doc:
                    break
        out += found
    return out


def _words_after(
    page_text: str, heading: str, headings: frozenset[str] = frozenset()
) -> str | None:
    """The first twelve words after the line that spells ``heading``, if twelve follow
    before the next line that spells one of ``headings`` (normalised: the section's own
    text, not the titles of the sections after it)."""
    lines = page_text.split("\n")
    want = norm(heading)
    for k, line in enumerate(lines):
        if want and _spells(line, want):
            body = []
            for after in lines[k + 1 : k + 8]:
                if any(_spells(after, other) for other in headings if other):
                    break
                body.append(after)
            words = " ".join(body).split()
            return " ".join(words[:12]) if len(words) >= 12 else None
    return None


def _spells(line: str, want: str) -> bool:
    """Whether a printed line is a heading's title (perhaps after its number)."""
    got = norm(line)
    return got == want or (got.endswith(want) and len(got) < len(want) + 8)
