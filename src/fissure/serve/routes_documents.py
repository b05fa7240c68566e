"""``/v1/documents`` and ``/v1/query``: uploads, documents, chunks, deletes and search."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from fissure.errors import StoreError
from fissure.serve import metrics
from fissure.serve.auth import Principal
from fissure.serve.deps import Context, Reader, Writer, context, errors
from fissure.serve.jobs import NewJob, QueueFull, document_id
from fissure.serve.schemas import (
    Accepted,
    ChunkOut,
    ChunksOut,
    Deleted,
    DocumentOut,
    HitOut,
    JobOut,
    PassageOut,
    QueryIn,
    QueryOut,
    Skipped,
    SourceRequest,
    SubmittedJob,
    check_bounds,
    query_maxima,
)
from fissure.serve.uploads import (
    FIELD,
    MultipartFiles,
    Received,
    Refused,
    allowed,
    read_source,
)
from fissure.store.handover import DEPTH, hand_over
from fissure.store.protocol import Hit

router = APIRouter(tags=["documents"])
MAX_JSON = 65_536

_UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        FIELD: {
                            "type": "array",
                            "items": {"type": "string", "format": "binary"},
                            "description": "One or more files; file names are metadata.",
                        },
                    },
                    "required": [FIELD],
                }
            },
            "application/json": {"schema": SourceRequest.model_json_schema()},
        },
    }
}


@router.post(
    "/documents",
    status_code=202,
    response_model=Accepted,
    responses=errors(400, 413, 415, 422, 429),
    openapi_extra=_UPLOAD_BODY,
)
async def upload(request: Request, who: Writer) -> JSONResponse:
    """Accept files (multipart field ``files``) or a source the server reads (JSON
    ``{"source": ...}``): spooled and queued before the answer, one job per document."""
    started = time.perf_counter()
    ctx = context(request)
    try:
        body = await _accept(ctx, request, who)
    except Refused as exc:
        metrics.UPLOADS.labels(f"refused {exc.status}").inc()
        raise
    finally:
        metrics.ACCEPT.labels("documents").observe(time.perf_counter() - started)
    location = f"/v1/jobs/{body.jobs[0].id}" if len(body.jobs) == 1 else "/v1/jobs"
    return JSONResponse(body.model_dump(), status_code=202, headers={"Location": location})


async def _accept(ctx: Context, request: Request, who: Principal) -> Accepted:
    await _check_room(ctx, request)
    stamp = ctx.stamp()
    files, skipped = await _receive(ctx, request)
    new = [NewJob(who.namespace, document_id(f.spooled.digest, stamp), f.name, f.spooled.digest,
                  f.spooled.size, origin) for f, origin in files]  # fmt: skip
    pending = [f.pending for f, _ in files if f.pending is not None]
    try:
        submitted, after = await ctx.commits.submit(who.namespace, new, pending)
    except QueueFull as exc:  # past max_queued, counted in the transaction: nothing queued
        raise Refused(429, str(exc)) from None
    except OSError as exc:  # the disk refused the bytes (full, read-only): nothing was queued
        why = exc.strerror or exc
        raise Refused(503, f"the spool cannot store the upload now ({why}); retry later") from None
    except StoreError as exc:  # the queue refused the transaction: nothing was queued
        raise Refused(503, f"the queue cannot store the upload now ({exc}); retry later") from None
    fresh = [i.job for i in submitted if i.created and i.job.state == "queued"]
    ctx.added(len(fresh), sum(j.size for j in fresh))
    for item in submitted:
        metrics.UPLOADS.labels("accepted" if item.created else "existing").inc()
    jobs = [SubmittedJob(**JobOut.of(i.job).model_dump(), created_now=i.created) for i in submitted]
    return Accepted(
        jobs=jobs, skipped=[Skipped(name=n, reason=r) for n, r in skipped], events_after=after
    )


async def _check_room(ctx: Context, request: Request) -> None:
    """413 for a declared body over the limit, 429 when the queue or the spool is full —
    before a byte of the body is read. The queue's count here is at most half a second
    old (a quick refusal when it is full); the exact bound is kept when the jobs are
    committed (:class:`~fissure.serve.commits.GroupCommit`)."""
    s = ctx.settings
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > s.max_request_bytes:
        raise Refused(413, f"the request is {int(length):,} bytes, over the "
                           f"{s.max_request_bytes:,}-byte limit (max_request_bytes)")  # fmt: skip
    counts = ctx.fresh_counts()
    if counts is None:
        counts = await run_in_threadpool(ctx.counts)
    if counts.waiting >= s.max_queued:
        raise Refused(429, f"the queue is full ({counts.waiting:,} jobs waiting; max_queued): "
                           "retry later")  # fmt: skip
    if counts.spool_bytes >= s.max_spool_bytes:
        raise Refused(429, f"the spool is full ({counts.spool_bytes:,} bytes; max_spool_bytes): "
                           "retry later")  # fmt: skip


async def _receive(ctx: Context, request: Request) -> tuple[
    list[tuple[Received, str]], list[tuple[str, str]]
]:  # fmt: skip
    """The request's files in the spool with their origins, and what a source left out."""
    s = ctx.settings
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "multipart/form-data":
        parser = MultipartFiles(ctx.spool, request.headers["content-type"],
                                max_file_bytes=s.max_file_bytes, max_files=s.max_files,
                                max_request_bytes=s.max_request_bytes)  # fmt: skip
        return [(f, "upload") for f in await parser.read(request.stream())], []
    if kind == "application/json":
        spec = _source_request(await _small_body(request)).source
        allowed(spec, s.allowed_roots, s.allow_github)
        return await run_in_threadpool(read_source, spec, ctx.spool, s.allowed_roots,
                                       s.max_file_bytes, s.max_files)  # fmt: skip
    raise Refused(415, "send multipart/form-data (field 'files') or application/json "
                       '{"source": ...}')  # fmt: skip


