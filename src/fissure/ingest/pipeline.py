"""The ingest run: list → plan → read → parse and split (worker processes) → embed → store.

Plain function composition over a few objects: a :class:`~fissure.source.protocol.Source`,
an :class:`~fissure.ingest.job.Engine` (the local :class:`LocalEngine` with its
:class:`~fissure.ingest.workers.WorkerPool`, or the Ray engine), a
:class:`~fissure.ingest.writer.Writer`, a :class:`~fissure.store.protocol.Store` and its
manifest. Every queue is bounded, so memory stays flat however large the corpus; a failure
is a dead letter, never the end of the run.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from fissure.embed import Embedder
from fissure.errors import ConfigError
from fissure.ingest.job import (
    Engine,
    Groups,
    Job,
    Options,
    default_workers,
    export_chunks,
    read_tasks,
    skipped,
)
from fissure.ingest.plan import Plan, fingerprint, make_plan
from fissure.ingest.progress import Progress
from fissure.ingest.workers import Outcome, WorkerPool, plugin_modules
from fissure.ingest.writer import Background, Timings, Writer
from fissure.source.names import is_text, text_name
from fissure.source.protocol import Source
from fissure.store.manifest import Failure, ManifestProtocol
from fissure.store.open import close_store, is_database, open_store
from fissure.store.protocol import Store

__all__ = ["LocalEngine", "Options", "Summary", "default_workers", "ingest", "token_stats"]


@dataclass
class Summary:
    """What a run did, and what the store now holds for its origin.

    ``chunks`` counts the chunks stored in this run; ``duplicates`` the chunks it left out
    under ``dedup`` (in neither the store, the manifest nor the export); ``pieces`` the
    sentence pieces stored under ``sub_vector_tokens``; ``fallbacks`` the documents stored
    with less structure than their format has (a parser fell back, for the whole
    document or some of its pages), each with what fell back.
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
    fallbacks: list[tuple[str, str]] = field(default_factory=list)

    @property
    def errors(self) -> list[Failure]:
        """The failures that are errors: every one but the documents the source skipped on
        purpose (links outside the folder, non-regular files, over ``--max-bytes``), which
        are dead letters with their reason but not a failed run."""
        return [f for f in self.failures if f.error_type != "Skipped"]


def ingest(
    source: Source,
    store_dir: str | Path,
    embedder: Embedder,
    options: Options | None = None,
    *,
    store: Store | None = None,
    namespace: str = "default",
    engine: Engine | None = None,
    spec: str = "",
    embedder_spec: str = "",
    force: Collection[str] = (),
    export: IO[str] | None = None,
) -> Summary:
    """Bring the store named by ``store_dir`` up to date with ``source``.

    Args:
        source: The corpus.
        store_dir: A store folder (the manifest lives there, Chroma under ``chroma/``) or
            ``postgresql://…`` (chunks, vectors and manifest in one shared database); see
            :func:`fissure.store.open.open_store`.
        embedder: Computes vectors (its ``model_id`` is part of the settings fingerprint).
        options: How to run.
        store: Another :class:`Store` instead of the one ``store_dir`` names (the manifest
            still comes from ``store_dir``).
        namespace: Which store inside ``store_dir``.
        engine: Who chunks and embeds: the local engine (worker processes on this machine)
            by default, or :class:`fissure.ingest.ray_engine.RayEngine`.
        spec: How the user named the source (recorded for ``dlq retry``).
        embedder_spec: How the user named the embedder (recorded likewise).
        force: Sources to redo even if unchanged.
        export: Write each chunk stored in this run here, as a JSON line (chunks left
            out by ``dedup`` are not written).

    Raises:
        ConfigError: The store was built with an embedder of another width.
        StoreError: The store's database cannot be reached or refused a write.
    """
    opts = options or Options()
    started = time.perf_counter()
    opened, manifest = open_store(store_dir, namespace=namespace)
    target = store if store is not None else opened
    try:
        check_model(manifest, embedder, store_dir, embedder_spec)
        reconcile(target, manifest)
        stamp = fingerprint(opts.settings, embedder.model_id)
        plan, scanned = _plan(source, target, manifest, stamp, force)
        digests = {item.source: item.digest for item in plan.todo}
        with Progress(opts.progress, len(plan.todo)) as bar:
            writer = Writer(target, manifest, embedder, source.origin, stamp, digests, bar.stored,
                            window_share=opts.settings.embed_window_share,
                            embed_headings=opts.settings.embed_headings)  # fmt: skip
            job = Job(source, plan.todo, writer, opts, bar, export)
            replaced = (engine or LocalEngine()).run(job)
        config = {"settings": opts.settings.to_dict(), "embedder": embedder_spec,
                  **opts.limits()}  # fmt: skip
        manifest.record_run(source.origin, spec or source.origin, config)
        writer.timings.scan = scanned
        writer.timings.total = time.perf_counter() - started
        return _summarize(source.origin, plan, manifest, writer.timings, replaced)
    finally:
        manifest.close()
        close_store(opened)


