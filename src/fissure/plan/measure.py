"""Chunk a survey's sample under given settings, and measure what the chunks do.

The figures :mod:`fissure.plan.recommend` and :mod:`fissure.plan.estimate` report for the
user's own corpus: chunk counts and sizes, tokens a model will embed (overlap and context
included, counted by the model's tokenizer), tokens embedded while chunking (semantic
cuts), and *cuts*: chunks that end inside a function, method or table that would have
fitted the budget whole.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from fissure.chunker import Chunker
from fissure.config import ChunkSettings
from fissure.embed import Embedder, load_embedder
from fissure.plan.survey import UNIT_KINDS, Survey, walk
from fissure.size import Sizer
from fissure.types import Chunk, Document


@dataclass
class Measured:
    """One strategy on the sample.

    Attributes:
        settings: The chunk settings it ran with.
        chunks: The chunks of each sampled document, in survey order.
        units: Functions, methods and tables in the sample that fit the budget whole.
        cuts: Chunks that end strictly inside one of those units (it could have been kept).
        boundary_tokens: Tokens the semantic embedder read while choosing cuts (MiniLM
            word pieces; 0 for strategies without semantic cuts).
        boundary_seconds: Wall seconds spent embedding for those cuts.
    """

    settings: ChunkSettings
    chunks: list[list[Chunk]] = field(default_factory=list)
    units: int = 0
    cuts: int = 0
    boundary_tokens: int = 0
    boundary_seconds: float = 0.0

    @property
    def every(self) -> list[Chunk]:
        """All chunks, document after document."""
        return [c for doc in self.chunks for c in doc]

    @property
    def count(self) -> int:
        """How many chunks."""
        return sum(len(doc) for doc in self.chunks)

    @property
    def cut_share(self) -> float:
        """Cuts over chunks (0 when there are none)."""
        return self.cuts / self.count if self.count else 0.0


class CountingEmbedder:
    """Wraps an embedder, adding up the tokens and wall time of everything it embeds."""

    def __init__(self, inner: Embedder, sizer: Sizer) -> None:
        self.inner, self.sizer = inner, sizer
        self.dim, self.max_tokens, self.model_id = inner.dim, inner.max_tokens, inner.model_id
        self.tokens = 0
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed through the wrapped model, counting."""
        self.tokens += sum(self.sizer.count(t) for t in texts)
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - started


def measure(survey: Survey, settings: ChunkSettings) -> Measured:
    """Chunk every sampled document with ``settings`` and count cuts through whole units.

    Raises:
        ConfigError: The settings cannot work.
    """
    counter = None
    if settings.semantic:
        counter = CountingEmbedder(load_embedder(settings.embedder), Sizer.minilm())
    chunker = Chunker(settings, embedder=counter)
    result = Measured(settings)
    for document in survey.documents:
        chunks = chunker.chunk_document(document)
        result.chunks.append(chunks)
        units = whole_units(document, chunker.sizer, settings.budget)
        result.units += len(units)
        result.cuts += sum(any(s < c.end < e for s, e in units) for c in chunks)
    if counter is not None:
        result.boundary_tokens, result.boundary_seconds = counter.tokens, counter.seconds
    return result


def whole_units(document: Document, sizer: Sizer, budget: int) -> list[tuple[int, int]]:
    """The spans of the document's functions, methods and tables that fit ``budget``."""
    text = document.text
    return [(b.start, b.end) for b in walk(document.blocks)
            if b.kind in UNIT_KINDS and sizer.count(text[b.start : b.end]) <= budget]  # fmt: skip


def tokens_per(survey: Survey, numerator: Sizer, denominator: Sizer) -> list[float]:
    """Per sampled document, tokens by ``numerator`` over tokens by ``denominator`` (e.g.
    MiniLM word pieces per cl100k_base token), for documents with any text."""
    ratios = []
    for document in survey.documents:
        below = denominator.count(document.text)
        if below:
            ratios.append(numerator.count(document.text) / below)
    return ratios
