"""What happens after packing: merging small pieces and extending overlap backwards."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from fissure.split.pack import Packer
from fissure.split.runs import Piece, Run

_WORD = re.compile(r"\S+")


def merge_small(packer: Packer, pieces: list[Piece], min_tokens: int) -> list[Piece]:
    """Merge pieces under ``min_tokens`` into the next piece, or else the previous one,
    whenever the merged span still fits the budget (``packer.fits``: less the reserve).

    This is what ``min_tokens`` means for every strategy: a chunk under it remains only
    where joining it to either neighbour would not fit (or would run across a hard cut,
    :meth:`Packer.crosses`). (``semantic`` and ``hybrid``'s
    dynamic programme already avoids such chunks; this pass holds the pieces that making
    room for a context re-split to the same rule.) The merged piece keeps the boundary
    (and the reason) in front of its first part.
    """
    if min_tokens <= 0 or len(pieces) < 2:
        return pieces
    out: list[Piece] = []
    i = 0
    while i < len(pieces):
        p = pieces[i]
        if p.size < min_tokens:
            if i + 1 < len(pieces) and _joins(packer, p.start, pieces[i + 1].end):
                nxt = pieces[i + 1]
                size = packer.size(p.start, nxt.end)
                pieces[i + 1] = Piece(p.start, nxt.end, p.cut, size, None, p.reason)
                i += 1
                continue
            if out and _joins(packer, out[-1].start, p.end):
                prev = out[-1]
                size = packer.size(prev.start, p.end)
                out[-1] = Piece(prev.start, p.end, prev.cut, size, None, prev.reason)
                i += 1
                continue
        out.append(p)
        i += 1
    return out


def _joins(packer: Packer, start: int, end: int) -> bool:
    """Whether one chunk may hold ``[start, end)``: it fits and crosses no hard cut."""
    return packer.fits(start, end) and not packer.crosses(start, end)


def word_starts(text: str, lo: int, hi: int) -> list[int]:
    """Starts of the words that begin in ``[lo, hi)``."""
    return [m.start() for m in _WORD.finditer(text, lo, hi) if m.start() >= lo]


def fit_reserve(packer: Packer, pieces: list[Piece], reserve: Callable[[int], int]) -> list[Piece]:
    """Re-split (by ``packer``'s levels) every piece whose size plus
    ``reserve(piece.start)`` exceeds the packer's budget.

    ``reserve`` is what will be prepended to a chunk starting there (its context). A
    reserve over half the budget is not honoured: such a context is not prepended.
    """
    budget = packer.max_tokens
    out: list[Piece] = []
    todo = pieces[::-1]
    while todo:
        piece = todo.pop()
        extra = reserve(piece.start)
        if extra > budget // 2 or piece.size + extra <= budget:
            out.append(piece)
            continue
        tighter = replace(packer, max_tokens=budget - extra, reserve=None)
        parts = tighter.run(Run([piece.start, piece.end], piece.cut, piece.cut))
        todo.extend(parts[::-1])
    return out


def add_overlap(
    packer: Packer,
    pieces: list[Piece],
    overlap: int,
    unit_starts: Callable[[int, int], list[int]],
    reserve: Callable[[int], int] | None = None,
) -> list[tuple[int, int]]:
    """Spans extended backwards to the earliest unit start that keeps the overlap within
    ``overlap`` and the chunk (plus its ``reserve``) within the budget and the character
    ceiling, never back across a hard cut (:attr:`Packer.hard`). Starts stay strictly
    increasing."""
    spans = [(p.start, p.end) for p in pieces]
    if overlap <= 0:
        return spans
    out = [spans[0]]
    for k in range(1, len(spans)):
        start, end = spans[k]
        floor = out[-1][0] + 1
        wall = packer.hard.last_until(start) if packer.hard is not None else None
        if wall is not None and wall > floor:
            floor = wall
        candidates = unit_starts(max(floor, start - 32 * overlap - 64), start)
        best = start
        # Candidates grow toward `start`; both sizes shrink as the candidate moves right.
        lo, hi = 0, len(candidates)
        while lo < hi:
            mid = (lo + hi) // 2
            c = candidates[mid]
            room = packer.max_tokens - (reserve(c) if reserve else 0)
            if (
                packer.size(c, start) <= overlap
                and packer.within(c, end)
                and packer.size(c, end) <= room
            ):
                hi = mid
            else:
                lo = mid + 1
        if lo < len(candidates):
            best = candidates[lo]
        out.append((best, end))
    return out
