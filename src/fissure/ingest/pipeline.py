"""The ingest run: list → plan → read → parse and split (worker processes) → embed → store.

Plain function composition over a few objects: a :class:`~fissure.source.protocol.Source`,
a :class:`~fissure.ingest.workers.WorkerPool`, a :class:`~fissure.ingest.writer.Writer` and a
:class:`~fissure.store.protocol.Store`. Every queue is bounded, so memory stays flat however
large the corpus; a failure is a dead letter, never the end of the run.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Collection, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from fissure.config import ChunkSettings
from fissure.embed import Embedder
from fissure.errors import ConfigError
from fissure.ingest.plan import Plan, fingerprint, make_plan
from fissure.ingest.progress import Progress
from fissure.ingest.workers import Outcome, Task, WorkerPool, plugin_modules
from fissure.ingest.writer import Background, Timings, Writer
from fissure.source.protocol import Item, Source
from fissure.store.manifest import Failure, Manifest
from fissure.store.protocol import Store


def default_workers() -> int:
    """One worker per core, leaving one for embedding; at least one, at most four."""
    return max(1, min(4, (os.cpu_count() or 2) - 1))


@dataclass(frozen=True)
class Options:
    """How a run works (what it produces is ``settings`` and the embedder).

    Attributes:
        settings: Chunk settings.
        workers: Parsing processes.
        timeout: Seconds one document may take to parse and split.
        memory_mb: Address-space cap per worker, or ``None``.
        batch_chunks: Chunks per embedding batch (and per store write and manifest commit).
        plugins: Modules each worker imports first (they may register parsers).
        progress: Show progress bars on stderr.
    """

    settings: ChunkSettings = field(default_factory=ChunkSettings)
    workers: int = field(default_factory=default_workers)
    timeout: float = 120.0
    memory_mb: int | None = 4096
    batch_chunks: int = 256
    plugins: tuple[str, ...] = ()
    progress: bool = False


@dataclass
class Summary:
    """What a run did, and what the store now holds for its origin.

    ``chunks`` counts the chunks stored in this run; ``duplicates`` the chunks it left out
    under ``dedup`` (in neither the store, the manifest nor the export); ``pieces`` the
    sentence pieces stored under ``sub_vector_tokens``.
    """

    origin: str
    listed: int
    unchanged: int
    processed: int
    removed: int
    chunks: int
    failures: list[Failure]
    documents: int
    corpus_chunks: int
    tokens: dict[str, float]
    timings: Timings
    workers_replaced: int = 0
    duplicates: int = 0
    pieces: int = 0


def ingest(
    source: Source,
    store_dir: str | Path,
    embedder: Embedder,
    options: Options | None = None,
    *,
    store: Store | None = None,
    spec: str = "",
    embedder_spec: str = "",
    force: Collection[str] = (),
    export: IO[str] | None = None,
) -> Summary:
    """Bring the store in ``store_dir`` up to date with ``source``.

    Args:
        source: The corpus.
        store_dir: Store folder: the manifest lives here, and Chroma under ``chroma/``.
        embedder: Computes vectors (its ``model_id`` is part of the settings fingerprint).
        options: How to run.
        store: Another :class:`Store` instead of the default Chroma one.
        spec: How the user named the source (recorded for ``dlq retry``).
        embedder_spec: How the user named the embedder (recorded likewise).
        force: Sources to redo even if unchanged.
        export: Write each chunk stored in this run here, as a JSON line (chunks left
            out by ``dedup`` are not written).

    Raises:
        ConfigError: The store was built with an embedder of another width.
    """
    opts = options or Options()
    started = time.perf_counter()
    manifest = Manifest(store_dir)
    try:
        if store is None:
            store = _LazyChroma(Path(store_dir) / "chroma")
        check_model(manifest, embedder, store_dir)
        _reconcile(store, manifest)
        stamp = fingerprint(opts.settings, embedder.model_id)
        plan, scanned = _plan(source, store, manifest, stamp, force)
        digests = {item.source: item.digest for item in plan.todo}
        with Progress(opts.progress, len(plan.todo)) as bar:
            writer = Writer(store, manifest, embedder, source.origin, stamp, digests, bar.stored,
                            window_share=opts.settings.embed_window_share,
                            embed_headings=opts.settings.embed_headings)  # fmt: skip
            replaced = _run(source, plan.todo, writer, opts, bar, export)
        config = {"settings": asdict(opts.settings), "embedder": embedder_spec,
                  "timeout": opts.timeout, "memory_mb": opts.memory_mb}  # fmt: skip
        manifest.record_run(source.origin, spec or source.origin, config)
        writer.timings.scan = scanned
        writer.timings.total = time.perf_counter() - started
        return _summarize(source.origin, plan, manifest, writer.timings, replaced)
    finally:
        manifest.close()


class _LazyChroma:
    """The default store, opened on first use: a run with nothing to change never pays
    for importing and opening Chroma (seconds), which keeps no-change re-runs instant."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._store: Store | None = None

    def __getattr__(self, name: str) -> Any:
        if self._store is None:
            from fissure.store.chroma import ChromaStore

            self._store = ChromaStore(self.folder)
        return getattr(self._store, name)


