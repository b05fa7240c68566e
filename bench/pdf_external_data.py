"""The external PDF corpus: real PDFs and their ground truth from other projects' tests.

Usage::

    python -m bench.pdf_external_data     # copy the corpus to /work/shared/datasets/pdf-external

The PDFs are nobody's choice on this project: they are taken, by a fixed rule, from the
test corpora of public repositories brought onto this machine as bare git mirrors (the
``fetch`` tool puts them under ``/work/.mirror/<owner>+<name>/repo``), read with
``git show <commit>:<path>``:

- ``camelot-dev/camelot`` ``tests/files/tabula/icdar2013-dataset``: the ICDAR 2013 Table
  Competition set (Göbel et al.; EU and US government reports and statistical releases),
  with the competition's hand-made structure ground truth (``*-str.xml``: every table cell
  with its row, column and text). Rule: the documents of three pages or more, the
  ``ICDAR_PER_SET`` with the most pages (then most characters) from each of ``eu`` and
  ``us``.
- ``docling-project/docling`` ``tests/data/pdf/sources``: the English documents of three
  or more headings or a table in their Markdown ground truth
  (``tests/data/pdf/groundtruth/<name>.md``: headings, paragraphs and tables).
- ``jsvine/pdfplumber`` ``tests/pdfs`` and ``pymupdf/PyMuPDF`` ``tests/resources``: the
  English documents of 3 to 300 pages whose outline (their own truth for sections) has
  ten entries or more (added after the first runs, which had 31 prose questions, 11 of
  them on one document: too few to tell prose retrieval apart).

Files of 4 MiB and more are absent from the mirrors (docling's arXiv papers), so they are
not in the corpus. Nothing is committed to this project: the PDFs and their truth go to
``/work/shared/datasets/pdf-external`` with ``manifest.json`` (per document the source
repository, its commit, the path, the repository's licence and the ground-truth files).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

MIRRORS = Path("/work/.mirror")
TARGET = Path("/work/shared/datasets/pdf-external")
ICDAR = "tests/files/tabula/icdar2013-dataset"
ICDAR_PER_SET = 14
DOCLING_SOURCES = "tests/data/pdf/sources"
DOCLING_TRUTH = "tests/data/pdf/groundtruth"
_STOP = frozenset(("the", "of", "and", "to", "in", "is", "for", "that", "with", "on", "are"))
PLUMBER = "tests/pdfs"
PYMUPDF = "tests/resources"
OUTLINE_MAX_PAGES = 300  # longer books would outweigh the rest of the pool
# Docling's documents not in English (the embedder is English-only) or without text.
DOCLING_SKIPPED = ("normal_4pages", "right_to_left", "skipped_", "invisible", "bookmark")


def git(repo: str, *args: str, binary: bool = False) -> Any:
    """Run git on a mirror (``owner/name``)."""
    where = MIRRORS / repo.replace("/", "+") / "repo"
    done = subprocess.run(["git", "--git-dir", str(where), *args], capture_output=True, check=True)
    return done.stdout if binary else done.stdout.decode("utf-8", "replace")


def licence(repo: str, commit: str) -> str:
    """The first line of the repository's LICENSE file (e.g. ``MIT License``)."""
    for name in ("LICENSE", "LICENSE.txt", "LICENSE.md"):
        try:
            text = git(repo, "show", f"{commit}:{name}")
        except subprocess.CalledProcessError:
            continue
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        return "MIT License" if first.startswith("The MIT License") else first
    return "unknown"


def _pages_and_chars(data: bytes) -> tuple[int, int]:
    pages, chars, _, _ = _survey(data)
    return pages, chars


