"""Group commit: uploads that arrive together share one queue transaction, so one fsync of
the database's log makes many jobs durable (SQLite serializes writers; each commit waits
for the disk)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from starlette.concurrency import run_in_threadpool

from fissure.serve.jobs import NewJob, Submitted
from fissure.serve.queue import JobQueue


class GroupCommit:
    """Submits jobs for the concurrent requests of one API process.

    While one transaction is on its way to the disk, the submissions that arrive wait and
    then go in the next one together: no added delay when the service is idle, fewer
    commits when it is busy. Each caller gets its own results, in order; a failed
    transaction fails every request in it.

    Args:
        queue: The job queue.
    """

    def __init__(self, queue: JobQueue) -> None:
        self.queue = queue
        self._waiting: list[tuple[Sequence[NewJob], asyncio.Future[list[Submitted]]]] = []
        self._draining = False
        self._task: asyncio.Task[None] | None = None  # held, or the loop may drop it

    async def submit(self, jobs: Sequence[NewJob]) -> list[Submitted]:
        """Submit ``jobs``; returns once they are committed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Submitted]] = loop.create_future()
        self._waiting.append((jobs, future))
        if not self._draining:
            self._draining = True
            self._task = loop.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                every = [job for jobs, _ in batch for job in jobs]
                try:
                    results = await run_in_threadpool(self.queue.submit, every)
                except Exception as exc:
                    for _, future in batch:
                        future.set_exception(exc)
                    continue
                at = 0
                for jobs, future in batch:
                    future.set_result(results[at : at + len(jobs)])
                    at += len(jobs)
        finally:
            self._draining = False
