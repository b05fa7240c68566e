"""The embedded queue's connections: one per thread, WAL, and one writer at a time.

Writers take a lock first — a thread lock within a process, then an advisory lock on
``queue.lock`` across processes, which wakes the next writer the moment the last one
commits — so no writer sleeps in SQLite's busy handler, whose back-off (1 ms growing to
100 ms per try) would be added to an upload's answer. Uploads commit with
``synchronous=FULL`` (a job is on disk before its 202); the engine's connections do not
wait for the disk and copy the log into the database from a thread of their own, so no
upload's commit waits behind the engine's fsync or checkpoint inside the lock.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

LOCKNAME = "queue.lock"
CHECKPOINT_SECONDS = 1.0


class Connections:
    """Connections to the SQLite file ``path``, one per thread.

    Args:
        path: The database file.
        worker: Opened by the engine: commits do not wait for the disk (a lease or a
            completion lost to a power cut only runs a job again, and the store's writes
            are idempotent), and a thread checkpoints the log every second (PASSIVE:
            writers go on meanwhile), outside the writer lock.
    """

    def __init__(self, path: Path, *, worker: bool = False) -> None:
        self.path = path
        self.worker = worker
        self._local = threading.local()
        self._lock = threading.Lock()  # one writer at a time in this process
        self._opened = threading.Lock()
        self._all: list[sqlite3.Connection] = []
        self._writer = -1
        self._stop = threading.Event()
        if worker:
            threading.Thread(target=self._checkpoints, name="queue-checkpoint", daemon=True).start()

    def conn(self) -> sqlite3.Connection:
        """This thread's connection."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, timeout=60, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={'NORMAL' if self.worker else 'FULL'}")
            # A commit copies the log into the database only past 100,000 pages (should no
            # engine run); the engine's thread does it every second. An upload's commit
            # must not: SQLite checkpoints inside COMMIT, so under the writer lock, and at
            # 1,000 pages (what a burst of uploads writes in well under a second) every
            # upload in flight waited ~100 ms behind one checkpoint's writes and fsync.
            conn.execute("PRAGMA wal_autocheckpoint=100000")
            self._local.conn = conn
            with self._opened:
                self._all.append(conn)
        return conn

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (no lock upgrade that could deadlock)."""
        conn = self.conn()
        with self._lock:
            if self._writer < 0:
                self._writer = os.open(self.path.parent / LOCKNAME, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(self._writer, fcntl.LOCK_EX)
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            finally:
                fcntl.flock(self._writer, fcntl.LOCK_UN)

    def script(self, sql: str) -> None:
        """Run ``sql`` (several statements) in one write transaction."""
        with self._lock:
            self.conn().executescript(f"BEGIN IMMEDIATE;\n{sql}\nCOMMIT;")

    def read(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        """The rows of one statement."""
        return self.conn().execute(sql, args).fetchall()

    def read_in(self, sql: str, keys: Sequence[Any]) -> list[tuple[Any, ...]]:
        """The rows of ``sql``, whose ``IN ({})`` takes ``keys``: 500 at a time, under
        SQLite's limit on bound parameters."""
        rows: list[tuple[Any, ...]] = []
        for at in range(0, len(keys), 500):
            part = list(keys[at : at + 500])
            rows += self.read(sql.format(",".join("?" * len(part))), *part)
        return rows

    def _checkpoints(self) -> None:
        while not self._stop.wait(CHECKPOINT_SECONDS):
            try:
                self.conn().execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error:  # busy or closing: the next round tries again
                continue

    def close(self) -> None:
        """Close every connection opened here."""
        self._stop.set()
        with self._opened:
            for conn in self._all:
                conn.close()
            self._all.clear()
        with self._lock:
            if self._writer >= 0:
                os.close(self._writer)
                self._writer = -1
        self._local = threading.local()
