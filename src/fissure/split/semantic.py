"""Semantic and hybrid chunking: cut where the meaning shifts, never over budget.

Both work on *atoms* — sentences for ``semantic``; small structural pieces (sections,
paragraphs, code entities, sentences) for ``hybrid`` — and score every boundary between
two atoms. The semantic score compares the windows on either side of the boundary (each
the mean of the vectors of up to ``buffer_size + 1`` atoms, so every atom is embedded
once, never a concatenation); the threshold comes from the distances themselves by one
of the four usual methods. ``hybrid`` (:mod:`fissure.split.hybrid`) adds what the rank of
the boundary is worth and a cost per chunk, so small neighbours with close meaning merge and
headings still cut.

The cuts are chosen by dynamic programming over the atoms: the set of boundaries that
maximises the total score with every chunk within ``max_tokens`` and the character
ceiling (and, where possible, at least ``min_tokens``). A cut with a negative score is
taken only when the budget forces it, and its reason says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from fissure.config import ChunkSettings
from fissure.ranks import START
from fissure.size.ruler import Table
from fissure.split import levels as lv
from fissure.split.pack import Packer
from fissure.split.runs import Piece, Run
from fissure.types import Embedder

# ``blend(atom, semantic)``: the score of the cut in front of ``atom`` given its semantic
# score (``hybrid`` adds the structure; ``semantic`` takes the semantic score alone).
Blend = Callable[[Piece, float], float]

METHODS = {"percentile": 95.0, "standard_deviation": 3.0, "interquartile": 1.5, "gradient": 95.0}
_SHORT = {
    "percentile": "p",
    "standard_deviation": "mean+σ×",
    "interquartile": "mean+IQR×",
    "gradient": "gradient p",
}


@dataclass(frozen=True, slots=True)
class Trace:
    """What the semantic cut selection saw: for the visualiser and for reasons.

    Attributes:
        atoms: ``(start, end)`` of every atom.
        distances: Cosine distance at each boundary (``len(atoms) - 1`` values).
        threshold: The breakpoint threshold on those distances.
        label: How the threshold was chosen, e.g. ``p95``.
        cuts: Index of the atom that starts each chunk.
    """

    atoms: tuple[tuple[int, int], ...]
    distances: tuple[float, ...]
    threshold: float
    label: str
    cuts: tuple[int, ...]


def threshold(distances: np.ndarray, method: str, amount: float | None) -> tuple[float, str]:
    """The breakpoint threshold and a short label for it."""
    if distances.size == 0:
        return float("inf"), "none"
    a = METHODS[method] if amount is None else amount
    if method == "percentile":
        value = float(np.percentile(distances, a))
    elif method == "standard_deviation":
        value = float(distances.mean() + a * distances.std())
    elif method == "interquartile":
        q1, q3 = np.percentile(distances, [25, 75])
        value = float(distances.mean() + a * (q3 - q1))
    else:
        grad = np.gradient(distances) if distances.size > 1 else distances
        # Breakpoints where the distance rises fastest: map the gradient percentile back
        # onto the distances it selects.
        chosen = distances[grad >= np.percentile(grad, a)]
        value = float(chosen.min()) if chosen.size else float("inf")
    return value, f"{_SHORT[method]}{a:g}"


def boundary_distances(vectors: np.ndarray, buffer: int) -> np.ndarray:
    """Cosine distance across each boundary between consecutive atoms.

    The boundary after atom ``i`` compares the window of atoms ``i - buffer .. i`` with
    the window ``i + 1 .. i + 1 + buffer`` (each the normalised mean of its unit
    vectors): the windows never overlap, so a shift of topic shows at full strength.
    """
    n = len(vectors)
    if n < 2:
        return np.zeros(0, dtype=np.float64)
    csum = np.vstack([np.zeros((1, vectors.shape[1]), np.float64), np.cumsum(vectors, 0)])
    i = np.arange(n - 1)
    left = csum[i + 1] - csum[np.maximum(i - buffer, 0)]
    right = csum[np.minimum(i + 2 + buffer, n)] - csum[i + 1]
    left /= np.maximum(np.linalg.norm(left, axis=1, keepdims=True), 1e-12)
    right /= np.maximum(np.linalg.norm(right, axis=1, keepdims=True), 1e-12)
    return 1.0 - np.einsum("ij,ij->i", left, right)


def choose_cuts(
    table: Table,
    scores: Sequence[float],
    max_tokens: int,
    min_tokens: int,
) -> list[int]:
    """Atom indices where chunks start (always 0 first), maximising the total score.

    ``scores[k]`` is the value of cutting in front of atom ``k`` (``scores[0]`` unused).
    Every chunk fits ``max_tokens``; chunks under ``min_tokens`` cost heavily, so they
    appear only where nothing else fits.
    """
    n = len(scores)
    best = [0.0] + [-np.inf] * n
    back = [0] * (n + 1)
    for j in range(1, n + 1):
        i = j - 1
        while i >= 0:
            if i < j - 1 and not table.fits(i, j - 1, max_tokens):
                break
            value = best[i] + (scores[i] if i > 0 else 0.0)
            if min_tokens and table.size(i, j - 1) < min_tokens:
                value -= 10.0
            if value > best[j]:
                best[j], back[j] = value, i
            i -= 1
    starts, j = [], n
    while j > 0:
        starts.append(back[j])
        j = back[j]
    return starts[::-1]


def semantic_atoms(packer: Packer) -> list[Piece]:
    """Sentences, each trimmed; a sentence over ``budget`` (the packer's) becomes
    word-cut pieces."""
    text = packer.text
    bounds = [0, *lv.SENTENCE.find(packer.ruler.index, 0, len(text)), len(text)]
    table = packer.table(bounds)
    budget = packer.max_tokens
    atoms: list[Piece] = []
    for k in range(len(bounds) - 1):
        s, e = table.start(k), table.end(k)
        if s >= e:
            continue  # nothing visible in this sentence span
        cut = START if k == 0 else lv.SENTENCE.boundary
        if table.fits(k, k, budget):
            atoms.append(Piece(s, e, cut, table.size(k, k)))
        else:
            word = lv.WORD.boundary
            atoms.extend(packer.run(Run([bounds[k], bounds[k + 1]], cut, word, (lv.WORD,))))
    return atoms


def reason(kind: str, distance: float, limit: float, label: str, score: float) -> str:
    """Why a boundary was cut, in words."""
    sem = f"semantic {distance:.2f} {'>' if distance > limit else '≤'} {label} {limit:.2f}"
    head = sem if kind in ("sentence", "start") else f"{kind}, {sem}"
    return head if score > 0 else f"budget ({head})"


def meaning_pieces(
    settings: ChunkSettings,
    packer: Packer,
    atoms: list[Piece],
    embedder: Embedder,
    blend: Blend | None = None,
) -> tuple[list[Piece], Trace]:
    """The best cuts between ``atoms`` under the packer's budget, scored by meaning (and
    ``blend``), with the trace of what was seen."""
    text, budget = packer.text, packer.max_tokens
    if len(atoms) < 2:
        return atoms, Trace(tuple((a.start, a.end) for a in atoms), (), 0.0, "none", (0,))
    vectors = embedder.embed([text[a.start : a.end] for a in atoms])
    dist = boundary_distances(vectors, settings.buffer_size)
    if settings.target_chunks:
        k = min(settings.target_chunks - 1, dist.size)
        limit = float(np.sort(dist)[-k]) - 1e-9 if k > 0 else float("inf")
        label = f"top{settings.target_chunks - 1}"
    else:
        limit, label = threshold(dist, settings.breakpoint, settings.breakpoint_amount)
    spread = float(dist.std()) or 1.0
    sem = np.clip((dist - limit) / spread, -2.0, 2.0)
    scores = [0.0] * len(atoms)
    for k in range(1, len(atoms)):
        scores[k] = float(sem[k - 1]) if blend is None else blend(atoms[k], float(sem[k - 1]))
    bounds = [a.start for a in atoms] + [atoms[-1].end]
    table = packer.table(bounds)
    starts = choose_cuts(table, scores, budget, settings.min_tokens)
    pieces = []
    for n, i in enumerate(starts):
        j = starts[n + 1] if n + 1 < len(starts) else len(atoms)
        why = None
        if i > 0:
            why = reason(atoms[i].cut.name, float(dist[i - 1]), limit, label, scores[i])
        cut = atoms[i].cut if i else START
        size = table.size(i, j - 1)
        pieces.append(Piece(table.start(i), table.end(j - 1), cut, size, atoms[i].oversize, why))
    trace = Trace(
        tuple((a.start, a.end) for a in atoms),
        tuple(float(x) for x in dist),
        limit,
        label,
        tuple(starts),
    )
    return pieces, trace
