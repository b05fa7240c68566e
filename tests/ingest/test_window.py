"""``embed_window_tokens``: each stored vector blends the chunk's and its window's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

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
    stored = {text for _, text, _ in ChromaStore(tmp_path / "store" / "chroma").items()}
    assert embedded and stored
    with_context = [t for t in embedded if t not in stored]
    assert with_context, "no chunk was embedded with its context"
    for text in with_context:
        context, _, body = text.partition("\n")
        assert context and body in stored


def test_embed_headings_puts_the_breadcrumb_in_front_of_chunks_windows_and_pieces(
    corpus: Path, tmp_path: Path
) -> None:
    """``embed_headings``: chunks, windows and sentence pieces are embedded after their
    headings line (``Document 0 › Part 1``); the store keeps the bare texts."""
    from fissure.embed.window import heading_line

    settings = replace(SETTINGS, embed_headings=True, embed_window_tokens=60,
                       sub_vector_tokens=12)  # fmt: skip
    embedder = Recording()
    run(corpus, tmp_path / "store", embedder, settings=settings)
    embedded = [t for batch in embedder.batches for t in batch]
    chroma = ChromaStore(tmp_path / "store" / "chroma")
    stored = {t: m for _, t, m in chroma.items()}
    crumbs = {heading_line(m["headings"].split(" › ")) for m in stored.values() if m["headings"]}
    assert any(" › " in c for c in crumbs)  # nested sections: "Document 0 › Part 1"
    for text, meta in stored.items():
        line = heading_line(meta["headings"].split(" › ")) if meta["headings"] else ""
        assert line + text in embedded  # the chunk itself, after its own line
    headed = [t for t in embedded if any(t.startswith(c) for c in crumbs)]
    windows = len(headed) - sum(1 for m in stored.values() if m["headings"])
    assert windows > 0  # windows (and pieces) carry the line too
    pieces = [(t, m) for _, t, m in chroma.pieces() if str(m["source"]).endswith(".md")]
    assert pieces
    for text, _ in pieces:
        assert any(c + text in embedded for c in crumbs), text


def test_embed_headings_does_not_go_with_prepend_context() -> None:
    from fissure.errors import ConfigError

    with pytest.raises(ConfigError, match="choose one"):
        replace(SETTINGS, embed_headings=True, prepend_context=True)
    assert fingerprint(replace(SETTINGS, embed_headings=False), "m") == fingerprint(SETTINGS, "m")
    assert fingerprint(replace(SETTINGS, embed_headings=True), "m") != fingerprint(SETTINGS, "m")
