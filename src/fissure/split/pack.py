"""The one budgeted splitter: descend the structure, pack parts greedily, never overflow.

A part that fits the budget is a unit. Adjacent units are packed into one chunk while the
chunk still fits; a part that does not fit is replaced by its children (Block children
first, then the next finer text level), and a part with nothing finer left is cut at the
last grapheme boundary that fits. Every size is exact (see :class:`~fissure.size.Ruler`),
so no chunk exceeds ``max_tokens`` whatever the input; nor ``max_chars`` characters, a span
over that being split as one over budget is (:mod:`fissure.split.ceiling`). A chunk never
runs across a hard cut (:mod:`fissure.split.breaks`: a page break, a section start in a
paged document): a part that holds one is split like a part over budget, and packing stops
in front of it.

A :class:`Packer` is one frozen configuration (budget, text levels, reserve); a caller
that needs another budget makes another with :func:`dataclasses.replace`. The state of one
packing lives in a private object made per :meth:`Packer.run`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from fissure.ranks import CHAR, GAP, Boundary
from fissure.size import Ruler
from fissure.size.ruler import Table
from fissure.spans import trim
from fissure.split.breaks import HardCuts
from fissure.split.ceiling import capped, extend
from fissure.split.levels import Cuts, is_grapheme_break
from fissure.split.runs import Piece, Run, block_run
from fissure.split.windowed import WINDOW, WindowedTable
from fissure.types import Block

# Units that a chunk may cut through only when the unit alone is over budget. A class
# splitting into its methods is structure, not damage; a class with nothing inside to
# split by is a unit like a function.
# Parts split inside parts this deep have their Block children ignored and are cut by text
# levels: packing recurses once per level, and a Block tree thousands deep (HTML lists
# nested without items) would exhaust the stack.
MAX_NESTING = 128

ATOMIC = frozenset({"code", "function", "method", "row", "header", "front_matter", "cell"})
WHOLE_WHEN_LEAF = frozenset({"class", "struct", "interface", "impl", "trait", "enum"})


@dataclass(frozen=True, slots=True)
class Packer:
    """How to pack the parts of one document under a budget (a frozen configuration).

    Args:
        ruler: Exact span sizes of the document.
        max_tokens: Hard upper bound for every chunk.
        levels: Text levels to descend through, strongest first; characters come last.
        leaf_levels: Levels for the inside of a structural leaf block, by block kind.
        reserve: When set, ``reserve(start)`` is the size of what will be put in front of
            a chunk that starts at ``start`` (a table's header row, a breadcrumb), and such
            a chunk is packed to ``max_tokens - reserve(start)``. A unit that fits the
            budget only without its reserve stays whole, as a chunk of its own.
        hard: Positions no chunk may run across (:class:`~fissure.split.breaks.HardCuts`).
        max_chars: Hard upper bound for every chunk in characters (``None``: none).
    """

    ruler: Ruler
    max_tokens: int
    levels: Sequence[Cuts] = ()
    leaf_levels: Mapping[str, Sequence[Cuts]] = field(default_factory=dict)
    reserve: Callable[[int], int] | None = None
    hard: HardCuts | None = None
    max_chars: int | None = None

    @property
    def text(self) -> str:
        """The document's text."""
        return self.ruler.text

    # ------------------------------------------------------------------ measuring

    def trim(self, start: int, end: int) -> tuple[int, int]:
        """The span without leading and trailing whitespace (:func:`fissure.spans.trim`,
        the policy every chunk is cut by)."""
        return trim(self.ruler.text, start, end)

    def size(self, start: int, end: int) -> int:
        """Size of the trimmed span."""
        s, e = trim(self.ruler.text, start, end)
        return self.ruler.count(s, e)

    def fits(self, start: int, end: int) -> bool:
        """Whether the trimmed span fits the budget (less the reserve at its start) and
        the character ceiling."""
        s, e = trim(self.ruler.text, start, end)
        if self.max_chars is not None and e - s > self.max_chars:
            return False
        return self.ruler.count(s, e) <= self.room(s)

    def within(self, start: int, end: int) -> bool:
        """Whether the trimmed span keeps within the character ceiling."""
        if self.max_chars is None or end - start <= self.max_chars:
            return True
        s, e = trim(self.ruler.text, start, end)
        return e - s <= self.max_chars

    def table(self, bounds: list[int], cap: int | None = None) -> Table:
        """Sizes of the runs of these parts (:meth:`Ruler.table`, ``cap`` the budget they
        are packed under), a run fitting only within the character ceiling too."""
        return capped(self.ruler.table(bounds, cap=cap), bounds, self.max_chars)

    def crosses(self, start: int, end: int) -> bool:
        """Whether the trimmed span runs across a hard cut."""
        if self.hard is None:
            return False
        s, e = trim(self.ruler.text, start, end)
        return self.hard.crosses(s, e)

    def room(self, start: int) -> int:
        """The budget of a chunk starting at ``start``: ``max_tokens`` less the reserve
        there (a reserve over half the budget is not honoured, as in ``fit_reserve``)."""
        if self.reserve is None:
            return self.max_tokens
        extra = self.reserve(start)
        return self.max_tokens if extra > self.max_tokens // 2 else self.max_tokens - extra

    # ------------------------------------------------------------------ packing

    def run(self, run: Run) -> list[Piece]:
        """Pack ``run`` and return the pieces, in order."""
        packing = _Packing(self)
        if len(run.bounds) > 1:
            packing.pack(run)
        return packing.pieces

    def expand(self, run: Run, k: int, by_blocks: bool = True) -> Run | None:
        """Part ``k`` of ``run`` as a run of finer parts (its Block children when
        ``by_blocks``, else its text levels), or ``None`` if only characters remain."""
        start, end, cut = run.bounds[k], run.bounds[k + 1], run.cut(k)
        block = run.blocks[k] if run.blocks else None
        if block is not None and block.children and by_blocks:
            return block_run(block.children, start, end, cut)
        levels, depth = run.levels, run.depth
        if block is not None:
            levels, depth = self.leaf_levels.get(block.kind, self.levels), 0
        elif levels is None:
            levels = self.levels
        index = self.ruler.index
        for d in range(depth, len(levels)):
            cuts = levels[d].find(index, start, end)
            if cuts:
                return Run([start, *cuts, end], cut, levels[d].boundary, levels, d + 1)
        return None

    def largest_fit(self, start: int, limit: int) -> int:
        """The furthest grapheme boundary ``e <= limit`` with ``text[start:e]`` in budget.

        Starts from what the lookup table guarantees, gallops forward until a probe no
        longer fits, then bisects: the work is proportional to the chunk found, never to
        the rest of the text. Always advances by at least one character. Never goes past
        the character ceiling (an ``e`` beyond it is a grapheme boundary only by chance).
        """
        whole = limit
        if self.max_chars is not None and limit - start > self.max_chars:
            limit = start + self.max_chars
        lo = max(self.ruler.reach(start, self.room(start), limit), start)
        if lo > start and not self.fits(start, lo):  # lookup drift on an odd sizer
            lo = start
        hi, step = lo, max(16, lo - start)
        while hi < limit:
            hi = min(limit, hi + step)
            if not self.fits(start, hi):
                break
            lo, step = hi, step * 2
        else:
            if limit == whole:
                return limit
            lo = hi = limit
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.fits(start, mid):
                lo = mid
            else:
                hi = mid
        e = lo
        text = self.ruler.text
        while e > start and not is_grapheme_break(text, e):
            e -= 1
        return e if e > start else start + 1


class _Packing:
    """One run of a :class:`Packer`: the pieces so far and the parts being split."""

    __slots__ = ("packer", "text", "ruler", "max_tokens", "pieces", "_inside", "_nesting")

    def __init__(self, packer: Packer) -> None:
        self.packer = packer
        self.text = packer.ruler.text
        self.ruler = packer.ruler
        self.max_tokens = packer.max_tokens
        self.pieces: list[Piece] = []
        self._inside: list[str] = []  # atomic units being cut through, outermost first
        self._nesting: list[int] = []  # parts being split, outermost first (see MAX_NESTING)

    def pack(self, run: Run, table: Table | None = None) -> None:
        if table is None:
            table = self._measure(run)
            if table is None:
                return
        fits, full, n = table.fits, self.max_tokens, len(run.bounds) - 1
        room, hard = self.packer.room, self.packer.hard
        reserved = self.packer.reserve is not None
        carry: int | None = None  # a small group waiting to join the next part's first piece
        i = 0
        while i < n:
            budget = room(table.start(i)) if reserved else full
            # Packing stops in front of the first hard cut after the part's start; a part
            # that runs across it is split, as one over budget is.
            stop = hard.next_after(table.start(i)) if hard is not None else None
            if stop is not None and table.end(i) > stop:
                self._split_part(run, i, carry)
                carry = None
                i += 1
                continue
            if not fits(i, i, budget):
                if budget < full and fits(i, i, full):
                    # Whole without its reserve, cut with it: whole it stays, on its own
                    # (the chunker then leaves its context out and says so).
                    if carry is not None:
                        self._emit(table, run, carry, i - 1)
                        carry = None
                    self._emit(table, run, i, i)
                    i += 1
                    continue
                self._split_part(run, i, carry)
                carry = None
                i += 1
                continue
            j = max(i, table.sure(i, budget))
            if stop is None:
                j = extend(table, i, j, n, budget)
            else:
                while j > i and table.end(j) > stop:
                    j -= 1
                while j + 1 < n and table.end(j + 1) <= stop and fits(i, j + 1, budget):
                    j += 1
            size = table.size(i, j)
            if (
                j + 1 < n
                and 0 < 2 * size < budget
                and (stop is None or table.end(j + 1) <= stop)
                and not fits(j + 1, j + 1, budget)
            ):
                carry = i  # too small to stand alone before a part that must be split
                i = j + 1
                continue
            self._emit(table, run, i, j)
            i = j + 1

    def _emit(self, table: Table, run: Run, i: int, j: int) -> None:
        s, e = table.start(i), table.end(j)
        if s < e:
            self._add(s, e, run.cut(i), table.size(i, j))

    def _add(self, start: int, end: int, cut: Boundary, size: int) -> None:
        """One piece; one that starts at a hard cut is named by it (``page``)."""
        hard = self.packer.hard
        if hard is not None:
            cut = hard.cut(start, cut)
        self.pieces.append(Piece(start, end, cut, size, self._damage()))

    def _measure(self, run: Run) -> Table | None:
        """The table to pack ``run`` by; ``None`` when ``run``, one part, was packed here."""
        bounds, room = run.bounds, self.packer.room
        if (
            len(bounds) == 2
            and run.blocks is None
            and self.ruler.counts_parts
            and bounds[1] - bounds[0] > 4 * self.max_tokens  # a shorter one likely fits
            and not self.packer.crosses(bounds[0], bounds[1])
        ):
            # One part: measure it by the finer parts it is split into if it does not
            # fit, so that an oversized document is not counted twice.
            child = self._expand(run, 0)
            if child is not None and len(child.bounds) > WINDOW:
                # Too many parts for one table: measure the part itself, up to the budget,
                # and pack its parts window by window if it is over.
                table = self.packer.table(bounds, self.max_tokens)
                if table.fits(0, 0, room(table.start(0))):
                    return table
                self.pack(child)
                return None
            if child is not None:
                table = self.packer.table(child.bounds, self.max_tokens)
                last = len(child.bounds) - 2
                if not table.fits(0, last, room(table.start(0))):
                    self.pack(child, table)
                    return None
                self._emit(table, child, 0, last)
                return None
        return self._table(bounds)

    def _table(self, bounds: list[int]) -> Table:
        """Sizes of the runs of these parts: one table, or a window of one over a long run
        (see :mod:`fissure.split.windowed`)."""
        if len(bounds) > WINDOW:
            windowed = WindowedTable(self.ruler, bounds, self.max_tokens, WINDOW)
            return capped(windowed, bounds, self.packer.max_chars)
        return self.packer.table(bounds, self.max_tokens)

    def _expand(self, run: Run, k: int) -> Run | None:
        return self.packer.expand(run, k, len(self._nesting) < MAX_NESTING)

    def _split_part(self, run: Run, k: int, carry: int | None) -> None:
        """Pack part ``k``, which is over budget, by its finer parts.

        ``carry`` (a part index before ``k``) starts a small group that did not fit with
        part ``k`` whole: it joins the first finer piece when that fits, and otherwise
        becomes a chunk of its own.
        """
        child = self._expand(run, k)
        if child is not None and child.blocks and _peel_comment(self.packer, child):
            second = child.blocks[1]
            child = Run(
                [child.bounds[0], child.bounds[1], child.bounds[-1]],
                child.lead,
                [child.lead, second.boundary if second else GAP],
                child.levels,
                child.depth,
                [child.blocks[0], None],
            )
        if carry is not None:
            first_end = child.bounds[1] if child is not None else run.bounds[k]
            if child is not None and self.packer.fits(run.bounds[carry], first_end):
                child.bounds[0], child.lead = run.bounds[carry], run.cut(carry)
            else:
                s, e = trim(self.text, run.bounds[carry], run.bounds[k])
                if s < e:
                    self._add(s, e, run.cut(carry), self.ruler.count(s, e))
        damaged = _atomic(run.blocks[k] if run.blocks else None)
        if damaged:
            self._inside.append(damaged)
        self._nesting.append(k)
        if child is not None:
            self.pack(child)
        else:
            self._cut_chars(run.bounds[k], run.bounds[k + 1], run.cut(k))
        self._nesting.pop()
        if damaged:
            self._inside.pop()

    def _cut_chars(self, start: int, end: int, cut: Boundary) -> None:
        text, largest_fit, hard = self.text, self.packer.largest_fit, self.packer.hard
        start, end = trim(text, start, end)
        while start < end:
            limit = hard.next_after(start) if hard is not None else None
            stop = largest_fit(start, end if limit is None or limit > end else limit)
            s, e = trim(text, start, stop)
            if s < e:
                self._add(s, e, cut, self.ruler.count(s, e))
            cut = CHAR
            start, _ = trim(text, stop, end)

    def _damage(self) -> str | None:
        return self._inside[0] if self._inside else None


def _peel_comment(packer: Packer, child: Run) -> bool:
    """Whether a unit opens with its leading comment and the rest of it fits alone: then
    the one cut goes between the comment and the definition, not inside the body."""
    first = child.blocks[0] if child.blocks else None
    return (
        first is not None
        and first.kind == "comment"
        and len(child.bounds) > 3
        and packer.fits(child.bounds[1], child.bounds[-1])
    )


def _atomic(block: Block | None) -> str | None:
    """The block's kind if cutting inside it damages a unit, else ``None``."""
    if block is None:
        return None
    if block.kind in ATOMIC or (block.kind in WHOLE_WHEN_LEAF and not block.children):
        return block.kind
    return None
