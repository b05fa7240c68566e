"""The job model: what a queue holds, whatever database it lives in.

A *job* is one document to chunk, embed and store, keyed by ``(namespace, document_id)``.
Its document id is the content hash of the bytes plus the settings fingerprint, so the same
bytes sent twice under the same settings are the same job. A *document* record outlives
its job: it says what the store holds after the job's row has been purged.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from fissure.errors import FissureError, InputError

JobState = Literal["queued", "running", "done", "failed"]
STATES: tuple[JobState, ...] = ("queued", "running", "done", "failed")
DEFAULT_NAMESPACE = "default"
NAMESPACE = re.compile(r"^[a-z0-9](?:[a-z0-9_-]{0,61}[a-z0-9])?$")
MAX_NAME = 255
_SEPARATORS = re.compile(r"[\\/]+")
# A page cursor is the last job's seq: 1 to 18 ASCII digits (within a signed 64-bit integer).
# The queues check cursors against it and the API's schema declares it, so the two agree.
CURSOR_PATTERN = "^[0-9]{1,18}$"


class QueueFull(FissureError):
    """A submission whose new jobs would take those waiting past the bound; it added
    nothing.

    Args:
        waiting: Jobs queued or running before this submission.
        adding: The new jobs this submission would have queued.
        most: The bound (``max_queued``).
    """

    def __init__(self, waiting: int, adding: int, most: int) -> None:
        super().__init__(
            f"the queue is full ({waiting:,} jobs waiting, {adding:,} more in this request, "
            f"at most {most:,}; max_queued): retry later"
        )
        self.waiting, self.adding, self.most = waiting, adding, most


@dataclass(frozen=True, slots=True)
class NewJob:
    """A job to submit.

    Attributes:
        namespace: Whose document it is (one collection per namespace).
        document_id: Content hash + settings fingerprint (:func:`document_id`).
        name: The client's file name, sanitised (:func:`safe_name`); metadata only.
        digest: sha256 of the bytes: their name in the spool.
        size: Bytes.
        origin: Where the bytes came from: ``upload``, or the source the server read.
    """

    namespace: str
    document_id: str
    name: str
    digest: str
    size: int
    origin: str = "upload"

    @property
    def source(self) -> str:
        """The document's source in the store: unique per namespace and document, and
        ending with the file name, whose extension guides format detection."""
        return f"{self.namespace}/{self.document_id}/{self.name}"


@dataclass(frozen=True, slots=True)
class Job:
    """A job as the queue holds it (times are Unix seconds; ``None`` where not yet)."""

    id: str
    namespace: str
    document_id: str
    name: str
    source: str
    digest: str
    size: int
    origin: str
    state: JobState
    attempts: int
    created: float
    updated: float
    started: float | None = None
    finished: float | None = None
    not_before: float | None = None
    chunks: int | None = None
    error_stage: str | None = None
    error_type: str | None = None
    error_message: str | None = None
    seq: int = 0


@dataclass(frozen=True, slots=True)
class Submitted:
    """A submitted job and whether this submission created it (``False``: it existed)."""

    job: Job
    created: bool


def wanted_blobs(
    submitted: Sequence[Submitted], blobs: Mapping[str, bytes] | None
) -> list[tuple[str, bytes]]:
    """The bytes in ``blobs`` that a job this submission created still has to read, by
    digest: a job that existed has its bytes already, one done at once needs none."""
    if not blobs:
        return []
    digests = dict.fromkeys(
        s.job.digest for s in submitted
        if s.created and s.job.state == "queued" and s.job.digest in blobs
    )  # fmt: skip
    return [(d, blobs[d]) for d in digests]


def check_room(
    submitted: Sequence[Submitted], most: int | None, waiting: Callable[[], int]
) -> None:
    """Inside a submission's transaction, after its inserts: refuse it when the jobs it
    queued take those waiting (queued or running, ``waiting()`` counts them, this
    submission's included) past ``most``. Counts only when it queued any.

    Raises:
        QueueFull: Past the bound; the caller's transaction then adds nothing.
    """
    adding = sum(1 for s in submitted if s.created and s.job.state == "queued")
    if most is None or not adding:
        return
    now = waiting()
    if now > most:
        raise QueueFull(now - adding, adding, most)


@dataclass(frozen=True, slots=True)
class Completion:
    """A job a worker finished, with the number of chunks it stored."""

    job_id: str
    chunks: int


@dataclass(frozen=True, slots=True)
class Reason:
    """Why an attempt failed."""

    stage: str
    error_type: str
    message: str
    traceback: str = ""


def lease_expired(attempts: int) -> Reason:
    """Why a job failed whose lease expired: its worker stopped answering."""
    why = f"the worker holding it stopped answering {attempts} times (killed, or out of memory)"
    return Reason("lease", "LeaseExpired", why)


@dataclass(frozen=True, slots=True)
class Event:
    """A job's change of state; ``seq`` orders events and resumes a stream."""

    seq: int
    namespace: str
    job_id: str
    document_id: str
    state: JobState
    attempts: int
    time: float
    message: str = ""


@dataclass(frozen=True, slots=True)
class Page:
    """One page of jobs and the cursor of the next (``None`` at the end)."""

    jobs: list[Job]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """A document of a namespace: where its latest job left it."""

    namespace: str
    document_id: str
    name: str
    source: str
    digest: str
    size: int
    state: JobState
    chunks: int | None
    job_id: str | None
    created: float
    updated: float


@dataclass(frozen=True, slots=True)
class Counts:
    """Jobs per state, and the bytes the spool holds for them."""

    by_state: dict[str, int]
    spool_bytes: int

    @property
    def waiting(self) -> int:
        """Jobs queued or running: the queue's depth."""
        return self.by_state.get("queued", 0) + self.by_state.get("running", 0)


def document_id(digest: str, stamp: str) -> str:
    """A document's id: its content hash, then the settings fingerprint."""
    return f"{digest[:32]}-{stamp}"


def safe_name(raw: str | None) -> str:
    """A client's file name as metadata: printable, ``/``-separated, no ``.``/``..`` parts,
    at most 255 characters (the end is kept: it has the extension); ``upload`` if empty.

    It is never used as a path: the spool names bytes by their hash.
    """
    text = unicodedata.normalize("NFC", raw or "")
    text = "".join(ch for ch in text if ch.isprintable())
    parts = [p.strip() for p in _SEPARATORS.split(text)]
    name = "/".join(p for p in parts if p not in ("", ".", ".."))
    return name[-MAX_NAME:].lstrip("/") or "upload"


def check_namespace(name: str) -> str:
    """``name`` if it is a valid namespace (lower-case letters, digits, ``-``, ``_``).

    Raises:
        InputError: It is not.
    """
    if not NAMESPACE.match(name):
        raise InputError(
            f"namespace {name!r} is not valid: use 1-63 lower-case letters, digits, - or _, "
            "starting and ending with a letter or digit"
        )
    return name


def namespace_of(source: str) -> str:
    """The namespace a service document's source belongs to."""
    return source.split("/", 1)[0]
