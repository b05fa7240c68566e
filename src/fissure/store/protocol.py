"""The store protocol: where chunks and their vectors live, and how they are found again."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from fissure.store.ids import piece_id
from fissure.types import Chunk


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result.

    Attributes:
        chunk_id: The chunk's stable id.
        score: Higher is closer: the cosine to the query (``dense``), BM25 (``lexical``)
            or the fused rank score (``hybrid``).
        text: The chunk's exact text.
        metadata: What the store kept about the chunk (``source``, ``lines`` …).
        copies: How many chunks of its document the hit stands for: itself and its
            near-copies, collapsed into it (1 when it has none, or without collapse).
    """

    chunk_id: str
    score: float
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    copies: int = 1


@dataclass(frozen=True, slots=True)
class Piece:
    """A small sentence piece of a document, stored beside the chunks it overlaps
    (multi-vector retrieval, ``sub_vector_tokens``).

    Attributes:
        source: The document's source.
        start: Where the piece starts in the document text.
        end: Where it ends (exclusive).
        text: ``document.text[start:end]``.
        chunk_ids: The stored chunks whose span overlaps the piece.
        prefix: Embedded in front of the text, not stored (the headings line under
            ``embed_headings``).
    """

    source: str
    start: int
    end: int
    text: str
    chunk_ids: tuple[str, ...]
    prefix: str = ""

    @property
    def embedding_text(self) -> str:
        """What is embedded for the piece: its prefix, then its text."""
        return self.prefix + self.text

    @property
    def piece_id(self) -> str:
        """Content-addressed: a hash of the source, the offsets and the text
        (:func:`fissure.store.ids.piece_id`)."""
        return piece_id(self.source, self.start, self.end, self.text)


def chunk_metadata(chunk: Chunk) -> dict[str, str | int]:
    """What every store keeps about a chunk, and hands back as ``Hit.metadata``: scalars
    only (Chroma takes no others), so an unset ``entity``, ``page`` or ``cell`` is left out
    rather than stored as ``None``."""
    meta: dict[str, str | int] = {
        "source": chunk.source or "",
        "doc_id": chunk.doc_id,
        "index": chunk.index,
        "start": chunk.start,
        "end": chunk.end,
        "line_start": chunk.lines[0],
        "line_end": chunk.lines[1],
        "headings": " › ".join(chunk.headings),
        "n_tokens": chunk.n_tokens,
        "strategy": chunk.strategy,
    }
    for key in ("entity", "page", "cell"):
        value = getattr(chunk, key)
        if value is not None:
            meta[key] = value
    return meta


