"""Retrieval on PDFs nobody on this project chose: other projects' test corpora.

Usage (corpus: :mod:`bench.pdf_external_data`; peers' venv: ``bench.pdf_eval --setup``)::

    python -m bench.pdf_external            # everything; writes results/pdf-external.md
    python -m bench.pdf_external --quick    # smoke: 3 documents, few questions

Corpus: the ICDAR 2013 Table Competition documents (EU/US government reports, from
camelot's tests), docling's English test PDFs, and pdfplumber's and PyMuPDF's test PDFs
with an outline, with their ground truth, copied from git mirrors to
``/work/shared/datasets/pdf-external`` (see ``manifest.json`` there and
:mod:`bench.pdf_external_data`).

Questions, made by program from the ground truth (seeded; saved to
``results/pdf-external-questions.jsonl``):

- *table cells*: from ICDAR's hand-made structure truth (``*-str.xml``) and docling's
  Markdown tables, for a cell whose text occurs once in the document (pdfminer's text,
  letters and digits only): "<table title>: what is the <column header> of <row label>?".
  The column header is the lowest header cell above the cell's column (header rows: those
  above the first row that has a label and a figure); the row label the row's first cell;
  the table title the nearest line of three or more words above the table on its page
  (ICDAR) or the nearest heading or "Table …" caption before it (docling).
- *prose*: from docling's Markdown headings, "What does <document> say about <heading>?",
  answered by the first twelve words under the heading (kept only when pdfminer's text of
  the PDF holds them in that order), and, for the other documents with an outline,
  ``bench.pdf_questions.section_questions`` (twelve words under the outline's heading).

Scoring is ``bench.pdf_eval.score``: one pool per system, all-MiniLM-L6-v2 vectors of what
each system embeds (context included), top 5 by cosine. A hit is the answer's letters and
digits inside one of the top-5 chunks; "cell + header" also needs the row label and the
column header in the same chunk. A system that fails on a document has no chunks for it,
so its questions there score 0; such documents are listed as lost.

Systems: ``naive`` (pdfium's text in 500-token windows), ``fissure`` (this tree,
defaults), ``langchain-pypdf`` and ``pymupdf4llm`` (:mod:`bench.pdf_peers`).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from bench.pdf_eval import PEER_VENV, fissure_chunks, naive_chunks, outlines, score
from bench.pdf_external_data import TARGET, load
from bench.pdf_questions import norm, section_questions

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache" / "pdf_external"
RESULTS = ROOT / "bench" / "results"
PEERS = ["langchain-pypdf", "pymupdf4llm"]
QUICK_DOCS = ["icdar-eu-006.pdf", "icdar-us-019.pdf", "docling-multi_page.pdf"]
_SKIPPED_SECTIONS = re.compile(r"^(contents|index|list of (tables|figures))$", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]{2,}")
_CAPTION = re.compile(r"\s*(table|exhibit|figure|chart)\s*[A-Z]?[\d.-]", re.IGNORECASE)
_FIGURE = re.compile(r"[\d\s.,%()$€£+\-–—/:*<>~]+")
PER_TABLE = 3  # questions from one table at most, so that a document's tables all count


# ----------------------------------------------------------------------------- truth: tables


def icdar_tables(xml_text: str) -> list[dict[str, Any]]:
    """Tables of an ICDAR ``-str.xml``: page (1-based), top (PDF points) and cells
    ``(row, col, end_row, end_col, text)`` with rows and columns over all regions."""
    out = []
    for table in ET.fromstring(xml_text).iter("table"):
        cells, page, top = [], None, 0.0
        for region in table.iter("region"):
            dr, dc = int(region.get("row-increment", 0)), int(region.get("col-increment", 0))
            for cell in region.iter("cell"):
                r, c = int(cell.get("start-row")) + dr, int(cell.get("start-col")) + dc
                er = int(cell.get("end-row", cell.get("start-row"))) + dr
                ec = int(cell.get("end-col", cell.get("start-col"))) + dc
                text = " ".join((cell.findtext("content") or "").split())
                cells.append((r, c, er, ec, text))
                if page is None:
                    page = int(region.get("page"))
                if page == int(region.get("page")):
                    box = cell.find("bounding-box")
                    top = max(top, float(box.get("y2")) if box is not None else 0.0)
        if cells and page is not None:
            out.append({"page": page, "top": top, "cells": cells})
    return out


def is_figure(text: str) -> bool:
    """A cell that holds a figure: digits with nothing but signs, units and separators."""
    return bool(re.search(r"\d", text)) and bool(_FIGURE.fullmatch(text))


def grid_rows(cells: list[tuple]) -> tuple[list[list[str]], int]:
    """The table as rows of cell texts (spans repeated, empty leading columns left out)
    and the number of header rows (those above the first row with a label and a figure)."""
    rows = max(c[2] for c in cells) + 1
    cols = max(c[3] for c in cells) + 1
    grid = [[""] * cols for _ in range(rows)]
    for r, c, er, ec, text in cells:
        for i in range(r, er + 1):
            for j in range(c, ec + 1):
                grid[i][j] = text
    skip = next((j for j in range(cols) if any(norm(row[j]) for row in grid)), 0)
    grid = [row[skip:] for row in grid]
    first_data = next(
        (i for i, row in enumerate(grid) if norm(row[0]) and any(map(is_figure, row[1:]))),
        rows,
    )  # fmt: skip
    return grid, (1 if first_data == rows and rows >= 3 else first_data)


def cell_questions(grid: list[list[str]], header_rows: int, title: str, text: str) -> list:
    """Candidate cell questions of one table (the answer occurs once in ``text``)."""
    if header_rows == 0 or header_rows >= len(grid):
        return []
    labels = [row[0] for row in grid[header_rows:]]
    found = []
    for row in grid[header_rows:]:
        if len(norm(row[0])) < 2 or labels.count(row[0]) > 1:
            continue
        for col in range(1, len(row)):
            cell = row[col]
            header = next((grid[h][col] for h in range(header_rows - 1, -1, -1)
                           if len(norm(grid[h][col])) >= 2), "")  # fmt: skip
            if not header or not 3 <= len(norm(cell)) <= 60 or text.count(norm(cell)) != 1:
                continue
            if norm(cell) in (norm(row[0]), norm(header)) or cell in (row[col - 1], header):
                continue
            found.append({"kind": "table", "answer": cell, "row": row[0], "column": header,
                          "heading": title,
                          "question": f"{title}: what is the {header} of {row[0]}?"})  # fmt: skip
    return found


def title_above(page: Any, top: float) -> str:
    """The nearest caption ("Table …", "Exhibit …") or else line of three or more words
    above PDF height ``top`` on a pdfplumber page (within 200 points), else the page's
    first such line."""
    limit = page.height - top  # pdfplumber measures from the top of the page
    lines = [ln for ln in page.extract_text_lines() if len(_WORD.findall(ln["text"])) >= 3]
    above = [ln for ln in lines if limit - 200 <= ln["bottom"] <= limit + 2]
    captions = [ln for ln in above if _CAPTION.match(ln["text"])]
    if captions:
        return " ".join(max(captions, key=lambda ln: ln["bottom"])["text"].split())
    if above:
        return " ".join(max(above, key=lambda ln: ln["bottom"])["text"].split())
    return " ".join(lines[0]["text"].split()) if lines else ""


def markdown_tables(markdown: str) -> list[tuple[str, list[list[str]]]]:
    """Docling's Markdown tables as (title, rows); title: the nearest "Table …" line or
    heading before the table."""
    out, title, rows = [], "", []
    for line in [*markdown.splitlines(), ""]:
        if line.startswith("|"):
            cells = [" ".join(c.split()) for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):
                rows.append(cells)
            continue
        if rows:
            out.append((title, rows))
            rows = []
        if line.startswith("#") or line.lower().startswith("table"):
            title = " ".join(line.lstrip("#").split())
    return out


# ----------------------------------------------------------------------------- truth: prose


def markdown_sections(markdown: str) -> list[tuple[str, str]]:
    """(heading, first twelve words under it) from docling's Markdown, when twelve follow."""
    out, heading, words = [], None, []
    for line in [*markdown.splitlines(), "# end"]:
        if line.startswith("#"):
            if heading and len(words) >= 12:
                out.append((heading, " ".join(words[:12])))
            heading, words = " ".join(line.lstrip("#").split()).replace("\\_", "_"), []
        elif line.strip() and not line.startswith(("|", "<!--")):
            words += line.replace("\\_", "_").split()
    return [(h, a) for h, a in out if not _SKIPPED_SECTIONS.match(h)]


