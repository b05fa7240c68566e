"""Exact span sizes of one document, answered by lookup or arithmetic.

Two ways, both exact for additive sizers (equal to counting the span's text directly):

- The *seam table*: the document is cut at seams (see :mod:`fissure.size.textindex`) into
  segments of about ``sizer.segment_chars`` characters (or encoded whole, for the OpenAI
  encodings) and a prefix sum gives the size between any two seams. A span whose ends are
  not seams is measured as *head + lookup + tail*, where only the short head and tail are
  counted afresh. It costs a pass over the whole document, so it is built on first need.
- A :class:`PartTable`: when the parts being packed meet at seams (paragraphs and lines
  do: a line with visible text always starts a new pre-token), each part is counted once,
  an oversized one only up to the budget, and a run of parts is a sum of part sizes. The
  structural strategy on plain text mostly needs nothing else, so most documents never
  build the seam table.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import Any, Protocol

import numpy as np

from fissure._compiled import twin
from fissure.size.parts import HUGE, LAZY, head_delta, measure
from fissure.size.sizer import Sizer
from fissure.size.textindex import TextIndex
from fissure.spans import visible_end, visible_start

_EMPTY = np.zeros(0, dtype=np.int64)
_SEGMENT_BATCH = 1 << 16

_parts = twin("fissure.size._parts")  # PartTable's compiled twin (see _parts.pyx)
compiled_table: Any = None if _parts is None else _parts.PartTable
char_table: Any = None if _parts is None else _parts.CharTable  # LazyTable, characters


class Ruler:
    """Measures spans of ``text`` with ``sizer``."""

    __slots__ = (
        "text",
        "sizer",
        "index",
        "_pos",
        "_cum",
        "_pos_a",
        "_cum_a",
        "_direct",
        "_chars",
        "_built",
        "_counted",
        "_parts",
        "fine",
    )

    def __init__(self, text: str, sizer: Sizer) -> None:
        self.text = text
        self.sizer = sizer
        self.index = TextIndex(text, fine=sizer.fine_seams, protect=sizer.protect)
        self._chars = sizer.name == "chars"
        self._direct = not sizer.additive
        self._pos: list[int] = []
        self._cum: list[int] = []
        self._pos_a = self._cum_a = _EMPTY
        # The seam table costs a pass over the whole text; it is built on first need, and
        # a document packed by lines and paragraphs alone (see PartTable) never needs it.
        self._built = self._chars or self._direct or not text
        self._counted = 0  # characters counted directly while the table is not built
        self._parts = sizer.additive and not self._chars and _whitespace_free(sizer.protect)
        # Parts may end at a fine seam (before punctuation) unless added tokens could
        # straddle one.
        self.fine = sizer.fine_seams and sizer.protect is None

    @property
    def counts_parts(self) -> bool:
        """Whether runs of parts that meet at line starts are measured part by part
        (see :class:`PartTable`), without a pass over the whole document."""
        return self._parts

    def _build(self) -> None:
        self._built = True
        text, sizer = self.text, self.sizer
        seams = self.index.seams
        whole = sizer.prefix_counts(text, self.index) if sizer.has_prefix else None
        if whole is not None:
            self._set(seams, whole)
            return
        step = sizer.segment_chars
        if step > 1 and seams.size > 2:
            # Keep the first seam of every `step`-character bucket: fewer, longer segments.
            bucket = seams // step
            keep = np.empty(seams.size, dtype=bool)
            keep[0] = True
            keep[1:] = bucket[1:] != bucket[:-1]
            keep[-1] = True
            seams = seams[keep]
        # Segments are counted a batch at a time: a list of every segment of an 18 MB line
        # of words would hold millions of strings at once.
        sizes = np.zeros(seams.size, dtype=np.int64)
        for k in range(0, seams.size - 1, _SEGMENT_BATCH):
            pos = seams[k : k + _SEGMENT_BATCH + 1].tolist()
            segments = [text[a:b] for a, b in zip(pos[:-1], pos[1:], strict=True)]
            sizes[k + 1 : k + len(pos)] = sizer.count_many(segments)
        self._set(seams, np.cumsum(sizes))

    def _set(self, seams: np.ndarray, cum: np.ndarray) -> None:
        self._pos_a, self._cum_a = seams.astype(np.int64), cum.astype(np.int64)
        self._pos, self._cum = [], []  # filled on the first scalar lookup

    def _lists(self) -> tuple[list[int], list[int]]:
        """The seam table as Python lists: bisect on a list beats numpy for one value."""
        if not self._built:
            self._build()
        if not self._pos and self._pos_a.size:
            self._pos, self._cum = self._pos_a.tolist(), self._cum_a.tolist()
        return self._pos, self._cum

    def count(self, start: int, end: int) -> int:
        """Size of ``text[start:end]``, exactly as ``sizer.count`` would give it."""
        if end <= start:
            return 0
        if self._chars:
            return end - start
        if self._direct:
            return self.sizer.count(self.text[start:end])
        if not self._built and self._counted + end - start <= 2 * len(self.text):
            # Counting directly until that has cost two passes; then the table pays.
            self._counted += end - start
            return self.sizer.count(self.text[start:end])
        pos, cum = self._lists()
        i = bisect_left(pos, start)
        j = bisect_right(pos, end) - 1
        if i >= j:
            return self.sizer.count(self.text[start:end])
        a, b = pos[i], pos[j]
        n = cum[j] - cum[i]
        if a > start:
            n += self.sizer.count(self.text[start:a])
        if b < end:
            n += self.sizer.count(self.text[b:end])
        return n

    def table(self, bounds: list[int], cap: int | None = None) -> Table:
        """Measures every run of consecutive parts ``[bounds[i], bounds[j+1])`` at once.

        See :class:`SpanTable`: each part boundary gets one head and one tail count, after
        which the size of any run of parts is a sum of two numbers. With ``cap`` (the
        budget the runs are packed under) and parts that meet at line starts, a
        :class:`PartTable` counts each part once instead, without the document's table.
        """
        if self._chars and char_table is not None:
            return char_table(self, bounds)  # type: ignore[no-any-return]
        if self._chars or self._direct:
            return LazyTable(self, bounds)
        if cap is not None and self._parts:
            if compiled_table is not None:
                parts = compiled_table.build(self, bounds, cap, self.sizer.counters(), self.fine)
            else:
                parts = PartTable.build(self, bounds, cap)
            if parts is not None:
                return parts
        if not self._built:
            self._build()
        starts, ends = self.index.trimmed(np.asarray(bounds, dtype=np.int64))
        pos, cum = self._pos_a, self._cum_a
        first = np.searchsorted(pos, starts, side="left")
        last = np.searchsorted(pos, ends, side="right") - 1
        first_c = np.minimum(first, pos.size - 1)
        last_c = np.maximum(last, 0)
        text, text_len = self.text, len(self.text)
        heads = [
            text[s:a] if s < a else ""
            for s, a in zip(
                np.minimum(starts, text_len).tolist(), pos[first_c].tolist(), strict=True
            )
        ]
        tails = [
            text[a:e] if a < e else ""
            for a, e in zip(pos[last_c].tolist(), ends.tolist(), strict=True)
        ]
        count = self.sizer.count_many
        head_n = np.asarray(count(heads), dtype=np.int64)
        tail_n = np.asarray(count(tails), dtype=np.int64)
        a = head_n - cum[first_c]
        bb = cum[last_c] + tail_n
        return SpanTable(
            self,
            starts.tolist(),
            ends.tolist(),
            a.tolist(),
            bb.tolist(),
            first.tolist(),
            last.tolist(),
        )

    def reach(self, start: int, budget: int, limit: int) -> int:
        """A seam ``e <= limit`` up to which ``text[start:e]`` surely fits ``budget``.

        Found by lookup in the prefix sums; ``start`` when no seam qualifies (or for
        sizers measured directly). Callers refine between this and the next seam.
        """
        if self._chars:
            return min(limit, start + budget)
        if self._direct:
            return start
        pos, cum = self._lists()
        if not pos:
            return start
        i = bisect_left(pos, start)
        if i >= len(pos) or pos[i] > limit or pos[i] - start > _FAR:
            return start  # no seam near: counting up to it would cost more than it saves
        head = self.sizer.count(self.text[start : pos[i]])
        if head > budget:
            return start
        j = bisect_right(cum, cum[i] + budget - head, i) - 1
        j = min(j, bisect_right(pos, limit) - 1)
        return pos[j] if j >= i else start

    def next_seam(self, position: int) -> int:
        """The first lookup seam at or after ``position`` (the text's end if none)."""
        if self._chars or self._direct:
            return len(self.text)
        pos, _ = self._lists()
        if not pos:
            return len(self.text)
        i = bisect_left(pos, position)
        return pos[i] if i < len(pos) else len(self.text)

    def total(self) -> int:
        """Size of the whole text."""
        return self.count(0, len(self.text))


class SpanTable:
    """Sizes of runs of consecutive parts, by arithmetic.

    For part ``k``, ``starts[k]``/``ends[k]`` are its trimmed ends. The size of the run
    of parts ``i..j`` (trimmed) is ``a[i] + b[j]``, where ``a[i]`` is the head count up
    to the first seam after ``starts[i]`` minus the prefix count there, and ``b[j]`` the
    prefix count at the last seam before ``ends[j]`` plus the tail count — exact whenever
    that first seam is not past that last seam; otherwise the run is counted directly.
    """

    __slots__ = ("ruler", "starts", "ends", "a", "b", "first", "last")

    def __init__(
        self,
        ruler: Ruler,
        starts: list[int],
        ends: list[int],
        a: list[int] | None,
        b: list[int] | None,
        first: list[int] | None,
        last: list[int] | None,
    ) -> None:
        self.ruler = ruler
        self.starts, self.ends = starts, ends
        self.a, self.b, self.first, self.last = a, b, first, last

    def start(self, i: int) -> int:
        """First visible position at or after part ``i``'s start."""
        return self.starts[i]

    def end(self, j: int) -> int:
        """End of the last visible character before part ``j``'s end."""
        return self.ends[j]

    def fits(self, i: int, j: int, budget: int) -> bool:
        """Whether the trimmed run of parts ``i..j`` fits ``budget``."""
        return self.size(i, j) <= budget

    def sure(self, i: int, budget: int) -> int:
        """The last part ``j`` such that parts ``i..j`` surely fit without measuring
        (``i - 1`` when nothing is sure)."""
        return i - 1

    def size(self, i: int, j: int) -> int:
        """Size of the trimmed run of parts ``i..j`` (inclusive)."""
        s, e = self.starts[i], self.ends[j]
        if s >= e:
            return 0
        a = self.a
        if a is None:
            return self.ruler.count(s, e)
        first = self.first
        if first is not None and first[i] > self.last[j]:  # type: ignore[index]
            return self.ruler.count(s, e)
        return a[i] + self.b[j]  # type: ignore[index]


def _whitespace_free(protect: re.Pattern[str] | None) -> bool:
    """Whether no protected token (an added token like ``[CLS]``) holds whitespace: then
    no seam at whitespace can fall inside one."""
    return protect is None or not any(ch.isspace() for ch in protect.pattern)


class PartTable:
    """The :class:`SpanTable` interface from counting each part once, for parts that meet
    at seams (line starts of visible lines, or after a word): no table of the whole
    document is needed, and a part over the cap is counted only up to it.

    Parts are grouped between seams; each group holds at most one part with visible text
    (blank lines join the part before them). For that part, with ``S..E`` its visible
    text inside the group ``G0..G1``, four sizes are kept: ``one`` (``S..E``), ``lead``
    (``S..G1``), ``tail`` (``G0..E``) and the group's whole size; a run of parts ``i..j``
    is ``lead[i]`` + the whole groups between + ``tail[j]``. Each of them is the part's
    bulk between two inner seams, counted once, plus short heads and tails.
    """

    __slots__ = (
        "ruler",
        "starts",
        "ends",
        "nxt",
        "prv",
        "group",
        "one",
        "lead",
        "tail",
        "whole",
        "g0s",
        "zs",
    )

    def __init__(self, ruler: Ruler) -> None:
        self.ruler = ruler
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.nxt: list[int] = []
        self.prv: list[int] = []
        self.group: list[int] = []
        self.one: list[int] = []
        self.lead: list[int] = []
        self.tail: list[int] = []
        self.whole: list[int] = [0]  # prefix sums of group sizes
        self.g0s: list[int] = []
        self.zs: list[int] = []

    @classmethod
    def build(cls, ruler: Ruler, bounds: list[int], cap: int) -> PartTable | None:
        """The table, or ``None`` when two visible parts meet at a position that is not a
        seam (then a :class:`SpanTable` is needed)."""
        n = len(bounds) - 1
        got = measure(ruler.text, bounds, cap, ruler.sizer.counters(), ruler.fine)
        if got is None:
            return None
        self = cls(ruler)
        starts, ends, self.group, self.one, self.lead, self.tail, self.whole = got[:7]
        self.g0s, self.zs = got[7], got[8]
        text = ruler.text
        # Empty parts borrow the nearest visible part's trimmed ends, as in SpanTable.
        if -1 in starts:
            self.nxt = nxt = [n] * (n + 1)
            for k in range(n - 1, -1, -1):
                nxt[k] = k if starts[k] >= 0 else nxt[k + 1]
            self.prv = prv = [-1] * n
            last = -1
            for k in range(n):
                if starts[k] >= 0:
                    last = k
                prv[k] = last
            beyond = len(text) + 1
            self.starts = [starts[nxt[k]] if nxt[k] < n else beyond for k in range(n)]
            self.ends = [ends[prv[k]] if prv[k] >= 0 else 0 for k in range(n)]
        else:
            self.starts, self.ends = starts, ends
            self.nxt = self.prv = list(range(n))
        return self

    def start(self, i: int) -> int:
        """First visible position at or after part ``i``'s start."""
        return self.starts[i]

    def end(self, j: int) -> int:
        """End of the last visible character before part ``j``'s end."""
        return self.ends[j]

    def sure(self, i: int, budget: int) -> int:
        """The last part ``j`` such that every run ``i..i``, …, ``i..j`` fits (``i - 1``
        when part ``i`` alone does not): the packer's greedy extension, done here."""
        nxt, prv, n = self.nxt, self.prv, len(self.one)
        i2 = nxt[i]
        if i2 >= n:
            return n - 1
        if self._resolved(i2) and self.one[i2] > budget:
            return i2 - 1
        base = self.lead[i2] - self.whole[self.group[i2] + 1]
        whole, group, tail = self.whole, self.group, self.tail
        j = i2
        while j + 1 < n:
            k = prv[j + 1]
            if k != i2 and base + whole[group[k]] + tail[k] > budget:
                break
            j += 1
        return j

    def _resolved(self, k: int) -> bool:
        """Resolve part ``k``'s LAZY ``one``/``lead`` (see parts.sizes); always True."""
        if self.one[k] == LAZY:
            text, count = self.ruler.text, self.ruler.sizer.count
            delta = head_delta(text, self.g0s[k], self.starts[k], self.zs[k], count)
            g = self.group[k]
            self.one[k] = self.tail[k] + delta
            self.lead[k] = self.whole[g + 1] - self.whole[g] + delta
        return True

    def _raw(self, i: int, j: int) -> int:
        i, j = self.nxt[i], self.prv[j]
        if i > j:
            return 0
        self._resolved(i)
        if i == j:
            return self.one[i]
        group = self.group
        return self.lead[i] + self.whole[group[j]] - self.whole[group[i] + 1] + self.tail[j]

    def fits(self, i: int, j: int, budget: int) -> bool:
        """Whether the trimmed run of parts ``i..j`` fits ``budget`` (at most the cap)."""
        return self._raw(i, j) <= budget

    def size(self, i: int, j: int) -> int:
        """Size of the trimmed run of parts ``i..j`` (inclusive)."""
        n = self._raw(i, j)
        if n >= HUGE:
            return self.ruler.count(self.starts[i], self.ends[j])
        return n


_FAR = 1024  # characters: a head longer than this is not worth counting for a lookup


class LazyTable:
    """The :class:`SpanTable` interface for sizers without a count table (characters, or
    a custom function): trimmed ends are found only where they are asked for, and for
    characters the untrimmed length settles most questions without trimming at all."""

    __slots__ = ("ruler", "bounds", "_starts", "_ends", "_chars")

    def __init__(self, ruler: Ruler, bounds: list[int]) -> None:
        self.ruler = ruler
        self.bounds = bounds
        self._starts: dict[int, int] = {}
        self._ends: dict[int, int] = {}
        self._chars = ruler.sizer.name == "chars"

    def start(self, i: int) -> int:
        got = self._starts.get(i)
        if got is None:
            n = len(self.ruler.text)
            got = visible_start(self.ruler.text, self.bounds[i], n)
            got = self._starts[i] = got if got < n else n + 1
        return got

    def end(self, j: int) -> int:
        got = self._ends.get(j)
        if got is None:
            first = self.bounds[0]
            got = visible_end(self.ruler.text, first, self.bounds[j + 1])
            got = self._ends[j] = got if got > first else 0
        return got

    def size(self, i: int, j: int) -> int:
        s, e = self.start(i), self.end(j)
        if s >= e:
            return 0
        return e - s if self._chars else self.ruler.count(s, e)

    def fits(self, i: int, j: int, budget: int) -> bool:
        if self._chars and self.bounds[j + 1] - self.bounds[i] <= budget:
            return True
        return self.size(i, j) <= budget

    def sure(self, i: int, budget: int) -> int:
        if not self._chars:
            return i - 1
        # Untrimmed length bounds the trimmed one: every part ending within the budget fits.
        bounds = self.bounds
        return bisect_right(bounds, bounds[i] + budget, i + 1) - 2


class Table(Protocol):
    """What :meth:`Ruler.table` returns (SpanTable, PartTable or its compiled twin,
    LazyTable): the same questions about runs of parts, answered by lookup, by part or
    lazily."""

    def start(self, i: int) -> int: ...
    def end(self, j: int) -> int: ...
    def fits(self, i: int, j: int, budget: int) -> bool: ...
    def size(self, i: int, j: int) -> int: ...
    def sure(self, i: int, budget: int) -> int: ...
