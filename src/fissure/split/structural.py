"""``structural`` (the default): the format's Block tree, descended by the one packer."""

from __future__ import annotations

from collections.abc import Sequence

from fissure.ranks import START
from fissure.split import levels as lv
from fissure.split.runs import Run, block_run
from fissure.types import Block

# Inside a structural leaf, code and tables are cut by lines before words; prose by
# paragraphs, lines and sentences.
LEAF_LEVELS: dict[str, Sequence[lv.Cuts]] = {
    kind: lv.CODE
    for kind in (
        "code",
        "function",
        "method",
        "class",
        "struct",
        "interface",
        "impl",
        "trait",
        "enum",
        "module",
        "namespace",
        "imports",
        "table",
        "row",
        "rows",
        "header",
        "cell",
        "front_matter",
        "directive",
        "output",
        "key",
        "document",
        "statements",
    )
}


def structural_run(text: str, blocks: Sequence[Block]) -> Run:
    """The top-level run: the blocks and the gaps between them, or the whole text."""
    if blocks:
        return block_run(blocks, 0, len(text), START)
    return Run([0, len(text)], START, START)
