"""What the packer works on and what it makes: a :class:`Run` of consecutive parts (and
:func:`block_run`, the run of a Block tree's level) and the :class:`Piece` packed from it
(see :mod:`fissure.split.pack`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from fissure.ranks import GAP, Boundary, boundary
from fissure.split.levels import Cuts
from fissure.types import Block


@dataclass(slots=True)
class Run:
    """Consecutive parts tiling ``[bounds[0], bounds[-1])``.

    Attributes:
        bounds: Part boundaries; part ``k`` is ``[bounds[k], bounds[k+1])``.
        lead: The boundary in front of the first part.
        cuts: The boundary in front of each later part: one for all, or a list with one
            per part (index 0 unused).
        levels: Text levels for splitting a part further (``None``: by block kind, else
            the packer's default).
        depth: Index into ``levels`` where a part's further splitting starts.
        blocks: The structural block of each part, or ``None``.
    """

    bounds: list[int]
    lead: Boundary
    cuts: Boundary | list[Boundary]
    levels: Sequence[Cuts] | None = None
    depth: int = 0
    blocks: list[Block | None] | None = None

    def cut(self, k: int) -> Boundary:
        """The boundary in front of part ``k``."""
        if k == 0:
            return self.lead
        return self.cuts[k] if isinstance(self.cuts, list) else self.cuts


class Piece(NamedTuple):
    """A packed chunk span, trimmed of surrounding whitespace, and its size.

    ``cut`` is the boundary in front of the piece (its name and rank, see
    :mod:`fissure.ranks`). ``oversize`` names the kind of unit (``code``, ``function``,
    ``row`` …) that this piece cuts through because that unit alone is over budget. (A
    named tuple: immutable and made once per chunk, several times cheaper than a frozen
    dataclass.)
    """

    start: int
    end: int
    cut: Boundary
    size: int
    oversize: str | None = None
    reason: str | None = None


def block_run(blocks: Sequence[Block], start: int, end: int, lead: Boundary) -> Run:
    """A run tiling ``[start, end)``: the blocks, with the gaps between them as parts.

    The boundary in front of a block is the block's (:attr:`Block.boundary`: ``section 2``,
    ``function``, ranked by :mod:`fissure.ranks`); the one in front of a gap is ``gap``.
    """
    bounds: list[int] = [start]
    owners: list[Block | None] = []
    cuts: list[Boundary] = []  # in front of each part; the first one's is ``lead``
    pos = start
    for block in blocks:  # (comparisons, not max/min: this runs for every block)
        b_start = block.start if block.start > pos else pos
        b_end = block.end if block.end < end else end
        if b_end <= b_start:
            continue
        if b_start > pos:
            owners.append(None)
            bounds.append(b_start)
            cuts.append(GAP)
        owners.append(block)
        bounds.append(b_end)
        cuts.append(boundary(block.kind, block.level))
        pos = b_end
    if pos < end:
        owners.append(None)
        bounds.append(end)
        cuts.append(GAP)
    cuts[:1] = [lead]  # the first part's boundary (or the only one, of no part)
    return Run(bounds, lead, cuts, None, 0, owners)
