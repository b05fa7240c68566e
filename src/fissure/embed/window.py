"""Contextual embedding windows: embed a small chunk together with the text around it.

Small chunks hand the reader little beyond the answer, but a small chunk alone is a weak
query target: the words that tie it to a question (the article's subject, the term the
previous sentence defined) are often just outside it. An *embedding window* is the chunk
extended backwards and forwards to whole words, as far as the embedding model reads
(``max_tokens`` of the model's own tokenizer). The window is what gets embedded; the chunk,
with its exact offsets, is what gets stored and returned.

Every window is a slice ``text[a:b]`` of the document with ``a <= chunk.start`` and
``chunk.end <= b``; it holds at most ``max_tokens`` tokens of ``sizer`` unless the chunk
alone is larger (then the window is the chunk, and the model truncates it as it would
anyway). The free budget is shared between the two sides by ``before`` (0.5: centred);
whatever one side cannot use (the document's start or end) goes to the other. The result
depends only on the text, the spans and the settings.

The stored vector of a chunk is then a blend (:func:`blend`) of the chunk's own vector and
its window's: on Chroma's benchmark with MiniLM, the window alone ranks worse than the
chunk alone (neighbouring chunks share most of their window, so they crowd the top ranks
whether or not they hold the answer), while the blend ranks better than either.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

import numpy as np

from fissure.errors import ConfigError
from fissure.size import Ruler, Sizer
from fissure.types import Chunk

Span = tuple[int, int]
_WORD = re.compile(r"\S+")


class Windows:
    """Finds embedding windows in one text.

    Args:
        text: The document text that chunk offsets index into.
        sizer: Counts the embedding model's tokens (``Sizer.minilm()`` for MiniLM).
        max_tokens: The model's input limit without special tokens (254 for MiniLM).
        before: Share of the free budget spent in front of the chunk, 0..1.

    Raises:
        ConfigError: ``max_tokens`` < 1 or ``before`` outside 0..1.
    """

    def __init__(self, text: str, sizer: Sizer, max_tokens: int, *, before: float = 0.5) -> None:
        check_window(max_tokens, before)
        self.text = text
        self.max_tokens = max_tokens
        self.before = before
        self._ruler = Ruler(text, sizer)
        words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
        self._starts = [w[0] for w in words]
        self._ends = [w[1] for w in words]

    def span(self, start: int, end: int, *, limit: int | None = None) -> Span:
        """The window ``(a, b)`` around the chunk ``text[start:end]``.

        Args:
            start: The chunk's first character.
            end: The chunk's end (exclusive).
            limit: A smaller token limit for this chunk (room left for a prefix).
        """
        if not 0 <= start <= end <= len(self.text):
            raise ValueError(f"chunk {(start, end)} is outside the text")
        limit = self.max_tokens if limit is None else min(limit, self.max_tokens)
        size = self._ruler.count(start, end)
        if size >= limit:
            return start, end
        free = limit - size
        a = self._left(start, end, size + int(free * self.before))
        b = self._right(a, end, limit)
        return self._left(a, b, limit), b

    def _left(self, a: int, b: int, budget: int) -> int:
        """The earliest word start ``p <= a`` with ``text[p:b]`` within ``budget``."""
        starts, count = self._starts, self._ruler.count
        first, last = 0, bisect_right(starts, a)
        best = a
        while first < last:  # count(p, b) falls as p moves right: find the first p that fits
            mid = (first + last) // 2
            if count(starts[mid], b) <= budget:
                best, last = starts[mid], mid
            else:
                first = mid + 1
        return best

    def _right(self, a: int, b: int, budget: int) -> int:
        """The latest word end ``q >= b`` with ``text[a:q]`` within ``budget``."""
        ends, count = self._ends, self._ruler.count
        first, last = bisect_left(ends, b), len(ends)
        best = b
        while first < last:
            mid = (first + last) // 2
            if count(a, ends[mid]) <= budget:
                best, first = ends[mid], mid + 1
            else:
                last = mid
        return best


def check_window(max_tokens: int, before: float) -> None:
    """Raise :class:`ConfigError` unless the window settings are usable."""
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise ConfigError(f"embed_window_tokens must be a positive integer, got {max_tokens!r}")
    if not 0.0 <= before <= 1.0:
        raise ConfigError(f"embed_window_before must be within 0..1, got {before!r}")


def window_spans(
    text: str,
    spans: Sequence[Span],
    sizer: Sizer,
    max_tokens: int,
    *,
    before: float = 0.5,
) -> list[Span]:
    """The embedding window of each span of ``text``, one for one (see :class:`Windows`)."""
    if not spans:
        return []
    windows = Windows(text, sizer, max_tokens, before=before)
    return [windows.span(s, e) for s, e in spans]


def heading_line(headings: Sequence[str]) -> str:
    """The headings breadcrumb (``A › B``) and a newline, or ``""`` without headings: what
    ``embed_headings`` puts in front of an embedded chunk, window or piece."""
    return " › ".join(headings) + "\n" if headings else ""


def headed_text(chunk: Chunk) -> str:
    """What ``embed_headings`` embeds for a chunk: its :func:`heading_line`, then
    :meth:`~fissure.types.Chunk.embedding_text`. A chunker with ``embed_headings`` counts
    that line in the chunk's budget (``metadata["headings_tokens"]``); where a unit that
    fills the budget leaves no room for it (``metadata["headings_dropped"]``), the line is
    left out, so what is embedded still fits."""
    if "headings_dropped" in chunk.metadata:
        return chunk.embedding_text()
    return heading_line(chunk.headings) + chunk.embedding_text()


def window_texts(
    text: str,
    chunks: Sequence[Chunk],
    sizer: Sizer,
    max_tokens: int,
    *,
    before: float = 0.5,
    headings: bool = False,
) -> list[str]:
    """What to embed as each chunk's window: an exact slice of the document, or, for a chunk
    whose ``embedding_text()`` puts its context in front (or with ``headings``: its
    :func:`heading_line`), that line and a slice that leaves room for it within
    ``max_tokens``.

    Args:
        text: The document text the chunks index into.
        chunks: Its chunks (any order; overlapping chunks are fine).
        sizer: Counts the embedding model's tokens.
        max_tokens: The model's input limit without special tokens.
        before: Share of the free budget spent in front of each chunk.
        headings: Put each chunk's headings breadcrumb in front (``embed_headings``).
    """
    if not chunks:
        return []
    windows = Windows(text, sizer, max_tokens, before=before)
    out: list[str] = []
    for chunk in chunks:
        if headings:  # as the evaluator's +hctx+win: one token spare for the line break
            prefix = heading_line(chunk.headings)
            limit = max_tokens - sizer.count(prefix) - 1 if prefix else max_tokens
        else:
            full = chunk.embedding_text()
            prefix = full[: len(full) - len(chunk.text)]
            limit = max_tokens - sizer.count(prefix) if prefix else max_tokens
        a, b = windows.span(chunk.start, chunk.end, limit=max(1, limit))
        out.append(prefix + text[a:b])
    return out


def blend(chunk_vectors: np.ndarray, window_vectors: np.ndarray, share: float) -> np.ndarray:
    """Unit vectors ``(1 - share) * chunk + share * window``, row by row (float32).

    Raises:
        ValueError: The arrays differ in shape.
    """
    if chunk_vectors.shape != window_vectors.shape:
        raise ValueError(f"shapes differ: {chunk_vectors.shape} vs {window_vectors.shape}")
    mixed = (1.0 - share) * chunk_vectors.astype(np.float32) + share * window_vectors
    norms = np.linalg.norm(mixed, axis=1, keepdims=True)
    return (mixed / np.maximum(norms, 1e-12)).astype(np.float32)
