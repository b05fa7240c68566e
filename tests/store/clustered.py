"""Issue 13, case 10 as files: one file of 1,000 near-identical chunks beside 50 real documents.

The 50 documents are the docstrings of Python standard library modules (real, varied
prose; the same on every machine with this Python). The repetitive file is a
confidentiality notice pasted 1,000 times with its case and spacing changed: every chunk
is a different text (``--dedup`` keeps them all) and, for the uncased MiniLM, the same
vector. Those exact copies are what breaks Chroma's HNSW
graph: the copies fill each other's neighbour lists, and a search that enters the cluster
never leaves it.
"""

from __future__ import annotations

import importlib
import inspect
import re
import warnings
from pathlib import Path

# Standard library modules with a docstring of at least 400 characters in Python 3.11+.
MODULES = (
    "argparse",
    "ast",
    "cmd",
    "codeop",
    "collections",
    "colorsys",
    "compileall",
    "configparser",
    "copy",
    "csv",
    "difflib",
    "doctest",
    "fileinput",
    "fnmatch",
    "ftplib",
    "gc",
    "getopt",
    "gettext",
    "hashlib",
    "heapq",
    "http.client",
    "http.cookiejar",
    "http.server",
    "inspect",
    "io",
    "itertools",
    "json",
    "locale",
    "marshal",
    "mimetypes",
    "optparse",
    "os",
    "pdb",
    "pickle",
    "plistlib",
    "posixpath",
    "pprint",
    "pyclbr",
    "pydoc",
    "random",
    "re",
    "sched",
    "shelve",
    "smtplib",
    "socket",
    "socketserver",
    "sqlite3",
    "ssl",
    "statistics",
    "string",
    "struct",
    "subprocess",
    "sys",
    "tabnanny",
    "tempfile",
    "timeit",
    "tokenize",
    "trace",
    "typing",
    "unittest",
    "urllib.parse",
    "urllib.request",
    "uuid",
    "zipimport",
    "zlib",
)

NOTICE = (
    "Confidentiality notice: this message and any attachments are intended only for the "
    "named recipient and may contain privileged information. If you received it in error, "
    "notify the sender and delete every copy."
)
COPIES = 1000
CHARS = 800  # of each docstring: a few chunks per document, so the copies are most chunks


def _variant(text: str, n: int) -> str:
    """Copy ``n`` of ``text``: upper, lower or original case (by ``n % 3``) and one run of
    extra spaces whose place and length are unique to ``n``, so no two copies are equal."""
    words = text.split(" ")
    at = n % 30
    words[at] += " " * (1 + n // 30)
    text = " ".join(words)
    return (text.upper(), text.lower(), text)[n % 3]


def documents(count: int = 50) -> dict[str, str]:
    """``{module name: docstring}`` for the first ``count`` modules that import here."""
    out: dict[str, str] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in MODULES:
            try:
                doc = inspect.getdoc(importlib.import_module(name)) or ""
            except Exception:  # noqa: BLE001 - a module missing on this build is skipped
                continue
            if len(doc) >= 400:
                out[name] = _head(doc)
            if len(out) == count:
                return out
    raise AssertionError(f"only {len(out)} standard library docstrings of 400+ characters")


def _head(doc: str) -> str:
    """The first paragraphs of ``doc``, up to about :data:`CHARS` characters."""
    cut = doc.rfind("\n\n", 0, CHARS)
    return doc[: cut if cut > 300 else CHARS]


def query_of(doc: str) -> str:
    """A question copied from ``doc``: its first two sentences (at most 300 characters)."""
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(doc.split()))
    return " ".join(sentences[:2])[:300]


def write(root: Path, count: int = 50) -> dict[str, str]:
    """Write the corpus under ``root``; ``{absolute path: query}`` for the good files."""
    root.mkdir(parents=True, exist_ok=True)
    queries = {}
    for name, doc in documents(count).items():
        path = root / f"{name}.md"
        path.write_text(f"# {name}\n\n{doc}\n", encoding="utf-8")
        queries[str(path.resolve())] = query_of(doc)
    notices = [_variant(NOTICE, n) for n in range(COPIES)]
    (root / "notices.txt").write_text("\n\n".join(notices) + "\n", encoding="utf-8")
    return queries
