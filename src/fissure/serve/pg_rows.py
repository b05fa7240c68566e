"""The PostgreSQL queue's tables and the row helpers its transactions share.

The tables mirror the embedded queue's (:mod:`fissure.serve.sqlite_rows`), prefixed
``fissure_`` beside the store's own tables, so the same column lists and the same
statements serve both. Two things differ, because PostgreSQL writers run at the same time:

- **Event numbers follow commit order.** A sequence hands out numbers when rows are
  inserted, not when transactions commit: a reader could see event 6 committed before event
  5 and skip 5 for good. So a transaction gathers its events and numbers them last, from a
  per-namespace counter row (``fissure_event_counters``): updating that row locks it until
  the transaction commits, so the next writer of the namespace numbers after it, and any
  snapshot that sees an event sees every lower number of its namespace.
- **Times are the database's clock** (``clock_timestamp()``, read once per transaction), so
  service processes on machines whose clocks differ agree on leases and backoff.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from fissure.serve.jobs import Job, NewJob, Reason, Submitted, lease_expired
from fissure.serve.sqlite_rows import JOB_COLUMNS

SCHEMA = """
CREATE TABLE IF NOT EXISTS fissure_jobs (
    seq bigserial PRIMARY KEY, id text NOT NULL UNIQUE, namespace text NOT NULL,
    document_id text NOT NULL, name text NOT NULL, source text NOT NULL,
    digest text NOT NULL, size bigint NOT NULL, origin text NOT NULL, state text NOT NULL,
    attempts integer NOT NULL DEFAULT 0, created double precision NOT NULL,
    updated double precision NOT NULL, started double precision,
    finished double precision, not_before double precision NOT NULL,
    lease_until double precision, worker text, chunks integer, error_stage text,
    error_type text, error_message text, error_trace text,
    spooled integer NOT NULL DEFAULT 1, UNIQUE (namespace, document_id));
CREATE INDEX IF NOT EXISTS fissure_jobs_ready ON fissure_jobs (state, not_before);
CREATE INDEX IF NOT EXISTS fissure_jobs_listing ON fissure_jobs (namespace, state, seq);
CREATE INDEX IF NOT EXISTS fissure_jobs_digest ON fissure_jobs (digest);
CREATE INDEX IF NOT EXISTS fissure_jobs_worker ON fissure_jobs (worker) WHERE worker IS NOT NULL;
CREATE TABLE IF NOT EXISTS fissure_job_documents (
    namespace text NOT NULL, document_id text NOT NULL, name text NOT NULL,
    source text NOT NULL, digest text NOT NULL, size bigint NOT NULL, state text NOT NULL,
    chunks integer, job_id text, created double precision NOT NULL,
    updated double precision NOT NULL, PRIMARY KEY (namespace, document_id));
CREATE TABLE IF NOT EXISTS fissure_events (
    namespace text NOT NULL, seq bigint NOT NULL, job_id text NOT NULL,
    document_id text NOT NULL, state text NOT NULL, attempts integer NOT NULL,
    time double precision NOT NULL, message text NOT NULL, PRIMARY KEY (namespace, seq));
CREATE INDEX IF NOT EXISTS fissure_events_time ON fissure_events (time);
CREATE TABLE IF NOT EXISTS fissure_event_counters (
    namespace text PRIMARY KEY, last bigint NOT NULL);
CREATE TABLE IF NOT EXISTS fissure_blobs (
    digest text PRIMARY KEY, data bytea NOT NULL, created double precision NOT NULL);
"""
_SCHEMA_LOCK = 0x66697371  # advisory lock key ("fisq"): the queue's DDL, once at a time
# Advisory lock key ("fisr"): bounded submissions count the jobs waiting one at a time.
_ROOM_LOCK = 0x66697372


@dataclass
class Tx:
    """One write transaction: its cursor, the database's time, and the events it made
    (numbered by :func:`number_events` just before the commit)."""

    cur: Any
    now: float
    events: list[tuple[Any, ...]] = field(default_factory=list)


def job_where(cur: Any, where: str, *args: Any, lock: bool = False) -> Job | None:
    """The one job matching ``where`` (``%s`` placeholders), or ``None``."""
    sql = f"SELECT {JOB_COLUMNS} FROM fissure_jobs WHERE {where}" + (" FOR UPDATE" if lock else "")
    row = cur.execute(sql, args).fetchone()
    return Job(*row) if row else None


def record_error(tx: Tx, job_id: str, reason: Reason) -> None:
    """Keep a failed attempt's reason on its job."""
    tx.cur.execute(
        "UPDATE fissure_jobs SET error_stage = %s, error_type = %s, error_message = %s, "
        "error_trace = %s, updated = %s WHERE id = %s",
        (reason.stage, reason.error_type, reason.message[:2000], reason.traceback[:20000],
         tx.now, job_id),
    )  # fmt: skip


def requeue(tx: Tx, job_id: str, not_before: float, message: str) -> None:
    """Put a job back in the queue, to be leased after ``not_before``."""
    tx.cur.execute(
        "UPDATE fissure_jobs SET state = 'queued', worker = NULL, lease_until = NULL, "
        "not_before = %s, updated = %s WHERE id = %s",
        (not_before, tx.now, job_id),
    )
    changed(tx, job_id, message)


