"""Retrieval modes in the evaluator: ``+mode=lexical`` / ``+mode=hybrid`` rank as the store
does, and the spec options are checked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fissure.embed import HashingEmbedder
from fissure.errors import ConfigError
from fissure.eval.dataset import load_dataset
from fissure.eval.lexical import fused_scores, lexical_scores, ranked
from fissure.eval.runner import evaluate
from fissure.eval.strategies import parse_strategy
from fissure.store.fusion import Fusion, hybrid_scores


def test_mode_options_are_parsed_and_checked() -> None:
    plain = parse_strategy("recursive:12")
    assert (plain.mode, plain.fusion, plain.lexer) == ("dense", Fusion(), "trigram")
    assert Fusion() == Fusion(5, 0.4)  # the store's defaults, chosen held out
    tuned = parse_strategy("recursive:12+mode=hybrid+rrf=10+lexw=0.3+lexer=words")
    assert (tuned.mode, tuned.fusion, tuned.lexer) == ("hybrid", Fusion(10, 0.3), "words")
    for bad in (
        "recursive:12+mode=sparse",
        "recursive:12+rrf=10",
        "recursive:12+mode=hybrid+lexw=2",
        "recursive:12+mode=lexical+lexer=porter",
    ):
        with pytest.raises(ConfigError):
            parse_strategy(bad)


def test_lexical_scores_are_bm25_over_the_chunks() -> None:
    texts = ["the cat sleeps on the mat", "dogs bark at night", "cat and dog", "x"]
    got = lexical_scores(texts, ["Where does the cat sleep?", "zebra"], hidden=np.array(
        [False, False, True, False]))  # fmt: skip
    assert np.isfinite(got[0, 0]) and got[0, 1] == -np.inf and got[0, 2] == -np.inf
    assert np.all(got[1] == -np.inf)


def test_hybrid_rows_are_the_stores_fusion_row_by_row(chroma_dir: Path) -> None:
    dense = np.array([[0.9, 0.1, 0.5, -1e9], [0.2, 0.3, 0.1, 0.4]])
    words = np.array([[-np.inf, 2.0, 1.0, 3.0], [-np.inf] * 4])
    fusion = Fusion(5, 0.4)
    got = fused_scores(dense, words, fusion, 10, -1e9)
    own = np.where(dense[0] > -1e9, dense[0], -np.inf)
    want = hybrid_scores(own, ranked(own, 100), ranked(words[0], 100), fusion)
    assert got[0].tolist() == want.tolist()
    assert got[0, 3] > 0  # hidden on the dense side, still listed by BM25
    assert np.argsort(-got[1]).tolist() == [3, 1, 0, 2]  # no lexical match: dense order
    data = load_dataset(chroma_dir)
    results = evaluate(data, [parse_strategy(f"recursive:12+mode={m}") for m in
                              ("lexical", "hybrid")], HashingEmbedder())  # fmt: skip
    lexical = results[0].summary()["metrics"]["k=5/recall"][0]
    assert lexical > 50  # the questions share words with their answers
