"""Embedding tests run offline, with fissure's cache in a temporary folder."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"


@pytest.fixture(autouse=True, scope="session")
def _cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    old = os.environ.get("FISSURE_CACHE_DIR")
    os.environ["FISSURE_CACHE_DIR"] = str(tmp_path_factory.mktemp("fissure-cache"))
    yield
    if old is None:
        os.environ.pop("FISSURE_CACHE_DIR", None)
    else:
        os.environ["FISSURE_CACHE_DIR"] = old


class HashEmbedder:
    """A deterministic stand-in: each text's vector comes from its hash. Counts its calls."""

    def __init__(self, dim: int = 8, model_id: str = "hash") -> None:
        self.dim = dim
        self.max_tokens = 100
        self.model_id = model_id
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        seeds = [int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little") for t in texts]
        rows = [np.random.default_rng(s).standard_normal(self.dim) for s in seeds]
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True)
