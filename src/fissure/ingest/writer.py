"""Embed and store finished documents, in the order that makes a crash harmless.

For each group of documents: mark them pending in the manifest → embed (here; the Ray engine
embeds in its actors, before this) → delete their old chunks and pieces by source → upsert
the new chunks and pieces → commit their manifest rows (and dead letters), which clears the
marks. Chunk and piece ids are content-addressed, so redoing any of it is harmless.

A document of more than :data:`SLICE` chunks and pieces is written alone, a slice at a
time, under what its time limit has left after parsing (``Outcome.time_left``): one that
runs out while it is embedded or stored becomes a dead letter with nothing of it left in
the store, and the run goes on. Smaller documents are embedded together (one call for
many documents keeps the model's batches full); their work is bounded by the slice.
"""

from __future__ import annotations

import queue
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from fissure.embed import Embedder
from fissure.embed.window import blend, headed_text
from fissure.errors import DiskFullError
from fissure.ingest.slices import SLICE, Clock, OutOfTime, failed_as, size, slices
from fissure.ingest.slices import stack as _stack
from fissure.ingest.slices import upsert as _upsert
from fissure.ingest.workers import Outcome
from fissure.store.manifest import Entry, Failure, ManifestProtocol
from fissure.store.protocol import Piece, Store
from fissure.types import Chunk

T = TypeVar("T")


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
    fallbacks: list[tuple[str, str]] = field(default_factory=list)  # source, what fell back


@dataclass(slots=True)
class Embedded:
    """A document's outcome with its vectors: one row per chunk, then one per piece.

    ``seconds``: this document's share of the embedding call's time.
    """

    outcome: Outcome
    chunk_vectors: np.ndarray | None = None
    piece_vectors: np.ndarray | None = None
    seconds: float = 0.0


def embed_outcomes(
    embedder: Embedder,
    group: Sequence[Outcome],
    window_share: float = 0.6,
    embed_headings: bool = False,
) -> list[Embedded]:
    """Embed a group's chunks, windows and pieces in one call; if that fails, embed the
    documents one by one, so that only the bad one fails (stage ``embed``)."""
    started = time.perf_counter()
    try:
        out = _embed_all(embedder, group, window_share, embed_headings)
    except Exception as exc:
        if len(group) > 1:
            alone = [embed_outcomes(embedder, [o], window_share, embed_headings) for o in group]
            return [e for part in alone for e in part]
        return [Embedded(failed(group[0], "embed", exc))]
    share = (time.perf_counter() - started) / max(1, len(out))
    for item in out:
        item.seconds = share
    return out


