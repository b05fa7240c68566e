"""The API's request and response bodies (pydantic), so the OpenAPI schema is exact."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from fissure.errors import InputError
from fissure.serve.jobs import Job

if TYPE_CHECKING:
    from fissure.serve.settings import ServiceSettings

State = Literal["queued", "running", "done", "failed"]
Scalar = str | int | float | bool


class ErrorBody(BaseModel):
    """Why a request was refused."""

    detail: str = Field(description="What went wrong and how to fix it.")


class JobOut(BaseModel):
    """A job: one document on its way into the store."""

    id: str
    document_id: str = Field(description="Content hash + settings fingerprint.")
    namespace: str
    name: str = Field(description="The client's file name (metadata only).")
    origin: str = Field(description="'upload', or the source the server read it from.")
    size: int = Field(description="Bytes.")
    state: State
    attempts: int
    created: float = Field(description="Unix time the job was accepted.")
    updated: float
    started: float | None = Field(description="When the latest attempt started.")
    finished: float | None
    not_before: float | None = Field(description="Queued jobs wait until then (backoff).")
    chunks: int | None = Field(description="Chunks stored, once done.")
    error: ErrorOut | None = Field(description="The last failure (the DLQ reason).")

    @classmethod
    def of(cls, job: Job) -> JobOut:
        """The API form of a queue job."""
        error = None
        if job.error_type:
            error = ErrorOut(
                stage=job.error_stage or "", type=job.error_type, message=job.error_message or ""
            )
        return cls(
            id=job.id,
            document_id=job.document_id,
            namespace=job.namespace,
            name=job.name,
            origin=job.origin,
            size=job.size,
            state=job.state,
            attempts=job.attempts,
            created=job.created,
            updated=job.updated,
            started=job.started,
            finished=job.finished,
            not_before=job.not_before if job.state == "queued" else None,
            chunks=job.chunks,
            error=error,
        )


class ErrorOut(BaseModel):
    """A failed attempt: the stage, the error type and its message."""

    stage: str = Field(description="source, spool, parse, split, embed, store or lease.")
    type: str = Field(description="e.g. InputError, Timeout, WorkerDied, LeaseExpired.")
    message: str


class SubmittedJob(JobOut):
    """A job as a submission answers it."""

    created_now: bool = Field(description="False when the same document was already there.")


class Skipped(BaseModel):
    """A file of a server-read source that was not queued, and why."""

    name: str
    reason: str


class Accepted(BaseModel):
    """The answer to an upload: one job per document."""

    jobs: list[SubmittedJob]
    skipped: list[Skipped] = Field(default_factory=list)
    events_after: int = Field(
        description="Follow /v1/events?after= this to see every later change of these jobs."
    )


class SourceRequest(BaseModel):
    """A source the server reads itself."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(
        min_length=1,
        max_length=4096,
        description="A path under an allowed root, git:PATH[@REV] (a repository under an "
        "allowed root) or github:OWNER/REPO[@REF] (when the server allows GitHub).",
    )


class JobPage(BaseModel):
    """One page of jobs."""

    jobs: list[JobOut]
    next_cursor: str | None = Field(description="Pass as cursor= for the next page.")


class EventOut(BaseModel):
    """A job's change of state (the data of a server-sent event)."""

    model_config = ConfigDict(from_attributes=True)

    seq: int
    job_id: str
    document_id: str
    state: State
    attempts: int
    time: float
    message: str


class DocumentOut(BaseModel):
    """A document of the namespace."""

    model_config = ConfigDict(from_attributes=True)

    document_id: str
    name: str
    size: int
    state: State
    chunks: int | None
    job_id: str | None
    created: float
    updated: float


class ChunkOut(BaseModel):
    """A stored chunk: ``text`` is exactly the document's text from ``start`` to ``end``."""

    chunk_id: str
    index: int
    text: str
    start: int
    end: int
    lines: tuple[int, int] = Field(description="First and last line, 1-based, inclusive.")
    headings: list[str]
    entity: str | None
    page: int | None
    cell: int | None
    n_tokens: int
    strategy: str


class ChunksOut(BaseModel):
    """A document's chunks, in order."""

    document_id: str
    state: State
    chunks: list[ChunkOut]


class Deleted(BaseModel):
    """A document that left the store."""

    document_id: str
    deleted: bool


