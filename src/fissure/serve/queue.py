"""The job queue protocol: everything the API and the workers need from a durable queue.

The embedded default is :class:`~fissure.serve.sqlite_queue.SQLiteQueue` (SQLite in WAL
mode in the store folder); the shared one is :class:`~fissure.serve.pg_queue.PostgresQueue`
(PostgreSQL, ``FOR UPDATE SKIP LOCKED``), for many service processes on one database. The
contract tests (``tests/serve/test_queue_contract.py``) run against both.

Semantics every implementation keeps:

- ``submit`` is idempotent on ``(namespace, document_id)``: a second submission returns the
  existing job. A document already stored whose job was purged gets a job that is
  ``done`` at once. A bounded submission (``max_waiting``) is admitted or refused whole,
  in its own transaction, so concurrent submitters never overshoot the bound.
- ``lease`` hands out ``queued`` jobs whose backoff has passed and ``running`` jobs whose
  lease expired, oldest first, each to one worker; every lease counts an attempt. A job
  whose lease expired after its last attempt goes to the dead-letter queue instead.
- ``complete``, ``fail`` and ``renew`` act only on jobs the worker still holds, so a
  worker that lost its lease cannot overwrite the job's new owner.
- Every change of state appends an :class:`~fissure.serve.jobs.Event` in the same
  transaction; within a namespace, events are numbered in commit order (a reader that
  follows ``events(after=last seen)`` never skips one). SQLite's numbers are global,
  PostgreSQL's per namespace; both are increasing within a namespace, which is all a
  reader sees.
- Nothing reads across namespaces: every read takes the namespace (bytes are read by their
  content hash, which only a job of the namespace hands out).
- ``forget_document`` also drops stored bytes no other spooled job names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

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
)

if TYPE_CHECKING:
    from fissure.serve.settings import ServiceSettings


class JobQueue(Protocol):
    """A durable queue of ingestion jobs, with a dead-letter queue (jobs ``failed``)."""

    def submit(
        self,
        jobs: Sequence[NewJob],
        blobs: Mapping[str, bytes] | None = None,
        *,
        max_waiting: int | None = None,
    ) -> list[Submitted]:
        """Add jobs (one transaction), or return the existing ones, in order. ``blobs``
        (digest -> bytes) are stored in the same transaction for the new jobs that name
        them, so a small upload is durable with its job row (one commit for a batch).
        With ``max_waiting``, the submission is refused whole when the jobs it queues
        would take those queued or running past it, counted in the same transaction and
        serialized with every other submission, so the bound is exact under concurrency.

        Raises:
            QueueFull: Past ``max_waiting``; nothing was added.
            StoreError: The database refused the transaction; nothing was added.
        """
        ...

    def lease(self, worker: str, n: int, lease_seconds: float) -> list[Job]:
        """Up to ``n`` jobs for ``worker``, held for ``lease_seconds``."""
        ...

    def renew(self, worker: str, job_ids: Sequence[str], lease_seconds: float) -> list[str]:
        """Extend the leases ``worker`` still holds; returns their ids."""
        ...

    def release(self, worker: str) -> int:
        """Give back every job ``worker`` holds (a restarted worker recovering its own
        leases); jobs out of attempts go to the dead-letter queue. Returns how many."""
        ...

    def complete(self, worker: str, done: Sequence[Completion]) -> int:
        """Mark held jobs done; returns how many were still held."""
        ...

    def fail(self, worker: str, job_id: str, reason: Reason, *, retryable: bool) -> Job | None:
        """Record a failed attempt: back to ``queued`` after a backoff when ``retryable``
        and attempts remain, else ``failed`` (the dead-letter queue). ``None`` if the job
        is not held by ``worker``."""
        ...

    def get(self, namespace: str, job_id: str) -> Job | None:
        """One job of ``namespace``."""
        ...

    def list_jobs(
        self, namespace: str, state: JobState | None, cursor: str | None, limit: int
    ) -> Page:
        """Jobs of ``namespace`` (optionally in one state), oldest first, a page at a time."""
        ...

    def events(self, namespace: str, after: int, limit: int) -> list[Event]:
        """Events of ``namespace`` numbered after ``after``, in order."""
        ...

    def last_event(self, namespace: str) -> int:
        """The number of the latest event of ``namespace`` (0 if none): a stream that starts
        after it sees every later change."""
        ...

    def retry(self, namespace: str, job_id: str) -> Job | None:
        """Put a failed job back in the queue with fresh attempts; ``None`` if it is not
        a dead letter of ``namespace``."""
        ...

    def delete_failed(self, namespace: str, job_id: str) -> bool:
        """Drop a dead letter (and its document record, which never got stored)."""
        ...

    def document(self, namespace: str, document_id: str) -> DocumentRecord | None:
        """A document of ``namespace``."""
        ...

    def forget_document(self, namespace: str, document_id: str) -> bool:
        """Drop a document's record and jobs (after its chunks left the store)."""
        ...

    def counts(self, namespace: str | None = None) -> Counts:
        """Jobs by state (all namespaces when ``None``) and the bytes spooled for them."""
        ...

    def queued_age(self) -> float:
        """Seconds the longest-waiting ``queued`` job has been queued (since it was
        submitted, retried or put back after a failed attempt); 0 when none is."""
        ...

    def finished_since(self, since: float) -> tuple[int, int]:
        """Jobs finished ``done`` since ``since`` and their chunks (throughput gauges)."""
        ...

    def purge(self, done_before: float, failed_before: float, spool_before: float) -> int:
        """Remove done jobs finished before ``done_before`` (their documents stay) and
        events as old, dead letters before ``failed_before``, and mark the bytes of done
        jobs before ``spool_before`` as no longer needed (stored bytes no spooled job names
        go at once; spool files are the caller's). Returns how many rows went."""
        ...

    def blobs(self, digests: Sequence[str]) -> dict[str, bytes]:
        """The bytes stored with :meth:`submit` under those of ``digests`` that have them
        (the others are files in the spool)."""
        ...

    def referenced(self, digests: Sequence[str]) -> set[str]:
        """Which of ``digests`` some job still needs from the spool."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


def open_queue(settings: ServiceSettings, *, worker: bool = False) -> JobQueue:
    """The queue ``settings`` name: PostgreSQL with ``database``, else SQLite in the store
    folder (``worker``: opened by the engine, see :class:`SQLiteQueue`).

    Raises:
        ConfigError: The SQLite file cannot be opened.
        StoreError: The database cannot be reached.
        MissingDependencyError: The database needs ``fissure[postgres]``.
    """
    options: dict[str, Any] = {
        "max_attempts": settings.max_attempts,
        "backoff_seconds": settings.backoff_seconds,
        "backoff_max_seconds": settings.backoff_max_seconds,
    }
    if settings.database is not None:
        from fissure.serve.pg_queue import PostgresQueue

        return PostgresQueue(settings.database, **options)
    from fissure.serve.sqlite_queue import SQLiteQueue

    return SQLiteQueue(settings.store, worker=worker, **options)
