"""The Chroma store and the manifest, on their own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fissure import Chunker
from fissure.store import ChromaStore, Entry, Failure, Manifest, Store
from fissure.store.protocol import Piece
from tests.ingest.helpers import HashEmbedder

TEXT = "# Title of alpha\n\n## One alpha\n\n" + "alpha " * 30 + "\n\n## Two\n\n" + "beta " * 30


def _chunks(source: str) -> list:
    text = TEXT.replace("alpha", source)  # distinct texts, distinct vectors
    return Chunker(tokenizer="words", max_tokens=20).chunk(text, source=source)


def test_chroma_upsert_is_idempotent_and_deletes_by_source(tmp_path: Path) -> None:
    store = ChromaStore(tmp_path / "chroma")
    assert isinstance(store, Store)
    a, b = _chunks("a.md"), _chunks("b.md")
    vectors = HashEmbedder().embed([c.text for c in a + b])
    store.upsert(a + b, vectors)
    store.upsert(a, vectors[: len(a)])
    assert store.count() == len(a) + len(b)
    hit = store.query(vectors[0], k=1)[0]
    assert hit.chunk_id == a[0].chunk_id and hit.text == a[0].text and hit.score > 0.99
    meta = hit.metadata
    assert (meta["source"], meta["start"], meta["end"]) == ("a.md", a[0].start, a[0].end)
    assert meta["strategy"] == "structural" and meta["n_tokens"] == a[0].n_tokens
    assert store.query(vectors[0], k=3, where={"source": "b.md"})[0].metadata["source"] == "b.md"
    store.delete_sources(["a.md", "never-there"])
    assert store.count() == len(b)
    assert {i for i, _, _ in ChromaStore(tmp_path / "chroma").items()} == {
        c.chunk_id for c in b}  # fmt: skip
    assert isinstance(store.query(np.ones(16, dtype=np.float32), k=2), list)


def test_manifest_records_pending_and_failures(tmp_path: Path) -> None:
    m = Manifest(tmp_path)
    m.mark_pending(["a", "b"])
    assert sorted(m.pending()) == ["a", "b"]
    good = Entry("a", "o", "h1", "fp", "ok", ("c1", "c2"), (3, 4))
    bad = Entry("b", "o", "h2", "fp", "failed")
    m.commit([good, bad], [Failure("b", "o", "parse", "InputError", "binary")])
    assert m.pending() == []
    assert m.known("o")["a"].digest == "h1" and m.chunk_ids("o") == {"c1", "c2"}
    assert [(f.source, f.stage) for f in m.failures()] == [("b", "parse")]
    m.commit([Entry("b", "o", "h3", "fp", "ok", ("c3",), (5,))])
    assert m.failures() == []
    m.commit([Entry("b", "o", "h4", "fp", "failed")], [Failure("b", "o", "fetch", "E", "x")])
    assert m.clear_failures() == 1 and "b" not in m.known("o")
    m.forget(["a"])
    assert m.known("o") == {}
    m.record_run("o", "spec", {"embedder": "minilm"})
    assert m.runs()["o"][0] == "spec"
    m.close()


def test_chroma_pieces_are_linked_blended_and_deleted_with_their_source(tmp_path: Path) -> None:
    store = ChromaStore(tmp_path / "chroma")
    a, b = _chunks("a.md"), _chunks("b.md")
    hasher = HashEmbedder()
    store.upsert(a + b, hasher.embed([c.text for c in a + b]))
    first = a[0]
    piece = Piece("a.md", first.start, first.start + 5, first.text[:5], (first.chunk_id,))
    both = Piece("b.md", b[0].end - 3, b[1].start + 3, "xy", (b[0].chunk_id, b[1].chunk_id))
    store.upsert_pieces([piece, both], hasher.embed([piece.text, both.text]))
    store.upsert_pieces([piece], hasher.embed([piece.text]))  # idempotent
    assert store.count_pieces() == 3  # one record per (piece, chunk) link
    query = hasher.embed([piece.text])[0]  # the piece itself: its chunk must win
    hit = store.query(query, k=1, sub_weight=0.4)[0]
    own = float(hasher.embed([first.text])[0] @ query)
    assert hit.chunk_id == first.chunk_id and hit.score == pytest.approx(0.6 * own + 0.4, abs=1e-5)
    store.delete_sources(["b.md"])
    assert {m["source"] for _, _, m in store.pieces()} == {"a.md"}
    store.delete_sources(["a.md"])
    assert store.count_pieces() == 0 and store.count() == 0


def test_dead_letters_quoting_lone_surrogates_are_stored(tmp_path: Path) -> None:
    manifest = Manifest(tmp_path)
    try:
        message = "cannot decode caf\udce9.md \ud800 \x00"
        failure = Failure("file:///x/caf%E9.md", "file:/x", "parse", "E", message, "at \udcff")
        manifest.commit([], [failure])
        (failure,) = manifest.failures()
    finally:
        manifest.close()
    assert failure.message == "cannot decode caf\\udce9.md \\ud800 \\x00"
    assert failure.traceback == "at \\udcff"
