"""``hybrid``: small structural atoms, merged or kept apart by meaning and structure.

Each boundary between two atoms scores what its rank is worth (:data:`WORTH`: a chapter
beats a paragraph, a word is a poor place to cut), less the cost of one more chunk, plus
half its semantic score (clipped to ±1): meaning tips the balance at a boundary, it does
not overrule a heading. The cuts are then chosen by the dynamic programme of
:mod:`fissure.split.semantic`. A hard cut (:mod:`fissure.split.breaks`: a page break, a
section start in a paged document) scores :data:`HARD`, so it is always taken.
"""

from __future__ import annotations

from collections.abc import Sequence

from fissure.config import ChunkSettings
from fissure.ranks import Rank
from fissure.split import levels as lv
from fissure.split.pack import Packer
from fissure.split.runs import Piece
from fissure.split.semantic import Trace, meaning_pieces
from fissure.split.structural import structural_run
from fissure.types import Block, Embedder

# How much a cut of each rank is worth (a chunk costs CHUNK_COST).
WORTH: dict[int, float] = {
    Rank.TITLE: 1.2,
    Rank.H1: 1.1,
    Rank.H2: 1.0,
    Rank.H3: 0.9,
    Rank.H4: 0.8,
    Rank.H5: 0.7,
    Rank.H6: 0.6,
    Rank.BLOCK: 0.5,
    Rank.GROUP: 0.4,
    Rank.GAP: 0.3,
    Rank.LINE: 0.2,
    Rank.SENTENCE: 0.1,
    Rank.WORD: -0.5,
    Rank.CHAR: -1.0,
}
CHUNK_COST = 0.5
SEMANTIC_WEIGHT = 0.5  # the semantic score (clipped to ±1) counts half
HARD = 100.0  # beyond what any other choice of cuts can gain: always cut there


def structure_score(rank: int) -> float:
    """How much a structural boundary of ``rank`` is worth as a cut."""
    return WORTH[rank]


def blend(atom: Piece, semantic: float) -> float:
    """The score of the cut in front of ``atom``, given its semantic score."""
    return (
        structure_score(atom.cut.rank)
        - CHUNK_COST
        + SEMANTIC_WEIGHT * max(-1.0, min(1.0, semantic))
    )


def hybrid_pieces(
    settings: ChunkSettings, packer: Packer, blocks: Sequence[Block], embedder: Embedder
) -> tuple[list[Piece], Trace]:
    """Structural atoms of up to ``atom_tokens``, joined where meaning and structure say."""
    atom_budget = min(packer.max_tokens, settings.atom_tokens)
    hard = packer.hard
    atomiser = Packer(
        packer.ruler,
        atom_budget,
        lv.PROSE,
        packer.leaf_levels,
        hard=hard,
        max_chars=packer.max_chars,
    )
    atoms = atomiser.run(structural_run(packer.text, blocks))
    if hard is None:
        return meaning_pieces(settings, packer, atoms, embedder, blend)

    def scored(atom: Piece, semantic: float) -> float:
        return HARD if hard.at(atom.start) else blend(atom, semantic)

    return meaning_pieces(settings, packer, atoms, embedder, scored)
