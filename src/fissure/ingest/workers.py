"""Parse and split in worker processes, with a hard per-document timeout and a memory cap.

A worker that overruns its deadline is killed and replaced; one that dies (a crash, the
memory cap) is replaced too. Either way the document comes back as a failure, and the run
goes on. The deadline is :meth:`fissure.limits.Limits.seconds_for` the document's size, not
counting time the worker reports as spent embedding (semantic cuts): time limits catch
hung documents, not big ones.

Workers are fresh interpreters (``python -m fissure.ingest.worker``) talking over a socket
pair: never forked from the main process, which holds model threads and database
handles, and independent of how the main program was started (no ``__main__`` guard needed).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from fissure.config import ChunkSettings
from fissure.errors import ConfigError
from fissure.limits import Limits
from fissure.store.protocol import Piece
from fissure.types import Chunk

PLUGINS_ENV = "FISSURE_PLUGINS"
BOOT_S = 300.0  # seconds a worker may take to start (imports, plugins, a model to load)


@dataclass(frozen=True, slots=True)
class Task:
    """A document to parse and split (``mime`` overrides detection)."""

    source: str
    data: bytes
    mime: str | None = None


@dataclass(slots=True)
class Outcome:
    """A document's chunks, or why it has none (``stage``, ``error_type``, ``message``).

    ``windows``: one text per chunk to embed beside it (``embed_window_tokens``), or empty.
    ``pieces``: the sentence pieces linked to the chunks (``sub_vector_tokens``), or empty.
    ``duplicates``: chunks left out because their text repeats an earlier one (``dedup``).
    ``mime`` and ``fallback``: the document's detected type and, when a coarser parser
    stood in, why (empty and ``None`` for a failure).
    ``time_left`` and ``time_limit``: the seconds of the document's time limit that
    parsing left for embedding and storing it, and that limit in words (infinite and
    empty where no limit applies); see :class:`fissure.ingest.writer.Writer`.
    """

    source: str
    chunks: list[Chunk] = field(default_factory=list)
    stage: str = ""
    error_type: str = ""
    message: str = ""
    traceback: str = ""
    seconds: float = 0.0
    windows: list[str] = field(default_factory=list)
    pieces: list[Piece] = field(default_factory=list)
    duplicates: int = 0
    mime: str = ""
    fallback: str | None = None
    time_left: float = float("inf")
    time_limit: str = ""

    @property
    def failed(self) -> bool:
        """Whether the document failed."""
        return bool(self.stage)


def plugin_modules(extra: Iterable[str] = ()) -> tuple[str, ...]:
    """Modules every worker imports first: ``extra`` plus ``$FISSURE_PLUGINS`` (comma list).

    A plugin registers parsers (``fissure.parse.registry.register``) at import time.
    """
    named = [m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(",") if m.strip()]
    return tuple(dict.fromkeys([*extra, *named]))


@dataclass
class _Slot:
    process: Any
    conn: Connection
    task: Task | None = None
    started: float = 0.0
    done: int = 0
    deadline: float = 0.0
    budget: float = 0.0
    embedding_since: float | None = None  # the worker is embedding (semantic cuts)
    embedded: float = 0.0  # seconds spent embedding, added to the deadline
    spawned: float = field(default_factory=time.monotonic)
    ready: bool = False  # the worker has loaded its settings, plugins and models

    def begin(self, task: Task, budget: float) -> None:
        self.task, self.started, self.budget = task, time.monotonic(), budget
        self.deadline, self.embedding_since, self.embedded = self.started + budget, None, 0.0

    def booted(self, now: float) -> None:
        """The worker is ready: a document sent before counts its time from now."""
        self.ready = True
        if self.task is not None:
            self.started, self.deadline = now, now + self.budget

    def due(self) -> float:
        """When the document's time is up (never while the worker embeds); a worker that
        is still starting (loading a model) has ``BOOT_S`` for that first."""
        if not self.ready:
            return self.spawned + BOOT_S
        return float("inf") if self.embedding_since is not None else self.deadline


class WorkerPool:
    """A fixed number of worker processes, each chunking one document at a time.

    Args:
        settings: Chunk settings (each worker builds its own Chunker once).
        workers: Number of processes.
        timeout: Seconds a document may take before its worker is killed, plus
            ``timeout_per_mb`` per MB of the document (embedding time does not count).
        memory_mb: Address-space cap per worker (``RLIMIT_AS``); ``None`` for none.
        plugins: Modules to import in each worker (see :func:`plugin_modules`).
        timeout_per_mb: Extra seconds per MB of the document.
        max_inflate_mb: How far a document's compressed content may inflate, MiB.
        recycle_after: Replace a worker with a fresh one after it has chunked this many
            documents (``None``: never), so memory a parser leaks cannot only grow.
    """

    def __init__(
        self,
        settings: ChunkSettings,
        *,
        workers: int = 2,
        timeout: float = 120.0,
        memory_mb: int | None = 4096,
        plugins: tuple[str, ...] = (),
        timeout_per_mb: float = 10.0,
        max_inflate_mb: int = 256,
        recycle_after: int | None = None,
    ) -> None:
        self.settings = settings
        self.size = max(1, workers)
        self.limits = Limits(memory_mb, timeout, timeout_per_mb, max_inflate_mb)
        self.timeout = timeout
        self.memory_mb = memory_mb
        self.plugins = plugins
        self.recycle_after = recycle_after
        self.replaced = 0
        self.recycled = 0
        self._slots: list[_Slot] = []

    def __enter__(self) -> WorkerPool:
        self.start()
        return self

    def start(self) -> None:
        """Start the worker processes (``with pool:`` does; idempotent)."""
        if not self._slots:
            self._slots = [self._start() for _ in range(self.size)]

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker (politely, then by force)."""
        for slot in self._slots:
            with contextlib.suppress(OSError, ValueError):
                slot.conn.send(None)
        deadline = time.monotonic() + 2
        for slot in self._slots:
            try:
                slot.process.wait(max(0.01, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                slot.process.kill()
                slot.process.wait()
            slot.conn.close()
        self._slots = []

    def run(self, tasks: Iterable[Task]) -> Iterator[Outcome]:
        """Chunk every task; outcomes come back as they finish (not in task order)."""
        pending = iter(tasks)
        exhausted = False
        while True:
            for slot in self._slots:
                if slot.task is None and not exhausted:
                    task = next(pending, None)
                    if task is None:
                        exhausted = True
                    else:
                        self._send(slot, task)
            busy = [s for s in self._slots if s.task is not None]
            if not busy:
                return
            yield from self._collect(busy)

    def _send(self, slot: _Slot, task: Task) -> None:
        if self.recycle_after and slot.done >= self.recycle_after:
            self._recycle(slot)
        slot.begin(task, self.limits.seconds_for(len(task.data)))
        slot.done += 1
        # If the worker is gone, _collect sees its closed socket and reports it.
        with contextlib.suppress(OSError, ValueError):
            slot.conn.send((task.source, task.data, task.mime))

    def _collect(self, busy: list[_Slot]) -> Iterator[Outcome]:
        nearest = min(s.due() for s in busy)
        # A worker that dies closes its end of the socket, so its connection turns ready.
        room = None if nearest == float("inf") else max(0.0, nearest - time.monotonic())
        ready = set(wait([s.conn for s in busy], timeout=room))
        now = time.monotonic()
        for slot in busy:
            task = slot.task
            assert task is not None
            if slot.conn in ready:
                try:
                    message = slot.conn.recv()
                except (EOFError, OSError):
                    message = None
                if message is not None and message[0] == "embedding":
                    _embedding(slot, message[1], now)
                    continue
                if message is not None and message[0] == "ready":
                    slot.booted(now)
                    continue
                if message is not None and message[0] == "fatal":
                    raise ConfigError(f"the parsing workers cannot start: {message[1]}")
                if message is not None:
                    slot.task = None
                    outcome = _outcome(message)
                    # The rest of the document's time is for embedding and storing it.
                    outcome.time_left = max(0.0, slot.deadline - now)
                    outcome.time_limit = self.limits.describe_time(len(task.data))
                    yield outcome
                    continue
            if slot.conn in ready:
                try:
                    code: int | None = slot.process.wait(5)
                except subprocess.TimeoutExpired:
                    code = None
                yield self._replace(slot, task, "WorkerDied", self._death(code), now)
            elif now >= slot.due():
                why = (
                    self._late(slot, task)
                    if slot.ready
                    else (f"the worker did not start within {BOOT_S:g} s; it was replaced")
                )
                yield self._replace(slot, task, "Timeout", why, now)

    def _late(self, slot: _Slot, task: Task) -> str:
        budget = self.limits.describe_time(len(task.data))
        spent = f", not counting {slot.embedded:.0f} s of embedding" if slot.embedded else ""
        return (
            f"parsing and splitting took longer than {budget}{spent}; the worker was killed. "
            "If the document is genuine, raise --timeout or --timeout-per-mb"
        )

    def _death(self, code: int | None) -> str:
        why = _death(code)
        memory = self.limits.memory_mb
        if memory and code is not None and -code in (signal.SIGABRT, signal.SIGKILL,
                                                     signal.SIGSEGV, signal.SIGBUS):  # fmt: skip
            why += (
                f"; a native library may have hit the memory limit ({memory} MiB, "
                "--memory-mb) and aborted"
            )
        return why

    def _replace(self, slot: _Slot, task: Task, kind: str, why: str, now: float) -> Outcome:
        slot.process.kill()
        slot.process.wait()
        slot.conn.close()
        self._renew(slot)
        slot.task = None
        self.replaced += 1
        return Outcome(task.source, stage="parse", error_type=kind, message=why,
                       seconds=now - slot.started)  # fmt: skip

    def _recycle(self, slot: _Slot) -> None:
        """Stop an idle worker politely and put a fresh one in its place."""
        with contextlib.suppress(OSError, ValueError):
            slot.conn.send(None)
        try:
            slot.process.wait(2)
        except subprocess.TimeoutExpired:
            slot.process.kill()
            slot.process.wait()
        slot.conn.close()
        self._renew(slot)
        self.recycled += 1

    def _renew(self, slot: _Slot) -> None:
        """A fresh worker in ``slot``: it must boot (and say so) before its clock runs."""
        fresh = self._start()
        slot.process, slot.conn, slot.done = fresh.process, fresh.conn, 0
        slot.spawned, slot.ready = fresh.spawned, False

    def _start(self) -> _Slot:
        mine, theirs = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        # -P: the current folder is not put on sys.path (with -m it would be, and a file
        # there named like a module, say h2.py, would run in the worker).
        process = subprocess.Popen(
            [sys.executable, "-P", "-m", "fissure.ingest.worker", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            env=env,
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        conn = Connection(mine.detach())
        conn.send_bytes(pickle.dumps((self.settings, self.plugins, self.limits)))
        return _Slot(process, conn)


def _embedding(slot: _Slot, started: bool, now: float) -> None:
    """The worker began or ended embedding: that time is added to its deadline."""
    if started:
        slot.embedding_since = now
    elif slot.embedding_since is not None:
        spent = now - slot.embedding_since
        slot.embedded += spent
        slot.deadline += spent
        slot.embedding_since = None


def _outcome(message: tuple[Any, ...]) -> Outcome:
    if message[0] == "ok":
        _, source, chunks, seconds, windows, pieces, duplicates, mime, fallback = message
        return Outcome(source, chunks, seconds=seconds, windows=windows, pieces=pieces,
                       duplicates=duplicates, mime=mime, fallback=fallback)  # fmt: skip
    _, source, stage, kind, text, trace, seconds = message
    return Outcome(source, [], stage, kind, text, trace, seconds)


def _death(code: int | None) -> str:
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        return f"the worker process died ({name}); it was replaced"
    return f"the worker process exited with code {code}; it was replaced"
