"""The engine's job loop, on the ingest pipeline's parts.

lease jobs → read their bytes from the spool → parse and split in the pool
(:mod:`fissure.serve.pools`: a :class:`~fissure.ingest.workers.WorkerPool` here, or Ray
actors; per-document timeout, memory cap, a worker recycled after N documents) → gather
chunks of many documents into one embedding batch per namespace →
:class:`~fissure.ingest.writer.Writer` (store + manifest, crash-safe order) on a
:class:`~fissure.ingest.writer.Background` thread → complete the jobs, or fail them: a
timeout or a dead worker (or Ray actor) is retried with backoff, a document its parser
refuses goes to the dead-letter queue at once (it would fail the same way again). A
thread renews the leases of every job held, so a long backlog in the embedding stage never
loses them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from fissure.errors import FissureError, InputError
from fissure.ingest.workers import Outcome, Task
from fissure.ingest.writer import Background
from fissure.serve import metrics
from fissure.serve.jobs import Completion, Job, Reason, namespace_of
from fissure.serve.pools import Pool, open_pool
from fissure.serve.queue import JobQueue
from fissure.serve.settings import ServiceSettings
from fissure.serve.spaces import Spaces
from fissure.serve.spool import Spool

log = logging.getLogger("fissure.serve")
# Failures that may not happen again: the machine was short of memory, or busy.
RETRYABLE = frozenset({"Timeout", "WorkerDied"})
FLUSH_SECONDS = 0.5  # a partial batch waits this long for more chunks when the writer is idle
MAX_WAIT_SECONDS = 5.0  # and this long at most


class Held:
    """The jobs this engine holds, by source; shared by the loop, the writer thread and
    the lease renewer."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def add(self, job: Job) -> None:
        """Hold a job."""
        with self._lock:
            self._jobs[job.source] = job

    def get(self, source: str) -> Job:
        """The held job of ``source``."""
        with self._lock:
            return self._jobs[source]

    def drop(self, source: str) -> None:
        """Stop holding a job."""
        with self._lock:
            self._jobs.pop(source, None)

    def ids(self) -> list[str]:
        """Ids of every job held."""
        with self._lock:
            return [j.id for j in self._jobs.values()]


@dataclass
class _Group:
    outcomes: list[Outcome] = field(default_factory=list)
    size: int = 0
    since: float = field(default_factory=time.monotonic)


class Runner:
    """Works through the queue until stopped.

    Args:
        queue: The job queue.
        spool: Where the jobs' bytes are.
        spaces: The stores per namespace.
        settings: The service settings.
        worker: This engine's name in the queue; stable across restarts, so a restarted
            engine takes back its own leases at once.
        pool: Where documents are parsed and split; default: the one ``settings.engine``
            names (:func:`~fissure.serve.pools.open_pool`).
    """

    def __init__(
        self,
        queue: JobQueue,
        spool: Spool,
        spaces: Spaces,
        settings: ServiceSettings,
        worker: str,
        pool: Pool | None = None,
    ) -> None:
        self.queue, self.spool, self.spaces = queue, spool, spaces
        self.settings = settings
        self.worker = worker
        self.pool = pool if pool is not None else open_pool(settings)
        self.held = Held()
        self._purged = 0.0
        self._restarts = (0, 0)

    def run(self, stop: threading.Event) -> None:
        """Lease and work jobs until ``stop`` is set; in-flight jobs are finished first."""
        s, pool = self.settings, self.pool
        renewing = threading.Event()
        renewer = threading.Thread(
            target=self._renew, args=(renewing,), daemon=True, name="fissure-renew"
        )
        renewer.start()
        try:
            with pool:
                background: Background[Outcome] = Background(_Sink(self).write)
                try:
                    while not stop.is_set():
                        worked = self._round(pool, background, stop)
                        self._count_restarts(pool)
                        self.purge_if_due()
                        if not worked:
                            stop.wait(s.poll_seconds)
                finally:
                    background.finish()
        finally:
            renewing.set()

    def _round(self, pool: Pool, background: Background[Outcome], stop: threading.Event) -> bool:
        """Chunk jobs until the queue has none ready; returns whether any was leased."""
        feed = _Feed(self, stop, pool.size)
        groups: dict[str, _Group] = {}
        for outcome in pool.run(feed):
            job = self.held.get(outcome.source)
            if outcome.failed:
                retry = outcome.error_type in RETRYABLE
                why = Reason(outcome.stage, outcome.error_type, outcome.message, outcome.traceback)
                self.fail(job, why, retryable=retry)
                continue
            group = groups.setdefault(job.namespace, _Group())
            group.outcomes.append(outcome)
            group.size += len(outcome.chunks) + 1
            now = time.monotonic()
            for namespace, g in list(groups.items()):
                # A full batch goes at once; a partial one when the writer would otherwise
                # wait for it (batches stay as large as the backlog allows), or when it has
                # waited too long (another namespace's backlog must not starve it).
                age = now - g.since
                late = (age >= FLUSH_SECONDS and background.idle()) or age >= MAX_WAIT_SECONDS
                if g.size >= self.settings.batch_chunks or late:
                    background.put(groups.pop(namespace).outcomes)
        for g in groups.values():
            background.put(g.outcomes)
        return feed.leased > 0

    def fail(self, job: Job, reason: Reason, *, retryable: bool) -> None:
        """Record a failed attempt and let go of the job."""
        after = self.queue.fail(self.worker, job.id, reason, retryable=retryable)
        self.held.drop(job.source)
        if after is not None and after.state == "failed":
            metrics.DOCUMENTS.labels("failed").inc()
            log.warning(
                "dead letter %s (%s): %s: %s", job.id, job.name, reason.error_type, reason.message
            )

    def _renew(self, stopped: threading.Event) -> None:
        every = self.settings.lease_seconds / 3
        while not stopped.wait(every):
            try:
                self.queue.renew(self.worker, self.held.ids(), self.settings.lease_seconds)
            except Exception:  # the next round tries again; a lost lease only means a redo
                log.exception("renewing leases failed")

    def _count_restarts(self, pool: Pool) -> None:
        replaced, recycled = self._restarts
        metrics.WORKER_RESTARTS.labels("replaced").inc(pool.replaced - replaced)
        metrics.WORKER_RESTARTS.labels("recycled").inc(pool.recycled - recycled)
        self._restarts = (pool.replaced, pool.recycled)

    def purge_if_due(self, *, force: bool = False) -> None:
        """Remove finished jobs, events, dead letters and spooled bytes past retention."""
        s = self.settings
        now = time.time()
        if not force and now - self._purged < s.purge_interval_seconds:
            return
        self._purged = now
        self.queue.purge(
            now - s.retention_seconds,
            now - s.dlq_retention_seconds,
            now - s.spool_retention_seconds,
        )
        stale = list(self.spool.stale(now - s.spool_retention_seconds))
        needed = self.queue.referenced(stale)
        for digest in stale:
            if digest not in needed:
                self.spool.delete(digest)


