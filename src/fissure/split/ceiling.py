"""The character ceiling beside the token budget (``ChunkSettings.max_chars``).

A token budget alone can be empty of meaning: a run without spaces longer than 100
characters is one MiniLM word piece (``[UNK]``), so 10 KB of base64 or of a JSON string
"fits" one token, and the embedder sees nothing of it. So a chunk must also keep within a
number of characters (by default :data:`~fissure.config.CHARS_PER_TOKEN` per token of the
budget), and the packer treats a span over it as it treats a span over budget: it descends
to finer parts and, with nothing finer left, cuts at the last grapheme boundary within
both (:meth:`~fissure.split.pack.Packer.largest_fit`).

The ceiling is checked on the trimmed span, as the budget is: :class:`CeilingTable` wraps
any :class:`~fissure.size.ruler.Table` (and its compiled twin, untouched) so that a run of
parts fits only within both. Ordinary text stays far below the ceiling, and then every
answer is the wrapped table's own.
"""

from __future__ import annotations

from bisect import bisect_right

from fissure.size.ruler import Table


class CeilingTable:
    """The :class:`~fissure.size.ruler.Table` interface of ``table`` with a run of parts
    fitting only when its trimmed text is at most ``cap`` characters long.

    Args:
        table: Sizes of the runs of the parts ``bounds`` (indexed as ``bounds``).
        bounds: Part boundaries.
        cap: The most characters a trimmed run may hold.
    """

    __slots__ = ("table", "bounds", "cap")

    def __init__(self, table: Table, bounds: list[int], cap: int) -> None:
        self.table, self.bounds, self.cap = table, bounds, cap

    def start(self, i: int) -> int:
        """First visible position at or after part ``i``'s start."""
        return self.table.start(i)

    def end(self, j: int) -> int:
        """End of the last visible character before part ``j``'s end."""
        return self.table.end(j)

    def size(self, i: int, j: int) -> int:
        """Size of the trimmed run of parts ``i..j`` (inclusive), in tokens."""
        return self.table.size(i, j)

    def fits(self, i: int, j: int, budget: int) -> bool:
        """Whether the trimmed run of parts ``i..j`` fits ``budget`` and the ceiling."""
        bounds = self.bounds
        # The untrimmed length bounds the trimmed one: most runs are settled by it.
        if (
            bounds[j + 1] - bounds[i] > self.cap
            and self.table.end(j) - self.table.start(i) > self.cap
        ):
            return False
        return self.table.fits(i, j, budget)

    def sure(self, i: int, budget: int) -> int:
        """The wrapped table's sure extent, no further than the parts whose untrimmed run
        from part ``i`` is within the ceiling (the packer asks on, part by part)."""
        j = self.table.sure(i, budget)
        bounds = self.bounds
        reach = bisect_right(bounds, bounds[i] + self.cap, i + 1) - 2
        return j if j <= reach else reach


def capped(table: Table, bounds: list[int], cap: int | None) -> Table:
    """``table`` held to ``cap`` characters per run (as it is when no run can exceed it)."""
    if cap is None or bounds[-1] - bounds[0] <= cap:
        return table
    return CeilingTable(table, bounds, cap)


def extend(table: Table, i: int, j: int, n: int, budget: int) -> int:
    """The packer's greedy step: the last part ``k >= j`` (of ``n``) such that each run
    ``i..j+1``, …, ``i..k`` fits ``budget``, asked part by part. It runs once per part of
    a run that the table cannot settle ahead (:meth:`Table.sure`), so a
    :class:`CeilingTable`'s check is made here inline rather than through its ``fits``."""
    if not isinstance(table, CeilingTable):
        fits = table.fits
        while j + 1 < n and fits(i, j + 1, budget):
            j += 1
        return j
    inner, bounds, cap = table.table, table.bounds, table.cap
    fits, reach = inner.fits, bounds[i] + cap
    while j + 1 < n and fits(i, j + 1, budget):
        if bounds[j + 2] > reach and inner.end(j + 1) - inner.start(i) > cap:
            break
        j += 1
    return j
