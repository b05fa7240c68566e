"""A disk cache of embeddings keyed by (model id, sha256 of the text); only misses are embedded.

The store is one SQLite file in WAL mode: readers never block, writers queue on SQLite's
own lock, and ``INSERT OR REPLACE`` makes two processes that embed the same text at once
harmless (both computed the same vector).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from fissure.embed.files import cache_dir as default_cache_dir
from fissure.embed.protocol import Embedder, empty
from fissure.errors import ConfigError

FILENAME = "embeddings.sqlite3"
_CHUNK = 500  # keys per SELECT, well under SQLite's bound-parameter limit
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    model  TEXT NOT NULL,
    digest BLOB NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, digest)
) WITHOUT ROWID
"""


def text_digest(text: str) -> bytes:
    """The cache key of a text: sha256 of its UTF-8 bytes (lone surrogates kept as is)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class CachedEmbedder:
    """Wraps an embedder with a persistent cache; safe across threads and processes.

    Args:
        inner: The embedder that computes misses.
        cache_dir: Folder of the cache file; defaults to ``<fissure cache>/embeddings``.

    Attributes:
        hits: Texts answered from the cache so far.
        misses: Texts sent to ``inner`` so far (after de-duplication).
    """

    def __init__(self, inner: Embedder, cache_dir: str | Path | None = None) -> None:
        folder = Path(cache_dir).expanduser() if cache_dir else default_cache_dir() / "embeddings"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create the embedding cache folder {folder}: {exc}") from exc
        self.inner = inner
        self.path = folder / FILENAME
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        with self._lock:
            self._connection()  # fail now, not in the middle of a run

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, {str(self.path.parent)!r})"

    @property
    def dim(self) -> int:
        """The inner embedder's vector width."""
        return self.inner.dim

    @property
    def max_tokens(self) -> int:
        """The inner embedder's input limit."""
        return self.inner.max_tokens

    @property
    def model_id(self) -> str:
        """The inner embedder's model id, which keys the cache."""
        return self.inner.model_id

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``, computing only those not cached for this model."""
        if not texts:
            return empty(self.dim)
        keys = [text_digest(t) for t in texts]
        model = self.model_id
        with self._lock:
            found = self._lookup(model, list(dict.fromkeys(keys)))
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if todo:
            computed = self.inner.embed(list(todo.values()))
            fresh = dict(zip(todo, np.asarray(computed, dtype=np.float32), strict=True))
            with self._lock:
                self._store(model, fresh)
            found.update(fresh)
        self.misses += len(todo)
        self.hits += len(texts) - len(todo)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def close(self) -> None:
        """Close the database connection (it reopens on the next call)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
            self._conn = None

    def _connection(self) -> sqlite3.Connection:
        # A connection must not cross a fork: reopen in a child process.
        if self._conn is None or self._pid != os.getpid():
            conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            with conn:
                conn.execute(_SCHEMA)
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def _lookup(self, model: str, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        conn = self._connection()
        width = self.dim * 4
        found: dict[bytes, np.ndarray] = {}
        for at in range(0, len(keys), _CHUNK):
            chunk = keys[at : at + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT digest, vector FROM vectors WHERE model = ? AND digest IN ({marks})",
                [model, *chunk],
            )
            for digest, blob in rows:
                if len(blob) == width:  # anything else is stale: embed it again
                    found[digest] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _store(self, model: str, vectors: dict[bytes, np.ndarray]) -> None:
        conn = self._connection()
        rows = [(model, k, v.tobytes()) for k, v in vectors.items()]
        with conn:
            conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
