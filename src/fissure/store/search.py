"""How :class:`~fissure.store.chroma.ChromaStore` answers a query, on either path.

* **exact**: every live row of the exact copy (:mod:`fissure.store.exact`) is scored, and
  so is every sentence piece when blending; nothing can be missed.
* **index**: Chroma's HNSW index proposes ``max(100, 10 * k)`` chunks (and as many piece
  links, whose chunks join them when blending); the candidates are scored exactly from
  the copy. Used past ``exact_max`` chunks, where a scan costs more than it is worth.

Then, by the plan's ``mode`` (:mod:`fissure.store.fusion`): ``dense`` keeps those scores;
``lexical`` replaces them with BM25 from the lexical index (:mod:`fissure.store.lexical`);
``hybrid`` fuses the two rankings (reciprocal rank fusion). ``where`` filters both sides.

Every mode then ranks with :func:`fissure.store.ranking.top` (ties by place, near-copies
collapsed to the earliest tied copy) and read texts and metadata from Chroma. A row that
the copy holds and Chroma does not (a crash between the two writes; the copy is written
first) is skipped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from fissure.store.exact import Rows
from fissure.store.fusion import Fusion, hybrid_scores
from fissure.store.protocol import Hit
from fissure.store.ranking import best_per_owner, blend, firsts, id_key, id_keys, member, top

SEARCHES = ("auto", "exact", "index")
DEPTH_MIN = 100  # index path: candidates at least
DEPTH_PER_HIT = 10  # index path: candidates per hit asked for


class Source(Protocol):
    """What a search needs from the store."""

    def piece_rows(self) -> Rows: ...

    def fetch(self, ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]: ...

    def matching(self, where: Mapping[str, Any]) -> list[str]: ...

    def nearest(
        self, query: np.ndarray, n: int, where: Mapping[str, Any] | None, pieces: bool = False
    ) -> list[tuple[str, dict[str, Any]]]: ...

    def lexical_search(self, text: str, limit: int | None) -> list[tuple[str, float]]: ...


@dataclass(frozen=True)
class Plan:
    """One query: a unit vector, how many hits, the filter, the piece weight (``None``:
    no blending), whether near-copies collapse, the retrieval mode, the question's text
    (for the lexical side) and how ``hybrid`` fuses."""

    query: np.ndarray
    k: int
    where: Mapping[str, Any] | None
    weight: float | None
    collapse: bool
    mode: str = "dense"
    text: str = ""
    fusion: Fusion = Fusion()


class Search:
    """One query against ``rows`` (the chunks' exact copy) of ``store``."""

    def __init__(self, store: Source, rows: Rows, plan: Plan) -> None:
        self.store, self.rows, self.plan = store, rows, plan

    def run(self, exact: bool) -> list[Hit]:
        """The hits, by the exact scan or through the index (dense side), by BM25
        (lexical side), or both fused."""
        if self.plan.mode == "lexical":
            depth = self.plan.fusion.depth(self.plan.k)
            return self._hits(*self._lexical(None if self.plan.where else 4 * depth))
        rows, scores = self._exact() if exact else self._index()
        if self.plan.mode == "hybrid":
            rows, scores = self._fused(rows, scores)
        return self._hits(rows, scores)

    def _lexical(self, limit: int | None) -> tuple[np.ndarray, np.ndarray]:
        """The rows that share a word with the question and their BM25 scores (rows the
        exact copy lacks are skipped: the lexical index is written first)."""
        found = self.store.lexical_search(self.plan.text, limit)
        at = self.rows.lookup(id_keys([i for i, _ in found]))
        scores = np.asarray([s for _, s in found], dtype=np.float64)
        keep = at >= 0
        allowed = self._allowed()
        if allowed is not None:
            keep &= allowed[np.maximum(at, 0)]
        return at[keep], scores[keep]

    def _fused(self, rows: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Reciprocal rank fusion of the dense candidates and the lexical matches."""
        plan, n = self.plan, len(self.rows)
        depth = plan.fusion.depth(plan.k)
        dense = rows[top(scores, depth, self.rows.place[rows])]
        lexical_rows, lexical_scores = self._lexical(None if plan.where else depth)
        lexical = lexical_rows[top(lexical_scores, depth, self.rows.place[lexical_rows])]
        every = np.full(n, -np.inf)
        every[rows] = scores
        fused = hybrid_scores(every, dense, lexical, plan.fusion)
        candidates = np.flatnonzero(np.isfinite(fused))
        return candidates, fused[candidates]

    def _exact(self) -> tuple[np.ndarray, np.ndarray]:
        plan, rows = self.plan, self.rows
        scores = rows.scores(plan.query)
        if plan.weight is not None:
            pieces = self.store.piece_rows()
            owners = rows.lookup(pieces.tag)
            best = best_per_owner(pieces.scores(plan.query), owners, len(rows))
            scores = blend(scores, best, plan.weight)
        allowed = self._allowed()
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf).astype(np.float32)
        return np.arange(len(rows)), scores

    def _index(self) -> tuple[np.ndarray, np.ndarray]:
        plan, rows = self.plan, self.rows
        depth = max(DEPTH_MIN, DEPTH_PER_HIT * plan.k)
        near = [i for i, _ in self.store.nearest(plan.query, depth, plan.where)]
        found = id_keys(near)
        if plan.weight is not None:
            links = self.store.nearest(plan.query, depth, None, pieces=True)
            found = np.concatenate([found, id_keys([str(m["chunk_id"]) for _, m in links])])
        candidates = rows.lookup(found)
        candidates = np.sort(candidates[candidates >= 0])
        candidates = candidates[firsts(candidates)]
        allowed = self._allowed()
        if allowed is not None:
            candidates = candidates[allowed[candidates]]
        scores = rows.scores_at(candidates, plan.query)
        if plan.weight is not None and len(candidates):
            pieces = self.store.piece_rows()
            mine = np.flatnonzero(member(pieces.tag, np.sort(rows.fp[candidates])))
            owners = rows.lookup(pieces.tag[mine])
            best = best_per_owner(pieces.scores_at(mine, plan.query), owners, len(rows))
            scores = blend(scores, best[candidates], plan.weight)
        return candidates, scores

    def _allowed(self) -> np.ndarray | None:
        """Which rows ``where`` lets through (``None``: all). A filter on the source alone
        is read from the copy; any other asks Chroma which ids match."""
        where = self.plan.where
        if not where:
            return None
        if set(where) == {"source"} and isinstance(where["source"], str):
            return self.rows.source == np.uint64(id_key(where["source"]))
        return member(self.rows.fp, np.sort(id_keys(self.store.matching(where))))

    def _copies(self, row: int) -> int:
        """How many live chunks share ``row``'s near-copy key (1 without collapse)."""
        if not self.plan.collapse:
            return 1
        return int(np.count_nonzero(self.rows.tag == self.rows.tag[row]))

    def _hits(self, candidates: np.ndarray, scores: np.ndarray) -> list[Hit]:
        plan, rows = self.plan, self.rows
        scores = scores.copy()
        place = rows.place[candidates]
        groups = rows.tag[candidates] if plan.collapse else None
        while True:
            order = top(scores, plan.k, place, groups)
            ids = [rows.ids[i].decode("utf-8", "surrogatepass") for i in candidates[order]]
            got = self.store.fetch(ids)
            absent = [j for j, i in zip(order, ids, strict=True) if i not in got]
            if not absent:
                return [Hit(i, float(scores[j]), *got[i], copies=self._copies(candidates[j]))
                        for j, i in zip(order, ids, strict=True)]  # fmt: skip
            scores[absent] = -np.inf  # the copy is a superset of Chroma: skip and go on