# ----------------------------------------------------------------------------- questions


def icdar_questions(path: Path, truth: Path, rng: random.Random, per_doc: int, _: int) -> tuple:
    """Cell questions of one ICDAR document and its ground-truth body rows."""
    import pdfplumber

    questions, rows = [], []
    with pdfplumber.open(path) as pdf:
        text = norm("\n".join(page.extract_text() or "" for page in pdf.pages))
        for table in icdar_tables(truth.read_text(encoding="utf-8")):
            grid, header_rows = grid_rows(table["cells"])
            title = title_above(pdf.pages[table["page"] - 1], table["top"])
            found = cell_questions(grid, header_rows, title, text)
            rng.shuffle(found)
            questions += found[:PER_TABLE]
            rows += [r for r in grid[header_rows:] if sum(bool(norm(c)) for c in r) >= 2]
    rng.shuffle(questions)
    return questions[:per_doc], rows


def docling_questions(
    path: Path, truth: Path, rng: random.Random, per_doc: int, per_section: int
) -> tuple:
    """Cell and section questions of one docling document and its table rows."""
    import pdfplumber

    markdown = truth.read_text(encoding="utf-8")
    with pdfplumber.open(path) as pdf:
        text = norm("\n".join(page.extract_text() or "" for page in pdf.pages))
    title = next((" ".join(ln.lstrip("#").split()) for ln in markdown.splitlines()
                  if ln.startswith("#")), path.stem)  # fmt: skip
    cells, rows = [], []
    for caption, table in markdown_tables(markdown):
        width = len(table[0])
        grid = [r for r in table if len(r) == width]
        found = cell_questions(grid, 1, caption or title, text)
        rng.shuffle(found)
        cells += found[:PER_TABLE]
        rows += grid[1:]
    rng.shuffle(cells)
    sections = [
        {"kind": "section", "answer": answer, "heading": heading,
         "question": f"What does {title} say about {heading}?"}
        for heading, answer in markdown_sections(markdown)
        if norm(answer) in text and norm(heading) != norm(title) and _prose(answer)
    ]  # fmt: skip
    rng.shuffle(sections)
    return cells[:per_doc] + sections[:per_section], rows


