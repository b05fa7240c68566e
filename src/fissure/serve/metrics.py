"""Prometheus metrics, gathered across every process of the service.

Counters and histograms live in ``prometheus_client``'s multiprocess files when
``$PROMETHEUS_MULTIPROC_DIR`` is set (``fissure serve`` sets it to ``<store>/metrics``,
emptied at start), so ``/metrics`` on any API process sums the API processes and the
engine. What the database knows (queue depth, jobs by state, the oldest queued job's age,
recent throughput) is read from it at scrape time, so it is right whichever process
answers, and so is the memory of the service's processes (read from ``/proc``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence

import numpy as np
from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric

from fissure.embed import Embedder
from fissure.serve.jobs import STATES
from fissure.serve.queue import JobQueue

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
RATE_WINDOW = 60.0  # seconds over which documents and chunks per second are averaged

ACCEPT = Histogram(
    "fissure_accept_seconds",
    "Time from an upload's arrival to its answer (validate, spool, enqueue).",
    ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
QUERY = Histogram(
    "fissure_query_seconds",
    "Time from a query's arrival to its answer (embed the text, search, hand over).",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
SERVER_ERRORS = Counter(
    "fissure_http_server_errors",
    "HTTP answers with a 5xx status, by status (503: not ready, e.g. /readyz while the "
    "engine loads; 500: a bug).",
    ["status"],
)
UPLOADS = Counter("fissure_uploads", "Documents offered to the API, by outcome.", ["outcome"])
DOCUMENTS = Counter("fissure_documents", "Documents the engine finished, by state.", ["state"])
CHUNKS = Counter("fissure_chunks", "Chunks the engine stored.")
EMBED_BATCH = Histogram(
    "fissure_embedding_batch_texts",
    "Texts per embedding call (chunks, windows and pieces of many documents).",
    buckets=(1, 8, 32, 64, 128, 256, 512, 1024, 2048, 4096),
)
WORKER_RESTARTS = Counter(
    "fissure_worker_restarts",
    "Worker processes started again: parsers replaced after a timeout or a crash, parsers "
    "recycled after N documents, and engines restarted by the supervisor.",
    ["kind"],
)


class Observed:
    """An embedder whose batch sizes are recorded (:data:`EMBED_BATCH`)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.max_tokens = inner.max_tokens
        self.model_id = inner.model_id

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed and record the batch size."""
        EMBED_BATCH.observe(len(texts))
        return self.inner.embed(texts)


class QueueCollector:
    """Gauges read from the job queue at scrape time."""

    def __init__(self, queue: JobQueue) -> None:
        self.queue = queue

    def collect(self) -> Iterator[Metric]:
        """The gauges (see the docs' metric table)."""
        counts = self.queue.counts()
        depth = GaugeMetricFamily("fissure_queue_depth", "Jobs queued or running.")
        depth.add_metric([], counts.waiting)
        yield depth
        jobs = GaugeMetricFamily(
            "fissure_jobs", "Jobs by state (failed: the DLQ).", labels=["state"]
        )
        for state in STATES:
            jobs.add_metric([state], counts.by_state.get(state, 0))
        yield jobs
        spool = GaugeMetricFamily("fissure_spool_bytes", "Bytes of uploads kept in the spool.")
        spool.add_metric([], counts.spool_bytes)
        yield spool
        oldest = GaugeMetricFamily(
            "fissure_queue_oldest_seconds",
            "Age of the job that has waited longest in state queued (0: none queued).",
        )
        oldest.add_metric([], self.queue.queued_age())
        yield oldest
        documents, chunks = self.queue.finished_since(time.time() - RATE_WINDOW)
        for name, n in (("documents", documents), ("chunks", chunks)):
            rate = GaugeMetricFamily(
                f"fissure_{name}_per_second",
                f"{name.capitalize()} stored per second over the last {RATE_WINDOW:g} s.",
            )
            rate.add_metric([], n / RATE_WINDOW)
            yield rate


class MemoryCollector:
    """The resident memory of the service's processes, read at scrape time."""

    def collect(self) -> Iterator[Metric]:
        """``fissure_process_resident_memory_bytes{process}`` (see the docs' table)."""
        from fissure.serve.memory import service_rss

        rss = GaugeMetricFamily(
            "fissure_process_resident_memory_bytes",
            "Resident memory (RSS) of the service's processes: server (the supervisor and "
            "its API processes), engine, parsers (all of them).",
            labels=["process"],
        )
        for role, size in service_rss().items():
            rss.add_metric([role], size)
        yield rss


def render(queue: JobQueue) -> bytes:
    """The Prometheus text of every process's metrics, the queue's gauges and the
    processes' memory."""
    registry = CollectorRegistry()
    registry.register(QueueCollector(queue))
    registry.register(MemoryCollector())
    if os.environ.get(MULTIPROC_ENV):
        shared = CollectorRegistry()
        multiprocess.MultiProcessCollector(shared)  # type: ignore[no-untyped-call]
        return generate_latest(shared) + generate_latest(registry)
    return generate_latest(REGISTRY) + generate_latest(registry)