async def _small_body(request: Request) -> bytes:
    data = bytearray()
    async for part in request.stream():
        data += part
        if len(data) > MAX_JSON:
            raise Refused(413, f"a JSON request is at most {MAX_JSON:,} bytes")
    return bytes(data)


def _source_request(data: bytes) -> SourceRequest:
    try:
        return SourceRequest.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "body"
        raise Refused(422, f'{where}: {first.get("msg")}; send {{"source": "..."}}') from None


@router.get("/documents/{document_id}", response_model=DocumentOut, responses=errors(404))
def get_document(document_id: str, request: Request, who: Reader) -> DocumentOut:
    """A document of your namespace: its state, size and chunk count."""
    record = context(request).queue.document(who.namespace, document_id)
    if record is None:
        raise Refused(404, f"no document {document_id} in this namespace")
    return DocumentOut.model_validate(record)


@router.get("/documents/{document_id}/chunks", response_model=ChunksOut, responses=errors(404))
def get_chunks(document_id: str, request: Request, who: Reader) -> ChunksOut:
    """A document's chunks in order, with offsets, lines, headings, entity, page and cell."""
    ctx = context(request)
    record = ctx.queue.document(who.namespace, document_id)
    if record is None:
        raise Refused(404, f"no document {document_id} in this namespace")
    rows = ctx.engine.call("chunks", who.namespace, record.source)
    return ChunksOut(
        document_id=document_id,
        state=record.state,
        chunks=[ChunkOut(**_chunk(i, t, m)) for i, t, m in rows],
    )