def _prose(answer: str) -> bool:
    """Twelve words that read as prose: eight or more of them words of two letters or more
    (not the letters of rotated text or a list of numbers)."""
    return len(_WORD.findall(answer)) >= 8


def doc_title(path: Path) -> str:
    """A title for a PDF without one: its outline's first entry, else its first line of
    three or more words."""
    import pdfplumber
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    marks = [" ".join(bm.get_title().split()) for bm in document.get_toc(max_depth=6)]
    document.close()
    if marks and len(_WORD.findall(marks[0])) >= 2:
        return marks[0]
    with pdfplumber.open(path) as pdf:
        lines = (pdf.pages[0].extract_text() or "").splitlines()
    return next((" ".join(ln.split()) for ln in lines if len(_WORD.findall(ln)) >= 3), path.stem)


def build_questions(docs: dict[str, Path], per_doc: int, per_outline: int, seed: int = 2013):
    """All questions (each with its ``doc`` and ``source``) and the truth rows per document."""
    rng = random.Random(seed)
    questions: list[dict[str, Any]] = []
    rows_of: dict[str, list[list[str]]] = {}
    entries = {e["name"]: e for e in load()["documents"] if e["name"] in docs}
    for name, entry in entries.items():
        kind = entry["truth_kind"]
        if kind == "outline":
            continue
        make = icdar_questions if kind == "icdar2013-str" else docling_questions
        truth = TARGET / entry["truth_files"][0]
        found, rows_of[name] = make(docs[name], truth, rng, per_doc, per_outline)
        questions += [{"doc": name, "source": entry["repo"], **q} for q in found]
    outlined = {n: docs[n] for n, e in entries.items() if e["truth_kind"] != "docling-md"}
    for q in section_questions(outlined, rng, per_outline):
        if not _prose(q["answer"]):
            continue
        stem, title = q["doc"].removesuffix(".pdf"), doc_title(docs[q["doc"]])
        if norm(q["heading"]) == norm(title) or f"the {stem} say" not in q["question"]:
            title = q["question"].removeprefix("What does ").split(" say about ")[0]
        if norm(q["heading"]) == norm(title):
            continue
        q["question"] = f"What does {title} say about {q['heading']}?"
        questions.append({"doc": q["doc"], "source": entries[q["doc"]]["repo"], **q})
    return questions, rows_of


