"""The Ray engine: the same run as the local engine, spread over a Ray cluster.

``fissure ingest SOURCE --engine ray [--address HOST:PORT]``. The driver (this process)
plans the run exactly as the local engine does (manifest, :func:`~fissure.ingest.plan.make_plan`,
deletions), reads the documents in waves, and hands each wave to a Ray Data pipeline:

    documents ──map_batches──> parse + split ──map_batches──> embed ──> driver: store
               (actor pool, 1 CPU each; each    (actor pool keeping the   (batches, the
                actor drives one fissure         model loaded; a GPU each  crash-safe
                worker process: hard timeout,    when the cluster has      Writer order)
                memory cap)                      GPUs)

Ray has no per-task timeout and one uncaught error aborts a dataset, so nothing here raises:
each document is parsed and split in a :class:`~fissure.ingest.workers.WorkerPool` worker
process (the one the local engine uses), which is killed and replaced when the document
overruns ``Options.timeout`` or its memory cap; an embedding failure is isolated to its
document (:func:`~fissure.ingest.writer.embed_outcomes`). Either way the document comes back
as a failure and becomes a dead letter. A node that dies takes its actors with it; Ray Data
restarts them and retries their batches, and whatever the driver had not committed is redone
by the next run (the manifest's pending marks), so a crash loses nothing and duplicates
nothing (chunk ids are content-addressed).

The driver writes every batch itself, so any store works (an embedded Chroma folder on the
driver's machine, or PostgreSQL); the corpus is read on the driver too, so any source works.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from fissure.embed import Embedder
from fissure.errors import ConfigError
from fissure.ingest.job import Groups, Job, export_chunks, read_tasks, skipped
from fissure.ingest.ray_parts import Chunking, cluster_resources, connect, import_ray
from fissure.ingest.workers import BOOT_S, Outcome, Task, plugin_modules
from fissure.ingest.writer import Background, Embedded, embed_outcomes

_REPLACED = ("Timeout", "WorkerDied")  # parse failures that cost a worker process
# A document's fixed cost (detection, the worker round trip), in bytes of parsing.
DOC_WEIGHT = 1024


@dataclass
class RayEngine:
    """Chunk and embed on a Ray cluster; store from the driver.

    Attributes:
        address: The cluster (``HOST:PORT``); ``None``: ``$RAY_ADDRESS``, else a Ray started
            here for the run (and stopped after it).
        make_embedder: Builds the embedder on each embedding actor (e.g.
            ``functools.partial(load_embedder, "minilm")``); ``None`` ships the run's own
            embedder object to the actors.
        parse_workers: Parsing actors (one CPU each); default: the CPUs the embedding
            actors leave, at least one.
        embed_workers: Embedding actors; default: one per GPU, else a third of the CPUs
            (at least one).
        docs_per_batch: Documents per parse call and per embedding call; ``None``: each
            wave cut by :func:`batches` (about four calls of equal work per parse actor,
            about 64 documents at most). Each batch travels as one object (the documents
            pickled together), so a call's fixed cost in the driver, the raylet and the
            actor is paid per batch, not per document.
        batch_bytes: About the most bytes of documents in one batch.
        wave_docs: At most this many documents are read and in flight at once.
        wave_bytes: ... and at most about this many bytes.
        elastic: Actor pools start with one actor and grow to their size, so a run goes on
            (slower) when a node is lost; ``False``: fixed pools, every actor started
            before the first batch is handed out (for measurements).
    """

    address: str | None = None
    make_embedder: Callable[[], Embedder] | None = None
    parse_workers: int | None = None
    embed_workers: int | None = None
    docs_per_batch: int | None = None
    batch_bytes: int = 32 * 1024 * 1024
    wave_docs: int = 2000
    wave_bytes: int = 256 * 1024 * 1024
    elastic: bool = True

    def run(self, job: Job) -> int:
        """Chunk, embed and store ``job.todo`` on the cluster; returns how many parsing
        worker processes were replaced (after a timeout or a crash)."""
        if not job.todo:  # a no-change re-run never waits for a cluster
            return 0
        ray = import_ray()
        started_here = not ray.is_initialized()
        if started_here:
            connect(ray, self.address, plugin_modules(job.options.plugins))
        quiet(ray, job.options.progress)
        try:
            return self._run(job)
        finally:
            if started_here:
                ray.shutdown()

    def _run(self, job: Job) -> int:
        writer, opts = job.writer, job.options
        early = skipped(job.todo)
        background: Background[Embedded] = Background(writer.store_group)
        groups: Groups[Embedded] = Groups(background.put, opts.batch_chunks)
        replaced = 0
        try:
            readable = [i for i in job.todo if not i.skip]
            tasks = read_tasks(job.source, readable, early, writer.timings, writer.digests)
            for wave in _waves(tasks, self.wave_docs, self.wave_bytes):
                for item in self._embedded(job, wave):
                    replaced += _take(job, item, groups)
                while early:
                    _take(job, Embedded(early.pop()), groups)
            while early:
                _take(job, Embedded(early.pop()), groups)
            groups.finish()
        finally:
            background.finish()
        return replaced

    def _embedded(self, job: Job, wave: list[Task]) -> Iterator[Embedded]:
        """One wave through the Ray Data pipeline; results as they come."""
        dataset = self.dataset(wave)
        dataset = self.chunking(dataset, job.options)
        dataset = self.embedding(dataset, job)
        model = job.writer.embedder.model_id
        for row in dataset.iter_rows():
            if row["model"] != model:
                raise ConfigError(
                    f"the embedding actors run {row['model']}, the driver {model}: "
                    "make_embedder must build the run's embedder"
                )
            items: list[Embedded] = pickle.loads(row["embedded"])
            yield from items

    def dataset(self, tasks: list[Task], actors: int | None = None) -> Any:
        """``tasks`` as a Ray dataset of batches: one row (``batch``, the batch's tasks
        pickled together) and one block per batch; ``docs_per_batch`` documents each,
        else :func:`batches` planned for ``actors`` parse actors (default: the pool's; a
        measurement that compares pool sizes passes one number to every run)."""
        ray = import_ray()
        if not self.elastic:  # every actor up before the first batch: like against like
            context = ray.data.DataContext.get_current()
            context.wait_for_min_actors_s = max(context.wait_for_min_actors_s, int(BOOT_S))
        if self.docs_per_batch:
            cut = list(_waves(iter(tasks), self.docs_per_batch, self.batch_bytes))
        else:
            cut = batches(tasks, actors or self.parse_actors(), self.batch_bytes)
        blobs = [{"batch": pickle.dumps(b, protocol=pickle.HIGHEST_PROTOCOL)} for b in cut]
        return ray.data.from_items(blobs, override_num_blocks=max(1, len(blobs)))

    def parse_actors(self) -> int:
        """How many parse actors: ``parse_workers``, else the CPUs the embedding actors
        leave (at least one)."""
        if self.parse_workers:
            return self.parse_workers
        cpus, _ = cluster_resources()
        return max(1, int(cpus) - self._embed_plan()[0])

    def chunking(self, dataset: Any, options: Any) -> Any:
        """``dataset`` of batches (:meth:`dataset`) parsed and split on the parse actor
        pool: one row per batch, ``outcomes`` (its :class:`Outcome` list, pickled)."""
        return dataset.map_batches(
            Chunking,
            fn_constructor_args=(
                options.settings,
                options.limits(),
                plugin_modules(options.plugins),
            ),
            batch_size=1,
            batch_format="numpy",
            compute=self._pool(self.parse_actors()),
            num_cpus=1,
        )

    def embedding(self, dataset: Any, job: Job) -> Any:
        """``dataset`` of outcomes embedded on the embedding actor pool: one row per batch,
        ``embedded`` (its :class:`Embedded` list, pickled) and ``model``."""
        actors, cpus, gpus = self._embed_plan()
        writer = job.writer
        make = self.make_embedder or _Fixed(writer.embedder)
        return dataset.map_batches(
            _Embedding,
            fn_constructor_args=(make, writer.window_share, writer.embed_headings),
            batch_size=1,
            batch_format="numpy",
            compute=self._pool(actors),
            num_cpus=cpus,
            num_gpus=gpus,
        )

    def _pool(self, size: int) -> Any:
        strategy = import_ray().data.ActorPoolStrategy
        return strategy(min_size=1 if self.elastic else size, max_size=size)

    def _embed_plan(self) -> tuple[int, float, float]:
        """How many embedding actors, and the CPUs and GPUs each reserves."""
        cpus, gpus = cluster_resources()
        if gpus >= 1:
            return self.embed_workers or int(gpus), 1.0, 1.0
        return self.embed_workers or max(1, int(cpus) // 3), 1.0, 0.0


def batches(
    tasks: list[Task], actors: int, most_bytes: int, calls: int = 4, most: int = 64
) -> list[list[Task]]:
    """``tasks`` cut into batches of consecutive documents for ``actors`` parse actors.

    A multiple of ``actors`` batches of about equal work (bytes, plus :data:`DOC_WEIGHT`
    for each document's fixed cost), so that the actors finish together rather than one
    waiting on the other's last batch; about ``calls`` per actor, more where a batch would
    otherwise hold more than about ``most`` documents (a result comes back early, a lost
    node costs little) or ``most_bytes``; and no more than that, since each call costs
    the driver, the raylet and the actor a fixed price.
    """
    if not tasks:
        return []
    actors = max(1, actors)
    weights = np.array([len(t.data) + DOC_WEIGHT for t in tasks], dtype=np.float64)
    total = float(weights.sum())
    count = max(calls * actors, -(-len(tasks) // most), int(np.ceil(total / most_bytes)))
    # At most one batch a document, and a multiple of ``actors`` wherever there are as many
    # documents (a batch then holds two small documents over ``most_bytes``, not an extra
    # call that leaves an actor idle).
    room = len(tasks) if len(tasks) < actors else len(tasks) // actors * actors
    count = min(room, -(-count // actors) * actors)
    # A document joins the batch whose share of the total its middle falls in.
    middles = np.cumsum(weights) - weights / 2
    group = np.minimum((middles * count / total).astype(np.int64), count - 1)
    edges = [0, *(np.flatnonzero(np.diff(group)) + 1).tolist(), len(tasks)]
    # A heavy document can fill the shares of several batches, leaving some empty: split
    # the heaviest batches in two until there are ``count`` again.
    ends = np.concatenate([[0.0], np.cumsum(weights)])
    while len(edges) - 1 < count:
        spans = [(ends[b] - ends[a], a, b) for a, b in zip(edges, edges[1:], strict=False)]
        splittable = [s for s in spans if s[2] - s[1] > 1]
        if not splittable:
            break
        _, a, b = max(splittable)
        half = int(np.searchsorted(ends, (ends[a] + ends[b]) / 2, side="right")) - 1
        edges.insert(edges.index(b), min(max(half, a + 1), b - 1))
    return [tasks[a:b] for a, b in zip(edges, edges[1:], strict=False)]


def outcomes(chunked: Any) -> Iterator[Outcome]:
    """Every :class:`Outcome` of a :meth:`RayEngine.chunking` dataset, as they come."""
    for row in chunked.iter_rows():
        done: list[Outcome] = pickle.loads(row["outcomes"])
        yield from done


def _take(job: Job, item: Embedded, groups: Groups[Embedded]) -> int:
    """Account for one finished document and queue it for the store."""
    outcome = item.outcome
    job.writer.timings.parse += outcome.seconds
    job.writer.timings.embed += item.seconds
    export_chunks(outcome, job.export)
    groups.add(item, len(outcome.chunks))
    job.progress.chunked(outcome.source, len(outcome.chunks))
    return int(outcome.stage == "parse" and outcome.error_type in _REPLACED)


def _waves(tasks: Iterator[Task], docs: int, size: int) -> Iterator[list[Task]]:
    wave: list[Task] = []
    held = 0
    for task in tasks:
        wave.append(task)
        held += len(task.data)
        if len(wave) >= docs or held >= size:
            yield wave
            wave, held = [], 0
    if wave:
        yield wave


class _Embedding:
    """An embedding actor: builds the embedder once and embeds batch after batch."""

    def __init__(
        self, make: Callable[[], Embedder], window_share: float, embed_headings: bool
    ) -> None:
        self.embedder = make()
        self.window_share, self.embed_headings = window_share, embed_headings

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, list[Any]]:
        embedded = []
        for blob in batch["outcomes"]:
            done: list[Outcome] = pickle.loads(blob)
            items = embed_outcomes(self.embedder, done, self.window_share, self.embed_headings)
            embedded.append(pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL))
        return {"embedded": embedded, "model": [self.embedder.model_id] * len(embedded)}


@dataclass(frozen=True)
class _Fixed:
    """``make_embedder`` for an embedder object that travels to the actors as it is."""

    embedder: Embedder

    def __call__(self) -> Embedder:
        return self.embedder


def quiet(ray: Any, progress: bool) -> None:
    """Results in any order; Ray Data's own bars and logs only with ``progress`` (without,
    its executor also skips the progress bookkeeping it would log every few seconds)."""
    import logging

    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = progress
    context.execution_options.preserve_order = False
    logging.getLogger("ray.data").setLevel(logging.INFO if progress else logging.WARNING)
