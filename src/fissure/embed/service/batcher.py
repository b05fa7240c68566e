"""Dynamic batching: the texts of many concurrent requests, one embedder, one thread.

Requests put their texts on a queue that is bounded in texts; one worker thread takes the
oldest, waits up to ``max_wait_ms`` (counted from the oldest text's arrival) for more
until it has ``max_batch`` texts, embeds them in one call and hands each request its rows.
A request larger than a batch is spread over several; a batch holds texts of many requests.
The embedder is called from that thread only: models are not thread-safe, and one call
already uses every core.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np

from fissure.embed.protocol import Embedder
from fissure.errors import ConfigError, FissureError

RATE_WINDOW = 60.0  # seconds over which texts per second are averaged


class Overloaded(FissureError):
    """The queue holds too many texts to take this request now (HTTP 429)."""


class Closed(FissureError):
    """The service is shutting down (HTTP 503)."""


class EmbedFailed(FissureError):
    """The embedder raised on a batch holding this request's texts (HTTP 500)."""


class Histogram:
    """Counts of observations per bucket (upper bounds, then +Inf), their sum and count."""

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(self.bounds) + 1)
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        """Record one observation."""
        at = next((i for i, b in enumerate(self.bounds) if value <= b), len(self.bounds))
        self.counts[at] += 1
        self.sum += value
        self.count += 1

    def cumulative(self) -> list[tuple[str, int]]:
        """``(le, observations <= le)`` for every bound and ``+Inf``, as Prometheus has it."""
        out, total = [], 0
        for bound, n in zip((*map(_le, self.bounds), "+Inf"), self.counts, strict=True):
            total += n
            out.append((bound, total))
        return out


def _le(bound: float) -> str:
    return f"{bound:g}"


_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class Stats:
    """What the service did since it started; every method takes its own lock."""

    def __init__(self, max_batch: int) -> None:
        sizes = [1 << i for i in range(max_batch.bit_length()) if 1 << i < max_batch]
        self.started = time.time()
        self.requests: dict[str, int] = {}
        self.texts = 0
        self.batches = 0
        self.batch_failures = 0
        self.batch_texts = Histogram([*sizes, max_batch])
        self.batch_seconds = Histogram(_SECONDS)
        self.queue_wait = Histogram(_SECONDS)
        self.request_seconds = Histogram(_SECONDS)
        self._recent: deque[tuple[float, int]] = deque()
        self._lock = threading.Lock()

    def request(self, outcome: str, seconds: float | None = None) -> None:
        """Count a request by outcome (``ok``, ``overloaded`` …) and time a served one."""
        with self._lock:
            self.requests[outcome] = self.requests.get(outcome, 0) + 1
            if seconds is not None:
                self.request_seconds.observe(seconds)

    def waited(self, seconds: float) -> None:
        """A request's first texts entered a batch ``seconds`` after it arrived."""
        with self._lock:
            self.queue_wait.observe(seconds)

    def batch(self, texts: int, seconds: float, ok: bool) -> None:
        """An embedding call of ``texts`` texts that took ``seconds``."""
        now = time.monotonic()
        with self._lock:
            self.batches += 1
            self.batch_texts.observe(texts)
            self.batch_seconds.observe(seconds)
            if not ok:
                self.batch_failures += 1
                return
            self.texts += texts
            self._recent.append((now, texts))
            while self._recent and self._recent[0][0] < now - RATE_WINDOW:
                self._recent.popleft()

    def texts_per_second(self) -> float:
        """Texts embedded per second over the last :data:`RATE_WINDOW` seconds (or since
        the start, when that is shorter)."""
        now = time.monotonic()
        with self._lock:
            n = sum(k for t, k in self._recent if t >= now - RATE_WINDOW)
        span = min(RATE_WINDOW, max(time.time() - self.started, 1e-3))
        return n / span

    def mean_batch(self) -> float:
        """Mean texts per embedding call (0 before the first)."""
        with self._lock:
            return self.batch_texts.sum / self.batch_texts.count if self.batch_texts.count else 0.0


@dataclass(eq=False)
class _Request:
    texts: list[str]
    arrived: float
    future: Future[np.ndarray] = field(default_factory=Future)
    rows: np.ndarray | None = None
    taken: int = 0  # texts handed to batches so far
    done: int = 0  # texts embedded so far


