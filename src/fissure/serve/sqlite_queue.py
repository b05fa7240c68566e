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
import uuid
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
    wanted_blobs,
)
from fissure.serve.sqlite_db import Connections
from fissure.serve.sqlite_rows import (
    DOCUMENT_COLUMNS,
    JOB_COLUMNS,
    SCHEMA,
    add_event,
    changed,
    cursor_seq,
    job_where,
    record_error,
    to_job,
)

FILENAME = "queue.sqlite3"
# Bytes no job needs any more: none that is still spooled names them.
UNNEEDED = "NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.digest = blobs.digest AND jobs.spooled = 1)"
_EXPIRED_WHY = "the worker holding it stopped answering {n} times (killed, or out of memory)"


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
        self, jobs: Sequence[NewJob], blobs: Mapping[str, bytes] | None = None
    ) -> list[Submitted]:
        """See :meth:`JobQueue.submit`.

        Raises:
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
                    if found is not None:
                        out.append(Submitted(found, False))
                        continue
                    out.append(Submitted(self._insert(db, new, now), True))
                db.executemany(
                    "INSERT INTO blobs (digest, data, created) VALUES (?,?,?) "
                    "ON CONFLICT (digest) DO NOTHING",
                    [(d, b, now) for d, b in wanted_blobs(out, blobs)],
                )
        except sqlite3.OperationalError as exc:
            raise StoreError(f"the job queue {self.path} refused the upload: {exc}") from exc
        return out

    def _insert(self, db: sqlite3.Connection, new: NewJob, now: float) -> Job:
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
            why = Reason("lease", "LeaseExpired", _EXPIRED_WHY.format(n=attempts))
            self._to_dlq(db, job_id, why, now)

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
                    why = Reason("lease", "LeaseExpired", _EXPIRED_WHY.format(n=attempts))
                    self._to_dlq(db, job_id, why, now)
                else:
                    self._requeue(db, job_id, now, now, "its worker restarted")
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
                self._requeue(db, job_id, now, now + wait, message)
            else:
                self._to_dlq(db, job_id, reason, now)
            return job_where(db, "id = ?", job_id)

    def _requeue(
        self, db: sqlite3.Connection, job_id: str, now: float, not_before: float, message: str
    ) -> None:
        db.execute(
            "UPDATE jobs SET state = 'queued', worker = NULL, lease_until = NULL, "
            "not_before = ?, updated = ? WHERE id = ?",
            (not_before, now, job_id),
        )
        changed(db, job_id, now, message)

    def _to_dlq(self, db: sqlite3.Connection, job_id: str, reason: Reason, now: float) -> None:
        record_error(db, job_id, reason, now)
        db.execute(
            "UPDATE jobs SET state = 'failed', worker = NULL, lease_until = NULL, finished = ?, "
            "updated = ? WHERE id = ?",
            (now, now, job_id),
        )
        changed(db, job_id, now, f"{reason.error_type}: {reason.message}")

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
