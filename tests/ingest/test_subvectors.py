"""``sub_vector_tokens`` (sentence pieces, ``query(sub_weight=w)``) and ``dedup``."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fissure import Chunker
from fissure.chunker import load_document
from fissure.cli import app
from fissure.config import ChunkSettings
from fissure.errors import ConfigError
from fissure.ingest.pieces import link_pieces, repeated
from fissure.ingest.plan import fingerprint
from fissure.store import ChromaStore
from fissure.types import Document
from tests.ingest.conftest import SETTINGS, assert_same_store, run, snapshot, write_corpus
from tests.ingest.helpers import HashEmbedder

SUB = replace(SETTINGS, sub_vector_tokens=12)
WEIGHT = 0.4
REPEAT = ("A paragraph that comes back word for word, " * 4).strip() + "\n\n"


def _brute(store: ChromaStore, query: np.ndarray, weight: float) -> dict[str, float]:
    """Every chunk's blended score, from the texts alone (vectors embedded again)."""
    hasher = HashEmbedder()
    chunks = {i: t for i, t, _ in store.items()}
    ids = sorted(chunks)
    own = dict(zip(ids, hasher.embed([chunks[i] for i in ids]) @ query, strict=True))
    links = list(store.pieces())
    piece_scores = hasher.embed([t for _, t, _ in links]) @ query if links else []
    best: dict[str, float] = {}
    for (_, _, meta), score in zip(links, piece_scores, strict=True):
        owner = meta["chunk_id"]
        best[owner] = max(best.get(owner, -math.inf), float(score))
    return {i: (1 - weight) * own[i] + weight * best.get(i, own[i]) for i in ids}


def _queries(store: ChromaStore) -> np.ndarray:
    """Random queries, and queries equal to a few pieces (where the piece term decides)."""
    texts = [f"question {n}" for n in range(4)] + [t for _, t, _ in store.pieces()][::7][:4]
    return HashEmbedder().embed(texts)


def test_blended_query_equals_brute_force(corpus: Path, tmp_path: Path) -> None:
    summary = run(corpus, tmp_path / "store", settings=SUB)
    store = ChromaStore(tmp_path / "store" / "chroma")
    n = store.count()
    assert summary.pieces > 0 and store.count_pieces() >= summary.pieces
    k = math.ceil(n / 10)  # k * 10 >= chunks: every chunk is a candidate
    for query in _queries(store):
        want = _brute(store, query, WEIGHT)
        hits = store.query(query, k=k, sub_weight=WEIGHT, collapse=False)  # every copy
        assert len(hits) == k
        ranked = sorted(want.values(), reverse=True)[:k]
        assert [h.score for h in hits] == pytest.approx(ranked, abs=1e-5)
        for hit in hits:  # ties (repeated texts) may come in either order, but not wrong ids
            assert want[hit.chunk_id] == pytest.approx(hit.score, abs=1e-5)
            assert hit.text and hit.metadata["source"]
    plain = store.query(_queries(store)[0], k=3)
    assert plain == store.query(_queries(store)[0], k=3, sub_weight=None)
    assert [h.chunk_id for h in store.query(_queries(store)[0], k=3, sub_weight=0.0)] == [
        h.chunk_id for h in plain]  # fmt: skip
    with pytest.raises(ConfigError, match="sub_weight"):
        store.query(_queries(store)[0], sub_weight=1.5)


