"""Deterministic benchmark corpora, built from files already on this machine.

* ``stdlib``: every ``.py`` file of the running Python's standard library, without
  ``site-packages`` and test folders (about 12 MB of code).
* ``prose``: the mdBook books shipped with the local Rust toolchain docs (The Book, the
  Reference, the Nomicon, Rust by Example with its translations …), HTML stripped to text
  with selectolax (about 8 MB of prose, code samples and some CJK text).

Each file is one document. A built corpus is cached as JSON under ``bench/.cache/corpora``;
the cache is rebuilt when its source folder changes. ``limit_mb`` picks a deterministic,
spread-out subset (documents ordered by a hash of their path), so a small run still samples
the whole corpus rather than its first folder.

Run ``python -m bench.corpora`` to build both and print their sizes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sysconfig
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.environment import CACHE

CORPUS_DIR = CACHE / "corpora"
NAMES = ("stdlib", "prose")
FORMAT = 1  # bump when extraction changes, so stale caches are rebuilt

STDLIB_SKIP_DIRS = frozenset({"site-packages", "dist-packages", "test", "tests", "idle_test"})
HTML_SKIP_FILES = frozenset({"print.html", "toc.html", "404.html"})
MIN_PAGE_CHARS = 500  # mdBook redirect stubs ("the first edition … is no longer distributed")


@dataclass(frozen=True)
class Document:
    """One file of a corpus: its path relative to the corpus source, and its text."""

    id: str
    text: str


@dataclass(frozen=True)
class Corpus:
    """An ordered list of documents plus where they came from."""

    name: str
    source: str
    documents: tuple[Document, ...]

    @property
    def n_bytes(self) -> int:
        """UTF-8 size of all documents."""
        return sum(len(d.text.encode("utf-8")) for d in self.documents)

    @property
    def sha256(self) -> str:
        """Content hash, so results can say exactly which text they measured."""
        h = hashlib.sha256()
        for doc in self.documents:
            h.update(doc.id.encode())
            h.update(b"\0")
            h.update(doc.text.encode("utf-8", "surrogatepass"))
            h.update(b"\0")
        return h.hexdigest()


# ----------------------------------------------------------------------------- sources


def stdlib_root() -> Path:
    """The standard library folder of the running interpreter."""
    return Path(sysconfig.get_paths()["stdlib"])


def rust_docs_root() -> Path:
    """The HTML docs of the local Rust toolchain, preferring a ``stable-*`` one."""
    found = sorted(Path.home().glob(".rustup/toolchains/*/share/doc/rust/html"))
    if not found:
        raise FileNotFoundError(
            "no Rust toolchain docs under ~/.rustup/toolchains/*/share/doc/rust/html; "
            "install them with `rustup component add rust-docs`"
        )
    stable = [p for p in found if p.parts[-5].startswith("stable")]
    return (stable or found)[0]


def read_stdlib(root: Path) -> list[Document]:
    """All UTF-8 ``.py`` files under ``root``, minus site-packages and test folders."""
    docs = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if STDLIB_SKIP_DIRS.intersection(rel.parts[:-1]):
            continue
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue  # a handful of legacy-encoded files; the corpus is UTF-8 only
        if text.strip():
            docs.append(Document(str(rel), text))
    return docs


def read_prose(root: Path) -> list[Document]:
    """Text of every page of every mdBook book (a folder with a ``print.html``) in ``root``."""
    docs, seen = [], set()
    books = sorted(p.parent for p in root.glob("*/print.html"))
    for book in books:
        for path in sorted(book.rglob("*.html")):
            if path.name in HTML_SKIP_FILES:
                continue
            text = html_to_text(path.read_bytes())
            if len(text) < MIN_PAGE_CHARS or text in seen:
                continue
            seen.add(text)
            docs.append(Document(str(path.relative_to(root)), text))
    return docs


def html_to_text(html: bytes) -> str:
    """The readable text of an mdBook page: its ``<main>``, without script, style and nav."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    node = tree.css_first("main") or tree.body
    if node is None:
        return ""
    for junk in node.css("script, style, nav"):
        junk.decompose()
    lines = [line.rstrip() for line in node.text(separator="").splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"


SOURCES: dict[str, tuple[Callable[[], Path], Callable[[Path], list[Document]]]] = {
    "stdlib": (stdlib_root, read_stdlib),
    "prose": (rust_docs_root, read_prose),
}


# ----------------------------------------------------------------------------- cache


def load(name: str, limit_mb: float | None = None, cache_dir: Path = CORPUS_DIR) -> Corpus:
    """The named corpus, built on first use and cached; ``limit_mb`` takes a subset."""
    if name not in SOURCES:
        raise ValueError(f"unknown corpus {name!r}: use one of {', '.join(NAMES)}")
    find_root, read = SOURCES[name]
    root = find_root()
    path = cache_dir / f"{name}.json"
    corpus = _read_cache(path, name, root)
    if corpus is None:
        corpus = Corpus(name, str(root), tuple(read(root)))
        _write_cache(path, corpus)
    return corpus if limit_mb is None else subset(corpus, limit_mb)


def subset(corpus: Corpus, limit_mb: float) -> Corpus:
    """Documents taken in path-hash order while they fit in ``limit_mb`` (at least one)."""
    budget = int(limit_mb * 1_000_000)
    ranked = sorted(corpus.documents, key=lambda d: hashlib.sha1(d.id.encode()).hexdigest())
    chosen, used = [], 0
    for doc in ranked:
        size = len(doc.text.encode("utf-8"))
        if used + size <= budget or not chosen:
            chosen.append(doc)
            used += size
    chosen.sort(key=lambda d: d.id)
    return Corpus(corpus.name, corpus.source, tuple(chosen))


def prose_paragraphs(limit: int) -> Iterator[str]:
    """Paragraphs of the Rust books' text (the prose corpus), cycled to ``limit`` chars."""
    docs = load("prose").documents
    used = 0
    while True:
        for doc in docs:
            for paragraph in doc.text.split("\n\n"):
                if paragraph.strip():
                    yield paragraph.strip()
                    used += len(paragraph)
                    if used >= limit:
                        return


def _read_cache(path: Path, name: str, root: Path) -> Corpus | None:
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != FORMAT or data.get("source") != str(root):
        return None
    docs = tuple(Document(d["id"], d["text"]) for d in data["documents"])
    return Corpus(name, data["source"], docs)


def _write_cache(path: Path, corpus: Corpus) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "format": FORMAT,
        "name": corpus.name,
        "source": corpus.source,
        "documents": [{"id": d.id, "text": d.text} for d in corpus.documents],
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)


def main(argv: list[str] | None = None) -> None:
    """Build (or load) the corpora and print their sizes."""
    parser = argparse.ArgumentParser(prog="python -m bench.corpora", description=__doc__)
    parser.add_argument("--limit-mb", type=float, default=None, help="take a subset of this size")
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"any of {', '.join(NAMES)}")
    args = parser.parse_args(argv)
    for name in args.names or NAMES:
        corpus = load(name, args.limit_mb)
        print(
            f"{name}: {len(corpus.documents)} documents, {corpus.n_bytes / 1e6:.2f} MB, "
            f"sha256 {corpus.sha256[:16]} from {corpus.source}"
        )


if __name__ == "__main__":
    main()
