"""The exact copy of the vectors, the two query paths, near-copy collapse and the self-check."""

from __future__ import annotations

import random
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fissure import Chunker
from fissure.cli import app
from fissure.store import ChromaStore
from fissure.store import exact as exact_module
from fissure.store.check import self_recall
from fissure.store.chroma import EXACT
from fissure.store.exact import Batch, VectorFile
from fissure.store.ranking import id_key, id_keys, normalised, places, text_key, top
from tests.ingest.conftest import SETTINGS, run, write_corpus
from tests.ingest.helpers import HashEmbedder

SUB = replace(SETTINGS, sub_vector_tokens=12)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus")


def _batch(ids: list[str], source: str, dim: int = 8, seed: int = 0) -> Batch:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((len(ids), dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return Batch(ids, id_keys([source] * len(ids)), id_keys(ids), vectors)


@pytest.mark.parametrize("seed", range(6))
def test_the_copy_holds_exactly_the_live_rows_through_writes_deletes_and_merges(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random upserts (new and repeated ids), deletes by source and re-adds, against a
    plain dict; merges happen every few writes (MAX_FILES is small here)."""
    monkeypatch.setattr(exact_module, "MAX_FILES", 4)
    table = VectorFile(tmp_path / "t", tmp_path / "lock")
    rng = random.Random(seed)
    model: dict[str, tuple[str, np.ndarray]] = {}
    for step in range(40):
        if rng.random() < 0.25 and model:
            gone = rng.choice(sorted({s for s, _ in model.values()}))
            with table.writing():
                table.delete(id_keys([gone]))
            model = {i: v for i, v in model.items() if v[0] != gone}
            continue
        source = f"s{rng.randrange(5)}"
        ids = [f"c{rng.randrange(60)}" for _ in range(rng.randrange(1, 12))]
        batch = _batch(ids, source, seed=step)
        with table.writing():
            table.add(batch)
        for i, v in zip(ids, batch.vectors, strict=True):
            model[i] = (source, v)  # the last copy of a repeated id wins
        rows = table.rows()
        got = {rows.ids[r].decode(): r for r in range(len(rows))}
        assert set(got) == set(model), f"step {step}"
        for chunk_id, (src, vector) in model.items():
            r = got[chunk_id]
            assert rows.source[r] == id_key(src)
            assert np.array_equal(rows.at(np.array([r]))[0], vector)
        files = [p for p in (tmp_path / "t").iterdir() if not p.name.startswith(".")]
        assert len(files) <= 5  # merged down after each write
    query = np.ones(8, dtype=np.float32) / np.sqrt(8)
    rows = table.rows()
    assert np.allclose(rows.scores(query), rows.at(np.arange(len(rows))) @ query, atol=1e-6)


def test_a_store_without_a_copy_gets_one_and_loses_nothing(corpus: Path, tmp_path: Path) -> None:
    """A store made before the copy existed (or whose copy was deleted) is rebuilt from
    Chroma on its first query, with the same answers."""
    run(corpus, tmp_path / "store")
    folder = tmp_path / "store" / "chroma"
    store = ChromaStore(folder)
    queries = HashEmbedder().embed([f"q{i}" for i in range(5)])
    before = [store.query(q, k=4) for q in queries]
    shutil.rmtree(folder / EXACT)
    again = ChromaStore(folder)
    for query, want in zip(queries, before, strict=True):
        got = again.query(query, k=4)  # the same hits; scores to float32 rounding
        assert [(h.chunk_id, h.text, h.metadata, h.copies) for h in got] == [
            (h.chunk_id, h.text, h.metadata, h.copies) for h in want]  # fmt: skip
        assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-6)
    assert len(again.rows()) == again.count() and (folder / EXACT).is_dir()


def test_rows_the_copy_has_and_chroma_lost_are_skipped(tmp_path: Path) -> None:
    """A crash between the two writes leaves the copy a superset; such rows never show."""
    store = ChromaStore(tmp_path / "chroma")
    text = "one two three four five six seven eight nine ten"
    chunks = Chunker(tokenizer="words", max_tokens=5).chunk(text, source="a")
    vectors = HashEmbedder().embed([c.text for c in chunks])
    store.upsert(chunks, vectors)
    ghost = Batch(["ghost"], id_keys(["a"]), id_keys(["ghost"]), vectors[:1])
    with store._exact.writing():
        store._exact.add(ghost)  # the copy only, as if Chroma's write never happened
    hits = store.query(vectors[0], k=5)  # the ghost ties with the first chunk
    assert {h.chunk_id for h in hits} == {c.chunk_id for c in chunks} and len(chunks) == 2


def test_a_read_only_copy_falls_back_to_memory(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(corpus, tmp_path / "store")
    folder = tmp_path / "store" / "chroma"
    want = ChromaStore(folder).query(HashEmbedder().embed(["q"])[0], k=3)
    shutil.rmtree(folder / EXACT)

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError("read-only file system")

    monkeypatch.setattr(VectorFile, "replace", refuse)
    store = ChromaStore(folder)
    got = store.query(HashEmbedder().embed(["q"])[0], k=3)
    assert [h.chunk_id for h in got] == [h.chunk_id for h in want]
    assert not any((folder / EXACT).glob("*/seg-*"))


@pytest.mark.parametrize("weight", [None, 0.4])
def test_exact_and_index_paths_agree_with_filters_and_blending(
    corpus: Path, tmp_path: Path, weight: float | None
) -> None:
    run(corpus, tmp_path / "store", settings=SUB)
    store = ChromaStore(tmp_path / "store" / "chroma")
    assert store.count() < 100 and store.count_pieces() > 0  # the index sees every chunk
    doc3 = str(corpus / "doc3.md")
    texts = [f"question {n}" for n in range(3)] + [t for _, t, _ in store.items()][::9]
    for query in HashEmbedder().embed(texts):
        for where in (None, {"source": doc3}, {"source": doc3, "index": 1}, {"index": 0}):
            for k in (1, 3, 10):
                exact = store.query(query, k, where, sub_weight=weight, search="exact")
                index = store.query(query, k, where, sub_weight=weight, search="index")
                assert [h.chunk_id for h in exact] == [h.chunk_id for h in index]
                assert [h.score for h in exact] == pytest.approx([h.score for h in index])
                if where:
                    assert all(h.metadata[key] == value for h in exact
                               for key, value in where.items())  # fmt: skip


def test_exact_and_index_paths_agree_on_ordinary_data(tmp_path: Path) -> None:
    """3,000 distinct chunks, more than the index's candidates: HNSW finds nearly what the
    scan finds (random vectors are its hardest case: 94-100% of the top 5 here), and gives
    every chunk it finds the same score."""
    store = ChromaStore(tmp_path / "chroma")
    text = "\n\n".join(f"note {i}: item {i * 7 % 1000} of batch {i // 50}" for i in range(3000))
    chunks = Chunker(tokenizer="words", max_tokens=6).chunk(text, source="notes.txt")
    assert len(chunks) >= 3000
    store.upsert(chunks, HashEmbedder(dim=32).embed([c.text for c in chunks]))
    agree = 0
    queries = HashEmbedder(dim=32).embed([f"question {i}" for i in range(40)])
    for query in queries:
        exact = store.query(query, k=5, search="exact", collapse=False)
        index = store.query(query, k=5, search="index", collapse=False)
        agree += len({h.chunk_id for h in exact} & {h.chunk_id for h in index})
        common = {h.chunk_id: h.score for h in exact}
        assert all(h.score == pytest.approx(common[h.chunk_id]) for h in index
                   if h.chunk_id in common)  # fmt: skip
    assert agree >= 0.9 * 5 * len(queries)


def test_near_copies_collapse_within_a_document_only() -> None:
    assert normalised("Notice  12:\tKEEP   out ") == "notice 0: keep out"
    assert text_key("Notice 12: keep out", "a") == text_key("NOTICE 7:  keep out", "a")
    assert text_key("Notice 12: keep out", "a") != text_key("Notice 12: keep out", "b")
    assert text_key("keep out", "a") != text_key("keep in", "a")
    scores = np.array([0.9, 0.9, 0.8, 0.95, -np.inf, 0.9 - 1e-7], dtype=np.float32)
    where = places(
        np.array([7, 7, 7, 1, 0, 7], dtype=np.uint64),
        np.array([50, 30, 0, 9, 0, 10]),
        np.array([1, 2, 3, 4, 5, 6], np.uint64),
    )
    assert list(top(scores, 6, where)) == [3, 1, 0, 5, 2]  # equal scores: earlier first
    groups = np.array([1, 1, 1, 2, 3, 1], dtype=np.uint64)
    # Rows 0, 1 and 5 tie within TIE; the earliest (start 10) stands for the group.
    assert list(top(scores, 6, where, groups)) == [3, 5]


def test_a_repeated_notice_does_not_crowd_the_results(tmp_path: Path) -> None:
    store = ChromaStore(tmp_path / "chroma")
    notice = "\n\n".join(f"Notice {n}: do not copy this page." for n in range(40))
    copies = Chunker(tokenizer="words", max_tokens=7).chunk(notice, source="notices.txt")
    other = Chunker(tokenizer="words", max_tokens=7).chunk(
        "Notice 3: do not copy this page.\n\nSomething else entirely here.", source="b.txt"
    )
    vector = HashEmbedder().embed(["notice"])[0]
    near = vector + 0.01 * HashEmbedder().embed([f"n{i}" for i in range(len(copies))])
    store.upsert(copies + other, np.vstack([near, np.vstack([vector, -vector])]))
    hits = store.query(vector, k=3)
    assert [h.metadata["source"] for h in hits] == ["b.txt", "notices.txt", "b.txt"]
    assert [h.copies for h in hits] == [1, 40, 1]  # the copy in b.txt is its own document
    every = store.query(vector, k=3, collapse=False)
    assert [h.metadata["source"] for h in every][1:] == ["notices.txt", "notices.txt"]


class ZeroForNotes(HashEmbedder):
    """A broken embedder: zero vectors for the notes file (nothing can reach them)."""

    def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
        out = super().embed(texts)
        out[[i for i, t in enumerate(texts) if "plain notes" in t]] = 0.0
        return out


def test_status_check_reports_chunks_that_cannot_be_found(corpus: Path, tmp_path: Path) -> None:
    run(corpus, tmp_path / "store", ZeroForNotes())
    store = str(tmp_path / "store")
    result = CliRunner().invoke(app, ["status", "--store", store, "--check", "--sample", "0"])
    assert result.exit_code == 1, result.output
    assert "missed" in result.output and "notes.txt" in result.output
    assert "below 0.99" in result.output
    lenient = ["status", "--store", store, "--check", "--sample", "0", "--min-recall", "0.5"]
    assert CliRunner().invoke(app, lenient).exit_code == 0


def test_status_check_passes_on_a_healthy_store(corpus: Path, tmp_path: Path) -> None:
    run(corpus, tmp_path / "store")
    for search in ("auto", "index"):
        result = CliRunner().invoke(app, ["status", "--store", str(tmp_path / "store"),
                                          "--check", "--search", search])  # fmt: skip
        assert result.exit_code == 0, result.output
        assert "recall 1.000" in result.output
    bad = CliRunner().invoke(app, ["status", "--store", str(tmp_path / "store"), "--check",
                                   "--search", "hnsw"])  # fmt: skip
    assert bad.exit_code == 2 and "--search" in bad.output


def test_the_check_catches_the_index_losing_chunks_on_clustered_data(tmp_path: Path) -> None:
    """1,500 chunks with one vector and 60 others, through the HNSW path: the copies make
    an island and the others are lost. (HNSW builds are random; in six builds all six lost
    between 30 and all 60 of the others.) The exact path finds every one."""
    store = ChromaStore(tmp_path / "chroma", exact_max=0)
    cutter = Chunker(tokenizer="words", max_tokens=8)
    copies = cutter.chunk("\n\n".join(["same notice again here"] * 3000), source="notices.txt")
    others = cutter.chunk("\n\n".join(f"note number {i} says something else {i * 7}"
                                      for i in range(60)), source="notes.txt")  # fmt: skip
    hasher = HashEmbedder(dim=64)
    vectors = np.vstack([hasher.embed([c.text for c in others[:30]]),
                         np.repeat(hasher.embed([copies[0].text]), len(copies), axis=0),
                         hasher.embed([c.text for c in others[30:]])])  # fmt: skip
    store.upsert(others[:30] + copies + others[30:], vectors)
    lost = self_recall(store, sample=300, search="index")
    assert lost.search == "index" and lost.recall < 0.99 and lost.misses
    assert {m.source for m in lost.misses} == {"notes.txt"}
    found = self_recall(store, sample=0, search="exact")
    assert found.recall == 1.0 and found.sampled == len(copies) + len(others)