# ----------------------------------------------------------------------------- systems


def corpus(quick: bool) -> tuple[dict[str, Path], Path]:
    """The corpus' PDFs (name → path) and a folder of links to them for the peers."""
    manifest = load()
    docs = {e["name"]: TARGET / e["file"] for e in manifest["documents"]}
    if quick:
        docs = {n: p for n, p in docs.items() if n in QUICK_DOCS}
    folder = CACHE / ("quick" if quick else "corpus")
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.pdf"):
        old.unlink()
    for name, path in docs.items():
        (folder / name).symlink_to(path)
    return docs, folder


def per_document(make: Any, docs: dict[str, Path]) -> tuple[dict, dict[str, str]]:
    """Run a bench.pdf_eval system one document at a time: chunks, and the documents it
    lost with the reason."""
    chunks, lost = {}, {}
    for name, path in docs.items():
        try:
            chunks.update(make({name: path}))
        except Exception as exc:  # a system that fails on a document loses it, not the run
            lost[name] = f"{type(exc).__name__}: {exc}"[:200]
    return chunks, lost


def fallbacks(docs: dict[str, Path]) -> dict[str, list[str]]:
    """fissure's ``pdf_fallback`` notes per document (pages read as plain text)."""
    from fissure.chunker import load_document

    out = {}
    for name, path in docs.items():
        try:
            notes = load_document(path).metadata.get("pdf_fallback")
        except Exception:  # counted as lost by the run itself
            continue
        if notes:
            out[name] = list(notes)
    return out


def peer(system: str, folder: Path) -> tuple[dict | None, dict[str, str], str | None]:
    """A peer of bench/pdf_peers.py in its venv: chunks, documents lost, or why it did not
    run (bench.pdf_eval.peer_chunks' call, with its own output file and the per-document
    errors kept)."""
    python = PEER_VENV / "bin" / "python"
    if not python.is_file():
        return None, {}, "not installed (python -m bench.pdf_eval --setup)"
    out = CACHE / f"{system}-{folder.name}.jsonl"
    done = subprocess.run([str(python), str(ROOT / "bench" / "pdf_peers.py"), system,
                           str(folder), str(out)], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})  # fmt: skip
    if done.returncode != 0:
        return None, {}, (done.stderr.strip().splitlines() or ["failed"])[-1][:200]
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    lost = {r["doc"]: r["error"][:200] for r in rows if r["error"]}
    lost.update({r["doc"]: "no chunks" for r in rows if not r["error"] and not r["chunks"]})
    return {r["doc"]: r["chunks"] for r in rows if r["chunks"]}, lost, None


# ----------------------------------------------------------------------------- the run


