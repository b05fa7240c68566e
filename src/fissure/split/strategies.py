"""The named strategies, each a setting of the one packer (one module each: ``fixed``,
``recursive``, ``sentence``, ``structural``, ``semantic``, ``hybrid``); this module only
picks one and applies what follows packing (small pieces merged, room for the context,
overlap)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import NamedTuple

from fissure.config import ChunkSettings
from fissure.ranks import START
from fissure.size import Ruler
from fissure.split import levels as lv
from fissure.split import sentence
from fissure.split.breaks import paged_cuts
from fissure.split.fixed import fixed_pieces
from fissure.split.hybrid import hybrid_pieces
from fissure.split.pack import Packer
from fissure.split.post import add_overlap, fit_reserve, merge_small, word_starts
from fissure.split.recursive import char_packer, separator_levels
from fissure.split.runs import Piece, Run
from fissure.split.semantic import Trace, meaning_pieces, semantic_atoms
from fissure.split.structural import LEAF_LEVELS, structural_run
from fissure.types import Block, Embedder


class Split(NamedTuple):
    """The outcome of splitting one document.

    Attributes:
        spans: Chunk spans, trimmed, starts strictly increasing.
        pieces: The packed piece behind each span, in order (overlap only moves a span's
            start); ``pieces[k + 1].cut`` is the boundary that ends span ``k``.
        trace: For ``semantic`` and ``hybrid``: the atoms, distances and threshold.
    """

    spans: list[tuple[int, int]]
    pieces: list[Piece]
    trace: Trace | None = None


def split_spans(
    settings: ChunkSettings,
    ruler: Ruler,
    blocks: Sequence[Block],
    embedder: Embedder | None = None,
    reserve: Callable[[int], int] | None = None,
) -> Split:
    """Split one document's text by ``settings``.

    ``reserve(position)`` is the size of what will be prepended to a chunk that starts
    there (its context); chunks then leave room for it: ``structural`` packs each chunk to
    its room, the other strategies re-split a chunk that turns out too big. The strategies
    that read ``blocks`` (``structural``, ``hybrid``) never run a chunk across a page break
    or a section start of a paged document (:mod:`fissure.split.breaks`).
    """
    budget, overlap, strategy = settings.budget, settings.overlap_tokens, settings.strategy
    chars = settings.char_ceiling  # every strategy keeps within it too (fissure.split.ceiling)
    if strategy == "fixed":
        spans, pieces = fixed_pieces(Packer(ruler, budget, max_chars=chars), overlap)
        return Split(spans, pieces)
    # Pack to leave room for the overlap, then let it grow back to the full budget.
    room = budget - overlap
    levels, hard = _levels(strategy, settings), paged_cuts(blocks)
    packer = Packer(ruler, room, levels, LEAF_LEVELS, hard=hard, max_chars=chars)
    trace = None
    if strategy in ("semantic", "hybrid"):
        if embedder is None:
            raise ValueError(f"strategy {strategy!r} needs an embedder")
        if strategy == "semantic":
            pieces, trace = meaning_pieces(settings, packer, semantic_atoms(packer), embedder)
        else:
            pieces, trace = hybrid_pieces(settings, packer, blocks, embedder)
    else:
        pieces = _greedy(settings, packer, blocks, reserve)
    if reserve is not None and strategy != "structural":
        # Re-split where the context leaves too little room; the parts that makes are
        # held to min_tokens as packing's own are (structural packed with the room).
        pieces = fit_reserve(packer, pieces, reserve)
        pieces = merge_small(replace(packer, reserve=reserve), pieces, settings.min_tokens)
    if overlap <= 0:
        return Split([(p.start, p.end) for p in pieces], pieces, trace)
    units = sentence.sentence_starts(ruler.text) if strategy == "sentence" else None
    spans = add_overlap(
        replace(packer, max_tokens=budget),
        pieces,
        overlap,
        units or (lambda lo, hi: word_starts(ruler.text, lo, hi)),
        reserve,
    )
    return Split(spans, pieces, trace)


def _levels(strategy: str, settings: ChunkSettings) -> Sequence[lv.Cuts]:
    """The text levels a strategy descends through (``semantic`` names its own)."""
    if strategy == "recursive":
        return separator_levels(settings)
    if strategy == "sentence":
        return sentence.LEVELS
    return () if strategy == "semantic" else lv.PROSE


def _greedy(
    settings: ChunkSettings,
    packer: Packer,
    blocks: Sequence[Block],
    reserve: Callable[[int], int] | None,
) -> list[Piece]:
    """``recursive``, ``sentence`` and ``structural``: greedy packing, then small pieces
    merged (``structural`` packs each chunk to leave room for its context)."""
    if settings.strategy == "structural":
        packer = replace(packer, reserve=reserve)
        run = structural_run(packer.text, blocks)
    else:
        run = Run([0, len(packer.text)], START, START)
    fast = char_packer(settings, packer.ruler, packer.max_tokens)
    return merge_small(packer, fast() if fast else packer.run(run), settings.min_tokens)
