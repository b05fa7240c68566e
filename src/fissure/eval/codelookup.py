"""A code-lookup benchmark built on the machine from the Python standard library.

``python -m fissure.eval.codelookup OUT`` writes ``OUT/corpus/<module>.py``,
``OUT/queries.jsonl`` and ``OUT/manifest.json``; then ``fissure eval OUT/queries.jsonl -s ...``
scores it. Nothing is downloaded: the sources are the running interpreter's own stdlib, and
the same interpreter version gives byte-identical output.

How it is built (deterministic, no model, no randomness):

1. **Sources.** The modules in :data:`MODULES` are read from ``sysconfig``'s stdlib folder.
2. **Docstrings are removed from the corpus.** Every module, class and function docstring
   statement is deleted with its lines (a body left empty gets ``pass``), and the result must
   still parse. Queries are made *from* docstrings, so leaving them in would let retrieval
   find the answer by matching the query's words against the docstring sitting in the gold
   span: that measures string matching, not chunking. Without them a query has to be matched
   to code (names, signatures, bodies, comments), and it is found only if a chunk keeps the
   function's signature together with enough of its body: which is what chunking decides.
3. **Queries.** One per function, method or class that had a docstring: its summary (first
   sentence of the first paragraph, whitespace collapsed), kept when it has 4 to 40 words.
   A summary that appears more than once in the stdlib selection is dropped (ambiguous), and
   so is one that still occurs verbatim in the stripped corpus (e.g. copied into a comment).
4. **Gold.** The entity's whole lines in the stripped file, decorators included, from the
   first non-blank character to the end of the last line, as character offsets into the file
   (read with ``newline=""``) plus 1-based ``start_line``/``end_line``. Entities longer than
   :data:`MAX_LINES` lines are skipped (a class of 400 lines is not a lookup answer).
5. **Selection.** Candidates are ordered by sha256 of ``path:qualname`` and the first
   ``limit`` kept, so a subset is a fixed, spread-out sample rather than the first modules.

The JSONL format is the harness's general one (see :mod:`fissure.eval.dataset`): one
``{"query": ..., "gold": [{"source": ..., "start": ..., "end": ...}]}`` per line, ``source``
relative to the JSONL file; extra keys (``start_line``, ``end_line``, ``entity``) are ignored
by the loader, so users can write their own files by hand.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

MODULES = (
    "base64.py", "calendar.py", "cmd.py", "contextlib.py", "copy.py", "csv.py",
    "email/utils.py", "fnmatch.py", "fractions.py", "getopt.py", "gettext.py", "glob.py",
    "graphlib.py", "heapq.py", "json/decoder.py", "json/encoder.py", "netrc.py", "pprint.py",
    "queue.py", "reprlib.py", "sched.py", "shlex.py", "statistics.py", "textwrap.py",
    "timeit.py", "tomllib/_parser.py",
)  # fmt: skip
MAX_LINES = 60
MIN_WORDS, MAX_WORDS = 4, 40
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True, slots=True)
class Entity:
    """A function, method or class: its qualified name and 1-based line range."""

    qualname: str
    first: int
    last: int
    doc: str | None


def entities(tree: ast.Module) -> list[Entity]:
    """Every def and class in ``tree`` with its qualified name, decorators included."""
    out: list[Entity] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, _DEFS):
                name = f"{prefix}{node.name}"
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                out.append(Entity(name, first, node.end_lineno or node.lineno,
                                  ast.get_docstring(node, clean=True)))  # fmt: skip
                walk(node.body, f"{name}.")

    walk(tree.body, "")
    return out


def strip_docstrings(source: str) -> str:
    """``source`` without docstring statements (see the module docstring, step 2).

    Raises:
        ValueError: The result does not parse (never seen for the stdlib selection).
    """
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    drop: set[int] = set()
    fill: dict[int, str] = {}
    for node in [tree, *(n for n in ast.walk(tree) if isinstance(n, _DEFS))]:
        body = node.body
        if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):  # fmt: skip
            continue
        doc = body[0]
        span = range(doc.lineno - 1, doc.end_lineno or doc.lineno)
        drop.update(span)
        if len(body) == 1:  # keep the body valid
            indent = re.match(r"[ \t]*", lines[doc.lineno - 1]).group()  # type: ignore[union-attr]
            fill[doc.lineno - 1] = f"{indent}pass\n"
    out = "".join(fill.get(i, "") if i in drop else line for i, line in enumerate(lines))
    ast.parse(out)
    return out


def summary(doc: str) -> str:
    """First sentence of the first paragraph, whitespace collapsed."""
    para = " ".join(doc.strip().split("\n\n")[0].split())
    match = re.search(r"(?<=[.!?])\s", para)
    return para[: match.start()] if match else para


def _line_starts(text: str) -> list[int]:
    return [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]


def gold_span(text: str, starts: list[int], first: int, last: int) -> tuple[int, int]:
    """Character span of 1-based lines ``first..last``: first non-blank to end of line."""
    start = starts[first - 1]
    while text[start] in " \t":
        start += 1
    end = starts[last] - 1 if last < len(starts) else len(text)
    return start, end


def build(out_dir: str | Path, *, limit: int = 300, modules: tuple[str, ...] = MODULES) -> dict:
    """Write the benchmark into ``out_dir`` (see the module docstring).

    Returns:
        The manifest (also written as ``manifest.json``).
    """
    out = Path(out_dir)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    records: list[tuple[str, dict]] = []
    counts: dict[str, int] = {}
    stripped: dict[str, str] = {}
    hashes: dict[str, str] = {}
    for module in modules:
        raw = (stdlib / module).read_bytes()
        hashes[module] = hashlib.sha256(raw).hexdigest()
        original = raw.decode("utf-8")
        text = stripped[module] = strip_docstrings(original)
        docs = {e.qualname: e.doc for e in entities(ast.parse(original))}
        starts = _line_starts(text)
        for entity in entities(ast.parse(text)):
            doc = docs.get(entity.qualname)
            if not doc or entity.last - entity.first + 1 > MAX_LINES:
                continue
            query = summary(doc)
            counts[query] = counts.get(query, 0) + 1
            start, end = gold_span(text, starts, entity.first, entity.last)
            source = f"corpus/{module}"
            gold = {"source": source, "start": start, "end": end,
                    "start_line": entity.first, "end_line": entity.last}  # fmt: skip
            key = hashlib.sha256(f"{module}:{entity.qualname}".encode()).hexdigest()
            records.append((key, {"query": query, "gold": [gold],
                                  "entity": f"{module}:{entity.qualname}"}))  # fmt: skip
    corpus = "\n".join(stripped.values())
    kept = [
        (key, r) for key, r in records
        if counts[r["query"]] == 1 and MIN_WORDS <= len(r["query"].split()) <= MAX_WORDS
        and r["query"] not in corpus
    ]  # fmt: skip
    kept = sorted(kept, key=lambda kr: kr[0])[:limit]
    for module, text in stripped.items():
        path = out / "corpus" / module
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    lines = [json.dumps(r, ensure_ascii=False) for _, r in kept]
    (out / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = {
        "python": sys.version.split()[0],
        "modules": hashes,
        "candidates": len(records),
        "queries": len(kept),
        "corpus_chars": sum(len(t) for t in stripped.values()),
        "method": "fissure.eval.codelookup (docstrings stripped, summaries as queries)",
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> int:
    """``python -m fissure.eval.codelookup OUT [--limit N]``."""
    parser = argparse.ArgumentParser(prog="python -m fissure.eval.codelookup")
    parser.add_argument("out", help="folder to write corpus/, queries.jsonl, manifest.json")
    parser.add_argument("--limit", type=int, default=300, help="most queries (default 300)")
    args = parser.parse_args(argv)
    manifest = build(args.out, limit=args.limit)
    print(f"{manifest['queries']} queries over {len(manifest['modules'])} files "
          f"({manifest['corpus_chars']} characters) in {args.out}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
