"""The named strategies: settings of the one packer, plus flat windows for ``fixed``."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from fissure._compiled import twin
from fissure.config import ChunkSettings
from fissure.size import Ruler
from fissure.split import levels as lv
from fissure.split import semantic as sm
from fissure.split.pack import Packer, Piece, Run, block_run
from fissure.split.post import add_overlap, fit_reserve, merge_small, word_starts
from fissure.split.semantic import Trace
from fissure.split.separators import DEFAULT, preset
from fissure.types import Block, Embedder

_split = twin("fissure.split._split")  # None: the Python packer does it all
CharPacker: Any = None if _split is None else _split.CharPacker

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


def separator_levels(settings: ChunkSettings) -> tuple[lv.Cuts, ...]:
    """The recursive strategy's levels: given separators, a language preset or the default."""
    return _separator_levels(settings.separators, settings.separators_are_regex, settings.language)


@lru_cache(maxsize=64)
def _separator_levels(
    separators: tuple[str, ...] | None, are_regex: bool, language: str | None
) -> tuple[lv.Cuts, ...]:
    # Keyed by the three fields alone: hashing the whole settings per document costs more.
    if separators is not None:
        seps, regex = separators, are_regex
    elif language:
        seps, regex = preset(language), True
    else:
        seps, regex = DEFAULT, False
    return tuple(lv.separator_cuts(s, regex=regex) for s in seps if s)


def plan(
    settings: ChunkSettings, text: str, blocks: Sequence[Block]
) -> tuple[Run, Sequence[lv.Cuts]]:
    """The top-level run and default levels for a strategy other than ``fixed``."""
    whole = Run([0, len(text)], "start", "start")
    if settings.strategy == "recursive":
        return whole, separator_levels(settings)
    if settings.strategy == "sentence":
        return whole, (lv.SENTENCE, lv.WORD)
    if blocks:
        return block_run(blocks, 0, len(text), "start"), lv.PROSE
    return whole, lv.PROSE


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
    its room, the other strategies re-split a chunk that turns out too big.
    """
    text, budget, overlap = ruler.text, settings.budget, settings.overlap_tokens
    packer = Packer(ruler, budget, (), LEAF_LEVELS)
    if settings.strategy == "fixed":
        pieces = fixed_windows(packer)
        spans = fixed_overlap(packer, pieces, overlap)
        return Split(spans, [Piece(s, e, "budget", packer.ruler.count(s, e)) for s, e in spans])
    # Pack to leave room for the overlap, then let it grow back to the full budget.
    room = budget - overlap
    trace = None
    if settings.strategy in ("semantic", "hybrid"):
        if embedder is None:
            raise ValueError(f"strategy {settings.strategy!r} needs an embedder")
        pieces, trace = semantic_pieces(settings, packer, blocks, embedder, room)
    else:
        run, levels = plan(settings, text, blocks)
        packer.levels = tuple(levels)
        packer.max_tokens = room
        if settings.strategy == "structural":
            packer.reserve = reserve  # packed to leave room for it, not re-split after
        fast = char_packer(settings, ruler, room)
        pieces = merge_small(packer, fast() if fast else packer.run(run), settings.min_tokens)
        packer.reserve = None
    if reserve is not None and settings.strategy != "structural":
        pieces = fit_reserve(packer, pieces, reserve, room)
    if overlap <= 0:
        return Split([(p.start, p.end) for p in pieces], pieces, trace)
    packer.max_tokens = budget
    spans = add_overlap(packer, pieces, overlap, _units(settings, text), reserve)
    return Split(spans, pieces, trace)


def char_packer(
    settings: ChunkSettings, ruler: Ruler, budget: int
) -> Callable[[], list[Piece]] | None:
    """The compiled packer (``_split``) where it applies and was built: ``recursive``
    by characters with literal separators. It makes exactly the Python packer's pieces."""
    if CharPacker is None or settings.strategy != "recursive" or ruler.sizer.name != "chars":
        return None
    literal = _literal_levels(settings.separators, settings.separators_are_regex, settings.language)
    if literal is None:
        return None
    return CharPacker(ruler.text, *literal, budget, Piece).run  # type: ignore[no-any-return]


@lru_cache(maxsize=64)
def _literal_levels(
    separators: tuple[str, ...] | None, are_regex: bool, language: str | None
) -> tuple[list[str], list[str]] | None:
    """Separators and level names of the recursive levels, when all are literal."""
    levels = _separator_levels(separators, are_regex, language)
    seps = [c.literal for c in levels]
    if None in seps:
        return None
    return seps, [c.name for c in levels]  # type: ignore[return-value]


