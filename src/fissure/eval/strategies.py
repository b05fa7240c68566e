"""Chunking strategies under evaluation: a name and ``chunk(text, source) -> [(start, end)]``.

Any such callable can be wrapped in :class:`Strategy`. :func:`parse_strategy` builds the named
ones from a spec ``NAME:SIZE[:OVERLAP][+OPTION...]`` (sizes in cl100k tokens, as in Chroma's
report):

=========================  ==========================================================
``tokentext``              fixed token windows (:func:`~fissure.eval.baselines.token_text_spans`)
``recursive``              LangChain-style recursive splitting (the report's separators)
``fissure-structural``     ``fissure.Chunker(strategy="structural")`` over the parsed corpus
``fissure-recursive``      ``fissure.Chunker(strategy="recursive")``
``fissure-sentence``       ``fissure.Chunker(strategy="sentence")``
``fissure-fixed``          ``fissure.Chunker(strategy="fixed")``
``fissure-semantic``       ``fissure.Chunker(strategy="semantic")``, with the run's embedder
``fissure-hybrid``         ``fissure.Chunker(strategy="hybrid")``, with the run's embedder
``structural`` …           the fissure strategies without the prefix (not ``recursive``,
                           which stays the report's baseline)
``langchain-*`` …          peers, see :mod:`fissure.eval.peers` (optional extras)
=========================  ==========================================================

Options (``+`` separated, any order):

* ``find``: score each chunk where the upstream evaluator would place it (its text, less one
  trailing ``.``, at its first occurrence in the corpus) instead of at its true offsets; the
  chunk's own text is still what gets embedded. Only to reproduce the published numbers.
* ``ctx``: embed ``chunk.context`` (fissure's breadcrumb: file name, headings, entity) and a
  newline in front of the chunk text; the scored span is the chunk's own.
* ``win=N``: also embed each chunk's *window*: the chunk extended over whole words on both
  sides to at most ``N`` MiniLM word pieces (254 is the model's input limit), see
  :mod:`fissure.embed.window`; the chunk's vector becomes the blend
  ``(1 - share) * chunk + share * window`` (normalised), as ``fissure ingest`` stores it with
  ``embed_window_tokens``. ``share=F`` (0..1, default 0.6; 1: the window alone) and
  ``before=F`` (0..1, default 0.5: the share of the free budget spent in front of the
  chunk). The scored span, and the reader's text, is the chunk's own. Any strategy.
* ``hctx``: embed the chunk's section breadcrumb (its headings joined by `` › ``, without
  the file name) and a newline in front of the chunk, and of its window (which then leaves
  room for it). fissure strategies only.
* ``sub=F``: multi-vector retrieval (changes the *ranking*, not only what is embedded):
  the corpus is also cut into sentence pieces (``sentence:SUBSIZE``, ``subsize=N``, default
  40) and each piece is embedded (with ``subctx``, after its own headings breadcrumb, as
  ``hctx`` does for chunks); a chunk's score is ``(1 - F) * its own similarity + F *`` the
  best similarity among the pieces that overlap it. Any strategy.
* ``dedup``: chunks whose text is identical to an earlier chunk's (repeated passages) are
  left out of the index, so the first copy is ranked once and a later copy takes no slot.
  Any strategy.
* ``mode=lexical`` / ``mode=hybrid``: the retrieval mode (:mod:`fissure.eval.lexical`):
  BM25 over the chunk texts in the store's own lexical index, or its weighted reciprocal
  rank fusion with the dense ranking, ``rrf=C`` the rank constant (default 5) and
  ``lexw=W`` the lexical list's weight (default 0.4); ``lexer=words`` indexes words and
  identifier parts instead of character trigrams. Any strategy. These defaults are the
  store's (``fissure query``'s default mode is ``hybrid``); a spec without ``mode=`` is
  dense.
* ``tok=NAME``: count a fissure strategy's sizes in this tokenizer instead of cl100k_base
  (``structural:254+tok=minilm`` is ``fissure ingest``'s default chunking).
* ``min=N`` (fissure ``min_tokens``), ``bp=X`` (``breakpoint_amount``), ``breakpoint=NAME``,
  ``buffer=N`` (``buffer_size``), ``atom=N`` (``atom_tokens``).

fissure strategies parse each corpus by the suffix of its id (``.py``: Python; anything else,
e.g. Chroma's ``.md`` corpora: Markdown).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fissure.embed.protocol import Embedder
from fissure.errors import ConfigError
from fissure.eval.baselines import recursive_spans, token_text_spans
from fissure.eval.spans import Span
from fissure.eval.spec import ChunkFn, Spec, ViewFn, parse_spec
from fissure.store.fusion import Fusion, check_mode


@dataclass(frozen=True, slots=True)
class Strategy:
    """A chunking strategy to evaluate.

    Attributes:
        name: Label in reports.
        chunk: ``chunk(text, source) -> [(start, end), ...]``, exact character offsets;
            ``source`` is the corpus id (a file name for JSONL datasets).
        size: Nominal chunk size in tokens, when there is one (reports only).
        overlap: Nominal overlap in tokens (reports only).
        relocate: Optional ``relocate(text, spans) -> spans``, one for one: where each chunk
            is scored, when that differs from where it is (see ``+find``).
        view: Optional ``view(text, spans) -> texts``, one for one: what is embedded for each
            chunk, when that differs from ``text[start:end]`` (see ``+ctx``).
        window: Optional ``window(text, spans) -> texts``: a second text per chunk whose
            vector is blended into the chunk's (see ``+win``), with weight ``share``.
        share: The window vector's weight in the blend.
        sub: Weight of the best sentence-piece similarity in a chunk's score (``+sub``).
        sub_spec: The spec of those pieces (``sentence:SUBSIZE``, ``+hctx`` with ``+subctx``).
        dedup: Leave chunks whose text repeats an earlier chunk's out of the index.
        mode: The retrieval mode: ``dense``, ``lexical`` or ``hybrid`` (``+mode=``).
        fusion: How ``hybrid`` fuses (``+rrf=``, ``+lexw=``).
        lexer: The lexical index's tokenizer, ``words`` or ``trigram`` (``+lexer=``).
        unlocated: Chunks the strategy returned that could not be placed in their corpus,
            counted while chunking (peers that return bare strings); they are left out.
    """

    name: str
    chunk: ChunkFn
    size: int | None = None
    overlap: int | None = None
    relocate: Callable[[str, list[Span]], list[Span]] | None = None
    view: ViewFn | None = None
    unlocated: list[int] = field(default_factory=lambda: [0], compare=False)
    window: ViewFn | None = None
    share: float = 0.6
    sub: float = 0.0
    sub_spec: str = "sentence:40"
    dedup: bool = False
    mode: str = "dense"
    fusion: Fusion = Fusion()
    lexer: str = "trigram"


Builder = Callable[[Spec, Embedder | None], ChunkFn]


def _cl100k_count() -> Callable[[str], int]:
    from fissure.size import Sizer

    return Sizer.tiktoken("cl100k_base").count


def _tokentext(spec: Spec, _: Embedder | None) -> ChunkFn:
    return lambda text, _source: token_text_spans(text, spec.size, spec.overlap)


def _recursive(spec: Spec, _: Embedder | None) -> ChunkFn:
    count = _cl100k_count()
    return lambda text, _source: recursive_spans(text, spec.size, spec.overlap, count=count)


class FissureRun:
    """``fissure.Chunker`` as a chunk function; remembers the last corpus's chunks so that
    ``view`` (``+ctx``) reads their breadcrumbs without chunking twice."""

    def __init__(self, strategy: str, spec: Spec, embedder: Embedder | None) -> None:
        from fissure import Chunker

        settings: dict[str, Any] = {
            "strategy": strategy,
            "max_tokens": spec.size,
            "overlap_tokens": spec.overlap,
            "tokenizer": spec.options.get("tok") or "cl100k_base",
            "min_tokens": spec.number("min") or 0,
        }
        for key, field_name, kind in (("bp", "breakpoint_amount", float),
                                      ("buffer", "buffer_size", int),
                                      ("atom", "atom_tokens", int)):  # fmt: skip
            if (value := spec.number(key, kind)) is not None:
                settings[field_name] = value
        if "breakpoint" in spec.options:
            settings["breakpoint"] = spec.options["breakpoint"]
        if "hctx" in spec.options:  # the headings line counted in the budget, as ingest does
            settings["embed_headings"] = True
        if strategy in ("semantic", "hybrid") and embedder is None:
            raise ConfigError(f"strategy {spec.text!r} needs the run's embedder")
        self.chunker = Chunker(embedder=embedder, **settings)
        self._last: tuple[str, list[Any]] | None = None

    def chunks(self, text: str, source: str) -> list[Any]:
        """fissure's chunks of ``text``, parsed by the suffix of ``source``."""
        if self._last is not None and self._last[0] is text:
            return self._last[1]
        if source.endswith(".py"):
            from fissure.parse.python import parse
        else:
            from fissure.parse.markdown import parse
        chunks = self.chunker.chunk_document(parse(text, source=source))
        self._last = (text, chunks)
        return chunks

    def __call__(self, text: str, source: str) -> list[Span]:
        return [(c.start, c.end) for c in self.chunks(text, source)]

    def with_context(self, text: str, spans: list[Span]) -> list[str]:
        """Each chunk's text with its breadcrumb line in front (``+ctx``)."""
        assert self._last is not None and self._last[0] is text, "chunk the text first"
        chunks = self._last[1]
        return [f"{c.context}\n{c.text}" if c.context else c.text for c in chunks]

    def with_headings(self, text: str, spans: list[Span]) -> list[str]:
        """Each chunk's text with its headings breadcrumb line in front (``+hctx``), as
        ``fissure ingest --embed-headings`` embeds it."""
        from fissure.embed.window import headed_text

        return [headed_text(c) for c in self._chunks_of(text)]

    def headed_windows(self, max_tokens: int, before: float) -> ViewFn:
        """``window`` for ``+hctx+win=N``: breadcrumb line, then a window that leaves room
        (:func:`fissure.embed.window.window_texts` with ``headings``, as ingest does)."""
        from fissure.embed.window import window_texts
        from fissure.size import Sizer

        sizer = Sizer.minilm()

        def view(text: str, spans: list[Span]) -> list[str]:
            chunks = self._chunks_of(text)
            return window_texts(text, chunks, sizer, max_tokens, before=before, headings=True)

        return view

    def _chunks_of(self, text: str) -> list[Any]:
        assert self._last is not None and self._last[0] is text, "chunk the text first"
        return self._last[1]


