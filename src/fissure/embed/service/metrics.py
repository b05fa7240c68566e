"""The embedding service's ``/metrics``: its :class:`Stats` as Prometheus text.

Plain numbers kept by the batcher, turned into metric families at scrape time, in a
registry of this app's own (two apps in one process, as in tests, never collide).
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from fissure.embed.service.batcher import RATE_WINDOW, Batcher, Histogram

OUTCOMES = (
    "ok",
    "invalid",
    "too_large",
    "unauthorized",
    "unknown_model",
    "overloaded",
    "failed",
    "unavailable",
)


class StatsCollector:
    """Metric families read from a batcher's stats at scrape time."""

    def __init__(self, batcher: Batcher) -> None:
        self.batcher = batcher

    def collect(self) -> Iterator[Metric]:
        """The families (docs/embedding-service.md lists them)."""
        b, s = self.batcher, self.batcher.stats
        requests = CounterMetricFamily(
            "fissure_embed_requests",
            "Requests to /v1/embeddings by outcome (overloaded: answered 429).",
            labels=["outcome"],
        )
        counts = dict(s.requests)
        for outcome in (*OUTCOMES, *sorted(set(counts) - set(OUTCOMES))):
            requests.add_metric([outcome], counts.get(outcome, 0))
        yield requests
        yield CounterMetricFamily("fissure_embed_texts", "Texts embedded.", value=s.texts)
        yield CounterMetricFamily("fissure_embed_batches", "Embedding calls.", value=s.batches)
        yield CounterMetricFamily(
            "fissure_embed_batch_failures",
            "Embedding calls that raised (their requests got 500).",
            value=s.batch_failures,
        )
        yield _histogram("fissure_embed_batch_texts", "Texts per embedding call.", s.batch_texts)
        yield GaugeMetricFamily(
            "fissure_embed_batch_texts_mean",
            "Mean texts per embedding call since the start.",
            value=s.mean_batch(),
        )
        yield _histogram(
            "fissure_embed_queue_wait_seconds",
            "From a request's arrival to its first texts entering a batch.",
            s.queue_wait,
        )
        yield _histogram(
            "fissure_embed_batch_seconds", "Time of one embedding call.", s.batch_seconds
        )
        yield _histogram(
            "fissure_embed_request_seconds",
            "From arrival to answer of a served request.",
            s.request_seconds,
        )
        yield GaugeMetricFamily(
            "fissure_embed_texts_per_second",
            f"Texts embedded per second over the last {RATE_WINDOW:g} s.",
            value=s.texts_per_second(),
        )
        yield GaugeMetricFamily(
            "fissure_embed_queue_texts", "Texts waiting for a batch.", value=b.queued
        )
        yield GaugeMetricFamily(
            "fissure_embed_queue_capacity",
            "Most texts that may wait (past it: 429).",
            value=b.max_queue,
        )
        yield GaugeMetricFamily(
            "fissure_embed_max_batch", "Most texts per embedding call.", value=b.max_batch
        )


def _histogram(name: str, doc: str, histogram: Histogram) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, doc)
    family.add_metric(
        [], [(le, float(n)) for le, n in histogram.cumulative()], sum_value=histogram.sum
    )
    return family


def render(batcher: Batcher) -> bytes:
    """The Prometheus text of ``batcher``'s stats."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StatsCollector(batcher))
    return generate_latest(registry)
