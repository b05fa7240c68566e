"""The manifest: what is in the store, per document, in one SQLite file next to it.

Per document it keeps the content hash, the settings fingerprint (chunk settings and
embedder model) and the chunk ids, so a re-run only touches what changed. It also holds
the dead-letter queue (``failures``), the ``pending`` journal that makes runs crash-safe,
and how each origin was last ingested (so failures can be retried with the same settings).

Crash safety rests on one order of writes, used by :mod:`fissure.ingest`: mark documents
pending → delete their chunks by source → upsert the new chunks → commit the manifest rows
(which clears the marks). Whatever moment a run dies, the next one finds the pending marks,
deletes those documents' chunks and forgets them, so they are chunked again from scratch.

:class:`ManifestProtocol` is what the pipeline and the CLI need of a manifest; this SQLite
:class:`Manifest` (one run at a time per store folder) is the default, and
:class:`fissure.store.pg_manifest.PostgresManifest` is the shared one for many runs.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from fissure.errors import ConfigError, StoreError
from fissure.store.readonly import connect, read_only_message, refusal

FILENAME = "manifest.sqlite3"
_PAGE = 500
_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    source      TEXT PRIMARY KEY,
    origin      TEXT NOT NULL,
    digest      TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status      TEXT NOT NULL,
    chunk_ids   TEXT NOT NULL,
    tokens      TEXT NOT NULL,
    updated     REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_origin ON documents (origin);
CREATE TABLE IF NOT EXISTS pending (source TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS failures (
    id         INTEGER PRIMARY KEY,
    source     TEXT NOT NULL,
    origin     TEXT NOT NULL,
    stage      TEXT NOT NULL,
    error_type TEXT NOT NULL,
    message    TEXT NOT NULL,
    traceback  TEXT NOT NULL,
    time       REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS failures_source ON failures (source);
CREATE TABLE IF NOT EXISTS runs (
    origin TEXT PRIMARY KEY,
    spec   TEXT NOT NULL,
    config TEXT NOT NULL,
    time   REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class Entry:
    """A document as the store holds it (``status`` is ``ok`` or ``failed``)."""

    source: str
    origin: str
    digest: str
    fingerprint: str
    status: str = "ok"
    chunk_ids: tuple[str, ...] = ()
    tokens: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Failure:
    """One dead letter: which document failed, at which stage, and why.

    Its text is always storable: a message may quote a name or a piece of a document with
    lone surrogates or NUL characters, which SQLite and PostgreSQL refuse (and a refused
    commit would end the run); those are kept as ``\\udce9`` / ``\\x00`` escapes.
    """

    source: str
    origin: str
    stage: str
    error_type: str
    message: str
    traceback: str = ""
    time: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        for name in ("stage", "error_type", "message", "traceback"):
            value = getattr(self, name)
            if not _storable(value):
                object.__setattr__(self, name, _escaped(value))


@dataclass(frozen=True, slots=True)
class Known:
    """What the manifest remembers of a document, to decide whether to redo it."""

    digest: str
    fingerprint: str
    status: str


@runtime_checkable
class ManifestProtocol(Protocol):
    """The manifest: documents, the pending journal, dead letters, runs and settings.

    A manifest that several runs share must make :meth:`mark_pending` exclusive per document
    until :meth:`commit` or :meth:`forget` (another run marking the same document waits),
    and :meth:`claim_orphans` must return only marks that no live run holds.
    """

    def close(self) -> None:
        """Release the connection (and whatever documents this run still holds)."""
        ...

    def known(self, origin: str) -> dict[str, Known]:
        """Every document recorded for ``origin``."""
        ...

    def pending(self) -> list[str]:
        """Documents marked as being written (by a live run, or by one that died)."""
        ...

    def claim_orphans(self) -> list[str]:
        """Pending documents whose run died, now held by this run: the caller deletes their
        chunks and then :meth:`forget` s them."""
        ...

    def mark_pending(self, sources: Iterable[str]) -> None:
        """Journal ``sources`` as being written (before touching the store)."""
        ...

    def commit(self, entries: Sequence[Entry], failures: Sequence[Failure] = ()) -> None:
        """Record finished documents and their failures; clear (and release) their marks."""
        ...

    def forget(self, sources: Iterable[str]) -> None:
        """Drop every record of ``sources`` (after their chunks left the store)."""
        ...

    def failures(self, origin: str | None = None) -> list[Failure]:
        """The dead-letter queue, oldest first, optionally for one origin."""
        ...

    def clear_failures(self, sources: Sequence[str] | None = None) -> int:
        """Drop dead letters and the failed documents' rows; returns how many."""
        ...

    def documents(self, origin: str | None = None) -> Iterator[tuple[str, str, list[int]]]:
        """``(source, status, chunk token counts)`` of every document, by source."""
        ...

    def chunk_ids(self, origin: str | None = None) -> set[str]:
        """Every chunk id the manifest says the store holds."""
        ...

    def record_run(self, origin: str, spec: str, config: dict[str, Any]) -> None:
        """Remember how ``origin`` was ingested (for ``dlq retry`` and ``status``)."""
        ...

    def runs(self) -> dict[str, tuple[str, dict[str, Any], float]]:
        """``origin -> (spec, config, time)`` of the last run of every origin."""
        ...

    def get_meta(self, key: str) -> str | None:
        """A store-wide setting, e.g. the embedding width."""
        ...

    def set_meta(self, key: str, value: str) -> None:
        """Set a store-wide setting."""
        ...


