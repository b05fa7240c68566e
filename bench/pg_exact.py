"""What PostgresStore's exact threshold costs, and what its HNSW path finds past it.

    .venv/bin/python -m bench.pg_exact                     # 20k, 100k, 200k (minutes)
    .venv/bin/python -m bench.pg_exact --sizes 3000 --queries 10 --ef 40,100   # smoke

On the data of ``bench/scale.py``'s store part (random 384-wide unit vectors, each query a
stored vector plus noise, seed 7), for each size: the median and p95 time of an exact
search (a scan, what PostgresStore does for a namespace of up to ``exact_below`` chunks)
and, with the HNSW index built afterwards, pgvector's recall@10 and time at each
``ef_search`` (for sizes up to ``--index-up-to``: building the index over 100k random
vectors takes many minutes on two cores). Rows are loaded without the index (then it is
built once), which is far faster than the pipeline's upserts and does not change what a
query sees. Writes
``bench/results/pg-exact.md`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.scale import store_data

RESULTS = Path(__file__).parent / "results" / "pg-exact.md"


def measure(dsn: str, size: int, queries: int, efs: list[int]) -> list[dict[str, Any]]:
    """Exact and HNSW query times and recall@10 for ``size`` chunks."""
    from fissure.store.postgres import PostgresStore

    chunks, vectors, asked, truth, ids = store_data(size, queries, np.random.default_rng(7))
    namespace = f"exact{size}"
    store = PostgresStore(dsn, namespace, exact_below=size)
    store.upsert(chunks[:1], vectors[:1])  # makes the tables and the index …
    with store.db.run() as conn:  # … which is dropped for the load and built after it
        conn.execute("DROP INDEX IF EXISTS fissure_chunks_hnsw_384")
    for at in range(1, size, 2000):
        store.upsert(chunks[at : at + 2000], vectors[at : at + 2000])
    try:
        rows = [_queries(store, asked, truth, ids, "exact scan", size)]
        print(json.dumps(rows[-1]), flush=True)
        if efs:
            rows += _hnsw(store, asked, truth, ids, efs)
    finally:
        with store.db.run() as conn:  # the next size gets the same fresh start
            conn.execute("DELETE FROM fissure_chunks WHERE namespace = %s", (namespace,))
        store.close()
    return rows


def _hnsw(store: Any, asked: np.ndarray, truth: np.ndarray, ids: np.ndarray,
          efs: list[int]) -> list[dict[str, Any]]:  # fmt: skip
    """Build the HNSW index over the loaded rows, then query through it at each ef."""
    from fissure.store.pg_schema import ensure_vector_index
    from fissure.store.postgres import PostgresStore

    started = time.perf_counter()
    ensure_vector_index(store.db, "fissure_chunks", 384)
    build = time.perf_counter() - started
    rows = []
    for ef in efs:
        hnsw = PostgresStore(store.db.dsn, store.namespace, exact_below=0, ef_search=ef)
        rows.append({**_queries(hnsw, asked, truth, ids, f"hnsw ef_search {ef}", len(ids)),
                     "index_build_s": build})  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
        hnsw.close()
    return rows


def _queries(store: Any, asked: np.ndarray, truth: np.ndarray, ids: np.ndarray, label: str,
             size: int) -> dict[str, Any]:  # fmt: skip
    times, recall = [], []
    store.query(asked[0], 10)  # warm the cache: the first scan reads the table from disk
    for q, want in zip(asked, truth, strict=True):
        started = time.perf_counter()
        hits = store.query(q, 10)
        times.append(time.perf_counter() - started)
        recall.append(len({h.chunk_id for h in hits} & set(ids[want])) / 10)
    return {"size": size, "search": label, "ms_median": 1000 * float(np.median(times)),
            "ms_p95": 1000 * float(np.percentile(times, 95)),
            "recall_at_10": float(np.mean(recall))}  # fmt: skip


def report(rows: list[dict[str, Any]], command: str, load: list[float]) -> str:
    """The rows as Markdown."""
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = ["# PostgresStore: the exact threshold's cost and HNSW recall past it", "",
             f"`{command}` on {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}, {when}; load average before {load[0]}, after "
             f"{load[1]}. Random 384-wide unit vectors (the worst case for an HNSW graph), "
             "queries a stored vector plus noise, k = 10, collapse on (the CLI's query).", "",
             "| chunks | search | ms (median) | ms (p95) | recall@10 | index build s |",
             "|---:|---|---:|---:|---:|---:|"]  # fmt: skip
    for r in rows:
        build = f"{r['index_build_s']:.0f}" if "index_build_s" in r else ""
        lines.append(f"| {r['size']:,} | {r['search']} | {r['ms_median']:.1f} | "
                     f"{r['ms_p95']:.1f} | {r['recall_at_10']:.3f} | {build} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.pg_exact")
    parser.add_argument("--sizes", default="20000,100000,200000")
    parser.add_argument("--index-up-to", type=int, default=20_000,
                        help="build the HNSW index and query it only up to this size")  # fmt: skip
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--ef", default="100,400,1000",
                        help="hnsw.ef_search values ('' for none: no index built)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    from fissure.store.pg_local import temporary_postgres

    before = round(os.getloadavg()[0], 1)
    rows: list[dict[str, Any]] = []
    with temporary_postgres() as dsn:
        for size in (int(s) for s in args.sizes.split(",")):
            efs = [int(e) for e in args.ef.split(",") if e] if size <= args.index_up_to else []
            rows += measure(dsn, size, args.queries, efs)
    command = " ".join(["python -m bench.pg_exact", *sys.argv[1:]])
    text = report(rows, command, [before, round(os.getloadavg()[0], 1)])
    args.out.write_text(text, encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