def check_model(manifest: Manifest, embedder: Embedder, folder: str | Path) -> None:
    """Record the store's embedder, or refuse one whose vectors have another width.

    Raises:
        ConfigError: The store holds vectors of another width.
    """
    dim = manifest.get_meta("dim")
    if dim is None:
        manifest.set_meta("dim", str(embedder.dim))
        manifest.set_meta("model", embedder.model_id)
    elif int(dim) != embedder.dim:
        raise ConfigError(
            f"the store in {folder} holds {dim}-wide vectors ({manifest.get_meta('model')}) "
            f"but {embedder.model_id} makes {embedder.dim}-wide ones: use the same embedder "
            "or another --store"
        )
    else:
        manifest.set_meta("model", embedder.model_id)


def _plan(
    source: Source, store: Store, manifest: Manifest, stamp: str, force: Collection[str]
) -> tuple[Plan, float]:
    """List the source, decide the work, and delete what vanished from it."""
    started = time.perf_counter()
    items = list(source.scan())
    scanned = time.perf_counter() - started
    plan = make_plan(items, manifest.known(source.origin), stamp, force)
    if plan.removed:
        store.delete_sources(plan.removed)
        manifest.forget(plan.removed)
    return plan, scanned


def _reconcile(store: Store, manifest: Manifest) -> None:
    """Undo what a killed run left half-written: its documents are chunked again."""
    pending = manifest.pending()
    if pending:
        store.delete_sources(pending)
        manifest.forget(pending)


def _run(
    source: Source,
    todo: list[Item],
    writer: Writer,
    opts: Options,
    bar: Progress,
    export: IO[str] | None,
) -> int:
    """Chunk and write every document of ``todo``; returns how many workers were replaced."""
    early = [
        Outcome(i.source, stage="source", error_type="Skipped", message=i.skip)
        for i in todo
        if i.skip
    ]
    readable = [i for i in todo if not i.skip]
    background = Background(writer)
    group: list[Outcome] = []
    size = 0
    pool = WorkerPool(opts.settings, workers=opts.workers, timeout=opts.timeout,
                      memory_mb=opts.memory_mb, plugins=plugin_modules(opts.plugins))  # fmt: skip
    try:
        with pool if readable else _nothing():
            outcomes = pool.run(_tasks(source, readable, early, writer.timings)) if readable else ()
            for outcome in _merge(outcomes, early):
                writer.timings.parse += outcome.seconds
                if export is not None:
                    _export(outcome, export)
                group.append(outcome)
                size += len(outcome.chunks) + 1
                bar.chunked(outcome.source)
                if size >= opts.batch_chunks:
                    background.put(group)
                    group, size = [], 0
        if group:
            background.put(group)
    finally:
        background.finish()
    return pool.replaced


def _tasks(
    source: Source, items: list[Item], early: list[Outcome], timings: Timings
) -> Iterator[Task]:
    """Read each document; one that cannot be read becomes a failure, not an exception."""
    fetched = source.fetch(items)
    while True:
        started = time.perf_counter()
        got = next(fetched, None)
        timings.fetch += time.perf_counter() - started
        if got is None:
            return
        item, data = got
        if isinstance(data, Exception):
            message = str(data).splitlines()[0][:500] if str(data) else repr(data)
            early.append(Outcome(item.source, stage="fetch", error_type=type(data).__name__,
                                 message=message))  # fmt: skip
        else:
            yield Task(item.source, data)


def _merge(outcomes: Any, early: list[Outcome]) -> Iterator[Outcome]:
    for outcome in outcomes:
        while early:
            yield early.pop()
        yield outcome
    while early:
        yield early.pop()


class _nothing:  # noqa: N801 - a stand-in for the pool's context when there is no work
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _export(outcome: Outcome, stream: IO[str]) -> None:
    for chunk in outcome.chunks:
        stream.write(json.dumps(chunk.to_dict(), ensure_ascii=False))
        stream.write("\n")


def _summarize(
    origin: str, plan: Plan, manifest: Manifest, timings: Timings, replaced: int
) -> Summary:
    sizes: list[int] = []
    documents = 0
    for _, status, tokens in manifest.documents(origin):
        documents += status == "ok"
        sizes.extend(tokens)
    return Summary(
        origin=origin,
        listed=plan.seen,
        unchanged=plan.unchanged,
        processed=len(plan.todo),
        removed=len(plan.removed),
        chunks=timings.embedded,
        failures=timings.failures,
        documents=documents,
        corpus_chunks=len(sizes),
        tokens=token_stats(sizes),
        timings=timings,
        workers_replaced=replaced,
        duplicates=timings.duplicates,
        pieces=timings.pieces,
    )


def token_stats(sizes: list[int]) -> dict[str, float]:
    """Mean, min, median and max of chunk sizes (zeros when there are none)."""
    if not sizes:
        return {"mean": 0, "min": 0, "median": 0, "max": 0}
    return {
        "mean": round(statistics.fmean(sizes), 1),
        "min": min(sizes),
        "median": round(statistics.median(sizes), 1),
        "max": max(sizes),
    }
