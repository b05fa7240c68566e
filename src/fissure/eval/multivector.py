"""Retrieval options of the runner beyond one vector per chunk: ``+sub`` and ``+dedup``.

``+sub`` is multi-vector retrieval: besides its own vector, each chunk is represented by the
sentence pieces that overlap it (:func:`fissure.spans.sharing`, the join ingest stores),
and its score blends its own similarity with the best of theirs
(:func:`fissure.store.ranking.blend`, the blend every store ranks by). ``+dedup`` leaves
repeated chunk texts out of the index. Both change the ranking, so their rows are labelled in
the reports by their spec.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fissure.eval.metrics import Located
from fissure.eval.spans import Span
from fissure.spans import sharing
from fissure.store.ranking import blend

HIDDEN = -1e9  # the score of a chunk left out of the index


def piece_links(chunks: dict[str, list[Span]], pieces: Sequence[Located]) -> np.ndarray:
    """``(chunk, piece)`` index pairs of every piece that overlaps a chunk, by chunk
    (:func:`fissure.spans.sharing`, as ingest links them).

    Args:
        chunks: Each corpus's chunk spans, in pool order (corpus by corpus).
        pieces: The pieces, located as ``(corpus, start, end)``.
    """
    by_corpus: dict[str, list[int]] = {}
    for j, (cid, _, _) in enumerate(pieces):
        by_corpus.setdefault(cid, []).append(j)
    pairs: list[tuple[int, int]] = []
    at = 0
    for cid, spans in chunks.items():
        mine = by_corpus.get(cid, [])
        owners = sharing(spans, [(pieces[j][1], pieces[j][2]) for j in mine])
        pairs.extend((at + i, j) for j, found in zip(mine, owners, strict=True) for i in found)
        at += len(spans)
    if not pairs:
        return np.zeros((0, 2), dtype=np.int64)
    links = np.asarray(pairs, dtype=np.int64)
    return links[np.argsort(links[:, 0], kind="stable")]


def blend_pieces(scores: np.ndarray, piece_scores: np.ndarray, links: np.ndarray,
                 weight: float) -> np.ndarray:  # fmt: skip
    """Question × chunk scores blended with each chunk's best piece by the stores' own
    :func:`~fissure.store.ranking.blend`: ``(1 - weight) * scores + weight * best piece
    score`` (a chunk without a piece keeps its own score in both terms)."""
    best = np.full(scores.shape, -np.inf, dtype=np.float32)
    if links.size:
        rows, cols = links[:, 0], links[:, 1]
        first = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        best[:, rows[first]] = np.maximum.reduceat(piece_scores[:, cols], first, axis=1)
    return blend(scores, best, weight)


def repeated(texts: Sequence[str]) -> np.ndarray:
    """Mask of the texts equal to an earlier one (the first copy stays), as ingest's
    ``dedup`` decides it."""
    from fissure.ingest.pieces import repeated_texts

    return np.asarray(repeated_texts(texts), dtype=bool)