class Manifest:
    """The manifest file of a store folder; safe to share between threads.

    A write the disk or the folder refuses (full, read-only) raises
    :class:`~fissure.errors.StoreError` with one line that says so and how to fix it.

    Args:
        folder: The store folder (the file is ``manifest.sqlite3`` inside).
        read_only: Open the existing file for reading only: nothing is created or written
            (:func:`fissure.store.readonly.connect`), and every write raises
            :class:`~fissure.errors.StoreError`.

    Raises:
        ConfigError: The file cannot be opened or made (the message says so when the
            folder is read-only or its disk is full); read-only: it is missing.
    """

    def __init__(self, folder: str | Path, read_only: bool = False) -> None:
        self.path = Path(folder) / FILENAME
        self.read_only = read_only
        self._lock = threading.Lock()
        if read_only:
            self._conn = connect(self.path)
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            with conn:
                conn.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            why = refusal(self.path.parent, exc, f"the manifest {self.path.name}")
            raise ConfigError(why or f"cannot open the manifest {self.path}: {exc}") from exc
        self._conn = conn

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._conn.close()

    def known(self, origin: str) -> dict[str, Known]:
        """Every document recorded for ``origin``."""
        rows = self._read(
            "SELECT source, digest, fingerprint, status FROM documents WHERE origin = ?", origin
        )
        return {s: Known(d, f, st) for s, d, f, st in rows}

    def pending(self) -> list[str]:
        """Documents a run started writing and did not finish."""
        return [s for (s,) in self._read("SELECT source FROM pending")]

    def claim_orphans(self) -> list[str]:
        """Every pending mark: one run at a time uses a store folder, so a mark found
        when a run starts was left by a run that died."""
        return self.pending()

    def mark_pending(self, sources: Iterable[str]) -> None:
        """Journal ``sources`` as being written (before touching the store)."""
        with self._writing():
            self._conn.executemany(
                "INSERT OR IGNORE INTO pending VALUES (?)", [(s,) for s in sources]
            )

    def commit(self, entries: Sequence[Entry], failures: Sequence[Failure] = ()) -> None:
        """Record finished documents and their failures, and clear their pending marks.

        A document's earlier failures are dropped: its latest run is what counts.
        """
        now = time.time()
        rows = [
            (e.source, e.origin, e.digest, e.fingerprint, e.status,
             json.dumps(e.chunk_ids), json.dumps(e.tokens), now)
            for e in entries
        ]  # fmt: skip
        sources = [(e.source,) for e in entries]
        with self._writing():
            self._conn.executemany(
                "INSERT OR REPLACE INTO documents VALUES (?,?,?,?,?,?,?,?)", rows
            )
            self._conn.executemany("DELETE FROM failures WHERE source = ?", sources)
            self._conn.executemany(
                "INSERT INTO failures (source, origin, stage, error_type, message, traceback, "
                "time) VALUES (?,?,?,?,?,?,?)",
                [(f.source, f.origin, f.stage, f.error_type, f.message, f.traceback, f.time)
                 for f in failures],
            )  # fmt: skip
            self._conn.executemany("DELETE FROM pending WHERE source = ?", sources)

    def forget(self, sources: Iterable[str]) -> None:
        """Drop every record of ``sources`` (after their chunks left the store)."""
        keys = [(s,) for s in sources]
        with self._writing():
            for table in ("documents", "failures", "pending"):
                self._conn.executemany(f"DELETE FROM {table} WHERE source = ?", keys)

    def failures(self, origin: str | None = None) -> list[Failure]:
        """The dead-letter queue, oldest first, optionally for one origin."""
        sql = "SELECT source, origin, stage, error_type, message, traceback, time FROM failures"
        rows = (
            self._read(sql + " WHERE origin = ? ORDER BY id", origin)
            if origin
            else (self._read(sql + " ORDER BY id"))
        )
        return [Failure(*row) for row in rows]

    def clear_failures(self, sources: Sequence[str] | None = None) -> int:
        """Drop dead letters (all, or those of ``sources``) and the failed documents' rows,
        so that the next run tries those documents again. Returns how many were dropped."""
        with self._writing():
            if sources is None:
                n = self._conn.execute("DELETE FROM failures").rowcount
                self._conn.execute("DELETE FROM documents WHERE status = 'failed'")
                return int(n)
            keys = [(s,) for s in sources]
            n = sum(
                self._conn.execute("DELETE FROM failures WHERE source = ?", k).rowcount
                for k in keys
            )
            self._conn.executemany(
                "DELETE FROM documents WHERE source = ? AND status = 'failed'", keys
            )
            return n

    def documents(self, origin: str | None = None) -> Iterator[tuple[str, str, list[int]]]:
        """``(source, status, chunk token counts)`` of every document, page by page."""
        sql = "SELECT source, status, tokens FROM documents"
        args: tuple[Any, ...] = (origin,) if origin else ()
        sql += " WHERE origin = ?" if origin else ""
        for source, status, tokens in self._read(sql + " ORDER BY source", *args):
            yield source, status, json.loads(tokens)

    def chunk_ids(self, origin: str | None = None) -> set[str]:
        """Every chunk id the manifest says the store holds."""
        sql = "SELECT chunk_ids FROM documents" + (" WHERE origin = ?" if origin else "")
        rows = self._read(sql, *((origin,) if origin else ()))
        return {i for (ids,) in rows for i in json.loads(ids)}

    def record_run(self, origin: str, spec: str, config: dict[str, Any]) -> None:
        """Remember how ``origin`` was ingested (for ``dlq retry`` and ``status``)."""
        with self._writing():
            self._conn.execute(
                "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?)",
                (origin, spec, json.dumps(config, sort_keys=True), time.time()),
            )

    def runs(self) -> dict[str, tuple[str, dict[str, Any], float]]:
        """``origin -> (spec, config, time)`` of the last run of every origin."""
        rows = self._read("SELECT origin, spec, config, time FROM runs ORDER BY origin")
        return {o: (s, json.loads(c), t) for o, s, c, t in rows}

    def get_meta(self, key: str) -> str | None:
        """A store-wide setting, e.g. the embedding width."""
        rows = self._read("SELECT value FROM meta WHERE key = ?", key)
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a store-wide setting."""
        with self._writing():
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def _read(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._conn.execute(sql, args).fetchall()
            except sqlite3.OperationalError as exc:
                # A manifest made before a table existed, read as it is: that table is empty.
                if self.read_only and "no such table" in str(exc):
                    return []
                raise

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One transaction, under the lock; a refused write is one clear error."""
        with self._lock:
            if self.read_only:
                raise StoreError(read_only_message(self.path.parent, "opened for reading"))
            try:
                with self._conn:
                    yield
            except sqlite3.OperationalError as exc:  # full, read-only, locked, I/O
                what = f"the manifest {self.path.name}"
                why = refusal(self.path.parent, exc, what)
                raise StoreError(
                    why or f"cannot write {what} in {self.path.parent}: {exc}"
                ) from exc


def _storable(value: str) -> bool:
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _escaped(value: str) -> str:
    return value.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")
