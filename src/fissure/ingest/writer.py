"""Embed and store finished documents, in the order that makes a crash harmless.

For each group of documents: mark them pending in the manifest → embed → delete their old
chunks and pieces by source → upsert the new chunks and pieces → commit their manifest rows
(and dead letters), which clears the marks. Chunk and piece ids are content-addressed, so
redoing any of it is harmless.
"""

from __future__ import annotations

import queue
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from fissure.embed import Embedder
from fissure.embed.window import blend, heading_line
from fissure.ingest.workers import Outcome
from fissure.store.manifest import Entry, Failure, Manifest
from fissure.store.protocol import Piece, Store
from fissure.types import Chunk


@dataclass
class Timings:
    """Seconds spent per stage (``parse`` is summed over the worker processes)."""

    scan: float = 0.0
    fetch: float = 0.0
    parse: float = 0.0
    embed: float = 0.0
    store: float = 0.0
    manifest: float = 0.0
    total: float = 0.0
    embed_calls: int = 0
    embedded: int = 0
    pieces: int = 0
    duplicates: int = 0
    failures: list[Failure] = field(default_factory=list)


class Writer:
    """Writes groups of :class:`Outcome` to the store and the manifest.

    Args:
        store: Where chunks go.
        manifest: The store's manifest.
        embedder: Computes the vectors.
        origin: The source's origin.
        stamp: The settings fingerprint.
        digests: Content hash of each source being written.
        on_chunks: Called with the number of chunks stored (progress).
        window_share: The window vector's weight where outcomes carry windows.
        embed_headings: Embed each chunk after its headings line (``embed_headings``).
    """

    def __init__(
        self,
        store: Store,
        manifest: Manifest,
        embedder: Embedder,
        origin: str,
        stamp: str,
        digests: dict[str, str],
        on_chunks: Callable[[int], None] = lambda n: None,
        window_share: float = 0.6,
        embed_headings: bool = False,
    ) -> None:
        self.store, self.manifest, self.embedder = store, manifest, embedder
        self.origin, self.stamp, self.digests = origin, stamp, digests
        self.on_chunks = on_chunks
        self.window_share = window_share
        self.embed_headings = embed_headings
        self.timings = Timings()

    def write(self, group: Sequence[Outcome]) -> list[Failure]:
        """Write a group; if it fails, write its documents one by one to isolate the bad one.

        Returns the dead letters recorded for the group: its failed outcomes, and any
        document whose embedding or storing failed.
        """
        try:
            return self._write(group)
        except Exception as exc:
            if len(group) > 1:
                return [f for outcome in group for f in self.write([outcome])]
            stage = "embed" if self._embedding else "store"
            only = group[0]
            failed = Outcome(only.source, [], stage, type(exc).__name__, str(exc)[:500],
                             traceback.format_exc(limit=20))  # fmt: skip
            self.store.delete_sources([only.source])  # drop anything half-written
            return self._write([failed])

    def _write(self, group: Sequence[Outcome]) -> list[Failure]:
        t = self.timings
        sources = [o.source for o in group]
        started = time.perf_counter()
        self.manifest.mark_pending(sources)
        t.manifest += time.perf_counter() - started
        chunks = [c for o in group for c in o.chunks]
        pieces = [p for o in group for p in o.pieces]
        self._embedding = True
        started = time.perf_counter()
        vectors = self._vectors(group, chunks, pieces) if chunks else None
        t.embed += time.perf_counter() - started
        t.embed_calls += 1 if chunks else 0
        self._embedding = False
        started = time.perf_counter()
        self.store.delete_sources(sources)
        if vectors is not None:
            self.store.upsert(chunks, vectors[: len(chunks)])
            if pieces:
                self.store.upsert_pieces(pieces, vectors[len(chunks) :])
        t.store += time.perf_counter() - started
        started = time.perf_counter()
        entries, failures = self._records(group)
        self.manifest.commit(entries, failures)
        t.manifest += time.perf_counter() - started
        t.embedded += len(chunks)
        t.pieces += len(pieces)
        t.duplicates += sum(o.duplicates for o in group)
        t.failures.extend(failures)
        self.on_chunks(len(chunks))
        return failures

    def _vectors(
        self, group: Sequence[Outcome], chunks: list[Chunk], pieces: list[Piece]
    ) -> np.ndarray:
        """The chunks' vectors (with windows, each blended with its window's vector), then
        the pieces' vectors, all from one embedding call."""
        windows = [w for o in group for w in o.windows]
        if windows and len(windows) != len(chunks):
            raise ValueError(f"{len(windows)} windows for {len(chunks)} chunks")
        if self.embed_headings:
            own_texts = [heading_line(c.headings) + c.text for c in chunks]
        else:
            own_texts = [c.embedding_text() for c in chunks]
        texts = own_texts + windows + [p.embedding_text for p in pieces]
        every = self.embedder.embed(texts)
        n = len(chunks)
        own = every[:n]
        if windows:
            own = blend(own, every[n : 2 * n], self.window_share)
        return np.concatenate([own, every[n + len(windows) :]])

    def _records(self, group: Sequence[Outcome]) -> tuple[list[Entry], list[Failure]]:
        entries, failures = [], []
        for o in group:
            status = "failed" if o.failed else "ok"
            ids = tuple(c.chunk_id for c in o.chunks)
            tokens = tuple(c.n_tokens for c in o.chunks)
            digest = self.digests.get(o.source, "")
            entries.append(Entry(o.source, self.origin, digest, self.stamp, status, ids, tokens))
            if o.failed:
                failures.append(
                    Failure(o.source, self.origin, o.stage, o.error_type, o.message, o.traceback)
                )
        return entries, failures

    _embedding = False


class Writes(Protocol):
    """What :class:`Background` drives: a :class:`Writer`, or anything that writes groups
    of outcomes the same way (the ingestion service's job sink)."""

    def write(self, group: Sequence[Outcome]) -> object:
        """Write one group of outcomes."""
        ...


class Background:
    """Runs a :class:`Writer` on a thread behind a bounded queue, so that chunking goes on
    while a batch is embedded, and memory stays bounded when embedding is the slower side."""

    def __init__(self, writer: Writes, depth: int = 2) -> None:
        self.writer = writer
        self._queue: queue.Queue[Sequence[Outcome] | None] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="fissure-writer", daemon=True)
        self._thread.start()

    def put(self, group: Sequence[Outcome] | None) -> None:
        """Queue a group (blocks while the queue is full); ``None`` ends the thread."""
        while True:
            if self._error is not None:
                raise self._error
            try:
                self._queue.put(group, timeout=0.5)
                return
            except queue.Full:
                continue

    def idle(self) -> bool:
        """Whether no group waits for the writer (it may still be writing one)."""
        return self._queue.empty()

    def finish(self) -> None:
        """Wait for every queued group to be written; re-raise the writer's error."""
        if self._error is None and self._thread.is_alive():
            self.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _loop(self) -> None:
        while (group := self._queue.get()) is not None:
            try:
                self.writer.write(group)
            except BaseException as exc:  # surfaced in the main thread by put/finish
                self._error = exc
                return
