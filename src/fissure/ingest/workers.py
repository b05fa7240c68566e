"""Parse and split in worker processes, with a hard per-document timeout and a memory cap.

A worker that overruns its deadline is killed and replaced; one that dies (a crash, the
memory cap) is replaced too. Either way the document comes back as a failure, and the run
goes on. Workers are fresh interpreters (``python -m fissure.ingest.worker``) talking over
a socket pair: never forked from the main process, which holds model threads and database
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
from fissure.store.protocol import Piece
from fissure.types import Chunk

PLUGINS_ENV = "FISSURE_PLUGINS"


@dataclass(frozen=True, slots=True)
class Task:
    """A document to parse and split."""

    source: str
    data: bytes


@dataclass(slots=True)
class Outcome:
    """A document's chunks, or why it has none (``stage``, ``error_type``, ``message``).

    ``windows``: one text per chunk to embed beside it (``embed_window_tokens``), or empty.
    ``pieces``: the sentence pieces linked to the chunks (``sub_vector_tokens``), or empty.
    ``duplicates``: chunks left out because their text repeats an earlier one (``dedup``).
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


class WorkerPool:
    """A fixed number of worker processes, each chunking one document at a time.

    Args:
        settings: Chunk settings (each worker builds its own Chunker once).
        workers: Number of processes.
        timeout: Seconds a document may take before its worker is killed.
        memory_mb: Address-space cap per worker (``RLIMIT_AS``); ``None`` for none.
        plugins: Modules to import in each worker (see :func:`plugin_modules`).
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
        recycle_after: int | None = None,
    ) -> None:
        self.settings = settings
        self.size = max(1, workers)
        self.timeout = timeout
        self.memory_mb = memory_mb
        self.plugins = plugins
        self.recycle_after = recycle_after
        self.replaced = 0
        self.recycled = 0
        self._slots: list[_Slot] = []

    def __enter__(self) -> WorkerPool:
        self._slots = [self._start() for _ in range(self.size)]
        return self

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
        slot.task, slot.started = task, time.monotonic()
        slot.done += 1
        # If the worker is gone, _collect sees its closed socket and reports it.
        with contextlib.suppress(OSError, ValueError):
            slot.conn.send((task.source, task.data))

    def _collect(self, busy: list[_Slot]) -> Iterator[Outcome]:
        nearest = min(s.started for s in busy) + self.timeout
        # A worker that dies closes its end of the socket, so its connection turns ready.
        ready = set(wait([s.conn for s in busy], timeout=max(0.0, nearest - time.monotonic())))
        now = time.monotonic()
        for slot in busy:
            task = slot.task
            assert task is not None
            if slot.conn in ready:
                try:
                    message = slot.conn.recv()
                except (EOFError, OSError):
                    message = None
                if message is not None:
                    slot.task = None
                    yield _outcome(message)
                    continue
            if slot.conn in ready:
                try:
                    code: int | None = slot.process.wait(5)
                except subprocess.TimeoutExpired:
                    code = None
                yield self._replace(slot, task, "WorkerDied", _death(code), now)
            elif now - slot.started >= self.timeout:
                why = f"parsing took longer than {self.timeout:g} s; the worker was killed"
                yield self._replace(slot, task, "Timeout", why, now)

    def _replace(self, slot: _Slot, task: Task, kind: str, why: str, now: float) -> Outcome:
        slot.process.kill()
        slot.process.wait()
        slot.conn.close()
        fresh = self._start()
        slot.process, slot.conn, slot.task, slot.done = fresh.process, fresh.conn, None, 0
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
        fresh = self._start()
        slot.process, slot.conn, slot.done = fresh.process, fresh.conn, 0
        self.recycled += 1

    def _start(self) -> _Slot:
        mine, theirs = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        process = subprocess.Popen(
            [sys.executable, "-m", "fissure.ingest.worker", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            env=env,
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        conn = Connection(mine.detach())
        conn.send_bytes(pickle.dumps((self.settings, self.plugins, self.memory_mb)))
        return _Slot(process, conn)


def _outcome(message: tuple[Any, ...]) -> Outcome:
    if message[0] == "ok":
        _, source, chunks, seconds, windows, pieces, duplicates = message
        return Outcome(source, chunks, seconds=seconds, windows=windows, pieces=pieces,
                       duplicates=duplicates)  # fmt: skip
    _, source, stage, kind, text, trace, seconds = message
    return Outcome(source, [], stage, kind, text, trace, seconds)


def _death(code: int | None) -> str:
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        return f"the worker process died ({name}); it was replaced"
    return f"the worker process exited with code {code}; it was replaced"
