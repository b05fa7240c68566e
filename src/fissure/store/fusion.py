"""Retrieval modes and how the hybrid mode fuses the dense and the lexical rankings.

* ``dense``: cosine over the stored vectors (:mod:`fissure.store.ranking`).
* ``lexical``: BM25 over the chunks' words (:mod:`fissure.store.lexical`).
* ``hybrid``: weighted reciprocal rank fusion of the two: a chunk at rank ``r_d`` (1 is the
  best) of the dense list and ``r_l`` of the lexical list scores
  ``(1 - w) / (c + r_d) + w / (c + r_l)``, a term being 0 for a list it is not in. Only the
  first ``depth`` of each list take part (``max(100, 10 k)``); past them, chunks follow in
  dense order, below every fused one. It is the default mode (with a question's text),
  ``c`` = 5 and ``w`` = 0.4, chosen held out (``bench/results/eval-hybrid.md``). Rank
  fusion needs no calibration between a cosine and a BM25 score, which is why it is the
  usual choice (Cormack et al., 2009).

The evaluator (:mod:`fissure.eval.lexical`) fuses with these same functions, so what it
measures is what ``Store.query(mode="hybrid")`` returns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fissure.errors import ConfigError

MODES = ("dense", "lexical", "hybrid")
# Chosen held out on Chroma's benchmark and the code lookup (bench/results/eval-hybrid.md):
# hybrid, c = 5, w = 0.4 beat dense on both, on both halves, chosen on the other.
DEFAULT_MODE = "hybrid"
RRF_CONSTANT = 5
LEXICAL_WEIGHT = 0.4
DEPTH_MIN = 100
DEPTH_PER_HIT = 10
BELOW = 3.0  # past both lists: the dense score less this, under every fused score (> 0)


@dataclass(frozen=True, slots=True)
class Fusion:
    """How ``hybrid`` fuses: the rank constant ``c`` and the lexical list's weight ``w``.

    Raises:
        ConfigError: ``constant`` is negative or ``weight`` is not within 0..1.
    """

    constant: float = RRF_CONSTANT
    weight: float = LEXICAL_WEIGHT

    def __post_init__(self) -> None:
        if not self.constant >= 0:
            raise ConfigError(f"the fusion constant must be at least 0, got {self.constant!r}")
        if not 0 <= self.weight <= 1:
            raise ConfigError(f"the lexical weight must be within 0..1, got {self.weight!r}")

    def depth(self, k: int) -> int:
        """How many of each list take part for ``k`` hits."""
        return max(DEPTH_MIN, DEPTH_PER_HIT * k)


def check_mode(mode: str | None, text: str | None = None) -> str:
    """``mode`` when it is a retrieval mode; ``None`` is :data:`DEFAULT_MODE` when there
    is a question's ``text`` to look for, else ``dense`` (a vector alone is dense).

    Raises:
        ConfigError: It is not one of :data:`MODES`.
    """
    if mode is None:
        return DEFAULT_MODE if text and text.strip() else "dense"
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def fuse(dense: np.ndarray, lexical: np.ndarray, fusion: Fusion, n: int) -> np.ndarray:
    """Fused scores of ``n`` rows from two ranked lists of row numbers (best first, each
    already cut to its depth): ``(1 - w) / (c + rank)`` from the dense list plus
    ``w / (c + rank)`` from the lexical one; 0 for a row in neither."""
    fused = np.zeros(n, dtype=np.float64)
    ranks = np.arange(1, max(len(dense), len(lexical)) + 1, dtype=np.float64)
    c, w = float(fusion.constant), float(fusion.weight)
    np.add.at(fused, np.asarray(dense, dtype=np.int64), (1.0 - w) / (c + ranks[: len(dense)]))
    np.add.at(fused, np.asarray(lexical, dtype=np.int64), w / (c + ranks[: len(lexical)]))
    return fused


def hybrid_scores(
    dense_scores: np.ndarray, dense: np.ndarray, lexical: np.ndarray, fusion: Fusion
) -> np.ndarray:
    """One score per row for the hybrid ranking: fused where a row is in either list,
    else its dense score less :data:`BELOW` (``-inf`` stays ``-inf``: filtered out).

    Args:
        dense_scores: Every row's dense score (``-inf``: not a candidate).
        dense: The dense list, best first, cut to its depth.
        lexical: The lexical list, best first, cut to its depth.
        fusion: The fusion settings.
    """
    fused = fuse(dense, lexical, fusion, len(dense_scores))
    listed = np.zeros(len(dense_scores), dtype=bool)
    listed[np.asarray(dense, dtype=np.int64)] = True
    listed[np.asarray(lexical, dtype=np.int64)] = True
    rest = np.asarray(dense_scores, dtype=np.float64) - BELOW
    return np.where(listed, fused, rest)
