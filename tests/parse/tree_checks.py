"""Block-tree invariants shared by the parser tests (imported as a plain module)."""

from __future__ import annotations

from collections.abc import Iterator

from fissure.types import Block, Document


def walk(blocks: tuple[Block, ...]) -> Iterator[Block]:
    """Every block, depth first, without recursion."""
    stack = list(reversed(blocks))
    while stack:
        block = stack.pop()
        yield block
        stack.extend(reversed(block.children))


def assert_valid_tree(document: Document) -> None:
    """Offsets inside the text; children inside their parent, sorted and disjoint."""
    _assert_siblings(document.blocks, 0, len(document.text), "document")
    for block in walk(document.blocks):
        assert isinstance(block.level, int), block
        assert isinstance(block.kind, str) and block.kind, block
        _assert_siblings(block.children, block.start, block.end, block.kind)


def _assert_siblings(blocks: tuple[Block, ...], start: int, end: int, where: str) -> None:
    cursor = start
    for block in blocks:
        assert start <= block.start < block.end <= end, (where, block, start, end)
        assert block.start >= cursor, (where, "overlap or unsorted", block)
        cursor = block.end


def titled(document: Document, kind: str) -> list[str | None]:
    """Titles of every block of ``kind``, in document order."""
    return [b.title for b in walk(document.blocks) if b.kind == kind]


def depth(blocks: tuple[Block, ...]) -> int:
    """Deepest nesting of the tree (0 for no blocks)."""
    best, stack = 0, [(b, 1) for b in blocks]
    while stack:
        block, level = stack.pop()
        best = max(best, level)
        stack.extend((child, level + 1) for child in block.children)
    return best
