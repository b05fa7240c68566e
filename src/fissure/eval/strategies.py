"""Chunking strategies under evaluation: a name and ``chunk(text) -> [(start, end)]``.

Any callable can be wrapped in :class:`Strategy`. :func:`parse_strategy` builds the named ones
from a spec ``NAME:SIZE[:OVERLAP][+find]`` (sizes in cl100k tokens, as in Chroma's report):

=======================  ==========================================================
``tokentext``            fixed token windows (:func:`~fissure.eval.baselines.token_text_spans`)
``recursive``            LangChain-style recursive splitting (report separators)
``fissure-structural``   ``fissure.Chunker(strategy="structural")``, corpora parsed as Markdown
``fissure-recursive``    ``fissure.Chunker(strategy="recursive")``
``fissure-sentence``     ``fissure.Chunker(strategy="sentence")``
``fissure-fixed``        ``fissure.Chunker(strategy="fixed")``
=======================  ==========================================================

The ``+find`` suffix scores each chunk where the upstream evaluator would place it (its text,
less one trailing ``.``, at its first occurrence in the corpus) instead of at its true offsets;
the chunk's own text is still what gets embedded, as upstream. It exists only to reproduce
the published numbers and to measure what that text search changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fissure.errors import ConfigError
from fissure.eval.baselines import recursive_spans, token_text_spans
from fissure.eval.spans import Span

ChunkFn = Callable[[str], list[Span]]


@dataclass(frozen=True, slots=True)
class Strategy:
    """A chunking strategy to evaluate.

    Attributes:
        name: Label in reports.
        chunk: ``chunk(text) -> [(start, end), ...]``, exact character offsets.
        size: Nominal chunk size in tokens, when there is one (reports only).
        overlap: Nominal overlap in tokens (reports only).
        relocate: Optional ``relocate(text, spans) -> spans``, one for one: where each chunk
            is scored, when that differs from where it is (see ``+find``).
    """

    name: str
    chunk: ChunkFn
    size: int | None = None
    overlap: int | None = None
    relocate: Callable[[str, list[Span]], list[Span]] | None = None


def _cl100k_count() -> Callable[[str], int]:
    from fissure.size import Sizer

    return Sizer.tiktoken("cl100k_base").count


def _tokentext(size: int, overlap: int) -> ChunkFn:
    return lambda text: token_text_spans(text, size, overlap)


def _recursive(size: int, overlap: int) -> ChunkFn:
    count = _cl100k_count()
    return lambda text: recursive_spans(text, size, overlap, count=count)


def _fissure(strategy: str) -> Callable[[int, int], ChunkFn]:
    def build(size: int, overlap: int) -> ChunkFn:
        from fissure import Chunker
        from fissure.parse.markdown import parse

        chunker = Chunker(
            strategy=strategy, max_tokens=size, overlap_tokens=overlap, tokenizer="cl100k_base"
        )

        def chunk(text: str) -> list[Span]:
            document = parse(text, source="corpus.md")
            return [(c.start, c.end) for c in chunker.chunk_document(document)]

        return chunk

    return build


BUILDERS: dict[str, Callable[[int, int], ChunkFn]] = {
    "tokentext": _tokentext,
    "recursive": _recursive,
    "fissure-structural": _fissure("structural"),
    "fissure-recursive": _fissure("recursive"),
    "fissure-sentence": _fissure("sentence"),
    "fissure-fixed": _fissure("fixed"),
}


def find_like_upstream(text: str, spans: list[Span]) -> list[Span]:
    """Re-locate chunks by text search, as ``chunking_evaluation`` does, one for one.

    Each chunk's text loses one trailing ``.`` and is then found at its first occurrence in
    ``text`` (always found, since it is a slice of ``text``). A chunk that is only ``.``
    keeps its span.
    """
    out: list[Span] = []
    for start, end in spans:
        piece = text[start:end]
        if piece.endswith(".") and len(piece) > 1:
            piece = piece[:-1]
        at = text.find(piece)
        out.append((at, at + len(piece)))
    return out


def parse_strategy(spec: str) -> Strategy:
    """A named strategy from ``NAME:SIZE[:OVERLAP][+find]``, e.g. ``recursive:250:125``.

    Raises:
        ConfigError: Unknown name or malformed sizes (the message lists the names).
    """
    body, plus, flag = spec.partition("+")
    if plus and flag != "find":
        raise ConfigError(f"strategy {spec!r}: the only suffix is '+find'")
    name, *numbers = body.split(":")
    if name not in BUILDERS:
        raise ConfigError(f"unknown strategy {name!r}: use one of {', '.join(BUILDERS)}")
    try:
        sizes = [int(n) for n in numbers]
    except ValueError as exc:
        raise ConfigError(f"strategy {spec!r}: sizes must be integers, as in NAME:250:125") from exc
    if len(sizes) not in (1, 2):
        raise ConfigError(f"strategy {spec!r}: give NAME:SIZE or NAME:SIZE:OVERLAP")
    size, overlap = sizes[0], (sizes[1] if len(sizes) == 2 else 0)
    relocate = find_like_upstream if plus else None
    return Strategy(spec, BUILDERS[name](size, overlap), size, overlap, relocate)
