"""The engine's parsing pool, chosen in one place: worker processes here, or Ray actors.

Both run the same worker code under the same limits (hard timeout, memory cap, recycling),
so the chunks are the same either way; only where the processes run differs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from fissure.ingest.workers import Outcome, Task, WorkerPool, plugin_modules
from fissure.serve.settings import ServiceSettings


class Pool(Protocol):
    """What the runner needs of a parsing pool (:class:`WorkerPool` is one)."""

    size: int  # documents it works on at once
    replaced: int  # worker processes replaced after a timeout or a death, so far
    recycled: int  # worker processes replaced after ``recycle_after`` documents, so far

    def start(self) -> None:
        """Start the workers (idempotent)."""

    def run(self, tasks: Iterable[Task]) -> Iterator[Outcome]:
        """Chunk every task; outcomes as they finish."""

    def __enter__(self) -> Pool:
        """Start, and stop on leaving."""

    def __exit__(self, *exc: object) -> None:
        """Stop every worker."""


def open_pool(settings: ServiceSettings) -> Pool:
    """The parsing pool ``settings.engine`` names, not started yet.

    Raises:
        MissingDependencyError: ``engine="ray"`` without Ray installed.
    """
    s = settings
    limits: dict[str, Any] = {
        "timeout": s.timeout,
        "memory_mb": s.memory_mb,
        "timeout_per_mb": s.timeout_per_mb,
        "max_inflate_mb": s.max_inflate_mb,
        "recycle_after": s.recycle_after,
    }
    plugins = plugin_modules(s.plugins)
    if s.engine == "ray":
        from fissure.ingest.ray_pool import RayPool

        return RayPool(s.chunk, address=s.address, workers=s.workers, plugins=plugins, **limits)
    from fissure.ingest import default_workers

    return WorkerPool(s.chunk, workers=s.workers or default_workers(), plugins=plugins, **limits)
