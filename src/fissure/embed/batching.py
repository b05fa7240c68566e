"""What every local transformer embedder does around its forward pass: each distinct text
embedded once, texts sorted by length so that a batch pads little, and token ids padded
into the arrays a model takes. The torch fast path (:mod:`fissure.embed.minilm`) and ONNX
Runtime (:mod:`fissure.embed.onnx`) share it, so both cut and pad alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["by_length", "in_order", "padded"]


def in_order(texts: Sequence[str], embed_unique: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """``embed_unique`` run on the distinct texts (first seen first), its rows given back in
    the order of ``texts``, a repeated text repeating its row."""
    unique = list(dict.fromkeys(texts))
    vectors = embed_unique(unique)
    row = {text: i for i, text in enumerate(unique)}
    return vectors[[row[t] for t in texts]]


def by_length(
    ids: list[list[int]], dim: int, batch_size: int, run: Callable[[list[list[int]]], np.ndarray]
) -> np.ndarray:
    """``run`` over batches of token ids taken longest first; its rows (``dim`` wide) put
    back in the order of ``ids``."""
    order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
    out = np.empty((len(ids), dim), dtype=np.float32)
    for at in range(0, len(order), batch_size):
        rows = order[at : at + batch_size]
        out[rows] = run([ids[i] for i in rows])
    return out


def padded(ids: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Token ids as ``(input_ids, attention_mask)``, int64, zero-padded to the longest."""
    width = max(len(x) for x in ids)
    input_ids = np.zeros((len(ids), width), dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for r, row in enumerate(ids):
        input_ids[r, : len(row)] = row
        mask[r, : len(row)] = 1
    return input_ids, mask
