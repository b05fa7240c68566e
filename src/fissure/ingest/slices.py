"""Big documents in slices: what :class:`~fissure.ingest.writer.Writer` embeds and stores
a part at a time, checking the document's time limit between parts."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fissure.ingest.workers import Outcome

# Chunks and pieces a document may have and still be embedded with others; a bigger one is
# embedded and stored this many at a time, its time limit checked between slices (a slice
# is seconds of embedding on a CPU, under a second of store writes).
SLICE = 1024


class OutOfTime(Exception):
    """A sliced document ran out of its time limit while it was stored."""


class Clock:
    """The seconds a document may still spend being embedded and stored."""

    def __init__(self, outcome: Outcome) -> None:
        self.allowed = outcome.time_left
        self.started = time.monotonic()

    def over(self) -> bool:
        """Whether the document's time is up."""
        return time.monotonic() - self.started > self.allowed


def size(outcome: Outcome) -> int:
    """Texts the document has to embed (chunks and pieces)."""
    return len(outcome.chunks) + len(outcome.pieces)


def slices(outcome: Outcome) -> list[Outcome]:
    """The document as parts of at most :data:`SLICE` chunks each (with their windows),
    its pieces shared out evenly over the parts: embedded one by one, their vectors put
    back together by the writer."""
    o = outcome
    n = max(1, -(-len(o.chunks) // SLICE))
    parts = []
    for i in range(n):
        at, to = i * SLICE, (i + 1) * SLICE
        windows = o.windows[at:to] if o.windows else []
        pieces = o.pieces[i * len(o.pieces) // n : (i + 1) * len(o.pieces) // n]
        parts.append(Outcome(o.source, o.chunks[at:to], windows=windows, pieces=pieces))
    return parts


def failed_as(outcome: Outcome, part: Outcome) -> Outcome:
    """``outcome``'s document failed as its ``part`` did."""
    return Outcome(outcome.source, [], part.stage, part.error_type, part.message, part.traceback)


def upsert(
    write: Callable[[Sequence[Any], np.ndarray], None],
    rows: Sequence[Any],
    vectors: np.ndarray,
    clock: Clock | None,
) -> None:
    """``write`` the rows whole, or :data:`SLICE` at a time under ``clock``."""
    if clock is None:
        write(rows, vectors)
        return
    for at in range(0, len(rows), SLICE):
        if clock.over():
            raise OutOfTime
        write(rows[at : at + SLICE], vectors[at : at + SLICE])


def stack(parts: list[np.ndarray | None]) -> np.ndarray:
    """The rows of ``parts`` one after another (``None`` parts left out)."""
    present = [p for p in parts if p is not None]
    if not present:
        raise ValueError("documents with chunks but no vectors")
    return np.concatenate(present)
