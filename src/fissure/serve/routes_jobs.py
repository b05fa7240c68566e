"""``/v1/jobs``, ``/v1/events`` (server-sent events) and ``/v1/dlq``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from fissure.serve.deps import Reader, Writer, context, errors
from fissure.serve.jobs import CURSOR_PATTERN
from fissure.serve.queue import JobQueue
from fissure.serve.schemas import EventOut, JobOut, JobPage, State
from fissure.serve.uploads import Refused

router = APIRouter()
KEEPALIVE_SECONDS = 15.0
Limit = Annotated[int, Query(ge=1, le=1000, description="Jobs per page.")]
# The queue checks a cursor against the same pattern (fissure.serve.sqlite_rows.cursor_seq).
Cursor = Annotated[
    str | None, Query(pattern=CURSOR_PATTERN, description="next_cursor of the last page.")
]


@router.get("/jobs/{job_id}", response_model=JobOut, tags=["jobs"], responses=errors(404))
def get_job(job_id: str, request: Request, who: Reader) -> JobOut:
    """A job of your namespace: state, attempts, timings, chunk count, the DLQ reason."""
    job = context(request).queue.get(who.namespace, job_id)
    if job is None:
        raise Refused(404, f"no job {job_id} in this namespace")
    return JobOut.of(job)


@router.get("/jobs", response_model=JobPage, tags=["jobs"], responses=errors())
def list_jobs(
    request: Request,
    who: Reader,
    state: State | None = None,
    cursor: Cursor = None,
    limit: Limit = 100,
) -> JobPage:
    """Jobs of your namespace, oldest first, optionally in one state; page with ``cursor``."""
    page = context(request).queue.list_jobs(who.namespace, state, cursor, limit)
    return JobPage(jobs=[JobOut.of(j) for j in page.jobs], next_cursor=page.next_cursor)


_SSE: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
        "description": "Server-sent events: `id` = seq, `event: job`, `data` = an "
        "EventOut as JSON.",
    }
}


@router.get(
    "/events", tags=["jobs"], responses={**_SSE, **errors()}, response_class=StreamingResponse
)
async def events(
    request: Request,
    who: Reader,
    after: Annotated[int | None, Query(ge=0, description="Stream events after this seq.")] = None,
    last_event_id: Annotated[str | None, Header(max_length=20)] = None,
) -> StreamingResponse:
    """Job changes of your namespace as server-sent events. Resume with ``Last-Event-ID`` or
    ``after``; with neither, only events from now on are sent."""
    ctx = context(request)
    start = after
    if start is None and last_event_id and last_event_id.isascii() and last_event_id.isdigit():
        start = int(last_event_id)
    if start is None:
        start = await run_in_threadpool(ctx.queue.last_event, who.namespace)
    stream = _stream(request, ctx.queue, who.namespace, start, ctx.settings.poll_seconds)
    return StreamingResponse(
        stream,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _stream(
    request: Request, queue: JobQueue, namespace: str, cursor: int, poll: float
) -> AsyncIterator[str]:
    yield ": fissure job events\n\n"  # headers go out at once; clients know they are in
    quiet = 0.0
    while not await request.is_disconnected():
        found = await run_in_threadpool(queue.events, namespace, cursor, 500)
        for event in found:
            cursor = event.seq
            data = EventOut.model_validate(event).model_dump_json()
            yield f"id: {event.seq}\nevent: job\ndata: {data}\n\n"
        if found:
            quiet = 0.0
            continue
        await asyncio.sleep(poll)
        quiet += poll
        if quiet >= KEEPALIVE_SECONDS:
            quiet = 0.0
            yield ": keep-alive\n\n"


@router.get("/dlq", response_model=JobPage, tags=["dlq"], responses=errors())
def dead_letters(
    request: Request, who: Writer, cursor: Cursor = None, limit: Limit = 100
) -> JobPage:
    """Failed jobs of your namespace, with their reasons."""
    page = context(request).queue.list_jobs(who.namespace, "failed", cursor, limit)
    return JobPage(jobs=[JobOut.of(j) for j in page.jobs], next_cursor=page.next_cursor)


@router.post("/dlq/{job_id}/retry", response_model=JobOut, tags=["dlq"], responses=errors(404))
def retry(job_id: str, request: Request, who: Writer) -> JobOut:
    """Queue a dead letter again, with fresh attempts."""
    job = context(request).queue.retry(who.namespace, job_id)
    if job is None:
        raise Refused(404, f"no failed job {job_id} in this namespace")
    return JobOut.of(job)


@router.delete("/dlq/{job_id}", response_model=JobOut, tags=["dlq"], responses=errors(404))
def drop(job_id: str, request: Request, who: Writer) -> JobOut:
    """Drop a dead letter (the document was never stored)."""
    ctx = context(request)
    job = ctx.queue.get(who.namespace, job_id)
    if job is None or job.state != "failed" or not ctx.queue.delete_failed(who.namespace, job_id):
        raise Refused(404, f"no failed job {job_id} in this namespace")
    return JobOut.of(job)