def semantic_pieces(
    settings: ChunkSettings,
    packer: Packer,
    blocks: Sequence[Block],
    embedder: Embedder,
    budget: int,
) -> tuple[list[Piece], Trace]:
    """Atoms, boundary scores, and the best cuts under ``budget`` (see ``semantic``)."""
    if settings.strategy == "semantic":
        atoms = sm.semantic_atoms(packer, budget)
    else:
        run, levels = plan(replace(settings, strategy="structural"), packer.text, blocks)
        packer.levels = tuple(levels)
        packer.max_tokens = min(budget, settings.atom_tokens)
        atoms = packer.run(run)
    text = packer.text
    if len(atoms) < 2:
        return atoms, sm.Trace(tuple((a.start, a.end) for a in atoms), (), 0.0, "none", (0,))
    vectors = embedder.embed([text[a.start : a.end] for a in atoms])
    dist = sm.boundary_distances(vectors, settings.buffer_size)
    if settings.target_chunks:
        k = min(settings.target_chunks - 1, dist.size)
        limit = float(np.sort(dist)[-k]) - 1e-9 if k > 0 else float("inf")
        label = f"top{settings.target_chunks - 1}"
    else:
        limit, label = sm.threshold(dist, settings.breakpoint, settings.breakpoint_amount)
    spread = float(dist.std()) or 1.0
    sem = np.clip((dist - limit) / spread, -2.0, 2.0)
    scores = [0.0] * len(atoms)
    for k in range(1, len(atoms)):
        scores[k] = float(sem[k - 1])
        if settings.strategy == "hybrid":
            # Meaning tips the balance at each boundary; it does not overrule a heading.
            scores[k] = (
                sm.structure_score(atoms[k].cut)
                - sm.CHUNK_COST
                + sm.SEMANTIC_WEIGHT * max(-1.0, min(1.0, scores[k]))
            )
    bounds = [a.start for a in atoms] + [atoms[-1].end]
    table = packer.ruler.table(bounds)
    starts = sm.choose_cuts(table, scores, budget, settings.min_tokens)
    pieces = []
    for n, i in enumerate(starts):
        j = starts[n + 1] if n + 1 < len(starts) else len(atoms)
        why = None
        if i > 0:
            why = sm.reason(atoms[i].cut, float(dist[i - 1]), limit, label, scores[i])
        pieces.append(
            Piece(
                table.start(i),
                table.end(j - 1),
                atoms[i].cut if i else "start",
                table.size(i, j - 1),
                atoms[i].oversize,
                why,
            )
        )
    trace = sm.Trace(
        tuple((a.start, a.end) for a in atoms),
        tuple(float(x) for x in dist),
        limit,
        label,
        tuple(starts),
    )
    return pieces, trace


def _units(settings: ChunkSettings, text: str) -> Callable[[int, int], list[int]]:
    """Where an overlap may begin: word starts, or sentence starts for ``sentence``."""
    if settings.strategy != "sentence":
        return lambda lo, hi: word_starts(text, lo, hi)
    found: list[list[int]] = []

    def sentence_starts(lo: int, hi: int) -> list[int]:
        if not found:
            import nupunkt

            found.append([a for a, _ in nupunkt.sent_spans(text)])
        starts = found[0]
        return starts[bisect_left(starts, lo) : bisect_left(starts, hi)]

    return sentence_starts


def fixed_windows(packer: Packer) -> list[Piece]:
    """Flat windows that ignore structure: each as long as the budget allows."""
    text, pieces = packer.text, []
    start, _ = packer.trim(0, len(text))
    while start < len(text):
        stop = packer.largest_fit(start, len(text))
        s, e = packer.trim(start, stop)
        if s < e:
            pieces.append(Piece(s, e, "budget", packer.ruler.count(s, e)))
        start = stop
    return pieces


def fixed_overlap(packer: Packer, pieces: list[Piece], overlap: int) -> list[tuple[int, int]]:
    """Fixed windows re-laid so each starts up to ``overlap`` before the previous end."""
    spans = [(p.start, p.end) for p in pieces]
    if overlap <= 0 or len(spans) < 2:
        return spans
    text = packer.text
    out = [spans[0]]
    while out[-1][1] < spans[-1][1]:
        prev_start, prev_end = out[-1]
        lo, hi = prev_start + 1, prev_end
        while lo < hi:  # earliest start whose overlap still fits
            mid = (lo + hi) // 2
            if packer.size(mid, prev_end) <= overlap:
                hi = mid
            else:
                lo = mid + 1
        while lo < prev_end and not lv.is_grapheme_break(text, lo):
            lo += 1
        start, _ = packer.trim(lo, len(text))
        stop = packer.largest_fit(start, len(text))
        if stop <= prev_end:  # no room beyond the overlap: continue without it
            start, _ = packer.trim(prev_end, len(text))
            if start >= len(text):
                break
            stop = packer.largest_fit(start, len(text))
        s, e = packer.trim(start, stop)
        if s < e:
            out.append((s, e))
        else:
            break
    return out
