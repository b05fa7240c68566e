"""Scaling benchmark: the Ray engine and the PostgreSQL store.

    .venv/bin/python -m bench.scale               # full run, writes bench/results/scale.md
    .venv/bin/python -m bench.scale --smoke       # tiny sizes, to prove it works (minutes)
    .venv/bin/python -m bench.scale --only parse  # part 1 alone (~2 min on a quiet machine);
                                                  # the other parts' figures are kept
    .venv/bin/python -m bench.scale --only parse --copies 5 --out /tmp/p.md   # quick look

Everything runs inside a network namespace with only loopback (``unshare --net``, see
``tests/ingest/ray_cluster.py``), with a local PostgreSQL (``fissure.store.pg_local``):

1. parse + split throughput on Ray with 1 and 2 parse actors of one CPU each, on a cluster
   of two nodes with one CPU each (the same corpus and the same batches; only the chunking
   stage runs), and the CPU each kind of process spent per document (``bench/cpu_roles.py``:
   what scales with the actors, and the driver's and Ray's own share of the two cores);
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


def parse_scaling(tasks: list[Any], options: Any, address: str,
                  batch: int | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Docs and chunks per second through the chunking stage alone, 1 then 2 actors, with
    the CPU seconds each kind of process spent (:mod:`bench.cpu_roles`). Both runs use the
    same batches: ``batch`` documents each, by default the engine's batches for 2 actors."""
    import ray

    from bench.cpu_roles import CpuByRole
    from fissure.ingest.ray_engine import RayEngine, batches, outcomes, quiet

    rows = []
    ray.init(address=address, log_to_driver=False)
    quiet(ray, False)  # as a run of the engine sets Ray Data up
    try:
        for workers in (1, 2):
            engine = RayEngine(parse_workers=workers, docs_per_batch=batch, elastic=False)
            calls = (-(-len(tasks) // batch) if batch
                     else len(batches(tasks, 2, engine.batch_bytes)))  # fmt: skip
            with CpuByRole() as cpu:
                data = engine.dataset(tasks, actors=2)
                started = time.perf_counter()
                first = None
                docs = chunks = 0
                for outcome in outcomes(engine.chunking(data, options)):
                    if first is None:
                        first = time.perf_counter() - started
                        cpu.mark()
                    docs += 1
                    chunks += len(outcome.chunks)
                wall = time.perf_counter() - started
            rows.append({"workers": workers, "docs": docs, "chunks": chunks, "wall": wall,
                         "first_result": first or 0.0, "batches": calls,
                         "docs_per_batch": round(len(tasks) / calls, 1),
                         "cpu": cpu.totals(),
                         "cpu_steady": cpu.totals(since_mark=True)})  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)
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
        chunks, vectors, asked, truth, ids = store_data(size, queries, rng)
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


def store_data(size: int, queries: int, rng: np.random.Generator) -> tuple[Any, ...]:
    """The store part's data: ``size`` chunks, their random unit vectors (384 wide),
    ``queries`` queries (a stored vector plus noise), each query's true top 10 (row
    numbers) and the chunk ids."""
    chunks = _chunks(size)
    vectors = _unit(rng.standard_normal((size, 384)))
    asked = _unit(vectors[rng.integers(0, size, queries)] + 0.5 * _unit(
        rng.standard_normal((queries, 384))))  # fmt: skip
    truth = np.argsort(-(asked @ vectors.T), axis=1)[:, :10]
    return chunks, vectors, asked, truth, np.array([c.chunk_id for c in chunks])


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
    """The results as Markdown (the parts that have figures)."""
    lines = ["# Scaling: the Ray engine and the PostgreSQL store", ""]
    if smoke:
        lines += ["**SMOKE RUN** — tiny sizes on a shared, loaded machine, to prove the bench "
                  "works. These figures are not throughput measurements; run the full "
                  "command on a quiet machine.", ""]  # fmt: skip
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines += [f"`{command}` on {platform.machine()}, {os.cpu_count()} cores, Python "
              f"{platform.python_version()}, {when}; load average before "
              f"{results['load_before']}, after {results['load_after']}.", ""]  # fmt: skip
    kept = {p: c for p, c in results.get("commands", {}).items() if c != command and p in results}
    if kept:
        lines += ["Kept from earlier runs: " + "; ".join(f"{p}: `{c}`" for p, c in kept.items())
                  + ".", ""]  # fmt: skip
    if "parse" in results:
        lines += _parse_section(results["parse"])
    if results.get("e2e"):
        lines += _e2e_section(results["e2e"])
    if "store" in results:
        lines += _store_section(results["store"])
    return "\n".join(lines)


