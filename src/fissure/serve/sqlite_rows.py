"""The embedded queue's tables and the row helpers its statements share.

The statements are plain SQL (``ON CONFLICT``, no SQLite-only functions); a PostgreSQL
queue would keep the same tables with ``BIGSERIAL`` for ``seq``.
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from typing import Any

from fissure.errors import InputError
from fissure.serve.jobs import CURSOR_PATTERN, Job, NewJob, Reason

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT NOT NULL UNIQUE,
    namespace     TEXT NOT NULL,
    document_id   TEXT NOT NULL,
    name          TEXT NOT NULL,
    source        TEXT NOT NULL,
    digest        TEXT NOT NULL,
    size          INTEGER NOT NULL,
    origin        TEXT NOT NULL,
    state         TEXT NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    created       REAL NOT NULL,
    updated       REAL NOT NULL,
    started       REAL,
    finished      REAL,
    not_before    REAL NOT NULL,
    lease_until   REAL,
    worker        TEXT,
    chunks        INTEGER,
    error_stage   TEXT,
    error_type    TEXT,
    error_message TEXT,
    error_trace   TEXT,
    spooled       INTEGER NOT NULL DEFAULT 1,
    UNIQUE (namespace, document_id)
);
CREATE INDEX IF NOT EXISTS jobs_ready ON jobs (state, not_before);
CREATE INDEX IF NOT EXISTS jobs_listing ON jobs (namespace, state, seq);
CREATE INDEX IF NOT EXISTS jobs_digest ON jobs (digest);
CREATE TABLE IF NOT EXISTS documents (
    namespace   TEXT NOT NULL,
    document_id TEXT NOT NULL,
    name        TEXT NOT NULL,
    source      TEXT NOT NULL,
    digest      TEXT NOT NULL,
    size        INTEGER NOT NULL,
    state       TEXT NOT NULL,
    chunks      INTEGER,
    job_id      TEXT,
    created     REAL NOT NULL,
    updated     REAL NOT NULL,
    PRIMARY KEY (namespace, document_id)
);
CREATE TABLE IF NOT EXISTS events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace   TEXT NOT NULL,
    job_id      TEXT NOT NULL,
    document_id TEXT NOT NULL,
    state       TEXT NOT NULL,
    attempts    INTEGER NOT NULL,
    time        REAL NOT NULL,
    message     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_namespace ON events (namespace, seq);
CREATE TABLE IF NOT EXISTS blobs (
    digest  TEXT PRIMARY KEY,
    data    BLOB NOT NULL,
    created REAL NOT NULL
);
"""
JOB_COLUMNS = (
    "id, namespace, document_id, name, source, digest, size, origin, state, attempts, "
    "created, updated, started, finished, not_before, chunks, error_stage, error_type, "
    "error_message, seq"
)
DOCUMENT_COLUMNS = (
    "namespace, document_id, name, source, digest, size, state, chunks, job_id, created, updated"
)


def job_where(db: sqlite3.Connection, where: str, *args: Any) -> Job | None:
    row = db.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE {where}", args).fetchone()
    return to_job(row) if row else None


def to_job(row: tuple[Any, ...]) -> Job:
    return Job(*row)


def cursor_seq(cursor: str | None) -> int:
    """The seq a page cursor names (``None`` or empty: from the start); the API's schema
    declares the same :data:`~fissure.serve.jobs.CURSOR_PATTERN`.

    Raises:
        InputError: Not a cursor this server gives.
    """
    if not cursor:
        return 0
    if not re.fullmatch(CURSOR_PATTERN, cursor):
        raise InputError(f"cursor {cursor[:40]!r} is not one this server gave: pass next_cursor")
    return int(cursor)


def record_error(db: sqlite3.Connection, job_id: str, reason: Reason, now: float) -> None:
    db.execute(
        "UPDATE jobs SET error_stage = ?, error_type = ?, error_message = ?, error_trace = ?, "
        "updated = ? WHERE id = ?",
        (
            reason.stage,
            reason.error_type,
            reason.message[:2000],
            reason.traceback[:20000],
            now,
            job_id,
        ),
    )


