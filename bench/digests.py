"""Digests of every chunk the corpus yields, per (file, settings): the "chunks unchanged"
check of a refactor of the splitter.

Every document of ``tests/corpus`` (all formats, fuzz finds included) and ``samples/`` is
parsed once and chunked under a grid of settings (15 variants × 2 budgets × 2 sizers, with
``min_tokens``, overlap and context variants); each (file, settings) gets a SHA-256 over
every chunk's offsets, size, text, headings, entity, page, cell, context and metadata.

    python -m bench.digests --out before.json      # before the change
    python -m bench.digests --check before.json    # after: lists each difference, rc 1

``--quick`` keeps one budget per sizer (for a smoke run).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOT_DOCUMENTS = {"ORIGIN.md", "make_binary.py"}

# (label, settings fields); sizes are per sizer below.
VARIANTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("fixed", {"strategy": "fixed"}),
    ("fixed+ov", {"strategy": "fixed", "overlap_tokens": 8}),
    ("recursive", {"strategy": "recursive"}),
    ("recursive+min", {"strategy": "recursive", "min_tokens": 20}),
    ("recursive+ov+ctx", {"strategy": "recursive", "overlap_tokens": 8, "prepend_context": True}),
    ("sentence", {"strategy": "sentence"}),
    ("sentence+ov+ctx", {"strategy": "sentence", "overlap_tokens": 8, "prepend_context": True}),
    ("structural", {"strategy": "structural"}),
    ("structural+min", {"strategy": "structural", "min_tokens": 20}),
    ("structural+ov+ctx", {"strategy": "structural", "overlap_tokens": 8, "prepend_context": True}),
    ("semantic", {"strategy": "semantic"}),
    ("semantic+min", {"strategy": "semantic", "min_tokens": 20}),
    ("semantic+ctx", {"strategy": "semantic", "prepend_context": True}),
    ("hybrid", {"strategy": "hybrid"}),
    ("hybrid+min+ctx", {"strategy": "hybrid", "min_tokens": 20, "prepend_context": True}),
)
BUDGETS = {"chars": (200, 1000), "minilm": (64, 254)}


def files() -> list[Path]:
    """Every corpus document and sample, in a stable order."""
    corpus = ROOT / "tests" / "corpus"
    found = [p for p in corpus.rglob("*") if p.is_file() and p.name not in NOT_DOCUMENTS]
    found += [p for p in (ROOT / "samples").iterdir() if p.is_file()]
    return sorted(found, key=lambda p: p.relative_to(ROOT).as_posix())


def digest(chunks: list[Any]) -> str:
    h = hashlib.sha256()
    for c in chunks:
        row = [c.start, c.end, c.n_tokens, list(c.lines), c.text, list(c.headings), c.entity]
        row += [c.page, c.cell, c.context, sorted((k, repr(v)) for k, v in c.metadata.items())]
        h.update(json.dumps(row, ensure_ascii=False, default=repr).encode())
    return h.hexdigest()


def run(quick: bool) -> dict[str, str]:
    from fissure import Chunker
    from fissure.chunker import load_document
    from fissure.embed.hashing import HashingEmbedder
    from fissure.errors import FissureError

    embedder = HashingEmbedder()
    docs = {}
    for path in files():
        try:
            docs[path.relative_to(ROOT).as_posix()] = load_document(path)
        except FissureError as exc:  # a fuzz find that a parser refuses: pinned as such
            docs[path.relative_to(ROOT).as_posix()] = exc
    out: dict[str, str] = {}
    for sizer, budgets in BUDGETS.items():
        for budget in budgets[:1] if quick else budgets:
            for label, fields in VARIANTS:
                chunker = Chunker(tokenizer=sizer, max_tokens=budget, embedder=embedder, **fields)
                key = f"{sizer}/{budget}/{label}"
                for name, doc in docs.items():
                    if isinstance(doc, Exception):
                        out[f"{name} | {key}"] = f"error {type(doc).__name__}"
                        continue
                    try:
                        value = digest(chunker.chunk_document(doc))
                    except FissureError as exc:
                        value = f"error {type(exc).__name__}: {exc}"
                    out[f"{name} | {key}"] = value
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--check", type=Path)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    found = run(args.quick)
    if args.out:
        args.out.write_text(json.dumps(found, indent=0, sort_keys=True) + "\n")
    print(f"{len(found)} digests")
    if args.check:
        want = json.loads(args.check.read_text())
        diff = sorted(k for k in want.keys() | found.keys() if want.get(k) != found.get(k))
        for key in diff:
            print(f"DIFF {key}")
        print(f"{len(diff)} differ")
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
