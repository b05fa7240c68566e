"""Dense vs lexical vs hybrid retrieval, held out, on Chroma's benchmark and the code lookup.

    python -m bench.hybrid            # both benchmarks, writes bench/results/eval-hybrid.md
    python -m bench.hybrid --smoke    # a few questions of the code lookup, no file

For each benchmark: fissure's default chunks (``structural:254+tok=minilm``, what
``fissure ingest`` makes), MiniLM, k = 5. The dense scores and the lexical (BM25) scores
are computed once; every fusion setting (rank constant, lexical weight, tokenizer) is then
scored on every question, chosen on one half (even rows) and reported on the other (odd
rows), and the other way round (the held-out protocol of ``docs/eval.md``). Where hybrid
wins and loses against dense is counted per question, split by whether the question names
an identifier or a rare term. The costs (index size, ingest time, query latency) come
from :mod:`bench.hybrid_costs`, through the product.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from fissure.embed import CachedEmbedder, load_embedder
from fissure.embed.protocol import Embedder
from fissure.eval import lexical, multivector, ranking
from fissure.eval.dataset import Dataset, load_dataset
from fissure.eval.runner import (
    StrategyResult,
    build_pool,
    chunk_scores,
    embed_texts,
    score_question,
)
from fissure.eval.strategies import parse_strategy
from fissure.size import Sizer
from fissure.store.fusion import Fusion
from fissure.store.lexical import STOPWORDS, parts

ROOT = Path(__file__).resolve().parent.parent
CHROMA = Path("/work/shared/datasets/chroma-chunking-eval")
CODE = ROOT / ".fissure" / "bench" / "codelookup" / "queries.jsonl"
RESULT = ROOT / "bench" / "results" / "eval-hybrid.md"
DEFAULTS = "structural:254+tok=minilm"
CONSTANTS = (2, 5, 10, 20, 30, 60, 100)
WEIGHTS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
LEXERS = ("words", "trigram")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Bench:
    """One benchmark: what decides (``key``) and what is shown."""

    name: str
    path: Path
    key: str
    columns: tuple[tuple[str, str], ...]


BENCHES = {
    "chroma": Bench("Chroma's chunking benchmark", CHROMA, "k=5/recall",
                    (("k=5/recall", "recall@5"), ("k=5/iou", "IoU@5"), ("hit@5", "hit@5"),
                     ("mrr@10", "MRR@10"))),
    "code": Bench("code lookup (stdlib)", CODE, "hit@5",
                  (("hit@5", "hit@5"), ("mrr@10", "MRR@10"), ("k=5/recall", "recall@5"),
                   ("k=5/iou", "IoU@5"))),
}  # fmt: skip


def scored(dataset: Dataset, built: Any, scores: np.ndarray, sizer: Sizer) -> StrategyResult:
    """Every metric of every question for one question × chunk score matrix."""
    pool = built[0]
    result = StrategyResult("", None, None, len(pool.located), 0.0,
                            tuple(q.corpus_id for q in dataset.questions))  # fmt: skip
    lines = {cid: ranking.LineIndex(text) for cid, text in dataset.corpora.items()}
    top = np.argsort(-scores, axis=1, kind="stable")[:, :20]
    for question, row in zip(dataset.questions, top, strict=True):
        score_question(result, question, pool, row.tolist(), ((5, 10), None, lines))
    return result


def half_mean(values: Sequence[float], which: str) -> float:
    """Mean ×100 over the even or odd rows (as ``Dataset.half`` splits), or all."""
    part = values if which == "all" else values[0 if which == "even" else 1 :: 2]
    return 100.0 * float(np.mean(part)) if part else 0.0


def rare_or_identifier(question: str, df: dict[str, int], n_chunks: int) -> str:
    """``identifier`` (a word with ``_``, inner capitals or digits), ``rare`` (a word in at
    most 0.1 % of the chunks, at least one), or ``plain``."""
    words = [w for w in _WORD.findall(question) if w.lower() not in STOPWORDS]
    if any(parts(w) or any(c.isdigit() for c in w) for w in words):
        return "identifier"
    if any(0 < df.get(w.lower(), 0) <= max(1, n_chunks // 1000) for w in words):
        return "rare"
    return "plain"


def document_frequency(texts: Sequence[str]) -> dict[str, int]:
    """In how many chunks each lower-case word appears."""
    df: dict[str, int] = {}
    for text in texts:
        for word in {w.lower() for w in _WORD.findall(text)}:
            df[word] = df.get(word, 0) + 1
    return df


def run_bench(bench: Bench, embedder: Embedder, limit: int | None) -> dict[str, Any]:
    """Score dense, lexical and every hybrid setting on one benchmark."""
    dataset = load_dataset(bench.path)
    if limit:
        dataset = Dataset(dataset.name, dataset.corpora, dataset.questions[:limit])
    sizer = Sizer.tiktoken("cl100k_base")
    strategy = parse_strategy(DEFAULTS, embedder)
    built = build_pool(dataset, strategy, sizer)
    questions = [q.query for q in dataset.questions]
    queries = embed_texts(embedder, questions)
    dense = chunk_scores(dataset, strategy, embedder, queries, built)
    own = [dataset.corpora[c][s:e] for c, s, e in built[0].located]
    rows: dict[tuple[str, str, float, float], StrategyResult] = {
        ("dense", "", 0.0, 0.0): scored(dataset, built, dense, sizer)}  # fmt: skip
    for lexer in LEXERS:
        words = lexical.lexical_scores(own, questions, lexer)
        rows[("lexical", lexer, 0.0, 0.0)] = scored(dataset, built, words, sizer)
        for constant in CONSTANTS:
            for weight in WEIGHTS:
                fusion = Fusion(constant, weight)
                fused = lexical.fused_scores(dense, words, fusion, 10, multivector.HIDDEN)
                rows[("hybrid", lexer, constant, weight)] = scored(dataset, built, fused, sizer)
    df = document_frequency(own)
    kinds = [rare_or_identifier(q, df, len(own)) for q in questions]
    return {"bench": bench, "rows": rows, "kinds": kinds, "chunks": len(own),
            "questions": len(questions)}  # fmt: skip


def choose(rows: dict, mode: str, key: str, on: str) -> tuple:
    """The setting of ``mode`` with the best mean ``key`` on half ``on`` (ties: the first)."""
    best = max((r for r in rows if r[0] == mode),
               key=lambda r: round(half_mean(rows[r].scores[key], on), 6))  # fmt: skip
    return best


def label(setting: tuple) -> str:
    mode, lexer, constant, weight = setting
    if mode == "dense":
        return "dense"
    if mode == "lexical":
        return f"lexical ({lexer})"
    return f"hybrid ({lexer}, c={constant:g}, w={weight:g})"


def held_out(result: dict[str, Any]) -> list[str]:
    """The held-out table of one benchmark: chosen on one half, reported on the other."""
    bench, rows = result["bench"], result["rows"]
    head = ["chosen on", "reported on", "mode (setting chosen)", *(c[1] for c in bench.columns)]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for on, report in (("even", "odd"), ("odd", "even")):
        for mode in ("dense", "lexical", "hybrid"):
            setting = choose(rows, mode, bench.key, on)
            cells = [f"{half_mean(rows[setting].scores[k], report):.1f}" for k, _ in bench.columns]
            out.append(f"| {on} | {report} | {label(setting)} | " + " | ".join(cells) + " |")
    return out


def wins(result: dict[str, Any], setting: tuple | None = None) -> list[str]:
    """Per question, where hybrid beats dense on the key metric and where it loses, by
    kind of question: held out (each half with the setting chosen on the other), or for
    one ``setting`` on every question."""
    bench, rows, kinds = result["bench"], result["rows"], result["kinds"]
    dense = rows[("dense", "", 0.0, 0.0)].scores[bench.key]
    counts: dict[str, list[int]] = {}
    for first, on in ((0, "odd"), (1, "even")):  # report rows `first::2`, chosen on the other
        chosen = setting or choose(rows, "hybrid", bench.key, on)
        hybrid = rows[chosen].scores[bench.key]
        for i in range(first, len(dense), 2):
            c = counts.setdefault(kinds[i], [0, 0, 0, 0])
            c[0] += 1
            c[1] += hybrid[i] > dense[i] + 1e-9
            c[2] += hybrid[i] < dense[i] - 1e-9
            c[3] += abs(hybrid[i] - dense[i]) <= 1e-9
    out = [f"| question kind | questions | hybrid better | hybrid worse | same ({bench.key}) |",
           "|---|---|---|---|---|"]  # fmt: skip
    for kind in ("identifier", "rare", "plain"):
        if kind in counts:
            n, up, down, same = counts[kind]
            out.append(f"| {kind} | {n} | {up} | {down} | {same} |")
    total = [sum(c[i] for c in counts.values()) for i in range(4)]
    out.append(f"| all | {total[0]} | {total[1]} | {total[2]} | {total[3]} |")
    return out


def final_setting(results: list[dict[str, Any]]) -> tuple:
    """The hybrid setting whose smallest gain over dense, across benchmarks, on all
    questions, is the largest (the rule :func:`joint` validates held out)."""
    dense = ("dense", "", 0.0, 0.0)
    settings = [r for r in results[0]["rows"] if r[0] == "hybrid"]

    def low(setting: tuple) -> float:
        return round(min(half_mean(r["rows"][setting].scores[r["bench"].key], "all")
                         - half_mean(r["rows"][dense].scores[r["bench"].key], "all")
                         for r in results), 6)  # fmt: skip

    return max(settings, key=low)


def joint(results: list[dict[str, Any]]) -> list[str]:
    """One hybrid setting for every benchmark at once, held out: chosen on one half of
    each benchmark's questions by its smallest gain over dense (the setting must win
    everywhere to become a default), reported on the other halves."""
    settings = [r for r in results[0]["rows"] if r[0] == "hybrid"]
    dense = ("dense", "", 0.0, 0.0)

    def gain(result: dict[str, Any], setting: tuple, half: str) -> float:
        key, rows = result["bench"].key, result["rows"]
        return half_mean(rows[setting].scores[key], half) - half_mean(rows[dense].scores[key], half)

    names = [f"{r['bench'].name} {r['bench'].key}" for r in results]
    final = final_setting(results)
    out = ["| chosen on | setting chosen | smallest gain there | reported on | "
           + " | ".join(f"{n}: dense → hybrid" for n in names) + " |",
           "|---|---|---|---|" + "---|" * len(names)]  # fmt: skip
    for on, report in (("even", "odd"), ("odd", "even")):
        best = max(settings, key=lambda s: round(min(gain(r, s, on) for r in results), 6))
        cells = []
        for r in results:
            key, rows = r["bench"].key, r["rows"]
            before, after = (half_mean(rows[x].scores[key], report) for x in (dense, best))
            cells.append(f"{before:.1f} → {after:.1f} ({after - before:+.1f})")
        low = min(gain(r, best, on) for r in results)
        out.append(f"| {on} | {label(best)} | {low:+.1f} | {report} | " + " | ".join(cells) + " |")
    out += [
        "",
        f"The same rule on all questions chooses **{label(final)}** (smallest gain "
        f"{min(gain(r, final, 'all') for r in results):+.1f}); its figures by half "
        "(×100; not held out for this one setting, whose rule was held out above):",
        "",
    ]
    for r in results:
        bench, rows = r["bench"], r["rows"]
        out += [
            f"{bench.name}:",
            "",
            "| mode | questions | " + " | ".join(c[1] for c in bench.columns) + " |",
            "|---|---|" + "---|" * len(bench.columns),
        ]
        for setting in (dense, final):
            for half in ("even", "odd", "all"):
                cells = [f"{half_mean(rows[setting].scores[k], half):.1f}"
                         for k, _ in bench.columns]  # fmt: skip
                out.append(f"| {label(setting)} | {half} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def grid(result: dict[str, Any], lexer: str) -> list[str]:
    """The key metric of every hybrid setting of one tokenizer on all questions."""
    bench, rows = result["bench"], result["rows"]
    out = [f"| {lexer}: c \\ w | " + " | ".join(f"{w:g}" for w in WEIGHTS) + " |",
           "|---|" + "---|" * len(WEIGHTS)]  # fmt: skip
    for constant in CONSTANTS:
        cells = [f"{100 * np.mean(rows[('hybrid', lexer, constant, w)].scores[bench.key]):.1f}"
                 for w in WEIGHTS]  # fmt: skip
        out.append(f"| {constant} | " + " | ".join(cells) + " |")
    return out


def render(results: list[dict[str, Any]], seconds: float, costs: str) -> str:
    """The Markdown of ``bench/results/eval-hybrid.md``."""
    out = ["# Dense, lexical and hybrid retrieval, held out", "",
           f"- date: {dt.date.today().isoformat()}; embedder all-MiniLM-L6-v2 (`minilm`); "
           f"k = 5; chunks: fissure's defaults `{DEFAULTS}` (structural, 254 MiniLM tokens); "
           f"run time {seconds:.0f} s; load average {os.getloadavg()[0]:.1f}",
           "- command: `python -m bench.hybrid` (method: `docs/eval.md`, held-out protocol)",
           f"- settings tried: rank constant c in {CONSTANTS}, lexical weight w in "
           f"{WEIGHTS}, tokenizer in {LEXERS}; dense has none", ""]  # fmt: skip
    final = final_setting(results) if len(results) > 1 else None
    for result in results:
        bench = result["bench"]
        out += [f"## {bench.name}: {result['questions']} questions, {result['chunks']} chunks",
                "", f"Chosen by {bench.key} on one half, reported on the other (×100):", "",
                *held_out(result), "",
                "Per question, held out (each half scored with the setting chosen on the "
                "other), hybrid against dense (identifier: a word with `_`, inner capitals "
                "or digits; rare: a word in at most 0.1 % of the chunks):", "",
                *wins(result), ""]  # fmt: skip
        if final is not None:
            out += [f"The same for the default, {label(final)}, on every question:", "",
                    *wins(result, final), ""]  # fmt: skip
        out += [
                f"{bench.key} of each hybrid setting on all questions (not held out; the "
                "shape of the optimum):", "",
                *(line for lexer in LEXERS for line in [*grid(result, lexer), ""])]  # fmt: skip
    if len(results) > 1:
        out += ["## One setting for both benchmarks, held out", "",
                "A default must win on every benchmark: each half of every benchmark's "
                "questions chooses the hybrid setting with the largest smallest gain over "
                "dense, which is then reported on the other halves:", "",
                *joint(results), ""]  # fmt: skip
    return "\n".join([*out, costs])


def main(argv: list[str] | None = None) -> int:
    """Run both benchmarks (or the smoke pass) and write the results."""
    parser = argparse.ArgumentParser(prog="python -m bench.hybrid")
    parser.add_argument("--bench", action="append", choices=tuple(BENCHES))
    parser.add_argument("--smoke", action="store_true", help="20 code questions, no file")
    parser.add_argument("--cache", type=Path, default=ROOT / ".fissure" / "cache")
    parser.add_argument("--out", type=Path, default=RESULT)
    parser.add_argument("--costs", type=Path, help="Markdown of bench.hybrid_costs to append")
    parser.add_argument("--embedder", default="minilm", help="hashing: a model-free smoke pass")
    args = parser.parse_args(argv)
    if not CODE.is_file():
        from fissure.eval.codelookup import main as build

        build([str(CODE.parent)])
    embedder = cast(Embedder, CachedEmbedder(load_embedder(args.embedder), args.cache))
    started = time.perf_counter()
    names = ["code"] if args.smoke else (args.bench or list(BENCHES))
    results = [run_bench(BENCHES[n], embedder, 20 if args.smoke else None) for n in names]
    dump = ROOT / ".fissure" / "eval" / ("hybrid-smoke.json" if args.smoke else "hybrid.json")
    dump.parent.mkdir(parents=True, exist_ok=True)
    dump.write_text(json.dumps({r["bench"].key + " " + r["bench"].name: {
        "|".join(map(str, k)): {m: v.scores[m] for m, _ in r["bench"].columns}
        for k, v in r["rows"].items()} for r in results}), encoding="utf-8")  # fmt: skip
    costs = args.costs.read_text(encoding="utf-8") if args.costs else ""
    text = render(results, time.perf_counter() - started, costs)
    if args.smoke:
        print(text)
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