def _parse_section(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["## Parse + split on Ray (two nodes of one CPU each)", "",
             "| parse actors | docs | chunks | docs per call | wall s | docs/s | chunks/s | "
             "first result s |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for r in rows:
        lines.append(f"| {r['workers']} | {r['docs']} | {r['chunks']} | "
                     f"{r.get('docs_per_batch', 4)} | {r['wall']:.1f} | "
                     f"{r['docs'] / r['wall']:.1f} | {r['chunks'] / r['wall']:.0f} | "
                     f"{r['first_result']:.1f} |")  # fmt: skip
    one, two = rows
    lines += ["", f"Speed-up with 2 actors: **{_steady(two) / _steady(one):.2f}x** after the "
              f"first result ({one['wall'] / two['wall']:.2f}x in wall time, which includes "
              "starting the actors and their worker processes); target >= 1.8x on a quiet "
              "2-core machine.", ""]  # fmt: skip
    if all("cpu_steady" in r for r in rows):
        lines += _cpu_table(rows)
    return lines


def _cpu_table(rows: list[dict[str, Any]]) -> list[str]:
    """CPU per document by kind of process: in all, and once the first result is out."""

    def per_doc(r: dict[str, Any], key: str, name: str | None) -> str:
        docs = r["docs"] if key == "cpu" else max(1, r["docs"] - r["docs_per_batch"])
        seconds = sum(r[key].values()) if name is None else r[key].get(name, 0.0)
        return f"{1000 * seconds / docs:.2f}"

    two = rows[-1]
    roles = sorted({k for r in rows for k in r["cpu"]}, key=lambda k: -two["cpu"].get(k, 0))
    head = [f"{r['workers']} actor(s) {w}" for w in ("all", "after first") for r in rows]
    lines = ["CPU milliseconds per document, by process (`bench/cpu_roles.py`): over the "
             "whole run (actor and worker start-up included), and after the first result:",
             "", "| process | " + " | ".join(head) + " |",
             "|---|" + "---:|" * len(head)]  # fmt: skip
    for name in [*roles, None]:
        cells = [per_doc(r, key, name) for key in ("cpu", "cpu_steady") for r in rows]
        lines.append(f"| {name or '**all**'} | " + " | ".join(cells) + " |")
    return lines + [""]


def _e2e_section(e2e: dict[str, Any]) -> list[str]:
    local, ray_ = e2e["local"], e2e["ray"]
    lines = ["## End to end on one node (MiniLM, Chroma folder)", "",
             "| engine | docs | chunks | wall s | chunks/s |",
             "|---|---:|---:|---:|---:|"]  # fmt: skip
    for name, r in (("local (1 worker + embedding thread)", local),
                    ("ray (1 parse actor + 1 embedding actor)", ray_)):  # fmt: skip
        lines.append(f"| {name} | {r['docs']} | {r['chunks']} | {r['wall']:.1f} | "
                     f"{r['chunks'] / r['wall']:.1f} |")  # fmt: skip
    overhead = 100 * (ray_["wall"] / local["wall"] - 1)
    return lines + ["", f"Ray's overhead on one node: {overhead:+.0f}% of the local "
                    "engine's wall time (joining the cluster and starting the actors "
                    "included).", ""]  # fmt: skip


def _store_section(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["## Store writes and queries (384-wide vectors, k = 10)", "",
             "| chunks | store | writes/s | query ms (median) | query ms (p95) | recall@10 |",
             "|---:|---|---:|---:|---:|---:|"]  # fmt: skip
    for r in rows:
        lines.append(f"| {r['size']:,} | {r['store']} | {r['write_per_s']:.0f} | "
                     f"{r['query_ms_median']:.1f} | {r['query_ms_p95']:.1f} | "
                     f"{r['recall_at_10']:.3f} |")  # fmt: skip
    return lines + ["", "Writes: upserts of 256 chunks (the pipeline's batch) into an empty "
                    "store; the HNSW index is kept up to date as rows arrive in both stores. "
                    "\"postgres exact\" is the same namespace searched by a scan (what "
                    "PostgresStore does for namespaces of up to `exact_below` = 200,000 "
                    "chunks; \"postgres hnsw\" is its path past that).", ""]  # fmt: skip


def _steady(row: dict[str, Any]) -> float:
    """Documents per second once the first result is out (actors started)."""
    return (row["docs"] - 1) / max(1e-9, row["wall"] - row["first_result"])


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scale")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (proves it works)")
    parser.add_argument("--only", choices=PARTS, action="append",
                        help="run only this part (repeatable); the other parts' figures are "
                             "kept from the JSON beside --out")  # fmt: skip
    parser.add_argument("--copies", type=int, help="copies of the parse corpus (67 files each)")
    parser.add_argument("--batch", type=int, help="documents per parse call (default: the "
                        "engine's choice for 2 actors), the same for 1 and 2 actors")  # fmt: skip
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    from tests.ingest.ray_cluster import reexec_in_loopback_namespace

    reexec_in_loopback_namespace(["-m", "bench.scale", *sys.argv[1:]])
    plan = dict(SMOKE if args.smoke else FULL, batch=args.batch)
    if args.copies is not None:
        plan["copies"] = args.copies
    parts = args.only or list(PARTS)
    results = _kept(args.out, parts)
    results["load_before"] = [round(x, 1) for x in os.getloadavg()]
    work = Path(tempfile.mkdtemp(prefix="fissure-bench-"))
    try:
        for part in parts:
            results[part] = RUNNERS[part](plan, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["load_after"] = [round(x, 1) for x in os.getloadavg()]
    command = " ".join(["python -m bench.scale", *sys.argv[1:]]).replace(f" --out {args.out}", "")
    results.setdefault("commands", {}).update({part: command for part in parts})
    text = report(results, command, args.smoke) + "\n" + _notes(args.out)
    args.out.write_text(text, encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(args.out.read_text())


def _notes(out: Path) -> str:
    """The hand-written reading of the figures (``## What the figures say …``) in ``out``,
    kept below the regenerated tables: re-read it against the new figures."""
    old = out.read_text(encoding="utf-8") if out.exists() else ""
    at = old.find("\n## What the figures say")
    return old[at + 1 :] if at >= 0 else ""


def _kept(out: Path, parts: list[str]) -> dict[str, Any]:
    """The figures of the parts not run now, from the last run's JSON."""
    saved = out.with_suffix(".json")
    if len(parts) == len(PARTS) or not saved.exists():
        return {}
    old = json.loads(saved.read_text())
    kept = {k: v for k, v in old.items() if k in PARTS and k not in parts}
    said = old.get("commands", {})
    kept["commands"] = {p: said.get(p, "an earlier python -m bench.scale") for p in kept}
    return kept


def _run_parse(plan: dict[str, Any], work: Path) -> list[dict[str, Any]]:
    from tests.ingest.ray_cluster import LocalCluster

    from fissure.config import ChunkSettings
    from fissure.ingest import Options

    cluster = LocalCluster(cpus=1)
    try:
        cluster.start(nodes=2)
        options = Options(settings=ChunkSettings())
        return parse_scaling(_tasks(plan["copies"]), options, cluster.address, plan["batch"])
    finally:
        cluster.stop()


def _run_e2e(plan: dict[str, Any], work: Path) -> dict[str, Any]:
    from tests.ingest.ray_cluster import LocalCluster

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
        return end_to_end(corpus, cluster.address, work)
    finally:
        cluster.stop()


def _run_store(plan: dict[str, Any], work: Path) -> list[dict[str, Any]]:
    from fissure.store.pg_local import temporary_postgres

    with temporary_postgres() as dsn:
        return store_speed(dsn, plan["sizes"], plan["queries"], work)


PARTS = ("parse", "e2e", "store")
RUNNERS = {"parse": _run_parse, "e2e": _run_e2e, "store": _run_store}


if __name__ == "__main__":
    main()
