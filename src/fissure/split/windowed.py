"""A size table over a window of a long run of parts, so packing memory stays flat.

A :class:`~fissure.size.ruler.Table` keeps a handful of numbers per part, and building one
holds several Python lists per part for a moment (about 450 bytes a part). The packer asks
only about runs of parts that fit one chunk, left to right, so for a run of millions of
parts (every word of an 18 MB line, every record of a CSV) :class:`WindowedTable` keeps the
table of ``WINDOW`` parts around the ones asked about, and builds the next window when the
questions move past it. Every table answers exactly (sizes equal counting the text), so the
packer makes the same cuts as with one table over the whole run.
"""

from __future__ import annotations

from fissure.size import Ruler
from fissure.size.ruler import Table
from fissure.spans import visible_end, visible_start

WINDOW = 1 << 16


class WindowedTable:
    """The :class:`~fissure.size.ruler.Table` interface over a window of ``bounds``.

    Args:
        ruler: Measures the document.
        bounds: Part boundaries of the whole run.
        cap: The budget the runs are packed under (see :meth:`Ruler.table`).
        window: Parts per window.
    """

    def __init__(self, ruler: Ruler, bounds: list[int], cap: int, window: int = WINDOW) -> None:
        self.ruler, self.bounds, self.cap, self.window = ruler, bounds, cap, window
        self.margin = window // 4  # parts kept behind a question, for the chunk it belongs to
        self.n = len(bounds) - 1
        self.lo = self.hi = 0
        self.table: Table | None = None

    def _at(self, i: int, j: int) -> Table | None:
        """The window's table with parts ``i..j`` in it, or ``None`` when they span more
        than a window (then the run is measured directly)."""
        if self.table is not None and self.lo <= i and j < self.hi:
            return self.table
        if j - i + 1 > self.window - self.margin:
            return None
        self.lo = max(0, i - self.margin)
        self.hi = min(self.n, self.lo + self.window)
        self.table = self.ruler.table(self.bounds[self.lo : self.hi + 1], cap=self.cap)
        return self.table

    def start(self, i: int) -> int:
        """First visible position at or after part ``i``'s start (past the run's end when
        there is none, as in every table: then a run starting at ``i`` is empty)."""
        table = self._at(i, i)
        assert table is not None
        got = table.start(i - self.lo)
        if got < self.bounds[self.hi]:
            return got
        # Nothing visible in the rest of the window: look on, as a table of the run would.
        last = self.bounds[-1]
        found = visible_start(self.ruler.text, self.bounds[i], last)
        return found if found < last else len(self.ruler.text) + 1

    def end(self, j: int) -> int:
        """End of the last visible character before part ``j``'s end (``0`` when there is
        none in the run)."""
        table = self._at(j, j)
        assert table is not None
        got = table.end(j - self.lo)
        if got > self.bounds[self.lo]:
            return got
        first = self.bounds[0]
        k = visible_end(self.ruler.text, first, self.bounds[j + 1])
        return k if k > first else 0

    def size(self, i: int, j: int) -> int:
        """Size of the trimmed run of parts ``i..j`` (inclusive)."""
        table = self._at(i, j)
        if table is not None:
            return table.size(i - self.lo, j - self.lo)
        s, e = self.start(i), self.end(j)
        return self.ruler.count(s, e) if s < e else 0

    def fits(self, i: int, j: int, budget: int) -> bool:
        """Whether the trimmed run of parts ``i..j`` fits ``budget``."""
        table = self._at(i, j)
        if table is not None:
            return table.fits(i - self.lo, j - self.lo, budget)
        return self.size(i, j) <= budget

    def sure(self, i: int, budget: int) -> int:
        """As the window's table says (at most its last part): the packer asks on."""
        table = self._at(i, i)
        assert table is not None
        return self.lo + table.sure(i - self.lo, budget)
