"""Query latency of the store's two paths: the exact scan of the copy vs Chroma's HNSW index.

For each size it writes that many random unit vectors (384 wide, MiniLM's) into a fresh
store folder and times, over ``--queries`` random queries:

* ``scan``: :meth:`fissure.store.exact.Rows.scores` plus the top-k selection (the exact
  path without reading texts from Chroma),
* ``exact``: ``ChromaStore.query(search="exact")`` end to end (texts read from Chroma),
* ``index``: ``ChromaStore.query(search="index")`` end to end (up to ``--chroma-max``
  chunks: building Chroma's index costs minutes per 100,000 vectors on two cores),

and the first query of a fresh process's store (``cold``: listing and mapping the copy).
Random vectors are the index's hardest case, so ``recall@5`` of the index against the scan
is a floor. It writes ``results/store.md``.

    python -m bench.store_search                       # 10k, 100k, 1M; index up to 100k
    python -m bench.store_search --sizes 2000 --queries 5 --out .cache/store  # smoke
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from fissure.store import ChromaStore
from fissure.store.exact import Batch
from fissure.store.ranking import id_keys, top, unit_rows

DIM = 384
WRITE = 20_000  # vectors per write


def _fill(folder: Path, n: int, chroma: bool) -> ChromaStore:
    store = ChromaStore(folder)
    rng = np.random.default_rng(0)
    for at in range(0, n, WRITE):
        m = min(WRITE, n - at)
        vectors = unit_rows(rng.standard_normal((m, DIM)).astype(np.float32))
        ids = [f"{i:032x}" for i in range(at, at + m)]
        sources = [f"doc{i // 20}" for i in range(at, at + m)]
        with store._exact.writing():
            store._exact.add(Batch(ids, id_keys(sources), id_keys(ids), vectors))
        for b in range(0, m, 5000) if chroma else ():  # Chroma's records and index
            part = slice(b, b + 5000)
            store._collection.add(ids=ids[part], embeddings=vectors[part],
                                  documents=["x" * 200] * len(ids[part]),
                                  metadatas=[{"source": s} for s in sources[part]])  # fmt: skip
    return store


def _ms(f: object, queries: np.ndarray) -> tuple[str, list[list[str]]]:
    """``"median / fastest"`` milliseconds per query (the fastest is what a quiet machine
    gives: on a shared one the median mostly measures the neighbours), and the results."""
    for q in queries[:3]:
        f(q)  # type: ignore[operator]  # warm: page cache, Chroma's lazy loads
    times, out = [], []
    for q in queries:
        t = time.perf_counter()
        out.append(f(q))  # type: ignore[operator]
        times.append(1000 * (time.perf_counter() - t))
    return f"{statistics.median(times):.1f} / {min(times):.2f}", out


def measure(n: int, queries: int, chroma_max: int, work: Path) -> dict[str, object]:
    """One size's row of the table."""
    folder = work / f"n{n}"
    shutil.rmtree(folder, ignore_errors=True)
    chroma = n <= chroma_max
    started = time.perf_counter()
    _fill(folder, n, chroma)
    built = time.perf_counter() - started
    qs = unit_rows(np.random.default_rng(1).standard_normal((queries, DIM)).astype(np.float32))
    fresh = ChromaStore(folder, exact_max=n)
    t = time.perf_counter()
    rows = fresh._exact.rows()
    cold = 1000 * (time.perf_counter() - t)

    def scan(q: np.ndarray) -> list[str]:
        order = top(rows.scores(q), 5, rows.place)
        return [rows.ids[i].decode() for i in order]

    row: dict[str, object] = {"n": n, "build_s": round(built, 1), "cold_ms": round(cold)}
    row["scan_ms"], scanned = _ms(scan, qs)
    if chroma:
        for path in ("exact", "index"):

            def ask(q: np.ndarray, path: str = path) -> list[str]:
                return [h.chunk_id for h in fresh.query(q, 5, search=path)]

            row[f"{path}_ms"], found = _ms(ask, qs)
        hits = sum(len(set(a) & set(b)) for a, b in zip(scanned, found, strict=True))
        row["recall@5"] = round(hits / (5 * len(qs)), 3)
    row["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    copy = [p.stat().st_size for p in (folder / "fissure-exact").rglob("*") if p.is_file()]
    row["copy_mb"] = round(sum(copy) / 2**20, 1)
    shutil.rmtree(folder, ignore_errors=True)
    return row


def _cell(value: object) -> str:
    return str(value) if value is not None else "–"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--chroma-max", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fissure-store-bench-"))
    lines = [
        "| chunks | scan ms | exact query ms | index query ms | index recall@5 | "
        "first open ms | copy MB | peak RSS MB | build s |",
        "|" + "---|" * 9,
    ]
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            r = measure(n, args.queries, args.chroma_max, work)
            print(r, flush=True)
            cells = [f"{n:,}", *(_cell(r.get(c)) for c in ("scan_ms", "exact_ms", "index_ms")),
                     *(str(r.get(c, "–")) for c in ("recall@5", "cold_ms", "copy_mb", "rss_mb",
                                                    "build_s"))]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    command = "python -m bench.store_search --sizes " + args.sizes
    page = ["# Store query latency: exact scan vs HNSW index", "",
            f"`{command}` (--queries {args.queries}); milliseconds per query as median / "
            "fastest; 384-wide random unit vectors.",
            "", *lines]  # fmt: skip
    (args.out / "store.md").write_text("\n".join(page) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