class QueryIn(BaseModel):
    """A search."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=20_000)
    k: int = Field(default=5, ge=1, description="At most the service's max_query_k.")
    where: dict[str, Scalar] | None = Field(
        default=None,
        description="Equality filters on chunk metadata (all must hold): document_id, entity, "
        "strategy, index, page …",
    )
    sub_weight: float | None = Field(
        default=None, ge=0, le=1, description="Blend with the best sentence piece's score."
    )
    mode: Literal["dense", "lexical", "hybrid"] | None = Field(
        default=None,
        description="dense: cosine of the embeddings; lexical: BM25 over the chunks' words; "
        "hybrid: both rankings fused (the default of the embedded store; a PostgreSQL "
        "store answers dense and refuses the other two).",
    )

    budget_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Small-to-big: also hand over passages, the best chunks (ranked on their "
        "sentence pieces too under sub_weight) with overlapping or adjacent chunks of a "
        "document joined and repeated text left out, best first, up to this many cl100k_base "
        "tokens in all (at most the service's max_budget_tokens).",
    )

    @field_validator("where")
    @classmethod
    def _plain_keys(cls, where: dict[str, Any] | None) -> dict[str, Any] | None:
        if where and any(not k or k.startswith("$") for k in where):
            raise ValueError("filter keys are metadata names, not operators")
        return where


class HitOut(ChunkOut):
    """A search result."""

    score: float = Field(description="Higher is closer: the cosine (mode dense), BM25 "
                         "(lexical) or the fused rank score (hybrid).")  # fmt: skip
    document_id: str
    name: str = Field(description="The document's file name.")


class PassageOut(BaseModel):
    """A stretch of one document handed to a reader: ``text`` is exactly the document's text
    from ``start`` to ``end``, the union of the chunks in ``chunk_ids``."""

    document_id: str
    name: str = Field(description="The document's file name.")
    start: int
    end: int
    text: str
    lines: tuple[int, int] = Field(description="First and last line, 1-based, inclusive.")
    rank: int = Field(description="The best rank (1-based) among the chunks it holds.")
    score: float = Field(description="That chunk's score.")
    chunk_ids: list[str] = Field(description="The chunks it holds, best first.")
    n_tokens: int = Field(description="Its size in cl100k_base tokens.")
    headings: list[str] = Field(description="The best chunk's breadcrumb.")
    entity: str | None = Field(description="The best chunk's code entity.")


class QueryOut(BaseModel):
    """The hits, best first; with ``budget_tokens``, the passages too."""

    hits: list[HitOut]
    passages: list[PassageOut] | None = Field(
        default=None, description="Only when budget_tokens was given: best first."
    )
    tokens: int | None = Field(
        default=None, description="Only when budget_tokens was given: the passages' tokens."
    )


class Health(BaseModel):
    """Liveness."""

    status: Literal["ok", "unavailable"]
    detail: str = ""


class PartReady(BaseModel):
    """Whether one part of the service is ready, and if not, why."""

    ready: bool
    detail: str = ""


class Readiness(BaseModel):
    """Readiness, by part: ``status`` is ``ok`` when the parts asked for (``need``) are."""

    status: Literal["ok", "unavailable"]
    detail: str = Field(default="", description="Why not, when status is unavailable.")
    intake: PartReady = Field(
        description="Uploads are accepted: the queue answers and the spool is writable."
    )
    engine: PartReady = Field(
        description="The engine is up (model loaded, store open): jobs run, queries, chunk "
        "reads and deletes are answered."
    )


JobOut.model_rebuild()
SubmittedJob.model_rebuild()

# The query fields a setting bounds: the handler refuses a value past the setting (400),
# and the served schema's ``maximum`` is that setting (:func:`bound_schema`), both read
# through :func:`query_maxima`, so the schema and the checks cannot differ.
QUERY_BOUNDS = {"k": "max_query_k", "budget_tokens": "max_budget_tokens"}


def query_maxima(settings: ServiceSettings) -> dict[str, int]:
    """The largest value of each bounded query field, under ``settings``."""
    return {name: int(getattr(settings, setting)) for name, setting in QUERY_BOUNDS.items()}


def check_bounds(body: QueryIn, maxima: dict[str, int]) -> None:
    """Refuse a query whose bounded fields pass ``maxima``.

    Raises:
        InputError: A field is over its maximum (the API answers 400, naming the setting).
    """
    for name, most in maxima.items():
        value = getattr(body, name)
        if value is not None and value > most:
            raise InputError(f"{name} is at most {most} ({QUERY_BOUNDS[name]})")


def bound_schema(openapi: dict[str, Any], maxima: dict[str, int]) -> None:
    """Write ``maxima`` into an OpenAPI document as the ``maximum`` of each bounded
    ``QueryIn`` field (the integer branch of an optional one)."""
    fields = openapi["components"]["schemas"]["QueryIn"]["properties"]
    for name, most in maxima.items():
        for branch in fields[name].get("anyOf", [fields[name]]):
            if branch.get("type") == "integer":
                branch["maximum"] = most