def test_blended_query_over_index_candidates(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", n=20)
    run(corpus, tmp_path / "store", settings=SUB)
    store = ChromaStore(tmp_path / "store" / "chroma")
    assert store.count() > 50  # candidates come from the two ANN searches
    for query in _queries(store):
        want = _brute(store, query, WEIGHT)
        hits = store.query(query, k=3, sub_weight=WEIGHT, search="index")
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        for hit in hits:
            assert want[hit.chunk_id] == pytest.approx(hit.score, abs=1e-5)
        assert hits[0].score == pytest.approx(max(want.values()), abs=1e-5)
    filtered = store.query(_queries(store)[0], k=3, where={"source": str(corpus / "doc3.md")},
                           sub_weight=WEIGHT)  # fmt: skip
    assert filtered and {h.metadata["source"] for h in filtered} == {str(corpus / "doc3.md")}


def test_pieces_are_sentence_cuts_linked_to_overlapping_chunks(
    corpus: Path, tmp_path: Path
) -> None:
    run(corpus, tmp_path / "store", settings=SUB)
    state = snapshot(tmp_path / "store")
    path = corpus / "doc0.md"
    document = load_document(path)
    chunks = {i: c for i, c in state["chunks"].items() if c[0] == str(path)}
    cutter = Chunker(strategy="sentence", max_tokens=12, tokenizer="cl100k_base")
    want = set()
    for s, e in cutter.spans(document.text):
        for chunk_id, (_, cs, ce, _) in chunks.items():
            if min(ce, e) > max(cs, s):
                want.add((str(path), s, e, chunk_id, document.text[s:e]))
    got = {p for p in state["pieces"].values() if p[0] == str(path)}
    assert got == want and len({p[1:3] for p in got}) > len(chunks)


def test_link_pieces_with_overlapping_chunks() -> None:
    chunker = Chunker(tokenizer="words", max_tokens=10, overlap_tokens=6, strategy="fixed")
    document = Document.from_text(" ".join(f"w{i}." for i in range(60)), source="t.txt")
    chunks = chunker.chunk_document(document)
    spans = [(s, s + 7) for s in range(0, len(document.text) - 7, 5)]
    pieces = link_pieces(document, spans, chunks)
    for piece in pieces:
        want = {c.chunk_id for c in chunks if min(c.end, piece.end) > max(c.start, piece.start)}
        assert set(piece.chunk_ids) == want
    assert max(len(p.chunk_ids) for p in pieces) >= 2


def test_incremental_runs_leave_the_pieces_of_a_fresh_ingest(corpus: Path, tmp_path: Path) -> None:
    store, settings = tmp_path / "store", replace(SUB, dedup=True)
    run(corpus, store)  # without pieces first: switching them on redoes every document
    assert snapshot(store)["pieces"] == {}
    assert run(corpus, store, settings=settings).processed == 8
    (corpus / "doc1.md").write_text("# Changed\n\n" + "Fresh words here. " * 30)
    (corpus / "doc2.md").unlink()
    (corpus / "new.md").write_text("# New\n\n" + REPEAT * 3)
    changed = run(corpus, store, settings=settings)
    assert (changed.processed, changed.removed, changed.unchanged) == (2, 1, 6)
    fresh = tmp_path / "fresh"
    run(corpus, fresh, settings=settings)
    got, want = snapshot(store), snapshot(fresh)
    assert want["pieces"] and not any(p[0].endswith("doc2.md") for p in got["pieces"].values())
    assert_same_store(got, want)
    run(corpus, store)  # and off again: every piece goes
    assert snapshot(store)["pieces"] == {}


def test_dedup_drops_exactly_the_repeated_texts(corpus: Path, tmp_path: Path) -> None:
    (corpus / "repeat.md").write_text("# Again\n\n" + REPEAT * 5 + "## End\n\nSomething else.\n")
    plain = run(corpus, tmp_path / "plain", settings=SUB)
    kept: set[str] = set()
    dropped = 0
    by_source: dict[str, list[tuple[int, str, str]]] = {}
    for chunk_id, (source, start, _, text) in snapshot(tmp_path / "plain")["chunks"].items():
        by_source.setdefault(source, []).append((start, text, chunk_id))
    for rows in by_source.values():
        seen: set[str] = set()
        for _, text, chunk_id in sorted(rows):
            if text in seen:
                dropped += 1
            else:
                kept.add(chunk_id)
            seen.add(text)
    assert dropped >= 2  # repeat.md's copies (and notes.txt's)
    summary = run(corpus, tmp_path / "dedup", settings=replace(SUB, dedup=True))
    state = snapshot(tmp_path / "dedup")
    assert set(state["chunks"]) == kept and state["listed"] == kept
    assert summary.duplicates == dropped and summary.chunks == plain.chunks - dropped
    assert {p[3] for p in state["pieces"].values()} <= kept
    texts = [t for s, *_, t in state["chunks"].values() if s.endswith("repeat.md")]
    assert len(texts) == len(set(texts))


def test_repeated_marks_later_copies() -> None:
    chunks = Chunker(tokenizer="words", max_tokens=2, strategy="fixed").chunk("x y x y x y z")
    texts = [c.text for c in chunks]
    assert repeated(chunks) == [t in texts[:i] for i, t in enumerate(texts)]
    assert any(repeated(chunks)) and not repeated(chunks)[0]


def test_settings_are_validated_and_stamped_only_when_on() -> None:
    for bad in (0, 3, -5, True, 2.5, "30"):
        with pytest.raises(ConfigError, match="sub_vector_tokens"):
            ChunkSettings(sub_vector_tokens=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="dedup"):
        ChunkSettings(dedup="yes")  # type: ignore[arg-type]
    assert ChunkSettings(sub_vector_tokens=4).sub_vector_tokens == 4
    base = fingerprint(SETTINGS, "m")
    assert fingerprint(replace(SETTINGS, sub_vector_tokens=None, dedup=False), "m") == base
    sub = fingerprint(replace(SETTINGS, sub_vector_tokens=30), "m")
    dedup = fingerprint(replace(SETTINGS, dedup=True), "m")
    assert len({base, sub, dedup, fingerprint(replace(SETTINGS, sub_vector_tokens=40), "m")}) == 4


def test_cli_ingest_and_query_with_sub_vectors_and_dedup(tmp_path: Path) -> None:
    runner = CliRunner()
    root = write_corpus(tmp_path / "corpus", n=2)
    (root / "repeat.md").write_text("# Again\n\n" + REPEAT * 3)
    store = tmp_path / "store"
    args = ["ingest", str(root), "--store", str(store), "--workers", "1", "--embedder",
            "hashing", "--tokenizer", "words", "--max-tokens", "40"]  # fmt: skip
    out = runner.invoke(app, [*args, "--sub-vectors", "12", "--dedup"])
    assert out.exit_code == 0, out.output
    assert "sentence pieces" in out.output and "repeated chunks left out" in out.output
    chroma = ChromaStore(store / "chroma")
    assert chroma.count_pieces() > chroma.count() > 0
    texts = [t for _, t, m in chroma.items() if m["source"].endswith("repeat.md")]
    assert len(texts) == len(set(texts))
    out = runner.invoke(app, ["query", "comes back word for word", "-k", "2", "--store",
                              str(store), "--sub-weight", "0.4"])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert out.output.count("\n") == 4 and "note:" not in out.output
    out = runner.invoke(app, ["query", "x", "--store", str(store), "--sub-weight", "1.5"])
    assert out.exit_code == 2 and "--sub-weight" in out.output
    plain = tmp_path / "plain"
    out = runner.invoke(app, ["ingest", str(root), "--store", str(plain), "--workers", "1",
                              "--embedder", "hashing"])  # fmt: skip
    assert out.exit_code == 0, out.output
    out = runner.invoke(app, ["query", "x", "--store", str(plain), "--sub-weight", "0.4"])
    assert out.exit_code == 0 and "no sentence pieces" in out.output


def test_cli_ingest_passes_min_tokens_and_embed_headings(tmp_path: Path) -> None:
    from fissure.store.manifest import Manifest

    root = write_corpus(tmp_path / "corpus", n=2)
    store = tmp_path / "store"
    out = CliRunner().invoke(app, [
        "ingest", str(root), "--store", str(store), "--workers", "1", "--embedder", "hashing",
        "--tokenizer", "words", "--max-tokens", "40", "--min-tokens", "5", "--embed-headings",
    ])  # fmt: skip
    assert out.exit_code == 0, out.output
    manifest = Manifest(store)
    try:
        ((_, config, _),) = manifest.runs().values()
    finally:
        manifest.close()
    assert config["settings"]["min_tokens"] == 5 and config["settings"]["embed_headings"] is True