def document_state(db: sqlite3.Connection, job: Job, now: float) -> None:
    db.execute(
        "UPDATE documents SET state = ?, chunks = ?, job_id = ?, updated = ? "
        "WHERE namespace = ? AND document_id = ?",
        (job.state, job.chunks, job.id, now, job.namespace, job.document_id),
    )


def add_event(db: sqlite3.Connection, job: Job, message: str) -> None:
    db.execute(
        "INSERT INTO events (namespace, job_id, document_id, state, attempts, time, message) "
        "VALUES (?,?,?,?,?,?,?)",
        (
            job.namespace,
            job.id,
            job.document_id,
            job.state,
            job.attempts,
            job.updated,
            message[:500],
        ),
    )


def changed(db: sqlite3.Connection, job_id: str, now: float, message: str | None) -> Job:
    """After a job's row changed: bring its document record along and log the event
    (``message`` ``None``: the attempt number). Returns the job as it is now."""
    job = job_where(db, "id = ?", job_id)
    assert job is not None, job_id
    document_state(db, job, now)
    add_event(db, job, f"attempt {job.attempts}" if message is None else message)
    return job


def waiting(db: sqlite3.Connection) -> int:
    """Jobs queued or running (the queue's depth), as this transaction sees them."""
    (n,) = db.execute("SELECT COUNT(*) FROM jobs WHERE state IN ('queued', 'running')").fetchone()
    return int(n)


def insert_job(db: sqlite3.Connection, new: NewJob, now: float) -> Job:
    """Insert a job for a document that has none: ``queued``, or ``done`` at once when the
    document is stored already (its job was purged), with its document record and event."""
    stored = db.execute(
        "SELECT chunks FROM documents WHERE namespace = ? AND document_id = ? "
        "AND state = 'done'", (new.namespace, new.document_id),
    ).fetchone()  # fmt: skip
    state, chunks, finished = ("done", stored[0], now) if stored else ("queued", None, None)
    job_id = uuid.uuid4().hex
    who = (new.namespace, new.document_id, new.name, new.source, new.digest, new.size)
    db.execute(
        "INSERT INTO jobs (namespace, document_id, name, source, digest, size, id, origin, "
        "state, created, updated, finished, not_before, chunks, spooled) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (*who, job_id, new.origin, state, now, now, finished, now, chunks, int(not stored)),
    )
    if not stored:  # a document purged with its job, or a new one
        db.execute(
            "INSERT INTO documents (namespace, document_id, name, source, digest, size, "
            "state, job_id, created, updated) VALUES (?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT (namespace, document_id) DO UPDATE SET state = excluded.state, "
            "job_id = excluded.job_id, updated = excluded.updated",
            (*who, "queued", job_id, now, now),
        )
    job = job_where(db, "id = ?", job_id)
    assert job is not None
    add_event(db, job, "already stored" if stored else "")
    return job


def requeue(
    db: sqlite3.Connection, job_id: str, now: float, not_before: float, message: str
) -> None:
    """Put a job back in the queue, to be leased after ``not_before``."""
    db.execute(
        "UPDATE jobs SET state = 'queued', worker = NULL, lease_until = NULL, "
        "not_before = ?, updated = ? WHERE id = ?",
        (not_before, now, job_id),
    )
    changed(db, job_id, now, message)


def to_dlq(db: sqlite3.Connection, job_id: str, reason: Reason, now: float) -> None:
    """Move a job to the dead-letter queue with ``reason``."""
    record_error(db, job_id, reason, now)
    db.execute(
        "UPDATE jobs SET state = 'failed', worker = NULL, lease_until = NULL, finished = ?, "
        "updated = ? WHERE id = ?",
        (now, now, job_id),
    )
    changed(db, job_id, now, f"{reason.error_type}: {reason.message}")
