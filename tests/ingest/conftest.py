"""Shared fixtures for ingestion tests: a small corpus, a counting embedder, store snapshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fissure.config import ChunkSettings
from fissure.ingest import Options, Summary, ingest, open_source
from fissure.store.open import close_store, open_store
from tests.ingest.helpers import PLUGIN, HashEmbedder

SETTINGS = ChunkSettings(tokenizer="words", max_tokens=40)


def write_corpus(root: Path, n: int = 6) -> Path:
    """A few Markdown, Python and text files with enough words for several chunks each."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        sections = "\n\n".join(
            f"## Part {j}\n\n" + " ".join(f"word{i}_{j}_{k}" for k in range(35)) for j in range(3)
        )
        (root / f"doc{i}.md").write_text(f"# Document {i}\n\n{sections}\n")
    (root / "code.py").write_text(
        "def alpha(x):\n    return x + 1\n\n\nclass Beta:\n    def gamma(self):\n"
        "        return 'gamma ' * 30\n"
    )
    (root / "notes.txt").write_text("plain notes " * 50)
    return root


def run(
    src: str | Path,
    store: Path | str,
    embedder: HashEmbedder | None = None,
    namespace: str = "default",
    engine: Any = None,
    **opts: Any,
) -> Summary:
    """One ingest with test settings (one worker, the test plugin loaded)."""
    options = Options(
        **{"settings": SETTINGS, "workers": 1, "timeout": 20, "plugins": (PLUGIN,), **opts}
    )
    return ingest(open_source(str(src)), store, embedder or HashEmbedder(), options,
                  namespace=namespace, engine=engine)  # fmt: skip


def snapshot(store: Path | str, namespace: str = "default") -> dict[str, Any]:
    """Everything a store (folder or database) holds: chunks (id → source, offsets, text),
    sentence-piece links (id → source, offsets, chunk id, text) and manifest rows."""
    found, manifest = open_store(store, namespace=namespace)
    chunks = {i: (m["source"], m["start"], m["end"], t) for i, t, m in found.items()}  # type: ignore[attr-defined]
    pieces = {i: (m["source"], m["start"], m["end"], m["chunk_id"], t)
              for i, t, m in found.pieces()}  # type: ignore[attr-defined]  # fmt: skip
    close_store(found)
    try:
        documents = {s: (st, len(t)) for s, st, t in manifest.documents()}
        listed = manifest.chunk_ids()
        failures = sorted((f.source, f.stage, f.error_type) for f in manifest.failures())
        pending = manifest.pending()
    finally:
        manifest.close()
    return {"chunks": chunks, "pieces": pieces, "documents": documents, "listed": listed,
            "failures": failures, "pending": pending}  # fmt: skip


def assert_same_store(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got["pending"] == []
    assert set(got["chunks"]) == set(want["chunks"]), "chunk ids differ"
    assert got["chunks"] == want["chunks"]
    assert got["listed"] == set(got["chunks"]), "manifest and store disagree"
    assert got["pieces"] == want["pieces"], "sentence pieces differ"
    assert {p[3] for p in got["pieces"].values()} <= set(got["chunks"]), "orphan pieces"
    assert got["documents"] == want["documents"]
    assert got["failures"] == want["failures"]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus")


def vectors_of(store: Path | str, namespace: str = "default") -> dict[str, np.ndarray]:
    """Every chunk's stored vector, by chunk id (Chroma or PostgreSQL)."""
    found, manifest = open_store(store, namespace=namespace)
    manifest.close()
    try:
        if hasattr(type(found), "vectors"):
            return dict(found.vectors())  # type: ignore[attr-defined]
        got = found._collection.get(include=["embeddings"])  # type: ignore[attr-defined]
        return {i: np.asarray(v, dtype=np.float32) for i, v in zip(got["ids"], got["embeddings"],
                                                                   strict=True)}  # fmt: skip
    finally:
        close_store(found)


def pg_rows(dsn: str, table: str, namespace: str) -> int:
    """How many rows of one of fissure's tables belong to ``namespace`` (``documents``,
    ``pending`` …), read on a connection of its own."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        sql = f"SELECT count(*) FROM fissure_{table} WHERE namespace = %s"
        return int(conn.execute(sql, (namespace,)).fetchone()[0])