class Batcher:
    """Batches texts across concurrent requests for one embedder on one thread.

    Args:
        embedder: What embeds; called only from the batcher's thread.
        max_batch: Most texts per embedding call.
        max_wait_ms: How long the oldest waiting text may wait for others to join its batch.
        max_queue: Most texts waiting; a request that would pass it is refused
            (:class:`Overloaded`).

    Raises:
        ConfigError: A setting is out of range.
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        max_batch: int = 64,
        max_wait_ms: float = 5.0,
        max_queue: int = 1024,
    ) -> None:
        if max_batch < 1 or max_queue < 1 or max_wait_ms < 0:
            raise ConfigError("max_batch >= 1, max_queue >= 1 and max_wait_ms >= 0, please")
        self.embedder = embedder
        self.dim = int(embedder.dim)
        self.max_batch, self.max_queue = max_batch, max_queue
        self.max_wait = max_wait_ms / 1000.0
        self.stats = Stats(max_batch)
        self._cond = threading.Condition()
        self._queue: deque[_Request] = deque()
        self._queued = 0  # texts waiting, not yet in a batch
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="fissure-embed-batcher", daemon=True)
        self._thread.start()

    @property
    def queued(self) -> int:
        """Texts waiting for a batch."""
        with self._cond:
            return self._queued

    def alive(self) -> bool:
        """Whether the batcher takes work (not closed, its thread running)."""
        return not self._closed and self._thread.is_alive()

    def submit(self, texts: Sequence[str]) -> Future[np.ndarray]:
        """Queue ``texts``; the future gets their ``(len(texts), dim)`` float32 rows, in order.

        Raises:
            ValueError: No texts, or more than the queue can ever hold.
            Overloaded: The queue is too full for them now.
            Closed: The batcher is closed.
        """
        if not texts or len(texts) > self.max_queue:
            raise ValueError(f"give 1 to {self.max_queue} texts, not {len(texts)}")
        request = _Request(list(texts), time.monotonic())
        with self._cond:
            if self._closed:
                raise Closed("the embedding service is shutting down")
            if self._queued + len(texts) > self.max_queue:
                raise Overloaded(
                    f"{self._queued} texts are waiting (at most {self.max_queue}): retry later"
                )
            self._queue.append(request)
            self._queued += len(texts)
            self._cond.notify()
        return request.future

    def close(self, timeout: float = 10.0) -> None:
        """Refuse new texts, fail the waiting ones (:class:`Closed`), finish the batch in
        flight and stop the thread."""
        with self._cond:
            self._closed = True
            for request in self._queue:
                if not request.future.done():
                    request.future.set_exception(Closed("the embedding service shut down"))
            self._queue.clear()
            self._queued = 0
            self._cond.notify_all()
        self._thread.join(timeout)

    def _run(self) -> None:
        while (batch := self._next_batch()) is not None:
            if batch:
                self._embed(batch)

    def _next_batch(self) -> list[tuple[_Request, int, int]] | None:
        """The next batch as ``(request, start, end)`` slices; ``None`` once closed."""
        with self._cond:
            while not self._queue and not self._closed:
                self._cond.wait()
            if self._closed:
                return None
            deadline = self._queue[0].arrived + self.max_wait
            while self._queued < self.max_batch and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return self._take()

    def _take(self) -> list[tuple[_Request, int, int]]:
        """Up to ``max_batch`` texts from the front of the queue (holding the lock)."""
        slices: list[tuple[_Request, int, int]] = []
        room, now = self.max_batch, time.monotonic()
        while self._queue and room:
            request = self._queue[0]
            if request.taken == 0:
                if not request.future.set_running_or_notify_cancel():  # the client gave up
                    self._queue.popleft()
                    self._queued -= len(request.texts)
                    continue
                self.stats.waited(now - request.arrived)
            n = min(room, len(request.texts) - request.taken)
            slices.append((request, request.taken, request.taken + n))
            request.taken += n
            room -= n
            self._queued -= n
            if request.taken == len(request.texts):
                self._queue.popleft()
        return slices

    def _embed(self, batch: list[tuple[_Request, int, int]]) -> None:
        texts = [t for request, start, end in batch for t in request.texts[start:end]]
        started = time.perf_counter()
        try:
            vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32)
            if vectors.shape != (len(texts), self.dim):
                raise ValueError(f"the embedder gave {vectors.shape} for {len(texts)} texts")
        except Exception as exc:  # any failure is the batch's requests', never the thread's
            self.stats.batch(len(texts), time.perf_counter() - started, ok=False)
            self._fail(batch, EmbedFailed(f"{type(exc).__name__}: {exc}"[:500]))
            return
        self.stats.batch(len(texts), time.perf_counter() - started, ok=True)
        at = 0
        with self._cond:  # close() may fail a request at the same time
            for request, start, end in batch:
                n, at = end - start, at + end - start
                if request.future.done():
                    continue
                if request.rows is None:
                    request.rows = np.empty((len(request.texts), self.dim), dtype=np.float32)
                request.rows[start:end] = vectors[at - n : at]
                request.done += n
                if request.done == len(request.texts):
                    request.future.set_result(request.rows)

    def _fail(self, batch: list[tuple[_Request, int, int]], error: EmbedFailed) -> None:
        """Fail every request with texts in ``batch``, and drop their texts still queued."""
        with self._cond:
            for request, _, _ in batch:
                if request.future.done():
                    continue
                request.future.set_exception(error)
                if request.taken < len(request.texts) and request in self._queue:
                    self._queue.remove(request)
                    self._queued -= len(request.texts) - request.taken
