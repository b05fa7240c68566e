"""The runner and run_eval on the tiny dataset, with the deterministic hashing embedder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from fissure.embed import CachedEmbedder
from fissure.errors import FissureError
from fissure.eval import HashingEmbedder, Strategy, evaluate, load_dataset, run_eval
from fissure.eval.runner import embed_texts, rank


def lines(text: str, source: str = "") -> list[tuple[int, int]]:
    """One chunk per line, without its newline."""
    out, start = [], 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        if body:
            out.append((start, start + len(body)))
        start += len(line)
    return out


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=128)
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += len(texts)
        return super().embed(texts)


def test_hashing_embedder_is_deterministic_and_normalised() -> None:
    a = HashingEmbedder().embed(["the cat", "a dog", ""])
    b = HashingEmbedder().embed(["the cat", "a dog", ""])
    assert a.dtype == np.float32 and np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a[:2], axis=1), 1.0)


def test_rank_is_best_first_with_stable_ties() -> None:
    q = np.array([[1.0, 0.0]], dtype=np.float32)
    c = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    assert rank(q, c, 3).tolist() == [[1, 2, 0]]


def test_line_chunks_retrieve_their_own_line(chroma_dir: Path) -> None:
    data = load_dataset(chroma_dir)
    [result] = evaluate(data, [Strategy("lines", lines)], HashingEmbedder(), budget_tokens=15)
    s = result.summary()
    m = s["metrics"]
    assert s["chunks"] == 7
    # Every excerpt is a whole line (or a prefix of one) and its line is retrieved: recall 100.
    assert m["k=5/recall"] == pytest.approx((100.0, 0.0))
    assert m["k=10/recall"][0] == pytest.approx(100.0)
    # Min retrieves one chunk per touched line: the first question's line comes first.
    assert result.scores["min/recall"][0] == 1.0
    assert result.scores["min/precision"][0] == 1.0
    assert m["min/precision"][0] > m["k=5/precision"][0]
    assert 0 < m["omega"][0] <= 100
    assert m["mrr@10"][0] > 50
    assert set(s["per_corpus"]) == {"animals", "space"}
    assert "budget=15/recall" in m and "budget=15/tokens" in m
    assert m["budget=15/tokens"][0] <= 15


def test_embeddings_are_cached_on_disk(chroma_dir: Path, tmp_path: Path) -> None:
    data = load_dataset(chroma_dir)
    first = CountingEmbedder()
    evaluate(data, [Strategy("lines", lines)], CachedEmbedder(first, tmp_path / "cache"))
    assert first.calls == len(data.questions) + 7
    again = CountingEmbedder()
    cached = CachedEmbedder(again, tmp_path / "cache")
    evaluate(data, [Strategy("lines", lines)], cached)
    assert again.calls == 0
    vectors = embed_texts(cached, ["x", "x", "y"])
    assert vectors.shape == (3, 128) and again.calls == 2
    cached.close()


def test_bad_spans_are_reported(chroma_dir: Path) -> None:
    data = load_dataset(chroma_dir)
    with pytest.raises(FissureError, match="outside corpus"):
        evaluate(data, [Strategy("bad", lambda t, _s: [(0, len(t) + 1)])], HashingEmbedder())


def test_run_eval_writes_reports(chroma_dir: Path, tmp_path: Path) -> None:
    console = Console(record=True, width=160)
    out = tmp_path / "out"
    summaries = run_eval(
        chroma_dir,
        ["tokentext:12:0", "recursive:12:6"],
        embedder="hashing",
        k=3,
        budget_tokens=30,
        out_dir=out,
        cache_dir=tmp_path / "cache",
        console=console,
    )
    assert [s["strategy"] for s in summaries] == ["tokentext:12:0", "recursive:12:6"]
    payload = json.loads((out / "eval.json").read_text())
    assert payload["meta"]["embedder"] == "hashing-256"
    assert {"k=3/recall", "k=5/recall", "k=10/iou", "min/iou", "omega"} <= set(
        payload["results"][0]["metrics"]
    )
    md = (out / "eval.md").read_text()
    assert "## k=3" in md and "## min" in md and "Precision Ω" in md
    assert "Retrieval, k=3" in console.export_text()


def test_module_entry_point_exits_cleanly_on_errors(tmp_path: Path, capsys) -> None:
    from fissure.eval.__main__ import main

    assert main([str(tmp_path), "-s", "tokentext:5", "--embedder", "hashing"]) == 2
    assert "not a dataset" in capsys.readouterr().err


def test_missing_peer_is_skipped_with_a_note(chroma_dir: Path, tmp_path: Path, monkeypatch) -> None:
    from fissure.errors import MissingDependencyError
    from fissure.eval import peers

    def missing(spec, embedder):
        raise MissingDependencyError("tree-sitter-language-pack", purpose="the code peer")

    monkeypatch.setitem(peers.PEERS, "chonkie-code", missing)
    console = Console(record=True, width=200)
    summaries = run_eval(chroma_dir, ["tokentext:12", "chonkie-code:12"], embedder="hashing",
                         out_dir=tmp_path / "out", cache_dir=None, console=console)  # fmt: skip
    assert [s["strategy"] for s in summaries] == ["tokentext:12"]
    assert "skipped chonkie-code:12" in console.export_text()
    meta = json.loads((tmp_path / "out" / "eval.json").read_text())["meta"]
    assert "pip install tree-sitter-language-pack" in meta["skipped"]["chonkie-code:12"]


def test_window_sub_and_dedup_rank_and_score_the_chunks(chroma_dir: Path) -> None:
    from fissure.eval.multivector import blend_pieces, piece_links, repeated
    from fissure.eval.strategies import parse_strategy

    data = load_dataset(chroma_dir)
    plain = parse_strategy("recursive:12")
    spec = "recursive:12+win=30+share=0.5+sub=0.4+subsize=8+dedup"
    results = evaluate(data, [plain, parse_strategy(spec)], HashingEmbedder())
    base, mixed = (r.summary() for r in results)
    assert base["chunks"] == mixed["chunks"]  # same chunks, scored where they are
    assert 0 <= mixed["metrics"]["k=5/recall"][0] <= 100
    # The pieces' best similarity lifts the chunk that holds the piece.
    links = piece_links({"a": [(0, 10), (10, 20)]}, [("a", 0, 5), ("a", 12, 18), ("a", 8, 12)])
    assert links.tolist() == [[0, 0], [0, 2], [1, 1], [1, 2]]
    scores = np.array([[0.1, 0.2]], dtype=np.float32)
    pieces = np.array([[0.9, 0.3, 0.0]], dtype=np.float32)
    assert blend_pieces(scores, pieces, links, 0.5)[0].tolist() == pytest.approx([0.5, 0.25])
    assert repeated(["x", "y", "x", "x"]).tolist() == [False, False, True, True]
