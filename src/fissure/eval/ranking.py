"""Chunk-level ranking metrics, the fixed token budget, and code-lookup scores.

A retrieved chunk is *relevant* when it lies in the question's corpus and shares at least one
character with an excerpt (touching is not enough here, unlike Precision Ω). Relevance is
binary. Definitions:

* ``recall@k``: relevant chunks among the top ``k`` / all relevant chunks in the corpus;
* ``precision@k``: relevant chunks among the top ``k`` / ``k``;
* ``MRR@k``: 1 / rank of the first relevant chunk within the top ``k`` (0 if none);
* ``nDCG@k``: DCG of the top ``k`` (gain 1, discount ``log2(rank + 1)``) over the ideal DCG
  of ``min(k, relevant)`` relevant chunks;
* ``hit@k``: 1 if any of the top ``k`` is relevant.

The token budget hands the reader best-ranked chunks while they fit: the first chunk that
would take the total past the budget is dropped and the list stops there (no truncation, so
the reader only ever sees whole chunks, and no smaller chunk further down jumps the queue).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from fissure.eval.metrics import Located
from fissure.eval.spans import Span, intersection_size, overlaps, size


def relevance(retrieved: Sequence[Located], corpus_id: str, gold: Sequence[Span]) -> list[bool]:
    """Whether each retrieved chunk is relevant (same corpus, shares a character with gold)."""
    return [c == corpus_id and any(overlaps((s, e), g) for g in gold) for c, s, e in retrieved]


def count_relevant(chunks: Sequence[Span], gold: Sequence[Span]) -> int:
    """Number of the corpus's chunks that are relevant to ``gold``."""
    return sum(any(overlaps(c, g) for g in gold) for c in chunks)


def recall_at_k(rel: Sequence[bool], n_relevant: int, k: int) -> float:
    """Share of all relevant chunks found among the top ``k``."""
    return sum(rel[:k]) / n_relevant if n_relevant else 0.0


def precision_at_k(rel: Sequence[bool], k: int) -> float:
    """Share of the top ``k`` slots holding a relevant chunk."""
    return sum(rel[:k]) / k if k > 0 else 0.0


def hit_at_k(rel: Sequence[bool], k: int) -> float:
    """1.0 if any of the top ``k`` is relevant, else 0.0."""
    return 1.0 if any(rel[:k]) else 0.0


def reciprocal_rank(rel: Sequence[bool], k: int) -> float:
    """1 / rank of the first relevant chunk within the top ``k``; 0 if there is none."""
    for i, r in enumerate(rel[:k]):
        if r:
            return 1.0 / (i + 1)
    return 0.0


def ndcg_at_k(rel: Sequence[bool], n_relevant: int, k: int) -> float:
    """Binary nDCG of the top ``k`` against an ideal ranking of ``n_relevant`` chunks."""
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, n_relevant)))
    if ideal == 0:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, r in enumerate(rel[:k]) if r)
    return dcg / ideal


def budget_take(sizes: Sequence[int], budget: int) -> int:
    """How many best-ranked chunks fit in ``budget`` tokens (stop at the first that does not)."""
    used = 0
    for i, n in enumerate(sizes):
        if used + n > budget:
            return i
        used += n
    return len(sizes)


class LineIndex:
    """Maps character spans of one text to half-open 0-based line spans."""

    __slots__ = ("_starts",)

    def __init__(self, text: str) -> None:
        self._starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def lines(self, span: Span) -> Span:
        """Lines ``[first, last + 1)`` that ``span`` touches (an empty span gives no line)."""
        start, end = span
        if end <= start:
            line = bisect_right(self._starts, start) - 1
            return (line, line)
        first = bisect_right(self._starts, start) - 1
        last = bisect_right(self._starts, end - 1) - 1
        return (first, last + 1)


@dataclass(frozen=True, slots=True)
class CodeLookupScores:
    """Scores of one code-lookup question.

    Attributes:
        hit: 1 if a relevant chunk is among the top ``k``.
        mrr10: Reciprocal rank of the first relevant chunk within the top 10.
        ndcg10: Binary nDCG@10.
        line_recall: Share of the gold lines covered by the top ``k`` chunks.
        tokens: Tokens handed to the reader: the sum of the top ``k`` chunk sizes.
    """

    hit: float
    mrr10: float
    ndcg10: float
    line_recall: float
    tokens: int


def code_lookup_scores(
    retrieved: Sequence[Located],
    sizes: Sequence[int],
    corpus_id: str,
    gold: Sequence[Span],
    lines: LineIndex,
    n_relevant: int,
    k: int,
) -> CodeLookupScores:
    """Code-lookup scores of a ranked list against the gold spans of file ``corpus_id``.

    Args:
        retrieved: Ranked chunks ``(corpus_id, start, end)``; at least 10 when available.
        sizes: Token size of each retrieved chunk, in the same order.
        corpus_id: The file the gold spans are in.
        gold: Gold character spans.
        lines: Line index of that file's text.
        n_relevant: Relevant chunks in that file (see :func:`count_relevant`).
        k: Cut-off for ``hit``, ``line_recall`` and ``tokens``.
    """
    rel = relevance(retrieved, corpus_id, gold)
    gold_lines = [lines.lines(g) for g in gold]
    top_lines = [lines.lines((s, e)) for c, s, e in retrieved[:k] if c == corpus_id]
    n_gold = size(gold_lines)
    return CodeLookupScores(
        hit=hit_at_k(rel, k),
        mrr10=reciprocal_rank(rel, 10),
        ndcg10=ndcg_at_k(rel, n_relevant, 10),
        line_recall=intersection_size(top_lines, gold_lines) / n_gold if n_gold else 0.0,
        tokens=int(sum(sizes[:k])),
    )
