"""Retrieval modes in the evaluator: ``+mode=lexical`` and ``+mode=hybrid``.

The lexical side is the store's own component (:class:`fissure.store.lexical.LexicalIndex`,
BM25 in SQLite FTS5, here in memory over the pool's chunk texts) and the fusion the
store's own (:func:`fissure.store.fusion.hybrid_scores`), so a row measured here is what
``Store.query(mode=...)`` returns, up to how ties are broken (here: pool order).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fissure.store.fusion import Fusion, hybrid_scores
from fissure.store.lexical import DEFAULT_TOKENIZER, LexicalIndex

OUT = -np.inf  # no lexical match, or left out of the index


def lexical_scores(
    texts: Sequence[str], questions: Sequence[str], tokenizer: str = DEFAULT_TOKENIZER,
    hidden: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    """Question × chunk BM25 scores (:data:`OUT` where a chunk shares no word with the
    question, or is ``hidden``: left out of the index, as ``+dedup`` does)."""
    index = LexicalIndex(":memory:", "eval", tokenizer)
    try:
        keep = [i for i in range(len(texts)) if hidden is None or not hidden[i]]
        index.add([str(i) for i in keep], [""] * len(keep), [texts[i] for i in keep])
        out = np.full((len(questions), len(texts)), OUT, dtype=np.float64)
        for row, question in enumerate(questions):
            for chunk, score in index.search(question):
                out[row, int(chunk)] = score
        return out
    finally:
        index.close()


def ranked(scores: np.ndarray, depth: int) -> np.ndarray:
    """The ``depth`` best columns of one row of scores (finite only), best first; equal
    scores in column order."""
    order = np.argsort(-scores, kind="stable")[:depth]
    return order[np.isfinite(scores[order])]


def fused_scores(dense: np.ndarray, lexical: np.ndarray, fusion: Fusion, k: int,
                 floor: float) -> np.ndarray:  # fmt: skip
    """Question × chunk scores of the hybrid ranking, row by row as the store fuses.

    Args:
        dense: Dense scores (question × chunk); at or below ``floor``: left out.
        lexical: BM25 scores (``-inf``: no match).
        fusion: Rank constant and lexical weight.
        k: The hits asked for (sets each list's depth, :meth:`Fusion.depth`).
        floor: The score of chunks left out of the dense side (``+dedup``).
    """
    depth = fusion.depth(k)
    out = np.empty_like(dense, dtype=np.float64)
    for row in range(len(dense)):
        own = np.where(dense[row] > floor, dense[row], -np.inf)
        out[row] = hybrid_scores(own, ranked(own, depth), ranked(lexical[row], depth), fusion)
    return out
