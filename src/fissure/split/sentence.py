"""``sentence``: sentences (nupunkt) packed whole; an overlap starts at a sentence."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence

from fissure.split import levels as lv

LEVELS: Sequence[lv.Cuts] = (lv.SENTENCE, lv.WORD)


def sentence_starts(text: str) -> Callable[[int, int], list[int]]:
    """``starts(lo, hi)``: the sentence starts in ``[lo, hi)`` (found once, when first
    asked)."""
    found: list[list[int]] = []

    def starts(lo: int, hi: int) -> list[int]:
        if not found:
            import nupunkt

            found.append([a for a, _ in nupunkt.sent_spans(text)])
        at = found[0]
        return at[bisect_left(at, lo) : bisect_left(at, hi)]

    return starts