@router.delete("/documents/{document_id}", response_model=Deleted, responses=errors(404, 409))
def delete_document(document_id: str, request: Request, who: Writer) -> Deleted:
    """Remove a document: its chunks leave the store, its rows the manifest and the queue."""
    outcome = context(request).engine.call("delete", who.namespace, document_id)
    if outcome == "missing":
        raise Refused(404, f"no document {document_id} in this namespace")
    if outcome == "busy":
        raise Refused(
            409,
            f"document {document_id} is still being processed: delete it when "
            "its job is done or failed",
        )
    return Deleted(document_id=document_id, deleted=True)


@router.post("/query", response_model=QueryOut, tags=["query"], responses=errors(400, 422))
def query(body: QueryIn, request: Request, who: Reader) -> QueryOut:
    """The ``k`` chunks of your namespace closest to ``text``."""
    started = time.perf_counter()
    try:
        return _query(context(request), body, who)
    finally:
        metrics.QUERY.observe(time.perf_counter() - started)


def _query(ctx: Context, body: QueryIn, who: Principal) -> QueryOut:
    check_bounds(body, query_maxima(ctx.settings))
    where = dict(body.where or {})
    wanted = where.pop("document_id", None)
    if wanted is not None:
        record = ctx.queue.document(who.namespace, str(wanted))
        if record is None:
            return QueryOut(hits=[])
        where["source"] = record.source
    budget = body.budget_tokens
    depth = body.k if budget is None else max(body.k, DEPTH)
    rows = ctx.engine.call("query", who.namespace, body.text, depth, where, body.sub_weight,
                           body.mode)  # fmt: skip
    hits = []
    for chunk_id, score, text, meta in rows[: body.k]:
        doc, name = _document(meta)
        hits.append(HitOut(**_chunk(chunk_id, text, meta), score=score, document_id=doc, name=name))
    if budget is None:
        return QueryOut(hits=hits)
    passages = _passages(rows, budget)
    return QueryOut(hits=hits, passages=passages, tokens=sum(p.n_tokens for p in passages))


def _document(meta: dict[str, Any]) -> tuple[str, str]:
    """A stored chunk's document id and file name, from its source ``serve:<ns>/<id>/<name>``."""
    _, doc, name = str(meta.get("source", "//")).split("/", 2)
    return doc, name


def _passages(rows: list[tuple[str, float, str, dict[str, Any]]], budget: int) -> list[PassageOut]:
    """Small-to-big over the ranked rows (:func:`fissure.store.handover.hand_over`); a
    passage's lines span those of the chunks it joins."""
    metas = {chunk_id: meta for chunk_id, _, _, meta in rows}
    handed = hand_over([Hit(i, score, text, meta) for i, score, text, meta in rows], budget)
    out = []
    for p in handed:
        doc, name = _document(p.metadata)
        held = [metas[i] for i in p.chunk_ids]
        lines = (min(int(m.get("line_start", 0)) for m in held),
                 max(int(m.get("line_end", 0)) for m in held))  # fmt: skip
        best = _chunk(p.chunk_ids[0], p.text, p.metadata)
        out.append(PassageOut(document_id=doc, name=name, start=p.start, end=p.end, text=p.text,
                              lines=lines, rank=p.rank, score=p.score, chunk_ids=list(p.chunk_ids),
                              n_tokens=p.n_tokens, headings=best["headings"],
                              entity=best["entity"]))  # fmt: skip
    return out


def _chunk(chunk_id: str, text: str, meta: dict[str, Any]) -> dict[str, Any]:
    headings = str(meta.get("headings") or "")
    return {
        "chunk_id": chunk_id,
        "index": int(meta.get("index", 0)),
        "text": text,
        "start": int(meta.get("start", 0)),
        "end": int(meta.get("end", 0)),
        "lines": (int(meta.get("line_start", 0)), int(meta.get("line_end", 0))),
        "headings": headings.split(" › ") if headings else [],
        "entity": meta.get("entity"),
        "page": meta.get("page"),
        "cell": meta.get("cell"),
        "n_tokens": int(meta.get("n_tokens", 0)),
        "strategy": str(meta.get("strategy", "")),
    }
