"""Parse and split on Ray actors, for the service's engine (``fissure serve --engine ray``).

:class:`RayPool` has the interface of :class:`~fissure.ingest.workers.WorkerPool` that the
service's runner uses — ``run(tasks)`` yields an :class:`~fissure.ingest.workers.Outcome` per
task as it finishes, ``size``, ``replaced``, ``recycled``, ``with pool:`` — but each of its
slots is a Ray actor (one CPU) that owns a WorkerPool of one process: the Ray ingest
engine's parse actor (:class:`~fissure.ingest.ray_parts.Chunking`). The same worker code
parses either way, under the same hard timeout, memory cap and recycling, so the outcomes
(and the chunks) are the local pool's.

An actor that dies (its node died, its process was killed) fails the document it held with
``WorkerDied``, which the service retries, and a replacement actor is asked for. The
replacement takes documents once it is up (when the cluster has room again); until then the
pool goes on with the actors it has, and documents are only taken from the caller when an
actor is free to work on them.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from fissure.config import ChunkSettings
from fissure.errors import ConfigError
from fissure.ingest.ray_parts import Chunking, cluster_resources, connect, import_ray, need_ray
from fissure.ingest.workers import BOOT_S, Outcome, Task, WorkerPool

log = logging.getLogger("fissure.ingest")
# An actor whose document outlives its worker's own deadline by this much is wedged (a node
# cut off without Ray noticing): it is killed and replaced.
GRACE_S = BOOT_S + 60.0
IDLE_WAIT_S = 5.0  # with nothing in flight, look again this often for actors that came up


@dataclass
class _Actor:
    handle: Any
    replaced: int = 0  # its WorkerPool's counters, as of its last answer
    recycled: int = 0


@dataclass
class _Call:
    actor: _Actor
    task: Task
    started: float
    due: float


class RayPool:
    """Parse actors on a Ray cluster, used like a :class:`WorkerPool`.

    Args:
        settings: Chunk settings.
        address: The cluster (``HOST:PORT``); ``None``: ``$RAY_ADDRESS``, else a Ray started
            here (stopped on :meth:`close`). Unused when Ray is already initialised.
        workers: Actors (one CPU each); ``None``: the cluster's CPUs when the pool starts.
        plugins: Modules every worker process imports first.
        **limits: The per-document limits, as :class:`WorkerPool` takes them (``timeout``,
            ``memory_mb``, ``recycle_after`` …).

    Raises:
        MissingDependencyError: Ray is not installed.
    """

    def __init__(
        self,
        settings: ChunkSettings,
        *,
        address: str | None = None,
        workers: int | None = None,
        plugins: tuple[str, ...] = (),
        **limits: Any,
    ) -> None:
        need_ray("Ray parse actors")  # said now, not when the first job arrives
        self.settings, self.address, self.workers = settings, address, workers
        self.plugins, self._limit_args = plugins, limits
        # The actors' own pools run these limits; a pool that is never started costs nothing.
        self.limits = WorkerPool(settings, workers=1, plugins=plugins, **limits).limits
        self.size = workers or 1
        self.replaced = 0
        self.recycled = 0
        self._retired = [0, 0]  # counters of actors that are gone
        self._idle: list[_Actor] = []
        self._booting: dict[Any, _Actor] = {}  # ``ready()`` reference -> actor
        self._calls: dict[Any, _Call] = {}  # result reference -> call
        self._remote: Any = None
        self._joined = False

    def __enter__(self) -> RayPool:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Join the cluster and ask for the actors (``with pool:`` does; idempotent).

        Raises:
            ConfigError: The cluster cannot be joined.
        """
        if self._remote is not None:
            return
        ray = import_ray()
        if not ray.is_initialized():
            connect(ray, self.address, self.plugins)
            self._joined = True
        self.size = self.workers or max(1, int(cluster_resources()[0]))
        # No restarts by Ray: a dead actor's document must come back to the service as a
        # failure (it is retried from the queue), and a replacement is asked for here.
        self._remote = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(Chunking)
        for _ in range(self.size):
            self._spawn()

    def close(self) -> None:
        """Stop every actor (their worker processes die with them)."""
        if self._remote is None:
            return
        ray = import_ray()
        actors = [*self._idle, *self._booting.values(), *(c.actor for c in self._calls.values())]
        for actor in actors:
            with contextlib.suppress(Exception):  # already dead, or Ray is gone
                ray.kill(actor.handle)
        self._idle, self._booting, self._calls = [], {}, {}
        self._remote = None
        if self._joined:
            ray.shutdown()
            self._joined = False

    def run(self, tasks: Iterable[Task]) -> Iterator[Outcome]:
        """Chunk every task; outcomes come back as they finish (not in task order). A task
        is taken from ``tasks`` only when an actor is free for it."""
        pending = iter(tasks)
        exhausted = False
        while True:
            while self._idle and not exhausted:
                task = next(pending, None)
                if task is None:
                    exhausted = True
                else:
                    self._send(self._idle.pop(), task)
            if exhausted and not self._calls:
                return
            yield from self._collect()

    def _spawn(self) -> None:
        actor = _Actor(self._remote.remote(self.settings, self._limit_args, self.plugins))
        self._booting[actor.handle.ready.remote()] = actor

    def _send(self, actor: _Actor, task: Task) -> None:
        now = time.monotonic()
        due = now + self.limits.seconds_for(len(task.data)) + GRACE_S
        self._calls[actor.handle.counted.remote([task])] = _Call(actor, task, now, due)

    def _collect(self) -> Iterator[Outcome]:
        """Wait for one answer (or a booted actor, or a deadline); yield what finished."""
        ray = import_ray()
        now = time.monotonic()
        nearest = min((c.due for c in self._calls.values()), default=now + IDLE_WAIT_S)
        ready, _ = ray.wait([*self._calls, *self._booting], num_returns=1,
                            timeout=max(0.0, nearest - now))  # fmt: skip
        for ref in ready:
            if ref in self._booting:
                self._booted(ray, ref)
            else:
                yield self._answer(ray, ref)
        now = time.monotonic()
        for ref, call in list(self._calls.items()):
            if now >= call.due:
                del self._calls[ref]
                why = (f"the Ray actor did not answer within {call.due - call.started:.0f} s; "
                       "it was replaced")  # fmt: skip
                yield self._lost(ray, call, "Timeout", why, now)

    def _booted(self, ray: Any, ref: Any) -> None:
        actor = self._booting.pop(ref)
        try:
            ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            if exc.actor_init_failed:  # it would fail the same way again: say why
                raise ConfigError(f"the Ray parse actors cannot start: {exc}") from exc
            log.warning("a Ray parse actor was lost while starting; asking for another")
            self._spawn()
            return
        self._idle.append(actor)

    def _answer(self, ray: Any, ref: Any) -> Outcome:
        call = self._calls.pop(ref)
        try:
            outcomes, replaced, recycled = ray.get(ref)
        except ray.exceptions.RayError as exc:
            why = f"the Ray actor died ({type(exc).__name__}); it was replaced"
            return self._lost(ray, call, "WorkerDied", why, time.monotonic())
        call.actor.replaced, call.actor.recycled = replaced, recycled
        self._idle.append(call.actor)
        self._count()
        (outcome,) = outcomes
        return outcome  # type: ignore[no-any-return]

    def _lost(self, ray: Any, call: _Call, kind: str, why: str, now: float) -> Outcome:
        """The actor of ``call`` is gone (or wedged): retire it, ask for a replacement, and
        fail its document (retryable)."""
        with contextlib.suppress(Exception):
            ray.kill(call.actor.handle)
        self._retired[0] += call.actor.replaced + 1  # its worker process went with it
        self._retired[1] += call.actor.recycled
        self._count()
        log.warning("%s: %s", call.task.source, why)
        self._spawn()
        return Outcome(call.task.source, stage="parse", error_type=kind, message=why,
                       seconds=now - call.started)  # fmt: skip

    def _count(self) -> None:
        live = [*self._idle, *self._booting.values(), *(c.actor for c in self._calls.values())]
        self.replaced = self._retired[0] + sum(a.replaced for a in live)
        self.recycled = self._retired[1] + sum(a.recycled for a in live)
