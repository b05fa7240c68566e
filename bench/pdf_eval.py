"""Retrieval on real PDFs: fissure against the usual PDF pipelines, one run, one embedder.

Usage (questions and corpus: :mod:`bench.pdf_questions`)::

    python -m bench.pdf_eval --setup          # once: the peers' venv (bench/.venv-pdf)
    python -m bench.pdf_eval                  # everything; writes results/pdf-eval.md
    python -m bench.pdf_eval --quick          # smoke: small documents, few questions

Corpus (copied to ``bench/.cache/pdf_eval``): the real PDFs under ``/usr/share/doc``
(TeX, texinfo and DocBook manuals and a paper), and real HTML pages with tables (the Rust
reference and Cargo book shipped with the Rust toolchain) printed to PDF by headless
Chromium with its running header, footer and page numbers on and the outline generated
from the headings.

Questions, made by program where the truth is known (``questions.jsonl`` beside the
results; a sample was read by hand, see docs/eval.md):

- *table cells*: from the HTML's own tables, for a cell whose text occurs once in the
  page: "<heading>: what is the <column header> of <row key>?"; the answer is the cell.
  Strict: the same chunk (as handed over, context included) also holds the row key and the
  column header.
- *sections*: from the PDFs' outlines: "What does the <document> say about <section
  title>?"; the answer is the first twelve words under the heading, read by pdfminer
  (pdfplumber), an extractor none of the systems uses as is.

A hit is the answer's letters and digits (NFKC, lower case, nothing else) inside one of
the top-5 chunks' (cosine over all-MiniLM-L6-v2 vectors of what each system embeds, one
pool for the whole corpus). Also: cl100k tokens handed over (the top 5), heading recall
against the outlines, and table rows recovered on one line of one chunk.

Systems: ``naive`` (pdfium's page text, fixed 500-token windows: the story's baseline),
``fissure`` (this tree, defaults), ``fissure-main`` (the main checkout's parser, for the
before/after), and the peers of :mod:`bench.pdf_peers` where they run offline.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from bench.pdf_questions import build_corpus, norm, section_questions, table_questions

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache" / "pdf_eval"
PEER_VENV = ROOT / "bench" / ".venv-pdf"
RESULTS = ROOT / "bench" / "results"
PEERS = ["langchain-pypdf", "pymupdf4llm", "unstructured"]
PEER_PACKAGES = [
    "pypdf", "langchain-community", "langchain-text-splitters", "pymupdf4llm==0.3.4",
    "unstructured", "pdfminer.six", "pikepdf", "pi_heif", "pdf2image",
    "opencv-python-headless", "pandas", "scipy", "onnxruntime", "huggingface_hub", "onnx",
    "matplotlib", "camelot-py",  # camelot: bench.pdf_tables' peer
]  # fmt: skip
TOP_K = 5


# ----------------------------------------------------------------------------- systems


def fissure_chunks(docs: dict[str, Path], src: Path | None = None) -> dict[str, list[dict]]:
    """fissure with its defaults; ``src``: another checkout's sources, in a subprocess."""
    if src is not None:
        env = {"PYTHONPATH": f"{src}:{ROOT}", "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
        code = "import sys; from bench.pdf_eval import dump; dump(sys.argv[1:])"
        done = subprocess.run(
            [sys.executable, "-c", code, *map(str, docs.values())],
            capture_output=True, text=True, env=env, check=True,
        )  # fmt: skip
        rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
        return {Path(p).name: chunks for p, chunks in rows}
    from fissure import Chunker
    from fissure.chunker import load_document

    chunker = Chunker()
    out = {}
    for name, path in docs.items():
        chunks = chunker.chunk_document(load_document(path))
        out[name] = [{"text": c.embedding_text(), "headings": list(c.headings)} for c in chunks]
    return out


def dump(paths: list[str]) -> None:
    """Print ``[path, chunks]`` lines for the fissure first on ``sys.path`` (another
    checkout's, for the before/after row)."""
    from fissure import Chunker
    from fissure.chunker import load_document

    chunker = Chunker()
    for path in paths:
        try:
            chunks = chunker.chunk_document(load_document(path))
        except Exception:  # an old parser that fails on a file: no chunks for it
            chunks = []
        rows = [{"text": c.embedding_text(), "headings": list(c.headings)} for c in chunks]
        print(json.dumps([path, rows]))


def naive_chunks(docs: dict[str, Path]) -> dict[str, list[dict]]:
    """pdfium's text page by page, cut every 500 cl100k tokens (no structure, no overlap)."""
    import pypdfium2 as pdfium

    from fissure import Chunker

    chunker = Chunker(strategy="fixed", max_tokens=500, tokenizer="cl100k_base")
    out = {}
    for name, path in docs.items():
        document = pdfium.PdfDocument(str(path))
        text = "\n".join(document[i].get_textpage().get_text_range() for i in range(len(document)))
        document.close()
        out[name] = [{"text": c.text, "headings": []} for c in chunker.chunk(text)]
    return out


def peer_chunks(system: str, folder: Path) -> tuple[dict[str, list[dict]] | None, str | None]:
    """A peer's chunks from its venv, or ``None`` and why it did not run."""
    python = PEER_VENV / "bin" / "python"
    if not python.is_file():
        return None, "not installed (python -m bench.pdf_eval --setup)"
    out = CACHE / f"{system}.jsonl"
    done = subprocess.run([str(python), str(ROOT / "bench" / "pdf_peers.py"), system,
                           str(folder), str(out)], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "UNSTRUCTURED_DISABLE_NOTICE": "1",
                               "HF_HUB_OFFLINE": "1"})  # fmt: skip
    if done.returncode != 0:
        return None, done.stderr.strip().splitlines()[-1][:200]
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    chunks = {r["doc"]: r["chunks"] for r in rows}
    if not any(chunks.values()):
        errors = {r["error"] for r in rows if r["error"]}
        why = sorted(errors)[0][:160] if errors else "its text extraction failed offline"
        if system == "unstructured" and not errors:
            why += ": it downloads spaCy's en_core_web_sm from GitHub at run time"
        return None, f"no chunks ({why})"
    return chunks, None


