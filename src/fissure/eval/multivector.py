"""Retrieval options of the runner beyond one vector per chunk: ``+sub`` and ``+dedup``.

``+sub`` is multi-vector retrieval: besides its own vector, each chunk is represented by the
sentence pieces that overlap it, and its score blends its own similarity with the best of
theirs. ``+dedup`` leaves repeated chunk texts out of the index. Both change the ranking,
so their rows are labelled in the reports by their spec.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

import numpy as np

from fissure.eval.metrics import Located
from fissure.eval.spans import Span

HIDDEN = -1e9  # the score of a chunk left out of the index


def piece_links(chunks: dict[str, list[Span]], pieces: Sequence[Located]) -> np.ndarray:
    """``(chunk, piece)`` index pairs of every piece that overlaps a chunk, by chunk.

    Args:
        chunks: Each corpus's chunk spans, in pool order (corpus by corpus, sorted by start).
        pieces: The pieces, located as ``(corpus, start, end)``.
    """
    base, at = {}, 0
    for cid, spans in chunks.items():
        base[cid] = at
        at += len(spans)
    starts = {cid: [s for s, _ in spans] for cid, spans in chunks.items()}
    pairs: list[tuple[int, int]] = []
    for j, (cid, s, e) in enumerate(pieces):
        spans = chunks.get(cid, [])
        i = max(0, bisect_right(starts.get(cid, []), s) - 1)
        while i < len(spans) and spans[i][0] < e:
            if min(spans[i][1], e) > max(spans[i][0], s):
                pairs.append((base[cid] + i, j))
            i += 1
    if not pairs:
        return np.zeros((0, 2), dtype=np.int64)
    links = np.asarray(pairs, dtype=np.int64)
    return links[np.argsort(links[:, 0], kind="stable")]


def blend_pieces(scores: np.ndarray, piece_scores: np.ndarray, links: np.ndarray,
                 weight: float) -> np.ndarray:  # fmt: skip
    """``(1 - weight) * scores + weight * best piece score`` per chunk (a chunk without a
    piece keeps its own score in both terms)."""
    best = scores.copy()
    if links.size:
        rows, cols = links[:, 0], links[:, 1]
        first = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        best[:, rows[first]] = np.maximum.reduceat(piece_scores[:, cols], first, axis=1)
    return (1.0 - weight) * scores + weight * best


def repeated(texts: Sequence[str]) -> np.ndarray:
    """Mask of the texts equal to an earlier one (the first copy stays), as ingest's
    ``dedup`` decides it."""
    from fissure.ingest.pieces import repeated_texts

    return np.asarray(repeated_texts(texts), dtype=bool)
