"""The store protocol: where chunks and their vectors live, and how they are found again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from fissure.types import Chunk


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result.

    Attributes:
        chunk_id: The chunk's stable id.
        score: Cosine similarity to the query (higher is closer).
        text: The chunk's exact text.
        metadata: What the store kept about the chunk (``source``, ``lines`` …).
    """

    chunk_id: str
    score: float
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Store(Protocol):
    """A vector store of chunks, small enough that others can follow.

    Writes must be idempotent: upserting the same chunk twice leaves one copy, and deleting
    a source that has no chunks does nothing. The ingest pipeline relies on both to resume
    after a crash.
    """

    def upsert(self, chunks: Sequence[Chunk], embeddings: np.ndarray) -> None:
        """Add or replace ``chunks`` (keyed by ``chunk_id``) with one vector each."""
        ...

    def delete_sources(self, sources: Sequence[str]) -> None:
        """Remove every chunk whose document came from one of ``sources``."""
        ...

    def query(
        self, vector: np.ndarray, k: int = 5, where: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        """The ``k`` chunks closest to ``vector``, optionally filtered on metadata equality."""
        ...

    def count(self) -> int:
        """How many chunks the store holds."""
        ...
