"""The embedded queue's tables and the row helpers its statements share.

The statements are plain SQL (``ON CONFLICT``, no SQLite-only functions); a PostgreSQL
queue would keep the same tables with ``BIGSERIAL`` for ``seq``.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from fissure.errors import InputError
from fissure.serve.jobs import Job, Reason

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
    if not cursor:
        return 0
    if not (cursor.isascii() and cursor.isdigit() and len(cursor) <= 18):
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