def run_systems(docs: dict[str, Path], folder: Path) -> dict[str, dict[str, Any]]:
    """Every system's chunks, lost documents and time (or why it did not run)."""
    import time

    makers: dict[str, Any] = {
        "naive 500 tokens": lambda: (*per_document(naive_chunks, docs), None),
        "fissure": lambda: (*per_document(fissure_chunks, docs), None),
    }
    for system in PEERS:
        makers[system] = lambda system=system: peer(system, folder)
    out = {}
    for name, make in makers.items():
        print(f"{name} …", file=sys.stderr, flush=True)
        start = time.perf_counter()
        chunks, lost, error = make()
        out[name] = {"chunks": chunks, "lost": lost, "error": error,
                     "seconds": time.perf_counter() - start}  # fmt: skip
    return out


def score_all(runs: dict, questions: list, rows_of: dict, titles: dict) -> dict[str, Any]:
    """bench.pdf_eval.score per system, with all@5 per source and the documents lost."""
    import numpy as np

    from fissure.embed import load_embedder
    from fissure.embed.cache import CachedEmbedder
    from fissure.size import Sizer

    embedder = CachedEmbedder(load_embedder("minilm"), CACHE / "embeddings")
    embed = lambda texts: np.asarray(embedder.embed(texts), dtype=np.float32)  # noqa: E731
    count = Sizer.named("cl100k_base").count
    sources = sorted({q["source"] for q in questions})
    results: dict[str, Any] = {}
    for name, run in runs.items():
        if run["error"] is not None:
            results[name] = {"error": run["error"]}
            continue
        r = score(run["chunks"], questions, rows_of, titles, embed, count)
        r["by_source"] = {
            s: score(run["chunks"], [q for q in questions if q["source"] == s], {}, {},
                     embed, count)["all"]
            for s in sources
        }  # fmt: skip
        r["lost"] = run["lost"]
        r["seconds"] = run["seconds"]
        results[name] = r
    return results


def shell(*command: str) -> str:
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT).stdout.strip()


def corpus_rows(docs: dict[str, Path], questions: list[dict]) -> list[dict[str, Any]]:
    """Per document: pages, source, licence, questions by kind."""
    rows = []
    for entry in load()["documents"]:
        if entry["name"] not in docs:
            continue
        kinds = [q["kind"] for q in questions if q["doc"] == entry["name"]]
        rows.append({"doc": entry["name"], "pages": entry["pages"], "repo": entry["repo"],
                     "path": entry["path"], "commit": entry["commit"][:12],
                     "license": entry["license"], "table": kinds.count("table"),
                     "section": kinds.count("section")})  # fmt: skip
    return rows