@runtime_checkable
class Store(Protocol):
    """A vector store of chunks, small enough that others can follow.

    Writes must be idempotent: upserting the same chunk twice leaves one copy, and deleting
    a source that has no chunks does nothing. The ingest pipeline relies on both to resume
    after a crash. A store is one namespace: it never reads, counts or deletes another's
    records. Every backend runs the same contract tests (``tests/store/test_contract.py``);
    where one falls short of a promise below today, its test says so (a strict ``xfail``).

    Every store answers :meth:`query` the same way (``fissure.store.ranking`` has the
    shared parts; ``docs/store.md`` the reasons):

    1. **Scores** are cosines between the query and the stored vectors, computed exactly
       (float32, unit rows). An approximate index may only propose candidates, and a store
       must not lose a chunk to it below the size where an exact scan is affordable (the
       Chroma store scans up to a million chunks): a file of a thousand copies must not
       hide the other documents.
    2. **``where``** is equality on metadata keys, all of which must hold; it applies
       before ranking, so the ``k`` hits are the best of the chunks that match.
    3. **``sub_weight``** ``w``: a chunk scores ``(1 - w) * own + w * best``, ``best`` the
       best cosine among the stored pieces that overlap it (its own score when it has
       none). Without pieces in the store, ``sub_weight`` changes nothing.
    4. **Collapse** (``collapse=True``): of the chunks of one document with the same
       :func:`~fissure.store.ranking.text_key` (text equal up to case, whitespace and
       digits), one comes back: the earliest (smallest ``start``) of those within
       ``ranking.TIE`` of the group's best score; ``Hit.copies`` counts the group. Copies
       in different documents all come back.
    5. **Order**: by score, best first, at most ``k`` hits; equal scores by source key
       (:func:`~fissure.store.ranking.id_key` of the source), then ``start``, then the
       chunk id's key.
    6. **``mode``** (:mod:`fissure.store.fusion`): ``dense`` is all of the above;
       ``lexical`` ranks by BM25 over the chunks' words instead of cosine (``text`` is the
       question; ``where``, collapse and order as above); ``hybrid`` fuses the two
       rankings by reciprocal rank fusion. ``None`` is the store's default: with a
       ``text``, :data:`fissure.store.fusion.DEFAULT_MODE`; without, ``dense``. A store
       without a lexical index answers ``None`` with ``dense`` and refuses the other
       modes with a :class:`~fissure.errors.ConfigError` that says so.
    """

    def upsert(self, chunks: Sequence[Chunk], embeddings: np.ndarray) -> None:
        """Add or replace ``chunks`` (keyed by ``chunk_id``) with one vector each (row ``i``
        of ``embeddings`` for ``chunks[i]``); the text and :func:`chunk_metadata` are kept
        exactly.

        Raises:
            ValueError: ``chunks`` and ``embeddings`` differ in length.
            StoreError: The store refused the write (it is then left as it was).
        """
        ...

    def upsert_pieces(self, pieces: Sequence[Piece], embeddings: np.ndarray) -> None:
        """Add or replace ``pieces`` (keyed by ``piece_id``) with one vector each: one record
        per (piece, chunk it overlaps), keyed by :func:`fissure.store.ids.link_id`.

        Raises:
            ValueError: ``pieces`` and ``embeddings`` differ in length.
            StoreError: The store refused the write (it is then left as it was).
        """
        ...

    def delete_sources(self, sources: Sequence[str]) -> None:
        """Remove every chunk and piece whose document came from one of ``sources`` (a
        source without chunks is no error). Replacing a document is this, then
        :meth:`upsert` of its new chunks: nothing of the old version is left."""
        ...

    def query(
        self,
        vector: np.ndarray | None,
        k: int = 5,
        where: Mapping[str, Any] | None = None,
        *,
        sub_weight: float | None = None,
        collapse: bool = True,
        mode: str | None = None,
        text: str | None = None,
    ) -> list[Hit]:
        """The ``k`` best chunks for ``vector`` (and ``text``, in the lexical modes) under
        ``where``, as the class docstring defines them (exact scores, ``sub_weight``
        blending, near-copies collapsed, ``mode``); ``[]`` for an empty store or ``k < 1``.

        Raises:
            ConfigError: ``sub_weight`` is not within 0..1, ``mode`` is unknown or not
                served by this store, a dense mode has no ``vector``, a lexical one no
                ``text``, or ``where`` holds a value that is not a string, number or
                boolean.
        """
        ...

    def count(self) -> int:
        """How many chunks the store holds."""
        ...

    def count_pieces(self) -> int:
        """How many piece records (one per piece and chunk it overlaps) the store holds."""
        ...

    def items(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored chunk as ``(chunk_id, text, metadata)``, in no promised order."""
        ...

    def source_items(self, source: str) -> list[tuple[str, str, dict[str, Any]]]:
        """Every stored ``(chunk_id, text, metadata)`` of the document from ``source``, in
        chunk order (``metadata["index"]``); ``[]`` for a source the store does not hold."""
        ...

    def pieces(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored piece record as ``(link_id, text, metadata)``, in no promised order;
        the metadata holds ``source``, ``start``, ``end``, ``piece_id`` and ``chunk_id``."""
        ...

    def close(self) -> None:
        """Let go of what the store holds open (connections, file handles). Everything
        written is already durable: a store opened again on the same place sees it."""
        ...