def _survey(data: bytes) -> tuple[int, int, int, float]:
    """Pages, characters, outline entries and the share of English stop words."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError:
        return 0, 0, 0, 0.0
    try:
        pages = len(document)
        texts = [document[i].get_textpage().get_text_range() for i in range(pages)]
        outline = len(list(document.get_toc(max_depth=6)))
    finally:
        document.close()
    words = " ".join(texts).lower().split()
    english = sum(w in _STOP for w in words) / max(1, len(words))
    return pages, sum(map(len, texts)), outline, english


def icdar_entries(commit: str) -> list[dict[str, Any]]:
    """ICDAR 2013 documents by the rule above, with their ``-str.xml``."""
    repo = "camelot-dev/camelot"
    paths = git(repo, "ls-tree", "-r", "--name-only", commit, ICDAR).split()
    chosen = []
    for part in ("eu", "us"):
        found = []
        for path in paths:
            stem = Path(path).name.removesuffix(".pdf")
            truth = path.replace(".pdf", "-str.xml")
            if not (stem.startswith(part) and path.endswith(".pdf") and truth in paths):
                continue
            pages, chars = _pages_and_chars(git(repo, "show", f"{commit}:{path}", binary=True))
            if pages >= 3 and chars > 1000:
                found.append((-pages, -chars, stem, path, truth))
        for _, _, stem, path, truth in sorted(found)[:ICDAR_PER_SET]:
            chosen.append({"name": f"icdar-{stem}.pdf", "repo": repo, "path": path,
                           "truth": [truth], "truth_kind": "icdar2013-str"})  # fmt: skip
    return chosen


def docling_entries(commit: str) -> list[dict[str, Any]]:
    """Docling's English test PDFs whose Markdown truth has 3+ headings or a table."""
    repo = "docling-project/docling"
    paths = set(git(repo, "ls-tree", "-r", "--name-only", commit, "tests/data/pdf").split())
    chosen = []
    for path in sorted(p for p in paths if p.startswith(DOCLING_SOURCES) and p.endswith(".pdf")):
        stem = Path(path).name.removesuffix(".pdf")
        truth = f"{DOCLING_TRUTH}/{stem}.md"
        if stem.startswith(DOCLING_SKIPPED) or truth not in paths:
            continue
        try:
            data = git(repo, "show", f"{commit}:{path}", binary=True)
        except subprocess.CalledProcessError:  # absent from the mirror (4 MiB and more)
            continue
        markdown = git(repo, "show", f"{commit}:{truth}")
        lines = markdown.splitlines()
        headings = sum(line.startswith("#") for line in lines)
        tables = sum(line.startswith("|") for line in lines)
        if (headings >= 3 or tables >= 3) and data.startswith(b"%PDF"):
            chosen.append({"name": f"docling-{stem}.pdf", "repo": repo, "path": path,
                           "truth": [truth], "truth_kind": "docling-md"})  # fmt: skip
    return chosen


def outline_entries(repo: str, commit: str, folder: str, prefix: str) -> list[dict[str, Any]]:
    """A repository's English test PDFs (under ``folder``) whose outline, their own truth
    for sections, has ten entries or more, of 3 to ``OUTLINE_MAX_PAGES`` pages."""
    chosen = []
    for path in git(repo, "ls-tree", "-r", "--name-only", commit, folder).split():
        if not path.endswith(".pdf"):
            continue
        try:
            data = git(repo, "show", f"{commit}:{path}", binary=True)
            pages, _, outline, english = _survey(data)
        except Exception:  # absent from the mirror (4 MiB and more), or unreadable
            continue
        if outline >= 10 and english >= 0.05 and 3 <= pages <= OUTLINE_MAX_PAGES:
            chosen.append({"name": f"{prefix}-{Path(path).name}", "repo": repo, "path": path,
                           "truth": [], "truth_kind": "outline"})  # fmt: skip
    return chosen


def build(target: Path = TARGET) -> dict[str, Any]:
    """Copy the chosen PDFs and truth files; write and return the manifest."""
    (target / "pdfs").mkdir(parents=True, exist_ok=True)
    (target / "truth").mkdir(parents=True, exist_ok=True)
    commits = {r: git(r, "rev-parse", "HEAD").strip() for r in
               ("camelot-dev/camelot", "docling-project/docling", "jsvine/pdfplumber",
                "pymupdf/PyMuPDF")}  # fmt: skip
    entries = icdar_entries(commits["camelot-dev/camelot"])
    entries += docling_entries(commits["docling-project/docling"])
    entries += outline_entries("jsvine/pdfplumber", commits["jsvine/pdfplumber"], PLUMBER,
                               "pdfplumber")  # fmt: skip
    entries += outline_entries("pymupdf/PyMuPDF", commits["pymupdf/PyMuPDF"], PYMUPDF, "pymupdf")
    documents = []
    for entry in entries:
        repo, commit = entry["repo"], commits[entry["repo"]]
        data = git(repo, "show", f"{commit}:{entry['path']}", binary=True)
        (target / "pdfs" / entry["name"]).write_bytes(data)
        local = []
        for truth in entry["truth"]:
            name = f"{entry['name'].removesuffix('.pdf')}--{Path(truth).name}"
            (target / "truth" / name).write_bytes(
                git(repo, "show", f"{commit}:{truth}", binary=True)
            )
            local.append(f"truth/{name}")
        pages, _ = _pages_and_chars(data)
        documents.append({**entry, "commit": commit, "license": licence(repo, commit),
                          "pages": pages, "file": f"pdfs/{entry['name']}",
                          "truth_files": local})  # fmt: skip
    manifest = {
        "mirrors": {r: {"commit": c, "license": licence(r, c)} for r, c in commits.items()},
        "note": "ICDAR 2013 Table Competition documents are EU/US public-sector reports; "
        "the licence given is the repository's that ships them.",
        "documents": documents,
    }
    (target / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def load(target: Path = TARGET) -> dict[str, Any]:
    """The manifest, building the corpus first if it is not there."""
    path = target / "manifest.json"
    if not path.is_file():
        return build(target)
    return json.loads(path.read_text(encoding="utf-8"))


if __name__ == "__main__":
    found = build(Path(sys.argv[1]) if len(sys.argv) > 1 else TARGET)
    print(f"{len(found['documents'])} documents → {TARGET}", file=sys.stderr)
