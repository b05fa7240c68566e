"""Embedders for evaluation runs, and an on-disk cache of their vectors.

An embedder is anything with ``model_id: str`` and ``embed(list[str]) -> np.ndarray`` giving
L2-normalised float32 rows. :class:`HashingEmbedder` is deterministic and needs no model (tests
and smoke runs); :func:`load_embedder` resolves a name to a real model, offline.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from fissure.errors import ConfigError, MissingDependencyError

if TYPE_CHECKING:
    from rich.progress import Progress

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors, one row per text."""

    model_id: str

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors of ``texts``, shape ``(len(texts), dim)``."""
        ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


class SentenceTransformerEmbedder:
    """A local sentence-transformers model on the CPU (never downloads)."""

    def __init__(self, model_dir: str | Path, model_id: str, batch_size: int = 32) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingDependencyError("sentence-transformers", "embed", "embedding") from exc
        self.model_id = model_id
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(model_dir), device="cpu")

    def embed(self, texts: list[str]) -> np.ndarray:
        """Normalised sentence embeddings (inputs past the model's limit are truncated)."""
        vectors = self._model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.asarray(vectors, dtype=np.float32)


def load_embedder(name: str) -> Embedder:
    """An embedder by name: ``minilm`` (the packaged all-MiniLM-L6-v2) or ``hashing``.

    Raises:
        ConfigError: Unknown name.
    """
    if name == "hashing":
        from fissure.embed.hashing import HashingEmbedder

        return HashingEmbedder()
    if name == "minilm":
        from fissure.size.sizer import minilm_model_dir

        return SentenceTransformerEmbedder(minilm_model_dir(), MINILM_ID)
    raise ConfigError(f"unknown embedder {name!r}: use 'minilm' or 'hashing'")


class EmbeddingCache:
    """Vectors on disk keyed by (model id, SHA-256 of the text), in one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors "
            "(model TEXT, key TEXT, vector BLOB, PRIMARY KEY (model, key))"
        )

    @staticmethod
    def key(text: str) -> str:
        """The cache key of ``text``."""
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, model: str, keys: list[str]) -> dict[str, np.ndarray]:
        """Cached vectors of those keys that are present."""
        found: dict[str, np.ndarray] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                f"SELECT key, vector FROM vectors WHERE model = ? AND key IN ({marks})",
                [model, *part],
            )
            found.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows)
        return found

    def put(self, model: str, keys: list[str], vectors: np.ndarray) -> None:
        """Store vectors (float32 rows) under ``keys``."""
        rows = [
            (model, k, np.asarray(v, dtype=np.float32).tobytes())
            for k, v in zip(keys, vectors, strict=True)
        ]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)

    def close(self) -> None:
        """Close the database."""
        self._db.close()


def embed_cached(
    embedder: Embedder,
    texts: list[str],
    cache: EmbeddingCache | None,
    *,
    batch: int = 64,
    progress: Progress | None = None,
    label: str = "embedding",
) -> np.ndarray:
    """Embed ``texts``, reading and filling ``cache``; each distinct text is embedded once.

    Args:
        embedder: The model.
        texts: Texts to embed (duplicates allowed).
        cache: Where vectors persist between runs; ``None`` for none.
        batch: Texts per call to the embedder (and per cache write).
        progress: A rich progress display to add a bar for the texts not yet cached.
        label: The bar's description.

    Returns:
        A ``(len(texts), dim)`` float32 array, rows in the order of ``texts``.
    """
    keys = [EmbeddingCache.key(t) for t in texts]
    distinct = list(dict.fromkeys(keys))
    known = cache.get(embedder.model_id, distinct) if cache else {}
    text_of = dict(zip(keys, texts, strict=True))
    todo = [k for k in distinct if k not in known]
    task = progress.add_task(label, total=len(todo)) if progress and todo else None
    for i in range(0, len(todo), batch):
        part = todo[i : i + batch]
        vectors = embedder.embed([text_of[k] for k in part])
        known.update(zip(part, vectors, strict=True))
        if cache:
            cache.put(embedder.model_id, part, vectors)
        if progress and task is not None:
            progress.advance(task, len(part))
    if not keys:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([known[k] for k in keys]).astype(np.float32, copy=False)
