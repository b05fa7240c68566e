"""Retrieval extras computed in the workers: sentence pieces (multi-vector) and dedup.

``sub_vector_tokens``: the document is also cut with
``Chunker(strategy="sentence", max_tokens=N, tokenizer="cl100k_base")`` and each piece is
linked to the stored chunks its span overlaps (:func:`fissure.spans.sharing`, the join the
evaluator's ``+sub=W+subsize=N`` uses too).
``dedup``: a chunk whose text equals an earlier chunk's in the same document is not stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fissure.config import ChunkSettings
from fissure.embed.window import heading_line
from fissure.spans import sharing
from fissure.store.protocol import Piece
from fissure.types import Chunk, Document


def repeated(chunks: Sequence[Chunk]) -> list[bool]:
    """For each chunk, whether its text equals an earlier chunk's (the first copy stays)."""
    return repeated_texts([c.text for c in chunks])


def repeated_texts(texts: Sequence[str]) -> list[bool]:
    """For each text, whether it equals an earlier one (the evaluator's ``+dedup`` too)."""
    seen: set[str] = set()
    out = []
    for text in texts:
        out.append(text in seen)
        seen.add(text)
    return out


def link_pieces(
    document: Document,
    spans: Sequence[tuple[int, int]],
    chunks: Sequence[Chunk],
    prefixes: Sequence[str] | None = None,
) -> list[Piece]:
    """The pieces at ``spans`` of ``document``, each with the chunks it overlaps
    (:func:`fissure.spans.sharing`, which says why; a piece that overlaps no chunk is left
    out) and its ``prefixes`` entry."""
    owners = sharing([(c.start, c.end) for c in chunks], spans)
    source = document.source or ""
    pieces = []
    for n, ((s, e), mine) in enumerate(zip(spans, owners, strict=True)):
        if mine:
            prefix = prefixes[n] if prefixes else ""
            ids = tuple(chunks[k].chunk_id for k in mine)
            pieces.append(Piece(source, s, e, document.text[s:e], ids, prefix))
    return pieces


def piece_maker(settings: ChunkSettings) -> Callable[[Document, list[Chunk]], list[Piece]]:
    """``make(document, chunks)``: the document's pieces linked to ``chunks``, or ``[]``
    when ``sub_vector_tokens`` is off."""
    tokens = settings.sub_vector_tokens
    if tokens is None:
        return lambda document, chunks: []
    from fissure.chunker import Chunker

    cutter = Chunker(strategy="sentence", max_tokens=tokens, tokenizer="cl100k_base")
    if not settings.embed_headings:
        return lambda document, chunks: (
            link_pieces(document, cutter.spans(document.text), chunks) if chunks else []
        )

    def with_headings(document: Document, chunks: list[Chunk]) -> list[Piece]:
        if not chunks:
            return []
        cut = cutter.chunk_document(document)  # the pieces' own headings breadcrumbs
        spans = [(c.start, c.end) for c in cut]
        return link_pieces(document, spans, chunks, [heading_line(c.headings) for c in cut])

    return with_headings
