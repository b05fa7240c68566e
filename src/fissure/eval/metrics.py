"""Character-level retrieval metrics of Chroma's chunking evaluation (Smith & Troynikov, 2024).

Every function is pure and works on exact character spans; nothing is searched for by string.
The definitions follow the upstream evaluator (``chunking_evaluation``, ``base_evaluation.py``),
which the report calls "token-wise" but computes over characters:

* a retrieved chunk counts only against excerpts of the question's own corpus; a chunk from
  another corpus still adds its length to the precision and IoU denominators;
* ``recall = |R ∩ G| / |G|`` and ``precision = |R ∩ G| / Σ|r|``, where ``R ∩ G`` is the union of
  the retrieved chunks' intersections with the excerpts (each character once) and ``Σ|r|`` sums
  the lengths of *all* retrieved chunks (overlapping chunks count their overlap twice);
* ``IoU = |R ∩ G| / (Σ|r| + |G| - |R ∩ G|)``;
* Precision Ω takes every chunk of the corpus that *touches* an excerpt (upstream intersects
  with ``max(starts) <= min(ends)``, so a chunk that ends exactly where an excerpt starts
  counts) and divides ``|R ∩ G|`` by the size of the *union* of those chunks and any excerpt
  characters no chunk covers;
* "Min" retrieval asks, per question, for as many chunks as touch its excerpts (at most 20).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from fissure.eval.spans import Span, intersection_size, overlaps, size, touches

Located = tuple[str, int, int]
"""A retrieved chunk: ``(corpus_id, start, end)``."""

MIN_K_CAP = 20
"""Upstream never retrieves more than 20 chunks for the "Min" setting."""


@dataclass(frozen=True, slots=True)
class TokenScores:
    """Recall, precision and IoU of one question's retrieved chunks (fractions in [0, 1])."""

    recall: float
    precision: float
    iou: float


def token_scores(gold: Sequence[Span], corpus_id: str, retrieved: Sequence[Located]) -> TokenScores:
    """Character recall, precision and IoU of ``retrieved`` against the excerpts ``gold``.

    Args:
        gold: The question's excerpt spans in corpus ``corpus_id``.
        corpus_id: The corpus the question is about.
        retrieved: Retrieved chunks from any corpus, in rank order.

    Returns:
        The three scores; each is 0 when its denominator is 0 (e.g. nothing retrieved).
    """
    same = [(s, e) for c, s, e in retrieved if c == corpus_id]
    hit = intersection_size(same, gold)
    gold_size = size(gold)
    handed = sum(e - s for _, s, e in retrieved)
    union = handed + gold_size - hit
    return TokenScores(
        recall=hit / gold_size if gold_size else 0.0,
        precision=hit / handed if handed else 0.0,
        iou=hit / union if union else 0.0,
    )


def _related(gold: Sequence[Span], chunks: Iterable[Span], adjacent: bool) -> list[Span]:
    test = touches if adjacent else overlaps
    return [c for c in chunks if any(test(c, g) for g in gold)]


def precision_omega(
    gold: Sequence[Span], chunks: Iterable[Span], *, adjacent: bool = True
) -> float:
    """Precision Ω: precision if every chunk holding excerpt characters were retrieved.

    Args:
        gold: The question's excerpt spans.
        chunks: All chunks of the question's corpus.
        adjacent: Count chunks that only touch an excerpt (share an endpoint), as upstream
            does. ``False`` counts only chunks sharing at least one character.

    Returns:
        ``|C ∩ G| / |C ∪ G|`` over the union ``C`` of those chunks; 0 if no chunk qualifies.
    """
    related = _related(gold, chunks, adjacent)
    if not related:
        return 0.0
    hit = intersection_size(related, gold)
    return hit / size([*related, *gold])


def min_k(gold: Sequence[Span], chunks: Iterable[Span], *, adjacent: bool = True) -> int:
    """How many chunks the "Min" setting retrieves: those touching an excerpt, at most 20."""
    return min(len(_related(gold, chunks, adjacent)), MIN_K_CAP)


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and population standard deviation of fractions, as percentages (as reported)."""
    if not values:
        return 0.0, 0.0
    arr = np.asarray(values, dtype=np.float64)
    return float(arr.mean() * 100), float(arr.std() * 100)
