"""A document's time limit covers embedding and storing it, not only parsing.

A document of more than :data:`fissure.ingest.slices.SLICE` chunks is embedded and stored
a slice at a time; when what parsing left of its limit runs out, it becomes a dead letter
naming the limit, nothing of it stays in the store, and the rest of the run is stored.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fissure.ingest import Options, ingest, open_source, slices, writer
from fissure.store.open import open_store
from tests.ingest.conftest import SETTINGS, run, snapshot, vectors_of, write_corpus
from tests.ingest.helpers import HashEmbedder


def _big(root: Path, paragraphs: int = 3000) -> Path:
    """A text of ``paragraphs`` paragraphs of 30 words: one chunk each at 40 words."""
    path = root / "big.txt"
    path.write_text(
        "\n\n".join(" ".join(f"w{i}x{k}" for k in range(30)) for i in range(paragraphs))
    )
    return path


class SlowStore:
    """A store whose chunk writes take ``delay`` seconds each."""

    def __init__(self, inner: Any, delay: float) -> None:
        self.inner, self.delay = inner, delay

    def upsert(self, chunks: Any, embeddings: np.ndarray) -> None:
        time.sleep(self.delay)
        self.inner.upsert(chunks, embeddings)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _sources(store: Path) -> set[str]:
    return {Path(source).name for source, *_ in snapshot(store)["chunks"].values()}


def test_slow_embedding_of_a_big_document_is_a_dead_letter(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "corpus", n=3)
    _big(root)
    summary = run(root, tmp_path / "store", HashEmbedder(delay=0.6), timeout=1, timeout_per_mb=0)
    (failure,) = summary.errors
    assert Path(failure.source).name == "big.txt"
    assert failure.stage == "embed" and failure.error_type == "LimitError"
    assert "took longer than" in failure.message and "--timeout" in failure.message
    assert "big.txt" not in _sources(tmp_path / "store")
    assert {"doc0.md", "doc1.md", "doc2.md", "code.py", "notes.txt"} <= _sources(tmp_path / "store")


def test_slow_store_writes_of_a_big_document_leave_nothing_of_it(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "corpus", n=2)
    _big(root)
    store, manifest = open_store(tmp_path / "store")
    manifest.close()
    options = Options(settings=SETTINGS, workers=1, timeout=2, timeout_per_mb=0)
    slow = SlowStore(store, delay=0.8)
    summary = ingest(
        open_source(str(root)), tmp_path / "store", HashEmbedder(), options, store=slow
    )  # type: ignore[arg-type]
    store.close()
    (failure,) = summary.errors
    assert failure.stage == "store" and failure.error_type == "LimitError"
    assert "stopped while storing" in failure.message
    assert "big.txt" not in _sources(tmp_path / "store")
    assert "doc0.md" in _sources(tmp_path / "store")


def test_a_dead_letter_for_time_converges_when_the_limit_is_raised(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "corpus", n=1)
    _big(root, 1500)
    late = run(root, tmp_path / "late", HashEmbedder(delay=0.4), timeout=0.5, timeout_per_mb=0)
    (failure,) = late.errors
    # What `fissure dlq retry --timeout 60` does: the dead letters again, with more time.
    options = Options(settings=SETTINGS, workers=1, timeout=60)
    again = {failure.source}
    fixed = ingest(open_source(str(root)), tmp_path / "late", HashEmbedder(), options, force=again)
    assert not fixed.errors
    clean = run(root, tmp_path / "clean", timeout=60)
    assert snapshot(tmp_path / "late")["chunks"] == snapshot(tmp_path / "clean")["chunks"]
    assert fixed.corpus_chunks == clean.corpus_chunks


@pytest.mark.parametrize("size", [64, 10**9])
def test_slices_store_what_one_write_stores(tmp_path: Path, size: int, monkeypatch) -> None:
    """Sliced or whole, a big document is stored the same (ids, texts, offsets, vectors)."""
    root = tmp_path / "corpus"
    root.mkdir()
    _big(root, 300)
    monkeypatch.setattr(slices, "SLICE", 10**9)
    monkeypatch.setattr(writer, "SLICE", 10**9)
    settings = replace(SETTINGS, sub_vector_tokens=12)
    run(root, tmp_path / "whole", settings=settings)
    monkeypatch.setattr(slices, "SLICE", size)
    monkeypatch.setattr(writer, "SLICE", size)
    run(root, tmp_path / "sliced", settings=settings)
    assert snapshot(tmp_path / "sliced") == snapshot(tmp_path / "whole")
    assert snapshot(tmp_path / "sliced")["pieces"]
    got, want = vectors_of(tmp_path / "sliced"), vectors_of(tmp_path / "whole")
    assert got.keys() == want.keys()
    assert all(np.allclose(got[i], want[i], atol=1e-6) for i in got)
