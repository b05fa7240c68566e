"""The default store: an embedded, persistent ChromaDB collection in a folder.

Chroma never embeds anything here: every write carries fissure's own vectors and every
query is a vector, so Chroma's default embedding function (which downloads a model) is
never called.

Multi-vector retrieval (``fissure ingest --sub-vectors N``) keeps sentence pieces in a second
collection, ``<collection>-pieces``, in the same folder and space. Chroma metadata values are
scalars, so a piece is stored once per chunk it overlaps: one record per (piece, chunk) link,
with metadata ``source``, ``start``, ``end``, ``piece_id`` and ``chunk_id`` (a piece on a
chunk boundary has two records, same text and vector). Deleting a source deletes its
chunks and its pieces.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fissure.errors import ConfigError, MissingDependencyError
from fissure.store.protocol import Hit, Piece
from fissure.types import Chunk

COLLECTION = "fissure"
PIECES = "-pieces"  # the piece collection is named after the chunk one, with this suffix
_PAGE = 1000  # sources per delete filter and ids per get


class ChromaStore:
    """Chunks and vectors in a persistent Chroma collection (cosine space).

    Args:
        folder: Where Chroma keeps its files (created if missing).
        collection: Collection name.

    Raises:
        MissingDependencyError: chromadb is not installed.
        ConfigError: The folder cannot be used.
    """

    def __init__(self, folder: str | Path, collection: str = COLLECTION) -> None:
        try:
            import chromadb
            from chromadb.config import Settings
        except ImportError as exc:
            raise MissingDependencyError("chromadb", purpose="the vector store") from exc
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            client = chromadb.PersistentClient(
                path=str(self.folder), settings=Settings(anonymized_telemetry=False)
            )
            self._collection = client.get_or_create_collection(
                collection, embedding_function=None, metadata={"hnsw:space": "cosine"}
            )
            self._pieces = client.get_or_create_collection(
                collection + PIECES, embedding_function=None, metadata={"hnsw:space": "cosine"}
            )
        except OSError as exc:
            raise ConfigError(f"cannot open the store in {self.folder}: {exc}") from exc
        self._max_batch = int(client.get_max_batch_size())

    def upsert(self, chunks: Sequence[Chunk], embeddings: np.ndarray) -> None:
        """Add or replace chunks; ids are the chunks' content-addressed ``chunk_id``."""
        if len(chunks) != len(embeddings):
            raise ValueError(f"{len(chunks)} chunks but {len(embeddings)} embeddings")
        for at in range(0, len(chunks), self._max_batch):
            part = chunks[at : at + self._max_batch]
            self._collection.upsert(
                ids=[c.chunk_id for c in part],
                embeddings=np.asarray(embeddings[at : at + len(part)], dtype=np.float32),
                documents=[c.text for c in part],
                metadatas=[chunk_metadata(c) for c in part],  # type: ignore[misc]
            )

    def upsert_pieces(self, pieces: Sequence[Piece], embeddings: np.ndarray) -> None:
        """Add or replace pieces: one record per (piece, overlapped chunk) link."""
        if len(pieces) != len(embeddings):
            raise ValueError(f"{len(pieces)} pieces but {len(embeddings)} embeddings")
        links = [(p, v) for p, v in zip(pieces, embeddings, strict=True) for _ in p.chunk_ids]
        chunk_ids = [c for p in pieces for c in p.chunk_ids]
        for at in range(0, len(links), self._max_batch):
            part = links[at : at + self._max_batch]
            owners = chunk_ids[at : at + len(part)]
            self._pieces.upsert(
                ids=[_link_id(p.piece_id, c) for (p, _), c in zip(part, owners, strict=True)],
                embeddings=np.asarray([v for _, v in part], dtype=np.float32),
                documents=[p.text for p, _ in part],
                metadatas=[  # type: ignore[arg-type]
                    {"source": p.source, "start": p.start, "end": p.end,
                     "piece_id": p.piece_id, "chunk_id": c}  # fmt: skip
                    for (p, _), c in zip(part, owners, strict=True)
                ],
            )

    def delete_sources(self, sources: Sequence[str]) -> None:
        """Remove every chunk and piece of the documents from ``sources``."""
        unique = sorted(set(sources))
        for at in range(0, len(unique), _PAGE):
            part = unique[at : at + _PAGE]
            self._collection.delete(where={"source": {"$in": part}})  # type: ignore[dict-item]
            self._pieces.delete(where={"source": {"$in": part}})  # type: ignore[dict-item]

    def query(
        self,
        vector: np.ndarray,
        k: int = 5,
        where: Mapping[str, Any] | None = None,
        *,
        sub_weight: float | None = None,
    ) -> list[Hit]:
        """The ``k`` nearest chunks; ``where`` is equality on metadata keys (all must hold).

        With ``sub_weight`` ``w`` and pieces in the store, each candidate's score is
        ``(1 - w) * cos(vector, chunk) + w * max cos(vector, piece)`` over the pieces that
        overlap it (a chunk without a piece keeps its own score in both terms). The
        candidates are the ``max(50, 10 * k)`` nearest chunks and the chunks of as many
        nearest piece links (every chunk, scored exactly, when the store holds no more).

        Raises:
            ConfigError: ``sub_weight`` is not within 0..1.
        """
        if sub_weight is not None and (
            isinstance(sub_weight, bool) or not 0 <= sub_weight <= 1
        ):
            raise ConfigError(f"sub_weight must be within 0..1, got {sub_weight!r}")
        if self.count() == 0:
            return []
        if sub_weight is not None and self.count_pieces():
            return self._blended(vector, k, where, float(sub_weight))
        found = self._collection.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32)],  # type: ignore[arg-type]
            n_results=k,
            where=_where(where),  # type: ignore[arg-type]
            include=["documents", "metadatas", "distances"],
        )
        ids = found["ids"][0]
        docs = (found["documents"] or [[]])[0]
        metas = (found["metadatas"] or [[]])[0]
        dists = (found["distances"] or [[]])[0]
        return [
            Hit(i, 1.0 - float(d), t or "", dict(m or {}))
            for i, t, m, d in zip(ids, docs, metas, dists, strict=True)
        ]

    def _blended(
        self, vector: np.ndarray, k: int, where: Mapping[str, Any] | None, weight: float
    ) -> list[Hit]:
        query = np.asarray(vector, dtype=np.float32).ravel()
        depth = max(50, 10 * k)
        include = ["embeddings", "documents", "metadatas"]
        if depth >= self.count():
            chunks = self._collection.get(where=_where(where), include=include)  # type: ignore[arg-type,list-item]
        else:
            near = self._collection.query(
                query_embeddings=[query],  # type: ignore[arg-type]
                n_results=depth,
                where=_where(where),  # type: ignore[arg-type]
                include=["distances"],
            )
            linked = self._pieces.query(
                query_embeddings=[query],  # type: ignore[arg-type]
                n_results=min(depth, self.count_pieces()),
                include=["metadatas"],
            )
            candidates = set(near["ids"][0])
            candidates.update(str(m["chunk_id"]) for m in (linked["metadatas"] or [[]])[0] if m)
            chunks = self._collection.get(
                ids=sorted(candidates), where=_where(where), include=include  # type: ignore[arg-type,list-item]
            )
        ids = list(chunks["ids"])
        if not ids:
            return []
        own = _cosines(query, chunks["embeddings"])
        best = np.full(len(ids), -np.inf)
        row = {chunk_id: i for i, chunk_id in enumerate(ids)}
        for at in range(0, len(ids), _PAGE):
            links = self._pieces.get(
                where={"chunk_id": {"$in": ids[at : at + _PAGE]}},  # type: ignore[dict-item]
                include=["embeddings", "metadatas"],  # type: ignore[list-item]
            )
            if not links["ids"]:
                continue
            scores = _cosines(query, links["embeddings"])
            for meta, score in zip(links["metadatas"] or [], scores, strict=True):
                i = row[str(meta["chunk_id"])]
                best[i] = max(best[i], score)
        best = np.where(np.isfinite(best), best, own)
        blended = (1.0 - weight) * own + weight * best
        order = np.argsort(-blended, kind="stable")[:k]
        docs = chunks["documents"] or []
        metas = chunks["metadatas"] or []
        return [Hit(ids[i], float(blended[i]), docs[i] or "", dict(metas[i] or {})) for i in order]

    def count(self) -> int:
        """How many chunks the collection holds."""
        return int(self._collection.count())

    def count_pieces(self) -> int:
        """How many piece records (one per piece and chunk it overlaps) the store holds."""
        return int(self._pieces.count())

    def items(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored ``(chunk_id, text, metadata)``, page by page."""
        return _records(self._collection)

    def source_items(self, source: str) -> list[tuple[str, str, dict[str, Any]]]:
        """Every stored ``(chunk_id, text, metadata)`` of one document, in chunk order."""
        found = self._collection.get(
            where={"source": source}, include=["documents", "metadatas"]  # type: ignore[list-item]
        )
        docs = found["documents"] or []
        metas = found["metadatas"] or []
        rows = [(i, t or "", dict(m or {})) for i, t, m in zip(found["ids"], docs, metas,
                                                                strict=True)]  # fmt: skip
        return sorted(rows, key=lambda row: int(row[2].get("index", 0)))

    def pieces(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored piece link ``(record_id, text, metadata)``, page by page."""
        return _records(self._pieces)


def _records(collection: Any) -> Iterator[tuple[str, str, dict[str, Any]]]:
    offset = 0
    while True:
        page = collection.get(limit=_PAGE, offset=offset, include=["documents", "metadatas"])
        if not page["ids"]:
            return
        docs = page["documents"] or []
        metas = page["metadatas"] or []
        for i, t, m in zip(page["ids"], docs, metas, strict=True):
            yield i, t or "", dict(m or {})
        offset += len(page["ids"])


def _link_id(piece_id: str, chunk_id: str) -> str:
    return hashlib.sha256(f"{piece_id}\0{chunk_id}".encode()).hexdigest()[:32]


def _cosines(query: np.ndarray, vectors: Any) -> np.ndarray:
    """Cosine of ``query`` with each row of ``vectors`` (0 for a zero vector)."""
    rows = np.asarray(vectors, dtype=np.float64).reshape(-1, len(query))
    q = query.astype(np.float64)
    norms = np.linalg.norm(rows, axis=1) * (np.linalg.norm(q) or 1.0)
    return np.divide(rows @ q, norms, out=np.zeros(len(rows)), where=norms > 0)


def chunk_metadata(chunk: Chunk) -> dict[str, str | int]:
    """What the store keeps about a chunk; Chroma takes only scalars, so no ``None``."""
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


def _where(where: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not where:
        return None
    if len(where) == 1:
        return dict(where)
    return {"$and": [{k: v} for k, v in where.items()]}
