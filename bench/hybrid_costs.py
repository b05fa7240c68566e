"""What each retrieval mode costs, through the product: index size, ingest time, latency.

    python -m bench.hybrid_costs --out .fissure/hybrid-costs.md    # both benchmarks
    python -m bench.hybrid_costs --smoke                           # 20 questions, code only

Ingests a benchmark's corpus folder with fissure's defaults (``fissure ingest`` settings,
MiniLM through the embedding cache, so ingest time is chunking and storing, not
embedding), then asks every question through ``ChromaStore.query`` in each mode, ``runs``
times, and reports the medians over runs of p50 and p99. The query's own embedding (a
dense or hybrid query embeds the question; lexical needs no model) is timed apart.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, cast

import numpy as np

from fissure.config import ChunkSettings
from fissure.embed import CachedEmbedder, load_embedder
from fissure.embed.protocol import Embedder
from fissure.eval.dataset import load_dataset
from fissure.ingest import Options, ingest, open_source
from fissure.store import ChromaStore
from fissure.store import lexical as lexical_module
from fissure.store.fusion import MODES

ROOT = Path(__file__).resolve().parent.parent
BENCHES = {
    "chroma": (Path("/work/shared/datasets/chroma-chunking-eval"), "corpora"),
    "code": (ROOT / ".fissure" / "bench" / "codelookup" / "queries.jsonl", "corpus"),
}


def folder_bytes(path: Path, only: str | None = None) -> int:
    """Bytes of the files under ``path`` (whose name starts with ``only``, if given)."""
    return sum(p.stat().st_size for p in path.rglob("*")
               if p.is_file() and (only is None or p.name.startswith(only)))  # fmt: skip


def timed_ingest(corpus: Path, store: Path, embedder: Embedder) -> tuple[float, float, int]:
    """Ingest ``corpus``; returns total seconds, seconds inside the lexical index's writes
    and the chunk count."""
    spent = [0.0]
    original = lexical_module.LexicalIndex.add

    def add(self: Any, *args: Any) -> None:
        started = time.perf_counter()
        original(self, *args)
        spent[0] += time.perf_counter() - started

    lexical_module.LexicalIndex.add = add  # type: ignore[method-assign]
    try:
        options = Options(settings=ChunkSettings(), workers=1, timeout=3600, memory_mb=None,
                          progress=False)  # fmt: skip
        started = time.perf_counter()
        summary = ingest(open_source(str(corpus)), store, embedder, options)
        return time.perf_counter() - started, spent[0], summary.chunks
    finally:
        lexical_module.LexicalIndex.add = original  # type: ignore[method-assign]


def latencies(store: ChromaStore, questions: list[str], vectors: np.ndarray, mode: str,
              runs: int) -> tuple[float, float]:  # fmt: skip
    """Medians over ``runs`` of the p50 and p99 milliseconds of one query in ``mode``."""
    p50, p99 = [], []
    for _ in range(runs):
        times = []
        for text, vector in zip(questions, vectors, strict=True):
            started = time.perf_counter()
            store.query(None if mode == "lexical" else vector, 5, mode=mode, text=text)
            times.append(1000 * (time.perf_counter() - started))
        p50.append(float(np.percentile(times, 50)))
        p99.append(float(np.percentile(times, 99)))
    return statistics.median(p50), statistics.median(p99)


def embed_latency(embedder: Embedder, questions: list[str]) -> tuple[float, float]:
    """p50 and p99 milliseconds of embedding one question (no cache)."""
    times = []
    for text in questions:
        started = time.perf_counter()
        embedder.embed([text])
        times.append(1000 * (time.perf_counter() - started))
    return float(np.percentile(times, 50)), float(np.percentile(times, 99))


def measure(name: str, runs: int, limit: int | None, cache: Path,
            embedder: str = "minilm") -> list[str]:  # fmt: skip
    """One benchmark's cost table: dense, then lexical and hybrid with each tokenizer."""
    path, corpus_dir = BENCHES[name]
    dataset = load_dataset(path)
    questions = [q.query for q in dataset.questions][:limit]
    model = load_embedder(embedder)
    cached = cast(Embedder, CachedEmbedder(model, cache))
    root = Path(tempfile.mkdtemp(prefix="fissure-hybrid-costs-"))
    try:
        corpus = path.parent / corpus_dir if path.is_file() else path / corpus_dir
        total, lexical_s, chunks = timed_ingest(corpus, root, cached)
        vectors = cached.embed(questions)
        embed50, embed99 = embed_latency(model, questions)
        rows = []
        default = lexical_module.DEFAULT_TOKENIZER
        for lexer in (default, *sorted(set(lexical_module.TOKENIZERS) - {default})):
            folder = root / "chroma"
            if lexer != default:  # a fresh file of its own, so its size is its own
                folder = root / f"chroma-{lexer}"
                shutil.copytree(root / "chroma", folder)
                for stale in folder.glob(lexical_module.FILENAME + "*"):
                    stale.unlink()
            store = ChromaStore(folder, lexer=lexer)
            started = time.perf_counter()
            store.lexical()  # the default's was written by ingest; another is built here
            built = lexical_s if lexer == default else time.perf_counter() - started
            store.query(vectors[0], 5, mode="hybrid", text=questions[0])  # open everything
            timings = {mode: latencies(store, questions, vectors, mode, runs)
                       for mode in (MODES if lexer == default else MODES[1:])}  # fmt: skip
            store.lexical().close()  # checkpoints the write-ahead log into the file
            lexical_bytes = folder_bytes(folder, lexical_module.FILENAME)
            dense_bytes = folder_bytes(folder) - lexical_bytes
            sizes = {"dense": dense_bytes, "lexical": lexical_bytes,
                     "hybrid": dense_bytes + lexical_bytes}  # fmt: skip
            for mode, (p50, p99) in timings.items():
                tag = mode if mode == "dense" else f"{mode} ({lexer})"
                extra = "–" if mode == "dense" else f"{built:.2f}"
                rows.append(f"| {tag} | {p50:.1f} | {p99:.1f} | {sizes[mode] / 1e6:.1f} | "
                            f"{extra} |")  # fmt: skip
        load = os.getloadavg()
        return [f"### {name}: {chunks} chunks, {len(questions)} questions", "",
                f"- ingest with the defaults (embeddings cached, so chunking and storing): "
                f"{total:.1f} s, of which {lexical_s:.2f} s writing the lexical index "
                f"({lexical_module.DEFAULT_TOKENIZER})",
                f"- embedding one question (MiniLM, CPU, uncached): p50 {embed50:.1f} ms, "
                f"p99 {embed99:.1f} ms: dense and hybrid pay it, lexical does not",
                f"- load average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}",
                "", "| mode (tokenizer) | store query p50 ms | p99 ms | index on disk MB | "
                "lexical index build s |", "|---|---|---|---|---|", *rows, ""]  # fmt: skip
    finally:
        if isinstance(cached, CachedEmbedder):
            cached.close()
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """Measure and print (or write) the cost tables."""
    parser = argparse.ArgumentParser(prog="python -m bench.hybrid_costs")
    parser.add_argument("--bench", action="append", choices=tuple(BENCHES))
    parser.add_argument("--runs", type=int, default=5, help="passes over the questions")
    parser.add_argument("--smoke", action="store_true", help="20 code questions, 1 run")
    parser.add_argument("--cache", type=Path, default=ROOT / ".fissure" / "cache")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--embedder", default="minilm", help="hashing: a model-free smoke pass")
    args = parser.parse_args(argv)
    names = ["code"] if args.smoke else (args.bench or list(BENCHES))
    parts = ["## Costs per mode (through the product)", "",
             f"`python -m bench.hybrid_costs --runs {args.runs}`: medians over runs of each "
             "run's p50/p99.", ""]  # fmt: skip
    for name in names:
        parts += measure(name, 1 if args.smoke else args.runs, 20 if args.smoke else None,
                         args.cache, args.embedder)  # fmt: skip
    text = "\n".join(parts)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
