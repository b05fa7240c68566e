"""Chroma-style character metrics on hand-computed cases."""

from __future__ import annotations

import pytest

from fissure.eval.metrics import (
    MIN_K_CAP,
    TokenScores,
    mean_std,
    min_k,
    precision_omega,
    token_scores,
)
from fissure.eval.spans import intersection_size, merge, size

GOLD = [(10, 20)]


def approx(scores: TokenScores, recall: float, precision: float, iou: float) -> None:
    assert scores.recall == pytest.approx(recall)
    assert scores.precision == pytest.approx(precision)
    assert scores.iou == pytest.approx(iou)


def test_spans_union_and_intersection() -> None:
    assert merge([(5, 8), (0, 3), (3, 4), (7, 10), (9, 9)]) == [(0, 4), (5, 10)]
    assert size([(0, 10), (5, 15)]) == 15
    assert intersection_size([(0, 10), (20, 30)], [(5, 25)]) == 10
    assert intersection_size([(0, 5)], [(5, 10)]) == 0


def test_partial_overlap() -> None:
    # 5 of 10 gold characters; 15 handed; IoU = 5 / (15 + 10 - 5).
    approx(token_scores(GOLD, "a", [("a", 0, 15)]), 0.5, 5 / 15, 0.25)


def test_touching_chunk_scores_nothing() -> None:
    approx(token_scores(GOLD, "a", [("a", 20, 30)]), 0.0, 0.0, 0.0)
    approx(token_scores(GOLD, "a", [("a", 0, 10)]), 0.0, 0.0, 0.0)


def test_multiple_excerpts() -> None:
    gold = [(0, 10), (20, 30)]
    # 5 + 5 of 20 gold characters, 20 handed: IoU = 10 / (20 + 20 - 10).
    approx(token_scores(gold, "a", [("a", 5, 25)]), 0.5, 0.5, 1 / 3)
    approx(token_scores(gold, "a", [("a", 0, 10), ("a", 20, 30)]), 1.0, 1.0, 1.0)


def test_chunk_from_another_corpus_only_costs() -> None:
    # Same offsets in corpus b: no credit, but its 10 characters are handed to the reader.
    approx(token_scores(GOLD, "a", [("b", 10, 20), ("a", 10, 20)]), 1.0, 0.5, 0.5)
    approx(token_scores(GOLD, "a", [("b", 10, 20)]), 0.0, 0.0, 0.0)


def test_overlapping_retrieved_chunks_count_twice_in_denominator() -> None:
    approx(token_scores(GOLD, "a", [("a", 10, 20), ("a", 10, 20)]), 1.0, 0.5, 0.5)
    # Gold characters are counted once in the numerator.
    approx(token_scores(GOLD, "a", [("a", 5, 15), ("a", 12, 25)]), 1.0, 10 / 23, 10 / 23)


def test_empty_retrieval() -> None:
    approx(token_scores(GOLD, "a", []), 0.0, 0.0, 0.0)


def test_precision_omega_counts_adjacent_chunks_like_upstream() -> None:
    chunks = [(0, 10), (10, 20), (20, 30)]
    # All three touch (10, 20): union is 30 characters, 10 of them gold.
    assert precision_omega(GOLD, chunks) == pytest.approx(1 / 3)
    assert precision_omega(GOLD, chunks, adjacent=False) == pytest.approx(1.0)
    assert min_k(GOLD, chunks) == 3
    assert min_k(GOLD, chunks, adjacent=False) == 1


def test_precision_omega_with_uncovered_gold_and_gaps() -> None:
    # Chunk covers 5 gold chars; uncovered gold joins the denominator: |(0, 20)| = 20.
    assert precision_omega(GOLD, [(0, 15)]) == pytest.approx(0.25)
    # No chunk near the excerpt at all.
    assert precision_omega(GOLD, [(30, 40)]) == 0.0
    assert precision_omega(GOLD, []) == 0.0
    # Overlapping chunks: union, not sum, in the denominator.
    assert precision_omega(GOLD, [(5, 20), (10, 25)]) == pytest.approx(10 / 20)


def test_precision_omega_multiple_excerpts() -> None:
    gold = [(2, 4), (12, 14)]
    chunks = [(0, 5), (6, 11), (11, 16)]
    # (0, 5) and (11, 16) hold gold; (6, 11) touches (11, 16) but no excerpt.
    assert precision_omega(gold, chunks) == pytest.approx(4 / 10)
    assert min_k(gold, chunks) == 2


def test_min_k_is_capped() -> None:
    chunks = [(i, i + 1) for i in range(100)]
    assert min_k([(0, 100)], chunks) == MIN_K_CAP


def test_mean_std_is_population_and_percent() -> None:
    assert mean_std([0.0, 1.0]) == pytest.approx((50.0, 50.0))
    assert mean_std([]) == (0.0, 0.0)
