"""Chunk-level ranking metrics, the token budget and code-lookup scores."""

from __future__ import annotations

import math

import pytest

from fissure.eval import ranking

REL = [False, True, False, True]


def test_relevance_needs_shared_character_and_same_corpus() -> None:
    retrieved = [("a", 0, 10), ("a", 10, 15), ("b", 12, 14), ("a", 19, 30), ("a", 20, 30)]
    assert ranking.relevance(retrieved, "a", [(10, 20)]) == [False, True, False, True, False]
    assert ranking.count_relevant([(0, 10), (5, 11), (20, 30)], [(10, 20)]) == 1


def test_recall_precision_mrr_ndcg() -> None:
    assert ranking.recall_at_k(REL, 3, 2) == pytest.approx(1 / 3)
    assert ranking.recall_at_k(REL, 0, 2) == 0.0
    assert ranking.precision_at_k(REL, 2) == 0.5
    assert ranking.precision_at_k(REL, 0) == 0.0
    assert ranking.reciprocal_rank(REL, 10) == 0.5
    assert ranking.reciprocal_rank(REL, 1) == 0.0
    assert ranking.hit_at_k(REL, 1) == 0.0
    assert ranking.hit_at_k(REL, 2) == 1.0
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ranking.ndcg_at_k(REL, 3, 4) == pytest.approx(dcg / ideal)
    assert ranking.ndcg_at_k([True], 1, 10) == 1.0
    assert ranking.ndcg_at_k([], 0, 10) == 0.0


def test_budget_drops_the_chunk_that_would_exceed_and_stops() -> None:
    assert ranking.budget_take([100, 50, 80, 10], 160) == 2
    assert ranking.budget_take([100, 50], 150) == 2
    assert ranking.budget_take([200, 10], 100) == 0
    assert ranking.budget_take([], 10) == 0


def test_line_index() -> None:
    lines = ranking.LineIndex("a\nbc\n\nd")
    assert lines.lines((0, 1)) == (0, 1)
    assert lines.lines((2, 6)) == (1, 3)
    assert lines.lines((6, 7)) == (3, 4)
    assert lines.lines((3, 3)) == (1, 1)


def test_code_lookup_scores() -> None:
    text = "xxxx\n" * 4
    lines = ranking.LineIndex(text)
    gold = [(5, 9)]  # line 1
    retrieved = [("f", 10, 20), ("f", 0, 10)]  # lines 2-3, then lines 0-1
    first = ranking.code_lookup_scores(retrieved, [3, 4], "f", gold, lines, 1, 1)
    assert (first.hit, first.line_recall, first.tokens) == (0.0, 0.0, 3)
    assert first.mrr10 == 0.5
    assert first.ndcg10 == pytest.approx(1 / math.log2(3))
    both = ranking.code_lookup_scores(retrieved, [3, 4], "f", gold, lines, 1, 2)
    assert (both.hit, both.line_recall, both.tokens) == (1.0, 1.0, 7)
    elsewhere = ranking.code_lookup_scores([("g", 5, 9)], [2], "f", gold, lines, 1, 5)
    assert (elsewhere.hit, elsewhere.line_recall, elsewhere.tokens) == (0.0, 0.0, 2)