# ----------------------------------------------------------------------------- scoring


def outlines(docs: dict[str, Path]) -> dict[str, list[str]]:
    """Each document's outline titles (the truth for heading recall)."""
    import pypdfium2 as pdfium

    out = {}
    for name, path in docs.items():
        document = pdfium.PdfDocument(str(path))
        titles = [" ".join(bm.get_title().split()) for bm in document.get_toc(max_depth=6)]
        document.close()
        if len(titles) > 1:
            out[name] = titles
    return out


def score(
    chunks: dict[str, list[dict]],
    questions: list[dict[str, Any]],
    rows_of: dict[str, list[list[str]]],
    titles: dict[str, list[str]],
    embed: Any,
    count: Any,
) -> dict[str, Any]:
    """Hits at 5 (plain and strict), tokens handed over, heading recall, rows recovered."""
    pool = [
        (doc, c["text"], c["headings"])
        for doc, cs in chunks.items()
        for c in cs
        if c["text"].strip()
    ]
    vectors = embed([text for _, text, _ in pool])
    queries = embed([q["question"] for q in questions])
    normed = [norm(text) for _, text, _ in pool]
    by_kind: dict[str, list[float]] = {"table": [], "strict": [], "section": []}
    handed: list[int] = []
    for q, qv in zip(questions, queries, strict=True):
        top = np.argsort(-(vectors @ qv))[:TOP_K]
        answer = norm(q["answer"])
        hit = any(answer in normed[k] for k in top)
        by_kind[q["kind"]].append(float(hit))
        if q["kind"] == "table":
            need = (answer, norm(q["row"]), norm(q["column"]))
            by_kind["strict"].append(float(any(all(n in normed[k] for n in need) for k in top)))
        handed.append(sum(count(pool[k][1]) for k in top))
    found_titles = {doc: {norm(h) for c in cs for h in c["headings"]} for doc, cs in chunks.items()}
    recall = [norm(t) in found_titles.get(doc, set()) for doc, ts in titles.items() for t in ts]
    lines = {
        doc: {norm(line) for c in cs for line in c["text"].split("\n")}
        for doc, cs in chunks.items()
    }
    rows = [
        any("".join(map(norm, row)) in line for line in lines.get(doc, ()))
        for doc, rs in rows_of.items() for row in rs
    ]  # fmt: skip
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    return {
        "chunks": len(pool), "table": mean(by_kind["table"]), "strict": mean(by_kind["strict"]),
        "section": mean(by_kind["section"]),
        "all": mean(by_kind["table"] + by_kind["section"]), "tokens": mean(handed),
        "headings": mean(recall), "rows": mean(rows),
    }  # fmt: skip


