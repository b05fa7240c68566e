"""What the Ray engine (:mod:`fissure.ingest.ray_engine`) and the service's Ray pool
(:mod:`fissure.ingest.ray_pool`) share: the parse actor, joining a cluster with the
plugins shipped to it, and the cluster's resources.

A parse actor drives one fissure worker process (:class:`~fissure.ingest.workers.WorkerPool`
of size one) for its whole life, so every document parsed on Ray keeps fissure's hard
timeout and memory cap: Ray itself has neither.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import socket
import traceback
from typing import Any

import numpy as np

from fissure.config import ChunkSettings
from fissure.errors import ConfigError, MissingDependencyError
from fissure.ingest.workers import PLUGINS_ENV, Outcome, Task, WorkerPool


class Chunking:
    """A parse actor: one fissure worker process, kept for the actor's life.

    Args:
        settings: Chunk settings.
        limits: The per-document limits, as :class:`WorkerPool` takes them.
        plugins: Modules the worker imports first.
    """

    def __init__(
        self, settings: ChunkSettings, limits: dict[str, Any], plugins: tuple[str, ...]
    ) -> None:
        self.pool = WorkerPool(settings, workers=1, plugins=plugins, **limits)
        self.pool.__enter__()

    def chunk(self, tasks: list[Task]) -> list[Outcome]:
        """Every task's outcome; never raises (the rest of a failed call become failures)."""
        done: list[Outcome] = []
        try:
            done.extend(self.pool.run(tasks))
        except Exception as exc:  # never abort the caller: the rest become failures
            finished = {o.source for o in done}
            trace = traceback.format_exc(limit=20)
            done += [Outcome(t.source, [], "parse", type(exc).__name__, str(exc)[:500], trace)
                     for t in tasks if t.source not in finished]  # fmt: skip
        return done

    def counted(self, tasks: list[Task]) -> tuple[list[Outcome], int, int]:
        """:meth:`chunk`, with how many worker processes were replaced and recycled so far."""
        done = self.chunk(tasks)
        return done, self.pool.replaced, self.pool.recycled

    def ready(self) -> bool:
        """Answers once the actor is up (its worker process started)."""
        return True

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, list[Any]]:
        """A Ray Data batch of ``batch`` blobs (a pickled list of :class:`Task` each) →
        ``outcomes``: one pickled list of :class:`Outcome` per blob."""
        out = []
        for blob in batch["batch"]:
            done = self.chunk(pickle.loads(blob))
            out.append(pickle.dumps(done, protocol=pickle.HIGHEST_PROTOCOL))
        return {"outcomes": out}

    def __del__(self) -> None:
        # getattr: Ray's actor class derives from this one, and its own objects have no pool.
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.close()


def cluster_resources() -> tuple[float, float]:
    """The cluster's CPUs and GPUs."""
    resources = import_ray().cluster_resources()
    return float(resources.get("CPU", 1)), float(resources.get("GPU", 0))


def connect(ray: Any, address: str | None, plugins: tuple[str, ...]) -> None:
    """Join the cluster (or start one here); the actors' worker processes import the same
    plugins as the driver's, so parsers registered by a plugin exist there too.

    Raises:
        ConfigError: The cluster cannot be joined.
    """
    env = {PLUGINS_ENV: ",".join(plugins)} if plugins else {}
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address:
        _check_reachable(address)
    try:
        ray.init(address=address,
                 runtime_env={"env_vars": env} if env else None, log_to_driver=False,
                 configure_logging=False)  # fmt: skip
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ConfigError(f"cannot join the Ray cluster at {address}: {exc}; start one with "
                          "`ray start --head` or pass --address HOST:PORT") from exc  # fmt: skip


def _check_reachable(address: str) -> None:
    """Refuse a ``HOST:PORT`` where nothing listens: ``ray.init`` would retry it for
    minutes (``auto`` and ``ray://`` addresses are left to Ray)."""
    host, colon, port = address.rpartition(":")
    if not colon or not port.isdigit() or "://" in address:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as exc:
        raise ConfigError(f"nothing answers at the Ray cluster address {address} "
                          f"({exc.strerror or exc}); start one with `ray start --head` or "
                          "pass --address HOST:PORT") from exc  # fmt: skip


def need_ray(purpose: str) -> None:
    """Check that Ray is installed, without importing it (that takes seconds).

    Raises:
        MissingDependencyError: It is not (``pip install 'fissure[ray]'``).
    """
    if importlib.util.find_spec("ray") is None:
        raise MissingDependencyError("ray", "ray", purpose)


def import_ray() -> Any:
    """The ``ray`` module (with ``ray.data``).

    Raises:
        MissingDependencyError: Ray is not installed (``pip install 'fissure[ray]'``).
    """
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise MissingDependencyError("ray", "ray", "the Ray engine") from exc
    return ray
