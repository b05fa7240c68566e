"""Store-write chunks per second through fissure's writer: one big document and many small ones.

Issue 33 found a 15 MB CSV spending 235 s of a 275 s ingest in the store write (15,726
chunks). This measures the store step alone, as ``fissure ingest`` runs it
(:class:`fissure.ingest.writer.Writer`: pending marks, delete by source, upserts of the
chunks into the store and its exact and lexical copies, the manifest commit), with vectors
made up front so that no embedding is timed:

- one document of ``--chunks`` chunks (15,000; written in slices, see
  ``fissure/ingest/slices.py``), first into an empty store, then again with every chunk's
  text changed (the re-ingest of an edited document: chunk ids hash the offsets, so an edit
  near the top changes them all; the old chunks are deleted, the new ones written);
- ``--docs`` documents (1,000) of 15 chunks, in groups of 256 chunks as ``fissure ingest``
  groups them;

each into the embedded store (Chroma) and, with ``--postgres``, a local PostgreSQL with
pgvector (``fissure.store.pg_local``). Vectors are 384 wide (MiniLM's), distinct, unit.

    python -m bench.store_document                  # Chroma, full sizes
    python -m bench.store_document --postgres       # and PostgreSQL
    python -m bench.store_document --smoke          # 1,500 / 100, seconds

Needs a quiet machine for figures; prints a Markdown table with the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from fissure.ingest.workers import Outcome
from fissure.ingest.writer import Embedded, Writer
from fissure.store.open import open_store
from fissure.types import Chunk

DIM = 384
GROUP_CHUNKS = 256


def chunks_of(source: str, n: int, salt: str = "") -> list[Chunk]:
    """``n`` distinct chunks of about 1 KB of one document."""
    out, at = [], 0
    for i in range(n):
        text = f"row {i}{salt}: " + " ".join(f"cargo{(i * 7 + k) % 997}" for k in range(120))
        lines = (i + 1, i + 1)
        out.append(Chunk(text, at, at + len(text), source, i, 200, lines, "bench", source=source))
        at += len(text) + 1
    return out


def vectors_for(chunks: list[Chunk]) -> np.ndarray:
    """Distinct unit vectors, one per chunk, seeded by its text."""
    seed = int.from_bytes(hashlib.sha256(chunks[0].text.encode()).digest()[:8], "big")
    rows = np.random.default_rng(seed).standard_normal((len(chunks), DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _write(spec: str, namespace: str, docs: list[list[Chunk]]) -> float:
    """Seconds the writer spends storing ``docs`` (its store and manifest time), in
    groups of about :data:`GROUP_CHUNKS` chunks as ``fissure ingest`` forms them."""
    store, manifest = open_store(spec, namespace=namespace)
    try:
        store.count()  # opened (chromadb imported) before the clock starts
        writer = Writer(store, manifest, _Unused(), "bench", "stamp", {})
        group: list[Outcome] = []
        for chunks in docs:
            group.append(Outcome(chunks[0].source or "", chunks))
            if sum(len(o.chunks) for o in group) >= GROUP_CHUNKS:
                writer.write(group)
                group = []
        if group:
            writer.write(group)
        return writer.timings.store + writer.timings.manifest
    finally:
        manifest.close()
        store.close()


class _Unused:
    """The writer's embedder: never called, the vectors are supplied (:func:`_supplied`)."""

    dim, max_tokens, model_id = DIM, 256, "bench-random"

    def embed(self, texts: list[str]) -> np.ndarray:
        raise AssertionError("the benchmark supplies the vectors")


def run(spec: str, chunks: int, docs: int) -> list[tuple[str, int, float]]:
    """(case, chunks, seconds) for the three cases into the store ``spec``."""
    big = chunks_of("big.csv", chunks)
    small = [chunks_of(f"doc{i:05d}.md", 15) for i in range(docs)]
    edited = chunks_of("big.csv", chunks, salt=" (edited)")
    with _supplied():
        return [
            ("one document, empty store", chunks, _write(spec, "big", [big])),
            ("the same document edited", chunks, _write(spec, "big", [edited])),
            (f"{docs:,} documents of 15 chunks", 15 * docs, _write(spec, "small", small)),
        ]


@contextlib.contextmanager
def _supplied() -> Iterator[None]:
    """The writer takes its vectors from :func:`vectors_for`, not from a model."""
    from fissure.ingest import writer

    original = writer.embed_outcomes

    def supplied(embedder: object, group: list[Outcome], *args: object) -> list[Embedded]:
        return [Embedded(o, vectors_for(o.chunks) if o.chunks else None) for o in group]

    writer.embed_outcomes = supplied  # type: ignore[assignment]
    try:
        yield
    finally:
        writer.embed_outcomes = original


def main() -> None:
    """Print the Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=15_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    chunks, docs = (1_500, 100) if args.smoke else (args.chunks, args.docs)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| store | case | chunks | seconds | chunks/s |")
    print("|---|---|---:|---:|---:|")
    folder = Path(tempfile.mkdtemp(prefix="fissure-store-document-"))
    stores = [("embedded (Chroma)", str(folder))]
    with contextlib.ExitStack() as stack:
        if args.postgres:
            from fissure.store.pg_local import temporary_postgres

            stores.append(("PostgreSQL + pgvector", stack.enter_context(temporary_postgres())))
        try:
            for name, spec in stores:
                for case, n, seconds in run(spec, chunks, docs):
                    rate = n / seconds
                    print(f"| {name} | {case} | {n:,} | {seconds:.1f} | {rate:,.0f} |", flush=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
