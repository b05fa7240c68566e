"""Build extracted text and its Block tree together, for formats whose text fissure writes.

HTML and DOCX have no text of their own to index into: fissure writes one (paragraphs
apart by a blank line, table rows and list items one per line) and, as it writes, records
where every block starts and ends. Sections follow the heading hierarchy, whatever the
nesting of the source. Frames close in post-order, so the tree is built without recursion
however deep the source is. Past :data:`fissure.limits.MAX_BLOCKS` blocks the text is still
written but no more blocks are made (``capped`` says so).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fissure import limits
from fissure.types import Block

BLOCK_GAP = "\n\n"
LINE_GAP = "\n"


@dataclass(slots=True)
class _Frame:
    kind: str
    level: int
    title: str | None
    metadata: dict[str, Any]
    gap: str = BLOCK_GAP  # what separates the block from its neighbours
    depth: int = 0  # heading depth, for sections
    silent: bool = False  # opened past the block cap: makes no block
    start: int | None = None
    children: list[Block] = field(default_factory=list)


class Outline:
    """Writes text block by block and returns it with its Block tree.

    Example:
        >>> out = Outline()
        >>> out.heading(1, "Intro", level=1)
        >>> out.leaf("paragraph", "Hello.", level=7)
        >>> text, blocks = out.finish()
        >>> text
        'Intro\\n\\nHello.'
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._pos = 0
        self._gap = ""
        self._stack: list[_Frame] = [_Frame("root", 0, None, {})]
        self._unstarted = 1  # frames from this index on have written nothing yet
        self._budget = limits.BlockBudget()

    @property
    def capped(self) -> bool:
        """Whether blocks were left out past ``MAX_BLOCKS`` (their text is written)."""
        return self._budget.capped

    @property
    def depth(self) -> int:
        """How many blocks are open (sections, lists, items, tables)."""
        return len(self._stack) - 1

    def heading(
        self,
        depth: int,
        title: str,
        *,
        level: int,
        metadata: dict[str, Any] | None = None,
        text: str | None = None,
    ) -> None:
        """Start a section: close open sections as deep or deeper, write the heading.

        ``text`` is the heading as printed when it differs from the section's ``title``
        (a PDF's outline names its sections); ``""`` starts the section without writing a
        heading. Inside an open list or table a heading cannot start a section without
        breaking the nesting, so there it is written as a paragraph.
        """
        if not title:
            return
        written = title if text is None else text
        meta = dict(metadata or {})
        if self._stack[-1].kind not in ("root", "section"):
            self.leaf("paragraph", written, level=level, metadata=meta)
            return
        while self._stack[-1].kind == "section" and self._stack[-1].depth >= depth:
            self.close()
        self.open("section", level=level, title=title, metadata=meta)
        self._stack[-1].depth = depth
        self.leaf("heading", written, level=level, metadata=meta)

    def leaf(
        self,
        kind: str,
        text: str,
        *,
        level: int,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        gap: str = BLOCK_GAP,
    ) -> None:
        """Write one block with no children (paragraph, code, row, heading …)."""
        if not text:
            return
        self.request_gap(gap)
        start = self._write(text)
        if self._budget.take():
            self._stack[-1].children.append(
                Block(kind, start, self._pos, level, title, (), dict(metadata or {}))
            )

    def open(
        self,
        kind: str,
        *,
        level: int,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        gap: str = BLOCK_GAP,
    ) -> None:
        """Open a block whose children follow (section, table, list, item)."""
        self.request_gap(gap)
        frame = _Frame(kind, level, title, dict(metadata or {}), gap)
        frame.silent = not self._budget.take()
        self._stack.append(frame)

    def write(self, text: str, *, gap: str = "") -> None:
        """Write text that belongs to the open block but is no block itself (a bullet)."""
        if text:
            self.request_gap(gap)
            self._write(text)

    def close(self) -> None:
        """Close the innermost open block; an empty one leaves no block behind."""
        frame = self._stack.pop()
        self._unstarted = min(self._unstarted, len(self._stack))
        if frame.silent:
            self._stack[-1].children.extend(frame.children)
            if frame.start is not None:
                self.request_gap(frame.gap)
            return
        if frame.start is None:
            return
        block = Block(
            frame.kind,
            frame.start,
            self._pos,
            frame.level,
            frame.title,
            tuple(frame.children),
            frame.metadata,
        )
        self._stack[-1].children.append(block)
        self.request_gap(frame.gap)

    def request_gap(self, gap: str) -> None:
        """Ask for at least ``gap`` before the next text (the longer request wins)."""
        if len(gap) > len(self._gap):
            self._gap = gap

    def finish(self) -> tuple[str, tuple[Block, ...]]:
        """Close everything; the text and its top-level blocks."""
        while len(self._stack) > 1:
            self.close()
        return "".join(self._parts), tuple(self._stack[0].children)

    def _write(self, text: str) -> int:
        if self._pos and self._gap:
            self._parts.append(self._gap)
            self._pos += len(self._gap)
        self._gap = ""
        for frame in self._stack[self._unstarted :]:
            frame.start = self._pos
        self._unstarted = len(self._stack)
        start = self._pos
        self._parts.append(text)
        self._pos += len(text)
        return start
