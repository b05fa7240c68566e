"""A deterministic bag-of-words embedder: no model, instant. For tests and smoke runs."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from fissure.embed.protocol import normalize_rows

_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """Hashed lower-case word counts, L2-normalised.

    Texts that share words are close, texts that do not are orthogonal: enough to test
    semantic chunking deterministically.
    """

    def __init__(self, dim: int = 256, max_tokens: int = 512) -> None:
        self.dim = dim
        self.max_tokens = max_tokens
        self.model_id = f"hashing-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            if words:
                buckets = [_hashed(word) % self.dim for word in words]
                out[row] = np.bincount(buckets, minlength=self.dim)
        return normalize_rows(out)


@lru_cache(maxsize=1 << 16)
def _hashed(word: str) -> int:
    """The word's 64-bit hash (kept: the same words recur across a document's chunks)."""
    return int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
