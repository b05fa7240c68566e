"""The embedder protocol: texts in, one L2-normalised float32 row per text out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into vectors.

    Attributes:
        dim: Width of each vector.
        max_tokens: The model's input limit in its own tokens, special tokens excluded;
            text past it is truncated by the model, so chunks should fit under it.
        model_id: A stable name of the model and its settings; caches key on it.
    """

    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def model_id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``: float32 array of shape ``(len(texts), dim)``, rows of unit length."""
        ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as float32 with every non-zero row scaled to unit length."""
    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0).astype(np.float32)


def empty(dim: int) -> np.ndarray:
    """The result of embedding no texts."""
    return np.zeros((0, dim), dtype=np.float32)