def render(results: dict[str, Any], meta: dict[str, Any]) -> str:
    """The Markdown page: figures, per-source hits, lost documents, corpus."""
    lines = [
        "# Retrieval on PDFs from other projects' test corpora",
        "",
        f"Generated by `{meta['command']}` at commit `{meta['commit']}` ({meta['dirty']} "
        "files under src/ differ from it). Method: the docstring of `bench/pdf_external.py` "
        "and docs/eval.md (PDF benchmark from other projects' test corpora).",
        "",
        f"- Corpus: {meta['docs']} PDFs, {meta['pages']} pages, from {meta['sources']}",
        f"- Questions: {meta['questions']} ({meta['tables']} table cells, {meta['sections']} "
        "prose); embedder all-MiniLM-L6-v2 (fissure's `minilm`), top 5 by cosine over one "
        "pool per system",
        f"- Load average before: `{meta['load_before']}`; after: `{meta['load_after']}`",
        "",
        "| system | chunks | all @5 | table @5 | table cell + header @5 | prose @5 | tokens "
        "handed over (top 5) | table rows on one line | documents lost | seconds |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        if "error" in r:
            lines.append(f"| {name} | did not run: {r['error']} |" + " |" * 8)
            continue
        lines.append(
            f"| {name} | {r['chunks']:,} | {r['all']:.2f} | {r['table']:.2f} | "
            f"{r['strict']:.2f} | {r['section']:.2f} | {r['tokens']:,.0f} | {r['rows']:.2f} "
            f"| {len(r['lost'])} | {r['seconds']:.0f} |"
        )
    return "\n".join(lines + _details(results, meta)) + "\n"


def _details(results: dict[str, Any], meta: dict[str, Any]) -> list[str]:
    ran = {n: r for n, r in results.items() if "error" not in r}
    sources = sorted({s for r in ran.values() for s in r["by_source"]})
    head = "| system | " + " | ".join(sources) + " |"
    lines = [
        "",
        "All @5 by the source of the document:",
        "",
        head,
        "|---|" + "---:|" * len(sources),
    ]
    for name, r in ran.items():
        lines.append(
            f"| {name} | " + " | ".join(f"{r['by_source'][s]:.2f}" for s in sources) + " |"
        )
    lines += ["", "Documents lost (a lost document's questions score 0):", ""]
    for name, r in ran.items():
        lost = "; ".join(f"{d}: {why}" for d, why in r["lost"].items()) or "none"
        lines.append(f"- {name}: {lost}")
    fb = meta["fallbacks"]
    lines.append(f"- fissure documents with `pdf_fallback` (pages read as plain text): "
                 f"{len(fb)}" + (" — " + "; ".join(f"{d}: {', '.join(n)}" for d, n in fb.items())
                                 if fb else ""))  # fmt: skip
    lines += ["", "Corpus (copied by `python -m bench.pdf_external_data` to "
              "`/work/shared/datasets/pdf-external`, see its manifest.json):", "",
              "| document | pages | source | path | commit | licence | table q | prose q |",
              "|---|---:|---|---|---|---|---:|---:|"]  # fmt: skip
    for c in meta["corpus"]:
        lines.append(
            f"| {c['doc']} | {c['pages']} | {c['repo']} | {c['path']} | {c['commit']} "
            f"| {c['license']} | {c['table']} | {c['section']} |"
        )
    return lines


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(
        prog="python -m bench.pdf_external",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 documents")
    parser.add_argument("--per-doc", type=int, default=8, help="table cells per document")
    parser.add_argument("--per-section", type=int, default=12, help="prose per document")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    load_before = shell("uptime")
    docs, folder = corpus(args.quick)
    per_doc, per_section = (3, 3) if args.quick else (args.per_doc, args.per_section)
    questions, rows_of = build_questions(docs, per_doc, per_section)
    stem = "pdf-external-quick" if args.quick else "pdf-external"
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / f"{stem}-questions.jsonl").open("w", encoding="utf-8") as f:
        f.writelines(json.dumps(q, ensure_ascii=False) + "\n" for q in questions)
    results = score_all(run_systems(docs, folder), questions, rows_of, outlines(docs))
    argv_text = " ".join(sys.argv[1:] if argv is None else argv)
    kinds = [q["kind"] for q in questions]
    rows = corpus_rows(docs, questions)
    meta = {
        "command": f"nice -n 19 python -m bench.pdf_external {argv_text}".strip(),
        "commit": shell("git", "rev-parse", "--short", "HEAD"),
        "dirty": len(shell("git", "status", "--porcelain", "src").splitlines()),
        "docs": len(docs), "pages": sum(r["pages"] for r in rows),
        "sources": ", ".join(sorted({r["repo"] for r in rows})),
        "questions": len(questions), "tables": kinds.count("table"),
        "sections": kinds.count("section"), "fallbacks": fallbacks(docs), "corpus": rows,
        "load_before": load_before, "load_after": shell("uptime"),
    }  # fmt: skip
    page = render(results, meta)
    (args.out / f"{stem}.md").write_text(page, encoding="utf-8")
    (args.out / f"{stem}.json").write_text(
        json.dumps({"meta": meta, "results": results}, indent=1), encoding="utf-8"
    )
    print(page)
    return page


if __name__ == "__main__":
    main()
