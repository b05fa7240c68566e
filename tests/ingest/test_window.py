"""``embed_window_tokens``: each stored vector blends the chunk's and its window's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from fissure.embed.window import blend
from fissure.ingest.plan import fingerprint
from fissure.store import ChromaStore
from tests.ingest.conftest import SETTINGS, run, snapshot
from tests.ingest.helpers import HashEmbedder


class Recording(HashEmbedder):
    """Keeps every call's texts."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return super().embed(texts)


def test_windows_are_embedded_and_blended_into_the_stored_vector(
    corpus: Path, tmp_path: Path
) -> None:
    settings = replace(SETTINGS, embed_window_tokens=60, embed_window_share=0.5)
    embedder = Recording()
    summary = run(corpus, tmp_path / "store", embedder, settings=settings)
    run(corpus, tmp_path / "plain", HashEmbedder())
    chunks = snapshot(tmp_path / "store")["chunks"]
    assert set(chunks) == set(snapshot(tmp_path / "plain")["chunks"])  # the same chunks
    store, hasher, checked = ChromaStore(tmp_path / "store" / "chroma"), HashEmbedder(), 0
    for batch in embedder.batches:  # one call per group: the chunks, then their windows
        half = len(batch) // 2
        for text, window in zip(batch[:half], batch[half:], strict=True):
            assert text in window
            want = blend(hasher.embed([text]), hasher.embed([window]), 0.5)[0]
            hit = store.query(want, k=1)[0]
            # By text, not id: repeated texts (notes.txt) may tie with an identical window.
            assert hit.text == text and hit.chunk_id in chunks and hit.score > 0.999
            checked += 1
    assert checked == summary.chunks > 0


def test_the_window_settings_change_the_stamp_only_when_on() -> None:
    base = fingerprint(SETTINGS, "m")
    assert fingerprint(replace(SETTINGS, embed_window_share=0.3), "m") == base
    on = fingerprint(replace(SETTINGS, embed_window_tokens=200), "m")
    assert on != base
    assert fingerprint(replace(SETTINGS, embed_window_tokens=200, embed_window_share=0.3),
                       "m") != on  # fmt: skip


def test_prepend_context_reaches_the_embedder(corpus: Path, tmp_path: Path) -> None:
    """With ``prepend_context`` the vectors are of ``chunk.embedding_text()`` (breadcrumb,
    newline, text), not of the bare text."""
    embedder = Recording()
    run(corpus, tmp_path / "store", embedder, settings=replace(SETTINGS, prepend_context=True))
    embedded = [t for batch in embedder.batches for t in batch]
    stored = {hit.text for hit in ChromaStore(tmp_path / "store" / "chroma").query(
        HashEmbedder().embed(["x"])[0], k=1000)}  # fmt: skip
    assert embedded and stored
    with_context = [t for t in embedded if t not in stored]
    assert with_context, "no chunk was embedded with its context"
    for text in with_context:
        context, _, body = text.partition("\n")
        assert context and body in stored
