"""The embedded job queue: SQLite in WAL mode, in the store folder; no server needed.

Every write is one ``BEGIN IMMEDIATE`` transaction; an upload's is committed with
``synchronous=FULL``, so a job (and a small upload's bytes) is on disk before the API
answers 202. Several processes share the file (uvicorn workers, the engine), one writer at
a time (:mod:`fissure.serve.sqlite_db`). The SQL is kept portable
(``ON CONFLICT``, ``RETURNING``-free reads, no SQLite-only functions) so a PostgreSQL
queue can follow it statement by statement.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fissure.errors import ConfigError, StoreError
from fissure.serve.jobs import (
    Completion,
    Counts,
    DocumentRecord,
    Event,
    Job,
    JobState,
    NewJob,
    Page,
    Reason,
    Submitted,
    check_room,
    lease_expired,
    wanted_blobs,
)
from fissure.serve.sqlite_db import Connections
from fissure.serve.sqlite_rows import (
    DOCUMENT_COLUMNS,
    JOB_COLUMNS,
    SCHEMA,
    changed,
    cursor_seq,
    insert_job,
    job_where,
    record_error,
    requeue,
    to_dlq,
    to_job,
    waiting,
)

FILENAME = "queue.sqlite3"
# Bytes no job needs any more: none that is still spooled names them.
UNNEEDED = "NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.digest = blobs.digest AND jobs.spooled = 1)"


class SQLiteQueue:
    """A :class:`~fissure.serve.queue.JobQueue` in ``<folder>/queue.sqlite3``.

    Args:
        folder: The store folder.
        max_attempts: Attempts before the dead-letter queue.
        backoff_seconds: Wait before the first retry (doubling each attempt).
        backoff_max_seconds: Longest wait.
        worker: Opened by the engine (see :class:`~fissure.serve.sqlite_db.Connections`).

    Raises:
        ConfigError: The database cannot be opened.
    """

    def __init__(
        self,
        folder: str | Path,
        *,
        max_attempts: int = 3,
        backoff_seconds: float = 2.0,
        backoff_max_seconds: float = 300.0,
        worker: bool = False,
    ) -> None:
        self.path = Path(folder) / FILENAME
        self.max_attempts = max_attempts
        self.backoff_seconds = backoff_seconds
        self.backoff_max_seconds = backoff_max_seconds
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = Connections(self.path, worker=worker)
            self._db.script(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the job queue {self.path}: {exc}") from exc

    def close(self) -> None:
        """Close every connection this object opened."""
        self._db.close()

    # -- submitting ---------------------------------------------------------------------

    def submit(
        self,
        jobs: Sequence[NewJob],
        blobs: Mapping[str, bytes] | None = None,
        *,
        max_waiting: int | None = None,
    ) -> list[Submitted]:
        """See :meth:`JobQueue.submit`; the bound is checked under the writer lock, which
        every writer of the file takes, so it holds whatever else commits meanwhile.

        Raises:
            QueueFull: Its new jobs would take those waiting past ``max_waiting``.
            StoreError: The database refused the transaction (disk full, read-only).
        """
        now = time.time()
        out = []
        try:
            with self._db.tx() as db:
                for new in jobs:
                    found = job_where(
                        db, "namespace = ? AND document_id = ?", new.namespace, new.document_id
                    )
                    out.append(Submitted(found, False) if found else
                               Submitted(insert_job(db, new, now), True))  # fmt: skip
                check_room(out, max_waiting, lambda: waiting(db))
                db.executemany(
                    "INSERT INTO blobs (digest, data, created) VALUES (?,?,?) "
                    "ON CONFLICT (digest) DO NOTHING",
                    [(d, b, now) for d, b in wanted_blobs(out, blobs)],
                )
        except sqlite3.OperationalError as exc:
            raise StoreError(f"the job queue {self.path} refused the upload: {exc}") from exc
        return out

    # -- working ------------------------------------------------------------------------

    def lease(self, worker: str, n: int, lease_seconds: float) -> list[Job]:
        """See :meth:`JobQueue.lease`."""
        now = time.time()
        with self._db.tx() as db:
            self._expire(db, now)
            ids = [
                i
                for (i,) in db.execute(
                    "SELECT id FROM jobs WHERE (state = 'queued' AND not_before <= ?) "
                    "OR (state = 'running' AND lease_until < ?) ORDER BY seq LIMIT ?",
                    (now, now, n),
                )
            ]
            leased = []
            for job_id in ids:
                db.execute(
                    "UPDATE jobs SET state = 'running', worker = ?, lease_until = ?, "
                    "attempts = attempts + 1, started = ?, updated = ? WHERE id = ?",
                    (worker, now + lease_seconds, now, now, job_id),
                )
                job = changed(db, job_id, now, None)
                leased.append(job)
        return leased

    def _expire(self, db: sqlite3.Connection, now: float) -> None:
        """Dead-letter the expired leases that were their job's last attempt."""
        rows = db.execute(
            "SELECT id, attempts FROM jobs WHERE state = 'running' AND lease_until < ? "
            "AND attempts >= ?",
            (now, self.max_attempts),
        ).fetchall()
        for job_id, attempts in rows:
            to_dlq(db, job_id, lease_expired(attempts), now)

    def renew(self, worker: str, job_ids: Sequence[str], lease_seconds: float) -> list[str]:
        """See :meth:`JobQueue.renew`."""
        if not job_ids:
            return []
        now = time.time()
        held = []
        with self._db.tx() as db:
            for job_id in job_ids:
                n = db.execute(
                    "UPDATE jobs SET lease_until = ? WHERE id = ? AND worker = ? "
                    "AND state = 'running'",
                    (now + lease_seconds, job_id, worker),
                ).rowcount
                if n:
                    held.append(job_id)
        return held

    def release(self, worker: str) -> int:
        """See :meth:`JobQueue.release`."""
        now = time.time()
        with self._db.tx() as db:
            rows = db.execute(
                "SELECT id, attempts FROM jobs WHERE state = 'running' AND worker = ?", (worker,)
            ).fetchall()
            for job_id, attempts in rows:
                if attempts >= self.max_attempts:
                    to_dlq(db, job_id, lease_expired(attempts), now)
                else:
                    requeue(db, job_id, now, now, "its worker restarted")
        return len(rows)

    def complete(self, worker: str, done: Sequence[Completion]) -> int:
        """See :meth:`JobQueue.complete`."""
        now = time.time()
        n = 0
        with self._db.tx() as db:
            for item in done:
                hit = db.execute(
                    "UPDATE jobs SET state = 'done', chunks = ?, finished = ?, updated = ?, "
                    "lease_until = NULL, error_stage = NULL, error_type = NULL, "
                    "error_message = NULL, error_trace = NULL "
                    "WHERE id = ? AND worker = ? AND state = 'running'",
                    (item.chunks, now, now, item.job_id, worker),
                ).rowcount
                if hit:
                    n += 1
                    changed(db, item.job_id, now, f"{item.chunks} chunks")
        return n

    def fail(self, worker: str, job_id: str, reason: Reason, *, retryable: bool) -> Job | None:
        """See :meth:`JobQueue.fail`."""
        now = time.time()
        with self._db.tx() as db:
            row = db.execute(
                "SELECT attempts FROM jobs WHERE id = ? AND worker = ? AND state = 'running'",
                (job_id, worker),
            ).fetchone()
            if row is None:
                return None
            record_error(db, job_id, reason, now)
            attempts = int(row[0])
            if retryable and attempts < self.max_attempts:
                wait = min(self.backoff_max_seconds, self.backoff_seconds * 2 ** (attempts - 1))
                message = f"{reason.error_type}: {reason.message}; retry in {wait:g} s"
                requeue(db, job_id, now, now + wait, message)
            else:
                to_dlq(db, job_id, reason, now)
            return job_where(db, "id = ?", job_id)

    # -- reading ------------------------------------------------------------------------

    def get(self, namespace: str, job_id: str) -> Job | None:
        """See :meth:`JobQueue.get`."""
        return job_where(self._db.conn(), "namespace = ? AND id = ?", namespace, job_id)

    def list_jobs(
        self, namespace: str, state: JobState | None, cursor: str | None, limit: int
    ) -> Page:
        """See :meth:`JobQueue.list_jobs`."""
        after = cursor_seq(cursor)
        where = "namespace = ? AND seq > ?" + (" AND state = ?" if state else "")
        args: tuple[Any, ...] = (namespace, after, state) if state else (namespace, after)
        rows = self._db.read(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE {where} ORDER BY seq LIMIT ?", *args, limit + 1
        )
        jobs = [to_job(r) for r in rows[:limit]]
        more = len(rows) > limit
        return Page(jobs, str(jobs[-1].seq) if more and jobs else None)

    def events(self, namespace: str, after: int, limit: int) -> list[Event]:
        """See :meth:`JobQueue.events`."""
        rows = self._db.read(
            "SELECT seq, namespace, job_id, document_id, state, attempts, time, message "
            "FROM events WHERE namespace = ? AND seq > ? ORDER BY seq LIMIT ?",
            namespace,
            after,
            limit,
        )
        return [Event(*r) for r in rows]

    def last_event(self, namespace: str) -> int:
        """See :meth:`JobQueue.last_event`."""
        rows = self._db.read("SELECT MAX(seq) FROM events WHERE namespace = ?", namespace)
        return int(rows[0][0] or 0)

    def retry(self, namespace: str, job_id: str) -> Job | None:
        """See :meth:`JobQueue.retry`."""
        now = time.time()
        with self._db.tx() as db:
            n = db.execute(
                "UPDATE jobs SET state = 'queued', attempts = 0, not_before = ?, updated = ?, "
                "finished = NULL WHERE namespace = ? AND id = ? AND state = 'failed'",
                (now, now, namespace, job_id),
            ).rowcount
            if not n:
                return None
            return changed(db, job_id, now, "retried from the dead-letter queue")

    def delete_failed(self, namespace: str, job_id: str) -> bool:
        """See :meth:`JobQueue.delete_failed`."""
        with self._db.tx() as db:
            job = job_where(db, "namespace = ? AND id = ? AND state = 'failed'", namespace, job_id)
            if job is None:
                return False
            db.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
            db.execute(
                "DELETE FROM documents WHERE namespace = ? AND document_id = ? "
                "AND state = 'failed'",
                (namespace, job.document_id),
            )
            return True

    def document(self, namespace: str, document_id: str) -> DocumentRecord | None:
        """See :meth:`JobQueue.document`."""
        rows = self._db.read(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE namespace = ? AND document_id = ?",
            namespace,
            document_id,
        )
        return DocumentRecord(*rows[0]) if rows else None

    def forget_document(self, namespace: str, document_id: str) -> bool:
        """See :meth:`JobQueue.forget_document`."""
        with self._db.tx() as db:
            n = db.execute(
                "DELETE FROM documents WHERE namespace = ? AND document_id = ?",
                (namespace, document_id),
            ).rowcount
            key = (namespace, document_id)
            digests = db.execute(
                "SELECT DISTINCT digest FROM jobs WHERE namespace = ? AND document_id = ?", key
            ).fetchall()
            db.execute("DELETE FROM jobs WHERE namespace = ? AND document_id = ?", key)
            for (digest,) in digests:
                db.execute(f"DELETE FROM blobs WHERE digest = ? AND {UNNEEDED}", (digest,))
            return bool(n)

    def counts(self, namespace: str | None = None) -> Counts:
        """See :meth:`JobQueue.counts`."""
        where = "WHERE namespace = ?" if namespace else ""
        args = (namespace,) if namespace else ()
        by_state = {
            state: int(n)
            for state, n in self._db.read(
                f"SELECT state, COUNT(*) FROM jobs {where} GROUP BY state", *args
            )
        }
        spool = self._db.read("SELECT COALESCE(SUM(size), 0) FROM jobs WHERE spooled = 1")
        return Counts(by_state, int(spool[0][0]))

    def finished_since(self, since: float) -> tuple[int, int]:
        """See :meth:`JobQueue.finished_since`."""
        rows = self._db.read(
            "SELECT COUNT(*), COALESCE(SUM(chunks), 0) FROM jobs WHERE state = 'done' "
            "AND finished >= ?",
            since,
        )
        return int(rows[0][0]), int(rows[0][1])

    def queued_age(self) -> float:
        """See :meth:`JobQueue.queued_age`."""
        (since,) = self._db.read("SELECT MIN(updated) FROM jobs WHERE state = 'queued'")[0]
        return 0.0 if since is None else max(0.0, time.time() - since)

    # -- keeping it bounded -------------------------------------------------------------

    def purge(self, done_before: float, failed_before: float, spool_before: float) -> int:
        """See :meth:`JobQueue.purge`."""
        with self._db.tx() as db:
            n = db.execute(
                "UPDATE jobs SET spooled = 0 WHERE state = 'done' AND finished < ? AND spooled = 1",
                (spool_before,),
            ).rowcount
            n += db.execute(
                "DELETE FROM jobs WHERE state = 'done' AND finished < ?", (done_before,)
            ).rowcount
            n += db.execute(
                "DELETE FROM documents WHERE state = 'failed' AND document_id IN (SELECT "
                "document_id FROM jobs WHERE state = 'failed' AND finished < ? AND "
                "jobs.namespace = documents.namespace)",
                (failed_before,),
            ).rowcount
            n += db.execute(
                "DELETE FROM jobs WHERE state = 'failed' AND finished < ?", (failed_before,)
            ).rowcount
            n += db.execute("DELETE FROM events WHERE time < ?", (done_before,)).rowcount
            n += db.execute(f"DELETE FROM blobs WHERE {UNNEEDED}").rowcount
        return n

    def blobs(self, digests: Sequence[str]) -> dict[str, bytes]:
        """See :meth:`JobQueue.blobs`."""
        rows = self._db.read_in("SELECT digest, data FROM blobs WHERE digest IN ({})", digests)
        return {d: bytes(b) for d, b in rows}

    def referenced(self, digests: Sequence[str]) -> set[str]:
        """See :meth:`JobQueue.referenced`."""
        sql = "SELECT DISTINCT digest FROM jobs WHERE spooled = 1 AND digest IN ({})"
        return {d for (d,) in self._db.read_in(sql, digests)}
