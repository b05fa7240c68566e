"""The shared job queue: PostgreSQL, in the same database as the PostgreSQL store.

Any number of service processes, on any number of machines, lease from one queue. A lease
is ``SELECT … FOR UPDATE SKIP LOCKED``: two workers never wait for each other and never
get the same job. Every method is one transaction (``READ COMMITTED``) on a connection
from a small pool; a transaction the server aborts as a deadlock or a serialization
failure is run again. The semantics are the :class:`~fissure.serve.queue.JobQueue`
contract's, statement for statement those of :class:`~fissure.serve.sqlite_queue.SQLiteQueue`;
what PostgreSQL needs beyond them (event numbers in commit order, the database's clock) is
in :mod:`fissure.serve.pg_rows`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from fissure.errors import MissingDependencyError, StoreError
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
from fissure.serve.pg_rows import (
    Tx,
    changed,
    create_schema,
    expire,
    job_where,
    number_events,
    record_error,
    requeue,
    submit_one,
    to_dlq,
    waiting,
)
from fissure.serve.sqlite_rows import DOCUMENT_COLUMNS, JOB_COLUMNS, cursor_seq
from fissure.store.pg_schema import lock_key, redact

T = TypeVar("T")
_RETRIES = 5
_UNNEEDED = "NOT EXISTS (SELECT 1 FROM fissure_jobs j WHERE j.digest = b.digest AND j.spooled = 1)"
_NOW = "SELECT extract(epoch FROM clock_timestamp())::float8"


class PostgresQueue:
    """A :class:`~fissure.serve.queue.JobQueue` in a PostgreSQL database.

    Args:
        dsn: ``postgresql://user:password@host:port/database``.
        max_attempts: Attempts before the dead-letter queue.
        backoff_seconds: Wait before the first retry (doubling each attempt).
        backoff_max_seconds: Longest wait.
        pool_size: Most connections this object opens at once.

    Raises:
        MissingDependencyError: psycopg (with its pool) is not installed.
        StoreError: The server cannot be reached.
    """

    def __init__(
        self,
        dsn: str,
        *,
        max_attempts: int = 3,
        backoff_seconds: float = 2.0,
        backoff_max_seconds: float = 300.0,
        pool_size: int = 8,
    ) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise MissingDependencyError("psycopg-pool", "postgres", "a PostgreSQL queue") from exc
        self.dsn = dsn
        self.max_attempts = max_attempts
        self.backoff_seconds = backoff_seconds
        self.backoff_max_seconds = backoff_max_seconds
        self._error = psycopg.Error
        self._again = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)
        try:  # one plain connection first: its error says why (the pool's only times out)
            psycopg.connect(dsn, connect_timeout=30).close()
        except psycopg.Error as exc:
            text = str(exc).strip().splitlines()
            raise StoreError(f"cannot connect to {redact(dsn)}: {text[0] if text else exc}; is "
                             "the server running and the address right?") from exc  # fmt: skip
        self._pool = ConnectionPool(
            dsn, min_size=1, max_size=pool_size, kwargs={"connect_timeout": 30}, open=False
        )
        self._pool.open(wait=True, timeout=60)
        self._run(create_schema)

    def _run(self, work: Callable[[Tx], T]) -> T:
        """``work`` in one transaction, run again if the server aborts it as a deadlock.

        Raises:
            StoreError: What the server answered, when it refused.
        """
        for attempt in range(_RETRIES):
            try:
                with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                    (now,) = cur.execute(_NOW).fetchone() or (0.0,)
                    tx = Tx(cur, float(now))
                    result = work(tx)
                    number_events(tx)
                    return result
            except self._again:
                if attempt == _RETRIES - 1:
                    raise
            except self._error as exc:
                text = str(exc).strip().splitlines()
                raise StoreError(f"{redact(self.dsn)}: {text[0] if text else exc}") from exc
        raise AssertionError("unreachable")

    def _read(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        return self._run(lambda tx: tx.cur.execute(sql, args).fetchall())

    def close(self) -> None:
        """Close the pool's connections."""
        self._pool.close()

    # -- submitting ---------------------------------------------------------------------

    def submit(
        self,
        jobs: Sequence[NewJob],
        blobs: Mapping[str, bytes] | None = None,
        *,
        max_waiting: int | None = None,
    ) -> list[Submitted]:
        """See :meth:`JobQueue.submit`."""

        def work(tx: Tx) -> list[Submitted]:
            # Each key is locked first, in one order, so two batches never wait on each
            # other in a cycle; then inserted in the caller's order (which is the jobs' age).
            keys = sorted({lock_key(f"queue:{j.namespace}", j.document_id) for j in jobs})
            for key in keys:
                tx.cur.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
            out = [submit_one(tx, new) for new in jobs]
            check_room(out, max_waiting, lambda: waiting(tx))
            tx.cur.executemany(
                "INSERT INTO fissure_blobs (digest, data, created) VALUES (%s, %s, %s) "
                "ON CONFLICT (digest) DO NOTHING",
                [(d, b, tx.now) for d, b in wanted_blobs(out, blobs)],
            )
            return out

        return self._run(work)

    # -- working ------------------------------------------------------------------------

    def lease(self, worker: str, n: int, lease_seconds: float) -> list[Job]:
        """See :meth:`JobQueue.lease`."""

        def work(tx: Tx) -> list[Job]:
            expire(tx, self.max_attempts)
            now = tx.now
            rows = tx.cur.execute(
                "SELECT id FROM fissure_jobs WHERE (state = 'queued' AND not_before <= %s) "
                "OR (state = 'running' AND lease_until < %s) ORDER BY seq LIMIT %s "
                "FOR UPDATE SKIP LOCKED",
                (now, now, n),
            ).fetchall()
            leased = []
            for (job_id,) in rows:
                tx.cur.execute(
                    "UPDATE fissure_jobs SET state = 'running', worker = %s, lease_until = %s, "
                    "attempts = attempts + 1, started = %s, updated = %s WHERE id = %s",
                    (worker, now + lease_seconds, now, now, job_id),
                )
                leased.append(changed(tx, job_id, None))
            return leased

        return self._run(work)

    def renew(self, worker: str, job_ids: Sequence[str], lease_seconds: float) -> list[str]:
        """See :meth:`JobQueue.renew`."""
        if not job_ids:
            return []
        return self._run(lambda tx: [i for (i,) in tx.cur.execute(
            "UPDATE fissure_jobs SET lease_until = %s WHERE id = ANY(%s) AND worker = %s "
            "AND state = 'running' RETURNING id",
            (tx.now + lease_seconds, sorted(job_ids), worker),
        ).fetchall()])  # fmt: skip

    def release(self, worker: str) -> int:
        """See :meth:`JobQueue.release`."""

        def work(tx: Tx) -> int:
            rows = tx.cur.execute(
                "SELECT id, attempts FROM fissure_jobs WHERE state = 'running' AND worker = %s "
                "ORDER BY seq FOR UPDATE",
                (worker,),
            ).fetchall()
            for job_id, attempts in rows:
                if attempts >= self.max_attempts:
                    to_dlq(tx, job_id, lease_expired(attempts))
                else:
                    requeue(tx, job_id, tx.now, "its worker restarted")
            return len(rows)

        return self._run(work)

    def complete(self, worker: str, done: Sequence[Completion]) -> int:
        """See :meth:`JobQueue.complete`."""

        def work(tx: Tx) -> int:
            n = 0
            for item in sorted(done, key=lambda c: c.job_id):
                hit = tx.cur.execute(
                    "UPDATE fissure_jobs SET state = 'done', chunks = %s, finished = %s, "
                    "updated = %s, lease_until = NULL, error_stage = NULL, error_type = NULL, "
                    "error_message = NULL, error_trace = NULL "
                    "WHERE id = %s AND worker = %s AND state = 'running'",
                    (item.chunks, tx.now, tx.now, item.job_id, worker),
                ).rowcount
                if hit:
                    n += 1
                    changed(tx, item.job_id, f"{item.chunks} chunks")
            return n

        return self._run(work)

    def fail(self, worker: str, job_id: str, reason: Reason, *, retryable: bool) -> Job | None:
        """See :meth:`JobQueue.fail`."""

        def work(tx: Tx) -> Job | None:
            row = tx.cur.execute(
                "SELECT attempts FROM fissure_jobs WHERE id = %s AND worker = %s "
                "AND state = 'running' FOR UPDATE",
                (job_id, worker),
            ).fetchone()
            if row is None:
                return None
            record_error(tx, job_id, reason)
            attempts = int(row[0])
            if retryable and attempts < self.max_attempts:
                wait = min(self.backoff_max_seconds, self.backoff_seconds * 2 ** (attempts - 1))
                message = f"{reason.error_type}: {reason.message}; retry in {wait:g} s"
                requeue(tx, job_id, tx.now + wait, message)
            else:
                to_dlq(tx, job_id, reason)
            return job_where(tx.cur, "id = %s", job_id)

        return self._run(work)

    # -- reading ------------------------------------------------------------------------

    def get(self, namespace: str, job_id: str) -> Job | None:
        """See :meth:`JobQueue.get`."""
        return self._run(lambda tx: job_where(tx.cur, "namespace = %s AND id = %s",
                                              namespace, job_id))  # fmt: skip

    def list_jobs(
        self, namespace: str, state: JobState | None, cursor: str | None, limit: int
    ) -> Page:
        """See :meth:`JobQueue.list_jobs`."""
        after = cursor_seq(cursor)
        where = "namespace = %s AND seq > %s" + (" AND state = %s" if state else "")
        args: tuple[Any, ...] = (namespace, after, state) if state else (namespace, after)
        rows = self._read(f"SELECT {JOB_COLUMNS} FROM fissure_jobs WHERE {where} "
                          "ORDER BY seq LIMIT %s", *args, limit + 1)  # fmt: skip
        jobs = [Job(*r) for r in rows[:limit]]
        more = len(rows) > limit
        return Page(jobs, str(jobs[-1].seq) if more and jobs else None)

    def events(self, namespace: str, after: int, limit: int) -> list[Event]:
        """See :meth:`JobQueue.events`."""
        rows = self._read(
            "SELECT seq, namespace, job_id, document_id, state, attempts, time, message "
            "FROM fissure_events WHERE namespace = %s AND seq > %s ORDER BY seq LIMIT %s",
            namespace, after, limit,
        )  # fmt: skip
        return [Event(*r) for r in rows]

    def last_event(self, namespace: str) -> int:
        """See :meth:`JobQueue.last_event`."""
        rows = self._read("SELECT max(seq) FROM fissure_events WHERE namespace = %s", namespace)
        return int(rows[0][0] or 0)

    def retry(self, namespace: str, job_id: str) -> Job | None:
        """See :meth:`JobQueue.retry`."""

        def work(tx: Tx) -> Job | None:
            n = tx.cur.execute(
                "UPDATE fissure_jobs SET state = 'queued', attempts = 0, not_before = %s, "
                "updated = %s, finished = NULL WHERE namespace = %s AND id = %s "
                "AND state = 'failed'",
                (tx.now, tx.now, namespace, job_id),
            ).rowcount
            return changed(tx, job_id, "retried from the dead-letter queue") if n else None

        return self._run(work)

    def delete_failed(self, namespace: str, job_id: str) -> bool:
        """See :meth:`JobQueue.delete_failed`."""

        def work(tx: Tx) -> bool:
            job = job_where(tx.cur, "namespace = %s AND id = %s AND state = 'failed'",
                            namespace, job_id, lock=True)  # fmt: skip
            if job is None:
                return False
            tx.cur.execute("DELETE FROM fissure_jobs WHERE id = %s", (job_id,))
            tx.cur.execute("DELETE FROM fissure_job_documents WHERE namespace = %s AND "
                           "document_id = %s AND state = 'failed'",
                           (namespace, job.document_id))  # fmt: skip
            return True

        return self._run(work)

    def document(self, namespace: str, document_id: str) -> DocumentRecord | None:
        """See :meth:`JobQueue.document`."""
        sql = f"SELECT {DOCUMENT_COLUMNS} FROM fissure_job_documents WHERE namespace = %s"
        rows = self._read(sql + " AND document_id = %s", namespace, document_id)
        return DocumentRecord(*rows[0]) if rows else None

    def forget_document(self, namespace: str, document_id: str) -> bool:
        """See :meth:`JobQueue.forget_document`."""

        def work(tx: Tx) -> bool:
            key = (namespace, document_id)
            n = tx.cur.execute("DELETE FROM fissure_job_documents WHERE namespace = %s AND "
                               "document_id = %s", key).rowcount  # fmt: skip
            digests = tx.cur.execute(
                "DELETE FROM fissure_jobs WHERE namespace = %s AND document_id = %s "
                "RETURNING digest", key,
            ).fetchall()  # fmt: skip
            for digest in {d for (d,) in digests}:
                tx.cur.execute(f"DELETE FROM fissure_blobs b WHERE digest = %s AND {_UNNEEDED}",
                               (digest,))  # fmt: skip
            return bool(n)

        return self._run(work)

    def counts(self, namespace: str | None = None) -> Counts:
        """See :meth:`JobQueue.counts`."""
        where = "WHERE namespace = %s" if namespace else ""
        rows = self._read(f"SELECT state, count(*) FROM fissure_jobs {where} GROUP BY state",
                          *((namespace,) if namespace else ()))  # fmt: skip
        spool = self._read("SELECT COALESCE(sum(size), 0) FROM fissure_jobs WHERE spooled = 1")
        return Counts({state: int(n) for state, n in rows}, int(spool[0][0]))

    def finished_since(self, since: float) -> tuple[int, int]:
        """See :meth:`JobQueue.finished_since`."""
        rows = self._read("SELECT count(*), COALESCE(sum(chunks), 0) FROM fissure_jobs "
                          "WHERE state = 'done' AND finished >= %s", since)  # fmt: skip
        return int(rows[0][0]), int(rows[0][1])

    def queued_age(self) -> float:
        """See :meth:`JobQueue.queued_age` (by the database's clock)."""
        (age,) = self._read(f"SELECT ({_NOW}) - min(updated) FROM fissure_jobs "
                            "WHERE state = 'queued'")[0]  # fmt: skip
        return 0.0 if age is None else max(0.0, float(age))

    # -- keeping it bounded -------------------------------------------------------------

    def purge(self, done_before: float, failed_before: float, spool_before: float) -> int:
        """See :meth:`JobQueue.purge`."""

        def work(tx: Tx) -> int:
            run = tx.cur.execute
            n = run("UPDATE fissure_jobs SET spooled = 0 WHERE state = 'done' AND finished < %s "
                    "AND spooled = 1", (spool_before,)).rowcount  # fmt: skip
            n += run("DELETE FROM fissure_jobs WHERE state = 'done' AND finished < %s",
                     (done_before,)).rowcount  # fmt: skip
            n += run(
                "DELETE FROM fissure_job_documents d WHERE state = 'failed' AND EXISTS (SELECT 1 "
                "FROM fissure_jobs j WHERE j.state = 'failed' AND j.finished < %s AND "
                "j.namespace = d.namespace AND j.document_id = d.document_id)",
                (failed_before,),
            ).rowcount
            n += run("DELETE FROM fissure_jobs WHERE state = 'failed' AND finished < %s",
                     (failed_before,)).rowcount  # fmt: skip
            n += run("DELETE FROM fissure_events WHERE time < %s", (done_before,)).rowcount
            n += run(f"DELETE FROM fissure_blobs b WHERE {_UNNEEDED}").rowcount
            return int(n)

        return self._run(work)

    def blobs(self, digests: Sequence[str]) -> dict[str, bytes]:
        """See :meth:`JobQueue.blobs`."""
        if not digests:
            return {}
        rows = self._read("SELECT digest, data FROM fissure_blobs WHERE digest = ANY(%s)",
                          list(digests))  # fmt: skip
        return {d: bytes(b) for d, b in rows}

    def referenced(self, digests: Sequence[str]) -> set[str]:
        """See :meth:`JobQueue.referenced`."""
        if not digests:
            return set()
        rows = self._read("SELECT DISTINCT digest FROM fissure_jobs WHERE spooled = 1 AND "
                          "digest = ANY(%s)", list(digests))  # fmt: skip
        return {d for (d,) in rows}
