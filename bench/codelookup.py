"""Code lookup on the standard library: build the benchmark, run strategies, write the table.

    python -m bench.codelookup                       # build, run DEFAULT_STRATEGIES, write
    python -m bench.codelookup --render RUN/eval.json   # only rewrite the table from a run

The benchmark is built by :mod:`fissure.eval.codelookup` (docstrings stripped from the
corpus, their summaries as queries); see ``docs/eval.md``. Results go to
``bench/results/eval-code.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / ".fissure" / "bench" / "codelookup"
RUN = ROOT / ".fissure" / "eval" / "code"
RESULT = ROOT / "bench" / "results" / "eval-code.md"
DEFAULT_STRATEGIES = (
    "structural:200", "fissure-recursive:200", "fixed:200", "recursive:200:0",
    "tokentext:200:0", "langchain-recursive:200", "chonkie-recursive:200",
    "llamaindex-sentence:200", "semchunk:200",
)  # fmt: skip
COLUMNS = (
    ("hit@5", "hit@5"), ("mrr@10", "MRR@10"), ("ndcg@10", "nDCG@10"),
    ("line_recall@5", "line recall@5"), ("k=5/iou", "IoU@5"), ("tokens@5", "tokens@5"),
    ("budget=1000/recall", "recall @1000 tok"),
)  # fmt: skip


def table(results: list[dict[str, Any]]) -> list[str]:
    """The committed table: one row per strategy."""
    head = ["Strategy", "Chunks", "Mean tokens", *(c[1] for c in COLUMNS), "Damage %", "Unlocated"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in results:
        m = r["metrics"]
        cells = [f"{m[key][0]:.1f}" if key in m else "–" for key, _ in COLUMNS]
        row = [r["strategy"], str(r["chunks"]), f"{r['mean_tokens']:.0f}", *cells,
               f"{r.get('damage', 0.0):.1f}", str(r.get("unlocated", 0))]  # fmt: skip
        lines.append("| " + " | ".join(row) + " |")
    return lines


def render(run_json: Path, command: str) -> str:
    """The Markdown of ``bench/results/eval-code.md`` from a run's ``eval.json``."""
    payload = json.loads(run_json.read_text(encoding="utf-8"))
    meta = payload["meta"]
    build = Path(meta["dataset"]).parent / "manifest.json"
    manifest = json.loads(build.read_text(encoding="utf-8")) if build.is_file() else {}
    out = [
        "# Code lookup on the Python standard library",
        "",
        f"- date: {meta['date']}; embedder: {meta['embedder']}; run time {meta['seconds']} s",
        f"- benchmark: {manifest.get('queries', meta['questions'])} queries over "
        f"{len(manifest.get('modules', {})) or meta['corpora']} stdlib files of Python "
        f"{manifest.get('python', '?')} ({manifest.get('corpus_chars', '?')} characters), "
        "docstrings stripped, docstring summaries as queries (method: `docs/eval.md`)",
        "- retrieval: exact cosine over the chunks of all files pooled; sizes in cl100k tokens",
        f"- command: `{command}`",
        "",
        "Means over queries, ×100 except tokens. hit, MRR, nDCG: a chunk is relevant when it "
        "shares a character with the gold function. Line recall@5: share of the gold lines "
        "inside the top 5. Damage: share of chunks that start or end inside a function, "
        "method or class they could have held whole.",
        "",
        *table(payload["results"]),
        "",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Build, run and write; or only render with ``--render``."""
    parser = argparse.ArgumentParser(prog="python -m bench.codelookup")
    parser.add_argument("--render", type=Path, help="an existing run's eval.json")
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("-s", "--strategy", action="append")
    args = parser.parse_args(argv)
    command = "python -m bench.codelookup " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.render is None:
        from fissure.eval import run_eval
        from fissure.eval.codelookup import build

        build(BUILD, limit=args.limit)
        run_eval(BUILD / "queries.jsonl", list(args.strategy or DEFAULT_STRATEGIES),
                 args.embedder, 5, 1000, RUN)  # fmt: skip
        args.render = RUN / "eval.json"
    RESULT.write_text(render(args.render, command.strip()), encoding="utf-8")
    print(f"wrote {RESULT} ({dt.date.today().isoformat()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