def to_dlq(tx: Tx, job_id: str, reason: Reason) -> None:
    """Move a job to the dead-letter queue with ``reason``."""
    record_error(tx, job_id, reason)
    tx.cur.execute(
        "UPDATE fissure_jobs SET state = 'failed', worker = NULL, lease_until = NULL, "
        "finished = %s, updated = %s WHERE id = %s",
        (tx.now, tx.now, job_id),
    )
    changed(tx, job_id, f"{reason.error_type}: {reason.message}")


def add_event(tx: Tx, job: Job, message: str) -> None:
    """Note an event of ``job`` (numbered at the end of the transaction)."""
    tx.events.append((job.namespace, job.id, job.document_id, job.state, job.attempts,
                      job.updated, message[:500]))  # fmt: skip


def changed(tx: Tx, job_id: str, message: str | None) -> Job:
    """After a job's row changed: bring its document record along and note the event
    (``message`` ``None``: the attempt number). Returns the job as it is now."""
    job = job_where(tx.cur, "id = %s", job_id)
    assert job is not None, job_id
    tx.cur.execute(
        "UPDATE fissure_job_documents SET state = %s, chunks = %s, job_id = %s, updated = %s "
        "WHERE namespace = %s AND document_id = %s",
        (job.state, job.chunks, job.id, tx.now, job.namespace, job.document_id),
    )
    add_event(tx, job, f"attempt {job.attempts}" if message is None else message)
    return job


def number_events(tx: Tx) -> None:
    """Number and insert the transaction's events, namespace by namespace in one order
    (two transactions never wait for each other's counters in a cycle)."""
    by_namespace: dict[str, list[tuple[Any, ...]]] = {}
    for event in tx.events:
        by_namespace.setdefault(event[0], []).append(event)
    for namespace in sorted(by_namespace):
        events = by_namespace[namespace]
        (last,) = tx.cur.execute(
            "INSERT INTO fissure_event_counters VALUES (%s, %s) ON CONFLICT (namespace) DO "
            "UPDATE SET last = fissure_event_counters.last + EXCLUDED.last RETURNING last",
            (namespace, len(events)),
        ).fetchone()
        first = int(last) - len(events) + 1
        tx.cur.executemany(
            "INSERT INTO fissure_events (namespace, seq, job_id, document_id, state, "
            "attempts, time, message) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            [(e[0], first + i, *e[1:]) for i, e in enumerate(events)],
        )
    tx.events.clear()


def submit_one(tx: Tx, new: NewJob) -> Submitted:
    """Submit one job (its key locked already): the existing job, or a new one."""
    key = (new.namespace, new.document_id)
    found = job_where(tx.cur, "namespace = %s AND document_id = %s", *key)
    if found is not None:
        return Submitted(found, False)
    stored = tx.cur.execute(
        "SELECT chunks FROM fissure_job_documents WHERE namespace = %s AND document_id = %s "
        "AND state = 'done'", key,
    ).fetchone()  # fmt: skip
    now = tx.now
    state, chunks, finished = ("done", stored[0], now) if stored else ("queued", None, None)
    who = (new.namespace, new.document_id, new.name, new.source, new.digest, new.size)
    job_id = uuid.uuid4().hex
    inserted = tx.cur.execute(
        "INSERT INTO fissure_jobs (namespace, document_id, name, source, digest, size, id, "
        "origin, state, created, updated, finished, not_before, chunks, spooled) VALUES "
        "(%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) "
        "ON CONFLICT (namespace, document_id) DO NOTHING RETURNING id",
        (*who, job_id, new.origin, state, now, now, finished, now, chunks, int(not stored)),
    ).fetchone()
    if inserted is None:  # another process's submission committed first: that is the job
        raced = job_where(tx.cur, "namespace = %s AND document_id = %s", *key)
        assert raced is not None
        return Submitted(raced, False)
    if not stored:
        tx.cur.execute(
            "INSERT INTO fissure_job_documents (namespace, document_id, name, source, "
            "digest, size, state, job_id, created, updated) VALUES "
            "(%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (namespace, document_id) DO "
            "UPDATE SET state = EXCLUDED.state, job_id = EXCLUDED.job_id, "
            "updated = EXCLUDED.updated",
            (*who, "queued", job_id, now, now),
        )
    job = job_where(tx.cur, "id = %s", job_id)
    assert job is not None
    add_event(tx, job, "already stored" if stored else "")
    return Submitted(job, True)


def create_schema(tx: Tx) -> None:
    """Create the queue's tables (one process at a time)."""
    tx.cur.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
    tx.cur.execute(SCHEMA)


def waiting(tx: Tx) -> int:
    """Jobs queued or running, this transaction's included, for a bounded submission.

    It takes a lock first, held to the commit: the next bounded submission counts only
    after this one committed (a statement of ``READ COMMITTED`` then sees it), so two
    never both fit in the last place. Taken after the submission's key locks, never
    before any, so it closes no cycle with them.
    """
    tx.cur.execute("SELECT pg_advisory_xact_lock(%s)", (_ROOM_LOCK,))
    (n,) = tx.cur.execute(
        "SELECT count(*) FROM fissure_jobs WHERE state IN ('queued', 'running')"
    ).fetchone()
    return int(n)


def expire(tx: Tx, max_attempts: int) -> None:
    """Dead-letter the expired leases that were their job's last attempt."""
    rows = tx.cur.execute(
        "SELECT id, attempts FROM fissure_jobs WHERE state = 'running' AND lease_until < %s "
        "AND attempts >= %s FOR UPDATE SKIP LOCKED",
        (tx.now, max_attempts),
    ).fetchall()
    for job_id, attempts in rows:
        to_dlq(tx, job_id, lease_expired(attempts))
