"""Small-to-big: what a reader is handed within a token budget.

The store ranks chunks (with ``sub_weight`` on the sentence pieces that overlap them: the
finer vectors); :func:`hand_over` turns that ranking into passages for a reader model:

1. Hits are taken best first. A hit whose span overlaps or touches a passage already
   taken from the same document is merged into it (the union of the two spans, so text
   shared by overlapping chunks is handed over once); a hit that bridges two passages
   joins them.
2. A hit whose text is already inside a passage handed over (a repeated passage, in this
   document or another) adds nothing and is skipped.
3. Passages are counted in ``sizer`` tokens (cl100k_base by default, what the evaluator's
   ``--budget-tokens`` counts). The first hit that would take the total past the budget
   ends the list, as the evaluator's budget does: nothing is truncated.

Every passage is exact document text: a chunk's text is ``document.text[start:end]``, so
the union of two overlapping or touching chunks is assembled from their own texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from fissure.size import Sizer, as_sizer
from fissure.store.protocol import Hit

READER_TOKENIZER = "cl100k_base"
# How many ranked chunks small-to-big reads at most: a reader budget of thousands of tokens
# is filled long before, and the store ranks this many exactly and cheaply.
DEPTH = 100


@dataclass(frozen=True, slots=True)
class Passage:
    """One stretch of a document handed to the reader.

    Attributes:
        source: The document's source.
        start: Where the passage starts in the document's text.
        end: Where it ends (exclusive).
        text: ``document.text[start:end]``.
        rank: The best rank (1-based) among the hits it holds: passages come in this order.
        score: That hit's score.
        chunk_ids: The hits it holds, in rank order.
        n_tokens: Its size in the budget's tokens.
        metadata: The best hit's metadata (headings, entity, lines of that chunk).
    """

    source: str
    start: int
    end: int
    text: str
    rank: int
    score: float
    chunk_ids: tuple[str, ...]
    n_tokens: int
    metadata: dict[str, Any]


def _key(hit: Hit) -> str:
    """Which document a hit belongs to: its document id, else its source."""
    m = hit.metadata
    return str(m.get("doc_id") or m.get("source") or "")


def hand_over(
    hits: Sequence[Hit], budget_tokens: int, sizer: Sizer | str = READER_TOKENIZER
) -> list[Passage]:
    """The passages a reader is handed for ``hits`` (best first) within ``budget_tokens``.

    Args:
        hits: A store's ranking, best first (``metadata`` with ``start``, ``source``).
        budget_tokens: The most tokens handed over in all.
        sizer: What counts the tokens (a :class:`~fissure.size.Sizer` or a tokenizer name).

    Returns:
        Passages ordered by their best hit, without overlap or repeated text, whose
        ``n_tokens`` add up to at most ``budget_tokens``.

    Raises:
        ValueError: ``budget_tokens`` is below 1.
    """
    if budget_tokens < 1:
        raise ValueError(f"budget_tokens must be at least 1, got {budget_tokens}")
    count = as_sizer(sizer).count
    taken: list[tuple[str, Passage]] = []
    for rank, hit in enumerate(hits, 1):
        if not hit.text.strip() or any(hit.text in p.text for _, p in taken):
            continue
        key, new = _key(hit), _passage(hit, rank)
        joined = [i for i, (k, p) in enumerate(taken)
                  if k == key and p.start <= new.end and new.start <= p.end]  # fmt: skip
        for i in joined:
            new = _join(taken[i][1], new)
        # A passage elsewhere whose text the new one repeats is handed over once, here.
        gone = set(joined) | {i for i, (_, p) in enumerate(taken) if p.text in new.text}
        for i in sorted(gone - set(joined)):
            new = _absorb(taken[i][1], new)
        new = replace(new, n_tokens=count(new.text))
        kept = [t for i, t in enumerate(taken) if i not in gone]
        if sum(p.n_tokens for _, p in kept) + new.n_tokens > budget_tokens:
            break
        taken = [*kept, (key, new)]
    return sorted((p for _, p in taken), key=lambda p: p.rank)


def _passage(hit: Hit, rank: int) -> Passage:
    start = int(hit.metadata["start"])
    return Passage(str(hit.metadata.get("source") or ""), start, start + len(hit.text),
                   hit.text, rank, float(hit.score), (hit.chunk_id,), 0,
                   dict(hit.metadata))  # fmt: skip


def _absorb(old: Passage, new: Passage) -> Passage:
    """``new`` (whose text holds ``old``'s) standing for both: the better rank, and the
    ids of both."""
    best = old if old.rank < new.rank else new
    return replace(new, rank=best.rank, score=best.score, metadata=best.metadata,
                   chunk_ids=old.chunk_ids + new.chunk_ids)  # fmt: skip


def _join(old: Passage, new: Passage) -> Passage:
    """One passage for two overlapping or touching spans of a document: their union,
    assembled from their own texts (both exact document text)."""
    head = new.text[: old.start - new.start] if new.start < old.start else ""
    tail = new.text[old.end - new.start :] if new.end > old.end else ""
    joined = replace(new, start=min(old.start, new.start), end=max(old.end, new.end),
                     text=head + old.text + tail)  # fmt: skip
    return _absorb(old, joined)
