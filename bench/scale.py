"""Scaling benchmark: the Ray engine and the PostgreSQL store.

    .venv/bin/python -m bench.scale            # full run, writes bench/results/scale.md
    .venv/bin/python -m bench.scale --smoke    # tiny sizes, to prove it works (minutes)

Everything runs inside a network namespace with only loopback (``unshare --net``, see
``tests/ingest/ray_cluster.py``), with a local PostgreSQL (``fissure.store.pg_local``):

1. parse + split throughput on Ray with 1 and 2 parse actors of one CPU each, on a cluster
   of two nodes with one CPU each (the same corpus; only the chunking stage runs);
2. end to end (MiniLM, a Chroma folder): the Ray engine on one node of two CPUs against the
   local engine on the same machine (one parsing worker + the embedding thread);
3. store writes (upserts of 256 chunks, the pipeline's batch) and queries (k = 10) against
   PostgreSQL (HNSW and exact scan) and the embedded Chroma, at 10k and 100k chunks of
   384-wide vectors, with recall@10 against an exact numpy search.

Timings on a shared machine are not comparable between runs; ratios inside one run are
the figures to read, and only on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "scale.md"
FULL = {"copies": 20, "sizes": (10_000, 100_000), "queries": 200, "e2e_copies": 1}
SMOKE = {"copies": 1, "sizes": (1_000, 3_000), "queries": 20, "e2e_copies": 0}


def parse_scaling(tasks: list[Any], options: Any, address: str) -> list[dict[str, Any]]:
    """Docs and chunks per second through the chunking stage alone, 1 then 2 actors."""
    import ray

    from fissure.ingest.ray_engine import RayEngine

    rows = []
    ray.init(address=address, log_to_driver=False)
    try:
        for workers in (1, 2):
            engine = RayEngine(parse_workers=workers, docs_per_batch=4, elastic=False)
            data = ray.data.from_items([{"source": t.source, "data": t.data} for t in tasks],
                                       override_num_blocks=max(1, len(tasks) // 4))  # fmt: skip
            started = time.perf_counter()
            first = None
            docs = chunks = 0
            for row in engine.chunking(data, options).iter_rows():
                outcome = pickle.loads(row["outcome"])
                first = first or time.perf_counter() - started
                docs += 1
                chunks += len(outcome.chunks)
            wall = time.perf_counter() - started
            rows.append({"workers": workers, "docs": docs, "chunks": chunks, "wall": wall,
                         "first_result": first or 0.0})  # fmt: skip
    finally:
        ray.shutdown()
    return rows


def end_to_end(corpus: Path, address: str, work: Path) -> dict[str, Any]:
    """The same corpus into two Chroma folders: the local engine, then the Ray engine."""
    from functools import partial

    from fissure.embed import load_embedder
    from fissure.ingest import Options, ingest, open_source
    from fissure.ingest.ray_engine import RayEngine

    model = load_embedder("minilm")
    out = {}
    for name in ("local", "ray"):
        engine = (RayEngine(address=address, make_embedder=partial(load_embedder, "minilm"))
                  if name == "ray" else None)  # fmt: skip
        started = time.perf_counter()
        summary = ingest(open_source(str(corpus)), work / name, model,
                         Options(workers=1), engine=engine)  # fmt: skip
        out[name] = {"wall": time.perf_counter() - started, "chunks": summary.chunks,
                     "docs": summary.processed, "embed": summary.timings.embed,
                     "parse": summary.timings.parse}  # fmt: skip
    return out


def store_speed(dsn: str, sizes: tuple[int, ...], queries: int, work: Path) -> list[dict]:
    """Upserts and queries at each size, PostgreSQL (HNSW, exact) and Chroma."""
    from fissure.store.chroma import ChromaStore
    from fissure.store.postgres import PostgresStore

    rows = []
    rng = np.random.default_rng(7)
    for size in sizes:
        chunks = _chunks(size)
        vectors = _unit(rng.standard_normal((size, 384)))
        asked = _unit(vectors[rng.integers(0, size, queries)] + 0.5 * _unit(
            rng.standard_normal((queries, 384))))  # fmt: skip
        truth = np.argsort(-(asked @ vectors.T), axis=1)[:, :10]
        ids = np.array([c.chunk_id for c in chunks])
        stores: dict[str, Any] = {
            "postgres": PostgresStore(dsn, f"bench{size}", exact_below=0),
            "chroma": ChromaStore(work / f"chroma{size}"),
        }
        for name, store in stores.items():
            started = time.perf_counter()
            for at in range(0, size, 256):
                store.upsert(chunks[at : at + 256], vectors[at : at + 256])
            write = time.perf_counter() - started
            kinds = [(name + " hnsw", store)]
            if name == "postgres":
                kinds.append(("postgres exact", PostgresStore(dsn, f"bench{size}",
                                                              exact_below=size)))  # fmt: skip
            for label, searcher in kinds:
                times, recall = [], []
                for q, want in zip(asked, truth, strict=True):
                    started = time.perf_counter()
                    hits = searcher.query(q, 10)
                    times.append(time.perf_counter() - started)
                    recall.append(len({h.chunk_id for h in hits} & set(ids[want])) / 10)
                rows.append({"size": size, "store": label, "write_per_s": size / write,
                             "query_ms_median": 1000 * float(np.median(times)),
                             "query_ms_p95": 1000 * float(np.percentile(times, 95)),
                             "recall_at_10": float(np.mean(recall))})  # fmt: skip
    return rows


def _chunks(n: int) -> list[Any]:
    from fissure.types import Chunk

    return [Chunk(f"chunk {i} " + "word " * 40, 0, 10, f"d{i // 10}", i % 10, 42, (1, 3),
                  "structural", source=f"doc{i // 10}.md") for i in range(n)]  # fmt: skip


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _tasks(copies: int) -> list[Any]:
    from bench.ingest import corpus
    from fissure.ingest.workers import Task

    root = corpus(("asyncio", "email", "json"), copies=max(1, copies))
    paths = sorted(root.rglob("*.py"))
    if copies == 0:  # smoke: a slice
        paths = paths[:24]
    return [Task(str(p), p.read_bytes()) for p in paths]


def report(results: dict[str, Any], command: str, smoke: bool) -> str:
    """The results as Markdown."""
    lines = ["# Scaling: the Ray engine and the PostgreSQL store", ""]
    if smoke:
        lines += ["**SMOKE RUN** — tiny sizes on a shared, loaded machine, to prove the bench "
                  "works. These figures are not throughput measurements; run the full "
                  "command on a quiet machine.", ""]  # fmt: skip
    lines += [f"`{command}` on {platform.machine()}, {os.cpu_count()} cores, Python "
              f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
              f"load average before {results['load_before']}, after {results['load_after']}.", "",
              "## Parse + split on Ray (two nodes of one CPU each)", "",
              "| parse actors | docs | chunks | wall s | docs/s | chunks/s | first result s |",
              "|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for r in results["parse"]:
        lines.append(f"| {r['workers']} | {r['docs']} | {r['chunks']} | {r['wall']:.1f} | "
                     f"{r['docs'] / r['wall']:.1f} | {r['chunks'] / r['wall']:.0f} | "
                     f"{r['first_result']:.1f} |")  # fmt: skip
    one, two = results["parse"]
    lines += ["", f"Speed-up with 2 actors: **{_steady(two) / _steady(one):.2f}x** after the "
              f"first result ({one['wall'] / two['wall']:.2f}x in wall time, which includes "
              "starting the actors and their worker processes); target >= 1.8x on a quiet "
              "2-core machine.", ""]  # fmt: skip
    e2e = results.get("e2e")
    if e2e:
        local, ray_ = e2e["local"], e2e["ray"]
        lines += [
            "## End to end on one node (MiniLM, Chroma folder)",
            "",
            "| engine | docs | chunks | wall s | chunks/s |",
            "|---|---:|---:|---:|---:|",
        ]
        for name, r in (("local (1 worker + embedding thread)", local),
                        ("ray (1 parse actor + 1 embedding actor)", ray_)):  # fmt: skip
            lines.append(f"| {name} | {r['docs']} | {r['chunks']} | {r['wall']:.1f} | "
                         f"{r['chunks'] / r['wall']:.1f} |")  # fmt: skip
        overhead = 100 * (ray_["wall"] / local["wall"] - 1)
        lines += ["", f"Ray's overhead on one node: {overhead:+.0f}% of the local engine's wall "
                  "time (joining the cluster and starting the actors included).", ""]  # fmt: skip
    lines += ["## Store writes and queries (384-wide vectors, k = 10)", "",
              "| chunks | store | writes/s | query ms (median) | query ms (p95) | recall@10 |",
              "|---:|---|---:|---:|---:|---:|"]  # fmt: skip
    for r in results["store"]:
        lines.append(f"| {r['size']:,} | {r['store']} | {r['write_per_s']:.0f} | "
                     f"{r['query_ms_median']:.1f} | {r['query_ms_p95']:.1f} | "
                     f"{r['recall_at_10']:.3f} |")  # fmt: skip
    lines += ["", "Writes: upserts of 256 chunks (the pipeline's batch) into an empty store; "
              "the HNSW index is kept up to date as rows arrive in both stores. \"postgres "
              "exact\" is the same namespace searched by a scan (what PostgresStore does for "
              "namespaces of up to `exact_below` = 10,000 chunks).", ""]  # fmt: skip
    return "\n".join(lines)


def _steady(row: dict[str, Any]) -> float:
    """Documents per second once the first result is out (actors started)."""
    return (row["docs"] - 1) / max(1e-9, row["wall"] - row["first_result"])


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scale")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (proves it works)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    from tests.ingest.ray_cluster import LocalCluster, reexec_in_loopback_namespace

    reexec_in_loopback_namespace(["-m", "bench.scale", *sys.argv[1:]])
    from fissure.config import ChunkSettings
    from fissure.ingest import Options
    from fissure.store.pg_local import temporary_postgres

    plan = SMOKE if args.smoke else FULL
    results: dict[str, Any] = {"load_before": [round(x, 1) for x in os.getloadavg()]}
    work = Path(tempfile.mkdtemp(prefix="fissure-bench-"))
    try:
        cluster = LocalCluster(cpus=1)
        try:
            cluster.start(nodes=2)
            options = Options(settings=ChunkSettings())
            results["parse"] = parse_scaling(_tasks(plan["copies"]), options, cluster.address)
        finally:
            cluster.stop()
        cluster = LocalCluster(cpus=2)
        try:
            cluster.start(nodes=1)
            if plan["e2e_copies"]:
                from bench.ingest import corpus as stdlib_corpus

                corpus = stdlib_corpus(("asyncio", "email", "json"), plan["e2e_copies"])
            else:
                corpus = work / "e2e"
                for task in _tasks(0)[:12]:
                    target = corpus / Path(task.source).name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(task.data)
            results["e2e"] = end_to_end(corpus, cluster.address, work)
        finally:
            cluster.stop()
        with temporary_postgres() as dsn:
            results["store"] = store_speed(dsn, plan["sizes"], plan["queries"], work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["load_after"] = [round(x, 1) for x in os.getloadavg()]
    command = "python -m bench.scale" + (" --smoke" if args.smoke else "")
    args.out.write_text(report(results, command, args.smoke) + "\n", encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