def check_model(
    manifest: ManifestProtocol,
    embedder: Embedder,
    folder: str | Path,
    spec: str = "",
    *,
    same_model: bool = False,
) -> None:
    """Refuse an embedder of another width; record the model (and how the user named it,
    so that ``fissure query`` picks it even if this run dies before its run record). The
    ingestion service's engine checks each namespace's store the same way, with
    ``same_model``: it embeds with one variant only, so it also refuses a store built with
    another model of the same width (fp32 torch MiniLM against ONNX int8), whose vectors
    would not match its queries; ingest re-embeds such a store instead.

    Raises:
        ConfigError: The store holds vectors of another width (or, with ``same_model``,
            of another model).
    """
    dim = manifest.get_meta("dim")
    recorded = manifest.get_meta("model")
    if same_model and dim == str(embedder.dim) and recorded and recorded != embedder.model_id:
        from fissure.embed.load import spec_of_model

        named = spec_of_model(recorded)
        hint = f"start the service with --embedder {named}" if named else "use the same embedder"
        raise ConfigError(
            f"the store in {_display(folder)} was built with {recorded}, but this service "
            f"embeds with {embedder.model_id}; queries would not match its vectors: {hint}, "
            "or another --store"
        )
    if dim is None:
        manifest.set_meta("dim", str(embedder.dim))
        manifest.set_meta("model", embedder.model_id)
    elif int(dim) != embedder.dim:
        raise ConfigError(
            f"the store in {_display(folder)} holds {dim}-wide vectors "
            f"({recorded}) but {embedder.model_id} makes {embedder.dim}-wide "
            "ones: use the same embedder or another --store"
        )
    else:
        manifest.set_meta("model", embedder.model_id)
    if spec and manifest.get_meta("embedder") != spec:
        manifest.set_meta("embedder", spec)


def _display(store: str | Path) -> str:
    if is_database(store):
        from fissure.store.pg_schema import redact

        return redact(str(store))
    return str(store)


def _plan(
    source: Source,
    store: Store,
    manifest: ManifestProtocol,
    stamp: str,
    force: Collection[str],
) -> tuple[Plan, float]:
    """List the source, decide the work, and delete what vanished from it."""
    started = time.perf_counter()
    # Ids go into SQLite, Chroma and JSON: a source that hands over a name with lone
    # surrogates (a file name that is not UTF-8) gets its lossless text form instead.
    items = [i if is_text(i.source) else replace(i, source=text_name(i.source))
             for i in source.scan()]  # fmt: skip
    scanned = time.perf_counter() - started
    plan = make_plan(items, manifest.known(source.origin), stamp, force)
    if plan.removed:
        manifest.mark_pending(plan.removed)  # held (shared manifests) and journalled
        store.delete_sources(plan.removed)
        manifest.forget(plan.removed)
    return plan, scanned


def reconcile(store: Store, manifest: ManifestProtocol) -> None:
    """Undo what a killed run left half-written: its documents are chunked again (the
    ingestion service's engine does this for every namespace when it starts)."""
    orphans = manifest.claim_orphans()
    if orphans:
        store.delete_sources(orphans)
        manifest.forget(orphans)


class LocalEngine:
    """Parse and split in worker processes on this machine (``Options.workers``), embed
    and store on a writer thread."""

    def run(self, job: Job) -> int:
        """Chunk and write every document of the job; returns how many workers were replaced."""
        opts, writer = job.options, job.writer
        early = skipped(job.todo)
        readable = [i for i in job.todo if not i.skip]
        background: Background[Outcome] = Background(writer.write)
        groups: Groups[Outcome] = Groups(background.put, opts.batch_chunks)
        pool = WorkerPool(
            opts.settings,
            workers=opts.workers,
            plugins=plugin_modules(opts.plugins),
            **opts.limits(),
        )
        try:
            with pool if readable else _nothing():
                tasks = read_tasks(job.source, readable, early, writer.timings, writer.digests)
                outcomes = pool.run(tasks) if readable else ()
                for outcome in _merge(outcomes, early):
                    writer.timings.parse += outcome.seconds
                    export_chunks(outcome, job.export)
                    groups.add(outcome, len(outcome.chunks))
                    job.progress.chunked(outcome.source, len(outcome.chunks))
            groups.finish()
        finally:
            background.finish()
        return pool.replaced


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


def _summarize(
    origin: str, plan: Plan, manifest: ManifestProtocol, timings: Timings, replaced: int
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
        fallbacks=timings.fallbacks,
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
