"""The embedder protocol: texts in, one L2-normalised float32 row per text out.

:class:`Embedder` itself is defined with the core nouns (:mod:`fissure.types`), so that the
splitter, an earlier stage, can take one for semantic cuts; it is re-exported here.
"""

from __future__ import annotations

import numpy as np

from fissure.types import Embedder

__all__ = ["Embedder", "empty", "normalize_rows"]


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as float32 with every non-zero row scaled to unit length."""
    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0).astype(np.float32)


def empty(dim: int) -> np.ndarray:
    """The result of embedding no texts."""
    return np.zeros((0, dim), dtype=np.float32)
