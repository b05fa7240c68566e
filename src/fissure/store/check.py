"""The recall self-check behind ``fissure status --check``: stored chunks must find themselves.

Each sampled chunk's own stored vector is the query. The chunk passes when it comes back
first, or, for an exact copy (another chunk with the same vector, so the same score),
when the copies fill the top ``k`` hits it is among. A chunk that fails is one that no
question can reach through that search path: an index that lost it (approximate search
on clustered data), a zero or broken vector, an exact copy out of step with Chroma.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fissure.store.chroma import ChromaStore
from fissure.store.ranking import group_sizes

SAME = 1e-4  # a score this close to the query's own (1.0) is the chunk or an exact copy
DEPTH = 10  # hits read per probe


@dataclass(frozen=True)
class Miss:
    """A sampled chunk that did not retrieve itself."""

    chunk_id: str
    source: str
    lines: tuple[int, int]
    first: str  # what came first instead: "source:lines", or "" for no hit at all
    score: float  # its score (the chunk's own would be 1.0)


@dataclass(frozen=True)
class Report:
    """The outcome of :func:`self_recall`."""

    search: str  # the path the queries took: "exact" or "index"
    chunks: int
    sampled: int
    found: int
    misses: list[Miss] = field(default_factory=list)
    copies: int = 0  # chunks that have near-copies in their document
    groups: int = 0  # how many groups of near-copies

    @property
    def recall(self) -> float:
        """The share of sampled chunks that retrieved themselves (1.0 for no sample)."""
        return self.found / self.sampled if self.sampled else 1.0


def self_recall(
    store: ChromaStore, sample: int = 200, search: str = "auto", seed: int = 0
) -> Report:
    """Query the store with ``sample`` stored vectors (``0``: every chunk) and count how
    many chunks come back as their own best hit.

    Args:
        store: The store to check.
        sample: How many chunks to probe, drawn at random with ``seed``.
        search: The path to check: ``auto`` (the one queries take), ``exact`` or ``index``.
        seed: The sampling seed (the same seed probes the same chunks).
    """
    rows = store.rows()
    n = len(rows)
    path = search if search != "auto" else ("exact" if n <= store.exact_max else "index")
    picked = np.arange(n) if sample <= 0 or sample >= n else np.sort(
        np.random.default_rng(seed).choice(n, size=sample, replace=False))  # fmt: skip
    probes = rows.at(picked)
    misses: list[Miss] = []
    for row, vector in zip(picked, probes, strict=True):
        chunk_id = rows.ids[row].decode("utf-8", "surrogatepass")
        hits = store.query(vector, k=DEPTH, collapse=False, search=path)
        if _passes(chunk_id, [(h.chunk_id, h.score) for h in hits]):
            continue
        meta = store.fetch([chunk_id]).get(chunk_id, ("", {}))[1]
        first = f"{hits[0].metadata.get('source', '?')}:{_lines(hits[0].metadata)}" if hits else ""
        misses.append(Miss(chunk_id, str(meta.get("source", "?")), _span(meta), first,
                           hits[0].score if hits else 0.0))  # fmt: skip
    counts = group_sizes(rows.tag)
    return Report(path, n, len(picked), len(picked) - len(misses), misses,
                  int(counts[counts > 1].sum()), int((counts > 1).sum()))  # fmt: skip


def _passes(chunk_id: str, hits: list[tuple[str, float]]) -> bool:
    if not hits or hits[0][1] < 1.0 - SAME:
        return False  # neither the chunk nor an exact copy of it came first
    if any(i == chunk_id for i, _ in hits):
        return True
    return len(hits) == DEPTH and hits[-1][1] >= 1.0 - SAME  # more copies than hits read


def _span(meta: dict[str, object]) -> tuple[int, int]:
    return int(meta.get("line_start", 0) or 0), int(meta.get("line_end", 0) or 0)  # type: ignore[call-overload]


def _lines(meta: dict[str, object]) -> str:
    start, end = _span(meta)
    return f"{start}-{end}"
