"""Chunks per second of the store step alone: Chroma upserts of distinct and identical vectors.

The hostile 18.8 MB CSV (tests/hostile, ``csv_unclosed_quote``) is thousands of chunks with
the same text, so the same vector: Chroma's HNSW insertion explores the whole island of
copies for each new copy (see docs/store.md, "Why HNSW loses them"), and the store step runs
at a fraction of its rate on distinct vectors. This measures the raw Chroma collection with
fissure's settings (``fissure.store.chroma.HNSW``) and variants of them, so that a change
of index parameters can be judged by its write rate here and its recall in docs/store.md.

    python -m bench.store_write                 # full: 6,945 rows (the 2 MB cut of the CSV)
    python -m bench.store_write --smoke         # 300 rows, seconds

Needs a quiet machine for the full run; the smoke run only proves it works.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from fissure.store.chroma import HNSW

VARIANTS: dict[str, dict[str, Any]] = {
    "fissure (max_neighbors 32)": dict(HNSW),
    "chroma default (16)": {"space": "cosine"},
    "ef_construction 10": {**HNSW, "ef_construction": 10},
}


def rate(folder: Path, hnsw: dict[str, Any], vectors: np.ndarray, text: str) -> float:
    """Rows per second of upserting ``vectors`` (with ``text`` each) in max-size batches."""
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(folder), settings=Settings(anonymized_telemetry=False)
    )
    collection = client.get_or_create_collection(
        "bench",
        embedding_function=None,
        configuration={"hnsw": hnsw},  # type: ignore[arg-type]
    )
    batch = int(client.get_max_batch_size())
    started = time.perf_counter()
    for at in range(0, len(vectors), batch):
        part = vectors[at : at + batch]
        collection.upsert(ids=[str(i) for i in range(at, at + len(part))], embeddings=part,
                          documents=[text] * len(part))  # fmt: skip
    return len(vectors) / (time.perf_counter() - started)


def main() -> None:
    """Print a Markdown table: variant × (distinct, identical) rows per second."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=6945)
    parser.add_argument("--dim", type=int, default=256, help="256: the hashing embedder")
    parser.add_argument("--smoke", action="store_true", help="300 rows")
    args = parser.parse_args()
    rows = 300 if args.smoke else args.rows
    rng = np.random.default_rng(0)
    distinct = rng.standard_normal((rows, args.dim)).astype(np.float32)
    same = np.repeat(distinct[:1], rows, axis=0)
    text = "x,y,z\n" * 240  # a chunk of the hostile CSV
    print(f"| Chroma HNSW ({rows} rows, dim {args.dim}) | distinct rows/s | identical rows/s |")
    print("|---|---|---|")
    for name, hnsw in VARIANTS.items():
        got = []
        for vectors in (distinct, same):
            folder = Path(tempfile.mkdtemp(prefix="fissure-store-write-"))
            try:
                got.append(rate(folder, hnsw, vectors, text))
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        print(f"| {name} | {got[0]:.0f} | {got[1]:.0f} |", flush=True)


if __name__ == "__main__":
    main()
