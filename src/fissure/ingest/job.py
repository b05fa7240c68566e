"""What an engine is given, and the steps every engine shares.

:func:`fissure.ingest.ingest` plans a run (list, compare with the manifest, delete what
vanished) and hands the documents to do to an :class:`Engine` as a :class:`Job`. The local
engine chunks them in worker processes and embeds on this machine; the Ray engine
(:mod:`fissure.ingest.ray_engine`) spreads both over a cluster. Either way the documents are
read by :func:`read_tasks`, skipped ones become failures through :func:`skipped`, and the
results go through the job's :class:`~fissure.ingest.writer.Writer`, whose write order keeps
a crash harmless.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Generic, Protocol, TypeVar

from fissure.config import ChunkSettings
from fissure.ingest.progress import Progress
from fissure.ingest.workers import Outcome, Task
from fissure.ingest.writer import Timings, Writer
from fissure.settings.model import IngestSettings
from fissure.source.protocol import Item, Source

_DEFAULTS = IngestSettings()  # one set of defaults: the settings model's

T = TypeVar("T")


def default_workers() -> int:
    """One worker per core, leaving one for embedding; at least one, at most four."""
    return max(1, min(4, (os.cpu_count() or 2) - 1))


@dataclass(frozen=True)
class Options:
    """How a run works (what it produces is ``settings`` and the embedder).

    Attributes:
        settings: Chunk settings.
        workers: Parsing processes (local engine).
        timeout: Seconds one document may take to parse and split, plus
            ``timeout_per_mb`` per MB of it (time spent embedding for semantic cuts does
            not count; see :class:`fissure.limits.Limits`).
        memory_mb: Address-space cap per worker, or ``None``.
        batch_chunks: Chunks per embedding batch (and per store write and manifest commit).
        plugins: Modules each worker imports first (they may register parsers).
        progress: Show progress bars on stderr.
        timeout_per_mb: Extra seconds per MB of a document.
        max_inflate_mb: How far one document's compressed content may inflate, MiB.
    """

    settings: ChunkSettings = field(default_factory=ChunkSettings)
    workers: int = field(default_factory=default_workers)
    timeout: float = _DEFAULTS.timeout
    memory_mb: int | None = _DEFAULTS.memory_mb or None
    batch_chunks: int = _DEFAULTS.batch_chunks
    plugins: tuple[str, ...] = ()
    progress: bool = False
    timeout_per_mb: float = _DEFAULTS.timeout_per_mb
    max_inflate_mb: int = _DEFAULTS.max_inflate_mb

    def limits(self) -> dict[str, Any]:
        """The per-document limits, as :class:`~fissure.ingest.workers.WorkerPool` takes
        them and as a run's record keeps them."""
        return {"timeout": self.timeout, "memory_mb": self.memory_mb,
                "timeout_per_mb": self.timeout_per_mb,
                "max_inflate_mb": self.max_inflate_mb}  # fmt: skip


@dataclass
class Job:
    """The documents one run must chunk, embed and store.

    Attributes:
        source: Where the documents come from.
        todo: The planned documents (new, changed, re-configured or forced).
        writer: Embeds and stores groups, in the crash-safe order.
        options: How to run.
        progress: Progress bars.
        export: Where each stored chunk is also written as a JSON line, or ``None``.
    """

    source: Source
    todo: list[Item]
    writer: Writer
    options: Options
    progress: Progress
    export: IO[str] | None = None


class Engine(Protocol):
    """Runs a :class:`Job`: every planned document ends stored or as a dead letter."""

    def run(self, job: Job) -> int:
        """Chunk, embed and store ``job.todo``; returns how many parsing workers were
        replaced (after a timeout or a crash)."""
        ...


def skipped(todo: list[Item]) -> list[Outcome]:
    """The documents the source listed but would not read (too large, …), as failures."""
    return [Outcome(i.source, stage="source", error_type="Skipped", message=i.skip)
            for i in todo if i.skip]  # fmt: skip


def read_tasks(
    source: Source,
    items: list[Item],
    failures: list[Outcome],
    timings: Timings,
    digests: dict[str, str] | None = None,
) -> Iterator[Task]:
    """Read each document; one that cannot be read is appended to ``failures`` instead.

    A source may hand an item back with a newer hash (a file that changed since the
    listing is read as it is now); ``digests`` (the writer's) then records that hash.
    """
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
            failures.append(Outcome(item.source, stage="fetch", error_type=type(data).__name__,
                                    message=message))  # fmt: skip
        else:
            if digests is not None:
                digests[item.source] = item.digest
            yield Task(item.source, data)


def export_chunks(outcome: Outcome, stream: IO[str] | None) -> None:
    """Write the outcome's chunks to ``stream`` as JSON lines (nothing when ``None``)."""
    if stream is None:
        return
    for chunk in outcome.chunks:
        stream.write(json.dumps(chunk.to_dict(), ensure_ascii=False))
        stream.write("\n")


class Groups(Generic[T]):
    """Collects items into groups of about ``limit`` chunks and hands each to ``flush``.

    Args:
        flush: Called with each full group, and with the rest at :meth:`finish`.
        limit: Chunks per group (each document counts one more, so that groups of
            chunk-less failures still end).
    """

    def __init__(self, flush: Callable[[list[T]], None], limit: int) -> None:
        self.flush, self.limit = flush, limit
        self._group: list[T] = []
        self._size = 0

    def add(self, item: T, chunks: int) -> None:
        """Add an item with ``chunks`` chunks; flush when the group is full."""
        self._group.append(item)
        self._size += chunks + 1
        if self._size >= self.limit:
            self.flush(self._group)
            self._group, self._size = [], 0

    def finish(self) -> None:
        """Flush what is left."""
        if self._group:
            self.flush(self._group)
            self._group, self._size = [], 0
