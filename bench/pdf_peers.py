"""Peer PDF pipelines for ``bench.pdf_eval``, run in their own virtual environment.

Usage (``bench.pdf_eval`` runs it; by hand)::

    bench/.venv-pdf/bin/python bench/pdf_peers.py SYSTEM CORPUS_DIR OUT.jsonl

SYSTEM is one of:

- ``langchain-pypdf``: LangChain's ``PyPDFLoader`` (pypdf, one Document per page) and
  ``RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)``, the usual recipe;
- ``pymupdf4llm``: ``pymupdf4llm.to_markdown`` (PyMuPDF; tables as Markdown), LangChain's
  ``MarkdownHeaderTextSplitter`` on ``#`` … ``####`` (headers kept in the text and in the
  metadata), then the same recursive splitter inside each section;
- ``unstructured``: ``partition_pdf(strategy="fast")`` and ``chunk_by_title``.

Each line of OUT is ``{"doc": file name, "chunks": [{"text": …, "headings": [...]}],
"error": null}``. The peers need packages that would change the shared environment's
versions, so they live in ``bench/.venv-pdf`` (see ``bench.pdf_eval --setup``). This file
imports nothing from fissure.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any

HEADERS = [("#", "h1"), ("##", "h2"), ("###", "h3"), ("####", "h4")]


def _recursive() -> Any:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)


def langchain_pypdf(path: Path) -> list[dict[str, Any]]:
    from langchain_community.document_loaders import PyPDFLoader

    pages = PyPDFLoader(str(path)).load()
    return [{"text": d.page_content, "headings": []} for d in _recursive().split_documents(pages)]


def pymupdf4llm_md(path: Path) -> list[dict[str, Any]]:
    import pymupdf4llm
    from langchain_text_splitters import MarkdownHeaderTextSplitter

    markdown = pymupdf4llm.to_markdown(str(path))
    sections = MarkdownHeaderTextSplitter(HEADERS, strip_headers=False).split_text(markdown)
    out = []
    for piece in _recursive().split_documents(sections):
        headings = [piece.metadata[k] for _, k in HEADERS if k in piece.metadata]
        out.append({"text": piece.page_content, "headings": headings})
    return out


def unstructured_fast(path: Path) -> list[dict[str, Any]]:
    from unstructured.chunking.title import chunk_by_title
    from unstructured.partition.pdf import partition_pdf

    elements = partition_pdf(str(path), strategy="fast", languages=["eng"])
    return [{"text": str(c), "headings": []} for c in chunk_by_title(elements)]


SYSTEMS = {
    "langchain-pypdf": langchain_pypdf,
    "pymupdf4llm": pymupdf4llm_md,
    "unstructured": unstructured_fast,
}


def main(argv: list[str]) -> int:
    # This file's folder holds bench/profile.py, which must not stand in for the stdlib's
    # profile module (spaCy imports it under unstructured).
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    system, corpus, out = argv[1], Path(argv[2]), Path(argv[3])
    run = SYSTEMS[system]
    with out.open("w", encoding="utf-8") as f:
        for path in sorted(corpus.glob("*.pdf")):
            try:
                row = {"doc": path.name, "chunks": run(path), "error": None}
            except Exception as exc:  # a peer that fails on one file is reported, not fatal
                row = {"doc": path.name, "chunks": [], "error": f"{type(exc).__name__}: {exc}"}
                traceback.print_exc()
            f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