def _fissure(strategy: str) -> Builder:
    def build(spec: Spec, embedder: Embedder | None) -> ChunkFn:
        return FissureRun(strategy, spec, embedder)

    return build


FISSURE = ("structural", "recursive", "sentence", "fixed", "semantic", "hybrid")
BUILDERS: dict[str, Builder] = {
    "tokentext": _tokentext,
    "recursive": _recursive,
    **{f"fissure-{name}": _fissure(name) for name in FISSURE},
    **{name: _fissure(name) for name in FISSURE if name != "recursive"},
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


def window_view(max_tokens: int, before: float = 0.5) -> ViewFn:
    """``view`` for ``+win=N``: each chunk's embedding window, counted in MiniLM word pieces.

    Raises:
        ConfigError: ``N`` < 1 or ``before`` outside 0..1.
    """
    from fissure.embed.window import check_window, window_spans
    from fissure.size import Sizer

    check_window(max_tokens, before)
    sizer = Sizer.minilm()

    def view(text: str, spans: list[Span]) -> list[str]:
        return [text[a:b] for a, b in window_spans(text, spans, sizer, max_tokens, before=before)]

    return view


def parse_strategy(text: str, embedder: Embedder | None = None) -> Strategy:
    """A named strategy from a spec, e.g. ``recursive:250:125`` or ``structural:120+min=40``.

    Args:
        text: The spec (see the module docstring).
        embedder: The run's embedder, which ``semantic``/``hybrid`` (and semantic peers) use
            to find their cuts.

    Raises:
        ConfigError: Unknown name or option, or malformed sizes (the message says which).
    """
    from fissure.eval.peers import PEERS

    spec = parse_spec(text)
    builders = {**BUILDERS, **PEERS}
    if spec.name not in builders:
        raise ConfigError(f"unknown strategy {spec.name!r}: use one of {', '.join(builders)}")
    if spec.size <= 0 or not 0 <= spec.overlap < spec.size:
        raise ConfigError(f"strategy {text!r}: need SIZE > OVERLAP >= 0")
    chunk = builders[spec.name](spec, embedder)
    view = _view(spec, chunk)
    window = _window(spec, chunk)
    sub = spec.number("sub", float)
    if sub is not None and not 0 <= sub <= 1:
        raise ConfigError(f"strategy {text!r}: sub= must be within 0..1")
    sub_spec = f"sentence:{spec.number('subsize') or 40}"
    if "subctx" in spec.options:
        if "hctx" not in spec.options:
            raise ConfigError(f"strategy {text!r}: +subctx goes with +hctx")
        sub_spec += "+hctx"
    relocate = find_like_upstream if "find" in spec.options else None
    unlocated = getattr(chunk, "unlocated", [0])
    share = spec.number("share", float)
    return Strategy(text, chunk, spec.size, spec.overlap, relocate, view, unlocated, window,
                    0.6 if share is None else share, sub or 0.0, sub_spec,
                    "dedup" in spec.options, *_retrieval(spec))  # fmt: skip


def _retrieval(spec: Spec) -> tuple[str, Fusion, str]:
    """The retrieval mode, fusion and lexical tokenizer (``+mode=``, ``+rrf=``, ``+lexw=``,
    ``+lexer=``)."""
    from fissure.store.fusion import LEXICAL_WEIGHT, RRF_CONSTANT
    from fissure.store.lexical import DEFAULT_TOKENIZER, TOKENIZERS

    mode = check_mode(spec.options.get("mode", "dense"))
    constant, weight = spec.number("rrf", float), spec.number("lexw", float)
    lexer = spec.options.get("lexer", DEFAULT_TOKENIZER)
    if mode == "dense" and (constant is not None or weight is not None or "lexer" in spec.options):
        raise ConfigError(f"strategy {spec.text!r}: rrf=, lexw= and lexer= need mode=hybrid "
                          "or mode=lexical")  # fmt: skip
    if lexer not in TOKENIZERS:
        raise ConfigError(f"strategy {spec.text!r}: lexer= is one of {', '.join(TOKENIZERS)}")
    fusion = Fusion(RRF_CONSTANT if constant is None else constant,
                    LEXICAL_WEIGHT if weight is None else weight)  # fmt: skip
    return mode, fusion, lexer


def _view(spec: Spec, chunk: ChunkFn) -> ViewFn | None:
    """What is embedded as the chunk itself (``+ctx``, ``+hctx``)."""
    if "ctx" in spec.options and "hctx" in spec.options:
        raise ConfigError(f"strategy {spec.text!r}: use +ctx or +hctx, not both")
    for key in ("ctx", "hctx"):
        if key in spec.options and not isinstance(chunk, FissureRun):
            raise ConfigError(f"strategy {spec.text!r}: +{key} applies to fissure strategies only")
    if isinstance(chunk, FissureRun) and "ctx" in spec.options:
        if "win" in spec.options:
            raise ConfigError(f"strategy {spec.text!r}: +win goes with +hctx, not +ctx")
        return chunk.with_context
    if isinstance(chunk, FissureRun) and "hctx" in spec.options:
        return chunk.with_headings
    return None


def _window(spec: Spec, chunk: ChunkFn) -> ViewFn | None:
    """The window view (``+win=N``, ``before=``, ``share=``), or ``None``."""
    share, before = spec.number("share", float), spec.number("before", float)
    if "win" not in spec.options:
        if share is not None or before is not None:
            raise ConfigError(f"strategy {spec.text!r}: share= and before= need win=N")
        return None
    if share is not None and not 0 <= share <= 1:
        raise ConfigError(f"strategy {spec.text!r}: share= must be within 0..1")
    tokens, before = spec.number("win"), 0.5 if before is None else before
    if isinstance(chunk, FissureRun) and "hctx" in spec.options:
        from fissure.embed.window import check_window

        check_window(tokens, before)
        return chunk.headed_windows(tokens, before)
    return window_view(tokens, before)
