"""Hard cuts: positions that no chunk may run across, whatever room is left.

The packer decides sizes; a hard cut only says where a chunk must end. A paged document
(one whose blocks carry ``metadata["page"]``, as PDF blocks do) has three kinds:

- a *page break*: in front of a block that starts on a later page than the block before it
  ends (its sibling in a section, or the section before it). A block that itself goes on
  over the page, a table continued on the next page, is one unit as before: a page break
  inside it is no hard cut.
- a *section start*: in front of every section, so that short sections are not packed into
  one chunk under the first one's breadcrumb.
- a *table end*: after every table, so that what follows it starts a chunk of its own and
  a table's chunk holds the table and what leads into it (its caption, the sentence that
  introduces it), not the next paragraphs: on PDFs from other projects' test corpora
  (``bench.pdf_external``) a table's cell was found with its row and column header for
  0.726 of the questions against 0.705 with the table packed with the prose after it.

Neither comes right after a heading: a heading opens what follows it, a subsection
(``2 Usage`` then ``2.1 Scope``: the chunk's breadcrumb is then ``2 Usage``, the section
that holds all of it) or the first paragraph, even when that is on the next page; so a
heading is never a chunk of its own.

Each hard cut has the boundary a chunk that starts there gets (``chunk.metadata["cut"]`` of
the chunk before it): ``page``, or the block's own (the section's, or after a table the
next block's) when it ranks higher.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from typing import Any

from fissure.ranks import HEADINGS, Boundary, boundary
from fissure.types import Block

PAGE = boundary("page")


class HardCuts:
    """Sorted positions that no chunk may run across, each with its boundary.

    A span ``[start, end)`` *crosses* a hard cut ``p`` when ``start < p < end``: a chunk may
    end where the cut is and the next one start there.
    """

    __slots__ = ("positions", "boundaries")

    def __init__(self, boundaries: Mapping[int, Boundary]) -> None:
        self.boundaries = dict(boundaries)
        self.positions = sorted(self.boundaries)

    def __len__(self) -> int:
        return len(self.positions)

    def next_after(self, position: int) -> int | None:
        """The first hard cut after ``position``, or ``None``."""
        k = bisect_right(self.positions, position)
        return self.positions[k] if k < len(self.positions) else None

    def last_until(self, position: int) -> int | None:
        """The last hard cut at or before ``position``, or ``None``."""
        k = bisect_right(self.positions, position)
        return self.positions[k - 1] if k else None

    def crosses(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` runs across a hard cut."""
        k = bisect_right(self.positions, start)
        return k < len(self.positions) and self.positions[k] < end

    def at(self, position: int) -> bool:
        """Whether a hard cut is at ``position``."""
        k = bisect_left(self.positions, position)
        return k < len(self.positions) and self.positions[k] == position

    def cut(self, position: int, cut: Boundary) -> Boundary:
        """The boundary in front of a chunk that starts at ``position``: the hard cut's
        there when it outranks ``cut``, else ``cut``."""
        hard = self.boundaries.get(position)
        return hard if hard is not None and hard.rank < cut.rank else cut


def paged_cuts(blocks: Sequence[Block]) -> HardCuts | None:
    """The page breaks, section starts and table ends of a paged document (see the module),
    or ``None`` for a document without pages or without such a cut."""
    if not blocks or "page" not in blocks[0].metadata:
        return None
    found: dict[int, Boundary] = {}
    lists: list[Sequence[Block]] = [blocks]
    while lists:  # sections nest; a stack, not recursion, however deep they go
        siblings = lists.pop()
        previous: Block | None = None
        for block in siblings:
            if previous is not None:
                here = _cut_between(previous, block)
                if here is not None:
                    found[block.start] = here
            if block.kind in HEADINGS and block.children:
                lists.append(block.children)
            previous = block
    return HardCuts(found) if found else None


def _cut_between(previous: Block, block: Block) -> Boundary | None:
    """The hard cut in front of ``block``, after its sibling ``previous``, if any."""
    if previous.kind == "heading":
        return None  # a heading opens what follows it, on its page or the next one
    section = block.kind == "section" or previous.kind == "table"
    turned = _page(block) != _last_page(previous)
    if not section and not turned:
        return None
    own = block.boundary
    return own if not turned or own.rank < PAGE.rank else PAGE


def _page(block: Block) -> Any:
    return block.metadata.get("page")


def _last_page(block: Block) -> Any:
    """The page where ``block`` ends: that of its last descendant that has one."""
    page = _page(block)
    while block.children:
        block = block.children[-1]
        page = _page(block) if "page" in block.metadata else page
    return page