class _Feed:
    """The pool's tasks: leases a few jobs whenever it runs out, and ends (for this round)
    when the queue has nothing ready, so the pool never waits on the queue."""

    def __init__(self, runner: Runner, stop: threading.Event, n: int) -> None:
        self.runner, self.stop, self.n = runner, stop, n
        self.buffer: deque[Task] = deque()
        self.leased = 0
        self.dry = False

    def __iter__(self) -> _Feed:
        return self

    def __next__(self) -> Task:
        r = self.runner
        while not self.buffer:
            if self.dry or self.stop.is_set():
                raise StopIteration
            jobs = r.queue.lease(r.worker, self.n, r.settings.lease_seconds)
            self.dry = not jobs
            self.leased += len(jobs)
            stored = r.queue.blobs([job.digest for job in jobs]) if jobs else {}
            for job in jobs:
                r.held.add(job)
                try:
                    data = stored.get(job.digest)
                    if data is None:  # a large upload: a file in the spool
                        data = r.spool.read(job.digest)
                except InputError as exc:
                    r.fail(job, Reason("spool", "Missing", str(exc)), retryable=False)
                    continue
                self.buffer.append(Task(job.source, data))
        return self.buffer.popleft()


class _Sink:
    """What the writer thread runs per group: write it, then settle its jobs."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def write(self, group: Sequence[Outcome]) -> None:
        r = self.runner
        jobs = [r.held.get(o.source) for o in group]
        namespace = namespace_of(group[0].source)
        try:
            failures = r.spaces.write(namespace, group, {j.source: j.digest for j in jobs})
        except FissureError as exc:  # the namespace's store cannot be used: say why, per job
            why = Reason("store", type(exc).__name__, str(exc))
            for job in jobs:
                r.fail(job, why, retryable=False)
            return
        failed = {f.source: f for f in failures}
        done = []
        for outcome, job in zip(group, jobs, strict=True):
            f = failed.get(outcome.source)
            if f is not None:
                r.fail(job, Reason(f.stage, f.error_type, f.message, f.traceback), retryable=True)
            else:
                done.append(Completion(job.id, len(outcome.chunks)))
        r.queue.complete(r.worker, done)
        for outcome in group:
            r.held.drop(outcome.source)
        chunks = sum(len(o.chunks) for o in group if o.source not in failed)
        metrics.DOCUMENTS.labels("done").inc(len(done))
        metrics.CHUNKS.inc(chunks)
