"""Test helpers for ingestion: a counting hash embedder and a parser that hangs.

Importing this module registers the test-only formats, so worker processes see them when
it is named as a plugin (``Options(plugins=(PLUGIN,))`` or ``FISSURE_PLUGINS``).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence

import numpy as np

from fissure.detect import mimes
from fissure.parse.registry import register
from fissure.types import Document

PLUGIN = "tests.ingest.helpers"
HANG_MIME = "application/x-fissure-hang"
BOOM_MIME = "application/x-fissure-boom"
HOG_MIME = "application/x-fissure-hog"
SLOW_MIME = "application/x-fissure-slow"


class HashEmbedder:
    """Deterministic vectors from each text's hash; counts calls and texts."""

    def __init__(self, dim: int = 16, model_id: str = "test-hash", delay: float = 0.0) -> None:
        self.dim = dim
        self.max_tokens = 256
        self.model_id = model_id
        self.delay = delay
        self.calls = 0
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        if self.delay:
            time.sleep(self.delay)
        rows = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest()[:8])
            rows.append(np.random.default_rng(seed).standard_normal(self.dim))
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def parse_hang(text: str, *, source: str) -> Document:
    """A parser that never returns (well, not within any test's timeout)."""
    time.sleep(3600)
    raise AssertionError("unreachable")


def parse_boom(text: str, *, source: str) -> Document:
    """A parser that eats memory until the worker's memory cap stops it, then crashes the
    process the way a native library does when malloc fails (the registry would otherwise
    turn a Python MemoryError into a plain-text fallback)."""
    hog = []
    try:
        while True:
            hog.append(bytearray(64 * 1024 * 1024))
    except MemoryError:
        hog.clear()
        os.abort()


def parse_hog(text: str, *, source: str) -> Document:
    """A parser that allocates until the memory cap raises MemoryError (and lets it rise)."""
    hog = []
    while True:
        hog.append(bytearray(64 * 1024 * 1024))


def parse_slow(text: str, *, source: str) -> Document:
    """A parser that takes three seconds, whatever the document."""
    time.sleep(3)
    return Document.from_text(text, source=source)


mimes.EXTENSIONS[".hang"] = HANG_MIME
mimes.EXTENSIONS[".boom"] = BOOM_MIME
register(HANG_MIME, parse_hang)
register(BOOM_MIME, parse_boom)
mimes.EXTENSIONS[".hog"] = HOG_MIME
mimes.EXTENSIONS[".slow"] = SLOW_MIME
register(HOG_MIME, parse_hog)
register(SLOW_MIME, parse_slow)