def render(results: dict[str, Any], meta: dict[str, Any]) -> str:
    lines = [
        "# Retrieval on real PDFs: fissure and the usual PDF pipelines",
        "",
        f"Generated by `{meta['command']}`. Method: the docstring of `bench/pdf_eval.py` and "
        "docs/eval.md (PDF benchmark).",
        "",
        f"- Corpus: {meta['docs']} PDFs, {meta['pages']:,} pages ({meta['real']} real PDFs from "
        f"/usr/share/doc, {meta['printed']} Rust/Cargo reference pages printed by Chromium)",
        f"- Questions: {meta['questions']} ({meta['tables']} table cells, {meta['sections']} "
        "sections); embedder all-MiniLM-L6-v2 (fissure's `minilm`), top 5 by cosine over "
        "one pool per system",
        "",
        "| system | chunks | table cell @5 | + row & column @5 | section @5 | all @5 | tokens "
        "handed over | heading recall | table rows recovered |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        if "error" in r:
            lines.append(f"| {name} | did not run: {r['error']} | | | | | | | |")
            continue
        lines.append(
            f"| {name} | {r['chunks']:,} | {r['table']:.2f} | {r['strict']:.2f} | "
            f"{r['section']:.2f} | {r['all']:.2f} | {r['tokens']:,.0f} | {r['headings']:.2f} "
            f"| {r['rows']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def setup() -> None:
    """Create the peers' venv with their packages (the shared venv stays as it is)."""
    if not PEER_VENV.is_dir():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
    pip = [str(PEER_VENV / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, *PEER_PACKAGES], check=True)
    # unstructured's PDF path imports unstructured_inference, whose dependencies pull a
    # second torch; the fast path needs none of them.
    subprocess.run([*pip, "--no-deps", "unstructured_inference"], check=True)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(
        prog="python -m bench.pdf_eval",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--setup", action="store_true", help="install the peers' venv")
    parser.add_argument("--quick", action="store_true", help="smoke run: small files")
    parser.add_argument("--per-table-page", type=int, default=14)
    parser.add_argument("--per-outline", type=int, default=12)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--systems",
        default="",
        help="system names to run, apart by semicolons (default: all); e.g. "
        "'naive 500 tokens;fissure (main, before);fissure'",
    )
    parser.add_argument(
        "--main-src",
        type=Path,
        default=Path("/work/main/src"),
        help="another checkout's src, run as fissure-main (skipped if absent)",
    )
    args = parser.parse_args(argv)
    if args.setup:
        setup()
    import pypdfium2 as pdfium

    from fissure.embed import load_embedder
    from fissure.embed.cache import CachedEmbedder
    from fissure.size import Sizer

    folder = CACHE / ("quick" if args.quick else "corpus")
    docs = build_corpus(folder, args.quick)
    rng = random.Random(15)
    per_table = 4 if args.quick else args.per_table_page
    tables, rows_of = table_questions(rng, per_table)
    tables = [q for q in tables if q["doc"] in docs]
    rows_of = {d: r for d, r in rows_of.items() if d in docs}
    sections = section_questions(docs, rng, 3 if args.quick else args.per_outline)
    questions = tables + sections
    (args.out).mkdir(parents=True, exist_ok=True)
    with (args.out / "pdf-eval-questions.jsonl").open("w", encoding="utf-8") as f:
        f.writelines(json.dumps(q, ensure_ascii=False) + "\n" for q in questions)
    embedder = CachedEmbedder(load_embedder("minilm"), CACHE / "embeddings")
    embed = lambda texts: np.asarray(embedder.embed(texts), dtype=np.float32)  # noqa: E731
    count = Sizer.named("cl100k_base").count
    titles = outlines(docs)
    systems: dict[str, Any] = {"naive 500 tokens": lambda: (naive_chunks(docs), None)}
    for peer in PEERS:
        systems[peer] = lambda peer=peer: peer_chunks(peer, folder)
    if (args.main_src / "fissure").is_dir():
        systems["fissure (main, before)"] = lambda: (fissure_chunks(docs, args.main_src), None)
    systems["fissure"] = lambda: (fissure_chunks(docs), None)
    if args.systems:
        wanted = [n.strip() for n in args.systems.split(";")]
        systems = {n: make for n, make in systems.items() if n in wanted}
    results: dict[str, Any] = {}
    for name, make in systems.items():
        print(f"{name} …", file=sys.stderr, flush=True)
        chunks, error = make()
        results[name] = {"error": error} if chunks is None else score(
            chunks, questions, rows_of, titles, embed, count)  # fmt: skip
    pages = sum(len(pdfium.PdfDocument(str(p))) for p in docs.values())
    argv_text = " ".join(sys.argv[1:] if argv is None else argv)
    meta = {
        "command": f"python -m bench.pdf_eval {argv_text}".strip(), "docs": len(docs),
        "pages": pages, "real": sum(not n.startswith(("reference-", "cargo-")) for n in docs),
        "printed": sum(n.startswith(("reference-", "cargo-")) for n in docs),
        "questions": len(questions), "tables": len(tables), "sections": len(sections),
    }  # fmt: skip
    page = render(results, meta)
    name = "pdf-eval-quick.md" if args.quick else "pdf-eval.md"
    (args.out / name).write_text(page, encoding="utf-8")
    (args.out / name.replace(".md", ".json")).write_text(
        json.dumps({"meta": meta, "results": results}, indent=1), encoding="utf-8"
    )
    print(page)
    return page


if __name__ == "__main__":
    main()
