"""``fixed``: flat windows that ignore structure, each as long as the budget allows."""

from __future__ import annotations

from fissure.ranks import BUDGET
from fissure.split import levels as lv
from fissure.split.pack import Packer
from fissure.split.runs import Piece


def fixed_pieces(packer: Packer, overlap: int) -> tuple[list[tuple[int, int]], list[Piece]]:
    """The windows of the whole text (each starting up to ``overlap`` before the previous
    one ends) and the piece behind each."""
    spans = fixed_overlap(packer, fixed_windows(packer), overlap)
    return spans, [Piece(s, e, BUDGET, packer.ruler.count(s, e)) for s, e in spans]


def fixed_windows(packer: Packer) -> list[Piece]:
    """Flat windows that ignore structure: each as long as the budget allows."""
    text, pieces = packer.text, []
    start, _ = packer.trim(0, len(text))
    while start < len(text):
        stop = packer.largest_fit(start, len(text))
        s, e = packer.trim(start, stop)
        if s < e:
            pieces.append(Piece(s, e, BUDGET, packer.ruler.count(s, e)))
        start = stop
    return pieces


def fixed_overlap(packer: Packer, pieces: list[Piece], overlap: int) -> list[tuple[int, int]]:
    """Fixed windows re-laid so each starts up to ``overlap`` before the previous end."""
    spans = [(p.start, p.end) for p in pieces]
    if overlap <= 0 or len(spans) < 2:
        return spans
    text = packer.text
    out = [spans[0]]
    while out[-1][1] < spans[-1][1]:
        prev_start, prev_end = out[-1]
        lo, hi = prev_start + 1, prev_end
        while lo < hi:  # earliest start whose overlap still fits
            mid = (lo + hi) // 2
            if packer.size(mid, prev_end) <= overlap:
                hi = mid
            else:
                lo = mid + 1
        while lo < prev_end and not lv.is_grapheme_break(text, lo):
            lo += 1
        start, _ = packer.trim(lo, len(text))
        stop = packer.largest_fit(start, len(text))
        if stop <= prev_end:  # no room beyond the overlap: continue without it
            start, _ = packer.trim(prev_end, len(text))
            if start >= len(text):
                break
            stop = packer.largest_fit(start, len(text))
        s, e = packer.trim(start, stop)
        if s < e:
            out.append((s, e))
        else:
            break
    return out