def _joined(parts: list[Embedded]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The chunk and the piece vectors of a document's parts, in order."""
    chunk_rows = [p.chunk_vectors for p in parts if p.outcome.chunks]
    piece_rows = [p.piece_vectors for p in parts if p.outcome.pieces]
    chunk_vectors = _stack(chunk_rows) if chunk_rows else None
    return chunk_vectors, _stack(piece_rows) if piece_rows else None


def _out_of_time(outcome: Outcome, stage: str, clock: Clock) -> Outcome:
    """``outcome``'s document as a failure: it ran out of its time at ``stage``."""
    doing = "embedding" if stage == "embed" else "storing"
    message = (
        f"embedding and storing {len(outcome.chunks):,} chunks took longer than the "
        f"{clock.allowed:.3g} s that parsing left of the document's limit of "
        f"{outcome.time_limit or 'its timeout'}; stopped while {doing}. If the document is "
        "genuine, raise --timeout or --timeout-per-mb"
    )
    return Outcome(outcome.source, [], stage, "LimitError", message)


def failed(outcome: Outcome, stage: str, exc: BaseException) -> Outcome:
    """``outcome``'s document as a failure at ``stage``, with ``exc``'s reason and traceback."""
    return Outcome(outcome.source, [], stage, type(exc).__name__, str(exc)[:500],
                   traceback.format_exc(limit=20))  # fmt: skip


def _embed_all(
    embedder: Embedder, group: Sequence[Outcome], window_share: float, embed_headings: bool
) -> list[Embedded]:
    chunks = [c for o in group for c in o.chunks]
    pieces = [p for o in group for p in o.pieces]
    if not chunks:
        return [Embedded(o) for o in group]
    vectors = _vectors(embedder, group, chunks, pieces, window_share, embed_headings)
    own, rest = vectors[: len(chunks)], vectors[len(chunks) :]
    out, at, pt = [], 0, 0
    for o in group:
        out.append(Embedded(o, own[at : at + len(o.chunks)], rest[pt : pt + len(o.pieces)]))
        at, pt = at + len(o.chunks), pt + len(o.pieces)
    return out


def _vectors(
    embedder: Embedder,
    group: Sequence[Outcome],
    chunks: list[Chunk],
    pieces: list[Piece],
    window_share: float,
    embed_headings: bool,
) -> np.ndarray:
    """The chunks' vectors (with windows, each blended with its window's vector), then
    the pieces' vectors, all from one embedding call."""
    windows = [w for o in group for w in o.windows]
    if windows and len(windows) != len(chunks):
        raise ValueError(f"{len(windows)} windows for {len(chunks)} chunks")
    if embed_headings:
        own_texts = [headed_text(c) for c in chunks]
    else:
        own_texts = [c.embedding_text() for c in chunks]
    texts = own_texts + windows + [p.embedding_text for p in pieces]
    every = embedder.embed(texts)
    n = len(chunks)
    own = every[:n]
    if windows:
        own = blend(own, every[n : 2 * n], window_share)
    return np.concatenate([own, every[n + len(windows) :]])


class Writer:
    """Writes groups of documents to the store and the manifest.

    :meth:`write` embeds a group of :class:`Outcome` and stores it (the local engine);
    :meth:`store` stores documents embedded elsewhere (the Ray engine's actors).

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
        manifest: ManifestProtocol,
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

    def write(self, group: Sequence[Outcome]) -> None:
        """Embed a group, then store it (see :meth:`store_group`). The documents are marked
        pending first, so a shared manifest holds them while they are embedded: a second
        run that reaches one of them waits instead of embedding it too. A document of more
        than :data:`SLICE` chunks and pieces is written alone, in slices, under its time
        limit (see the module docstring)."""
        started = time.perf_counter()
        self.manifest.mark_pending([o.source for o in group])
        self.timings.manifest += time.perf_counter() - started
        small = [o for o in group if size(o) <= SLICE]
        if small:
            self._embed_and_store(small)
        for outcome in group:
            if size(outcome) > SLICE:
                self._write_sliced(outcome)

    def _embed_and_store(self, group: Sequence[Outcome]) -> None:
        embedded = embed_outcomes(self.embedder, group, self.window_share, self.embed_headings)
        self.timings.embed += sum(e.seconds for e in embedded)
        self.timings.embed_calls += 1 if any(o.chunks for o in group) else 0
        self.store_group(embedded)

    def _write_sliced(self, outcome: Outcome) -> None:
        """Embed and store one big document a slice at a time, within its time limit."""
        clock = Clock(outcome)
        parts: list[Embedded] = []
        for part in slices(outcome):
            if clock.over():
                self._store([Embedded(_out_of_time(outcome, "embed", clock))])
                return
            parts += embed_outcomes(self.embedder, [part], self.window_share, self.embed_headings)
            self.timings.embed += parts[-1].seconds
            self.timings.embed_calls += 1
            if parts[-1].outcome.failed:
                self._store([Embedded(failed_as(outcome, parts[-1].outcome))])
                return
        # Storing a dead letter deletes whatever was written of its document.
        try:
            self._store([Embedded(outcome, *_joined(parts))], clock)
        except OutOfTime:
            self._store([Embedded(_out_of_time(outcome, "store", clock))])
        except DiskFullError:
            raise
        except Exception as exc:
            self._store([Embedded(failed(outcome, "store", exc))])

    def store_group(self, group: Sequence[Embedded]) -> None:
        """Store a group; if that fails, store its documents one by one to isolate the bad
        one, which becomes a failure (stage ``store``) with nothing of it left in the store."""
        try:
            self._store(group)
        except DiskFullError:
            raise  # the run ends: failing every document in turn would help no one
        except Exception as exc:
            if len(group) > 1:
                for item in group:
                    self.store_group([item])
                return
            only = group[0].outcome
            self.store.delete_sources([only.source])  # drop anything half-written
            self._store([Embedded(failed(only, "store", exc))])

    def _store(self, group: Sequence[Embedded], clock: Clock | None = None) -> None:
        t = self.timings
        outcomes = [e.outcome for e in group]
        sources = [o.source for o in outcomes]
        started = time.perf_counter()
        self.manifest.mark_pending(sources)
        t.manifest += time.perf_counter() - started
        chunks = [c for o in outcomes for c in o.chunks]
        pieces = [p for o in outcomes for p in o.pieces]
        started = time.perf_counter()
        self.store.delete_sources(sources)
        if chunks:
            vectors = _stack([e.chunk_vectors for e in group if e.outcome.chunks])
            _upsert(self.store.upsert, chunks, vectors, clock)
        if pieces:
            vectors = _stack([e.piece_vectors for e in group if e.outcome.pieces])
            _upsert(self.store.upsert_pieces, pieces, vectors, clock)
        t.store += time.perf_counter() - started
        started = time.perf_counter()
        entries, failures = self._records(outcomes)
        self.manifest.commit(entries, failures)
        t.manifest += time.perf_counter() - started
        t.embedded += len(chunks)
        t.pieces += len(pieces)
        t.duplicates += sum(o.duplicates for o in outcomes)
        t.fallbacks += [(o.source, o.fallback) for o in outcomes if o.fallback and o.chunks]
        t.failures.extend(failures)
        self.on_chunks(len(chunks))

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


class Background(Generic[T]):
    """Runs a write function (:meth:`Writer.write` or :meth:`Writer.store_group`) on a
    thread behind a bounded queue, so that chunking goes on while a batch is embedded and
    stored, and memory stays bounded when writing is the slower side."""

    def __init__(self, write: Callable[[Sequence[T]], None], depth: int = 2) -> None:
        self.write = write
        self._queue: queue.Queue[Sequence[T] | None] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="fissure-writer", daemon=True)
        self._thread.start()

    def put(self, group: Sequence[T] | None) -> None:
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
                self.write(group)
            except BaseException as exc:  # surfaced in the main thread by put/finish
                self._error = exc
                return
