"""The default store: an embedded, persistent ChromaDB collection in a folder.

Chroma never embeds anything here: every write carries fissure's own vectors and every
query is a vector, so Chroma's default embedding function (which downloads a model) is
never called.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fissure.errors import ConfigError, MissingDependencyError
from fissure.store.protocol import Hit
from fissure.types import Chunk

COLLECTION = "fissure"
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
            raise MissingDependencyError("chromadb", "store", "the vector store") from exc
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            client = chromadb.PersistentClient(
                path=str(self.folder), settings=Settings(anonymized_telemetry=False)
            )
            self._collection = client.get_or_create_collection(
                collection, embedding_function=None, metadata={"hnsw:space": "cosine"}
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

    def delete_sources(self, sources: Sequence[str]) -> None:
        """Remove every chunk of the documents from ``sources``."""
        unique = sorted(set(sources))
        for at in range(0, len(unique), _PAGE):
            part = unique[at : at + _PAGE]
            self._collection.delete(where={"source": {"$in": part}})  # type: ignore[dict-item]

    def query(
        self, vector: np.ndarray, k: int = 5, where: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        """The ``k`` nearest chunks; ``where`` is equality on metadata keys (all must hold)."""
        if self.count() == 0:
            return []
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

    def count(self) -> int:
        """How many chunks the collection holds."""
        return int(self._collection.count())

    def items(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored ``(chunk_id, text, metadata)``, page by page."""
        offset = 0
        while True:
            page = self._collection.get(
                limit=_PAGE, offset=offset, include=["documents", "metadatas"]
            )
            if not page["ids"]:
                return
            docs = page["documents"] or []
            metas = page["metadatas"] or []
            for i, t, m in zip(page["ids"], docs, metas, strict=True):
                yield i, t or "", dict(m or {})
            offset += len(page["ids"])


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
