"""Peer chunkers in the same harness (optional extras): LangChain, Chonkie, LlamaIndex, semchunk.

Every peer is measured in cl100k_base tokens through fissure's own tokenizer backend (so no
peer downloads a vocabulary), and semantic peers embed with the run's embedder (so they use
the same model, and the same cache, as retrieval).

Offsets. A peer that reports where its chunk starts (LangChain ``add_start_index``, Chonkie
``start_index``, LlamaIndex ``start_char_idx``, semchunk ``offsets=True``) is taken at its word
only when ``text[start:start + len(chunk)]`` is the chunk; otherwise, and for peers that return
bare strings, the chunk is searched for from just after the previous chunk's start, then with
its surrounding whitespace stripped. A chunk still not found (a peer that rewrites its text,
e.g. joins sentences with a different separator) is dropped and counted in
``Strategy.unlocated``, which the report prints; nothing is ever placed by a guess.

========================  ======================================================
``langchain-recursive``   ``RecursiveCharacterTextSplitter`` (default separators)
``langchain-token``       ``TokenTextSplitter``
``langchain-semantic``    ``langchain_experimental`` ``SemanticChunker`` (``bp=``)
``chonkie-recursive``     ``chonkie.RecursiveChunker``
``chonkie-token``         ``chonkie.TokenChunker``
``chonkie-semantic``      ``chonkie.SemanticChunker``
``chonkie-code``          ``chonkie.CodeChunker`` (needs tree-sitter-language-pack)
``llamaindex-sentence``   ``SentenceSplitter``
``llamaindex-semantic``   ``SemanticSplitterNodeParser`` (``bp=``)
``llamaindex-code``       ``CodeSplitter`` (needs tree-sitter-language-pack)
``semchunk``              ``semchunk.chunkerify``
========================  ======================================================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fissure.embed.protocol import Embedder
from fissure.errors import ConfigError, MissingDependencyError
from fissure.eval.spans import Span
from fissure.eval.spec import ChunkFn, Spec

Piece = tuple[str, int | None]
"""A peer's chunk: its text and the start it reports (``None``: none)."""


class Cl100k:
    """cl100k_base through fissure's tokenizer backend, in the shapes peers ask for."""

    def __init__(self) -> None:
        from fissure.eval.baselines import _encoding

        self.backend, self.enc = _encoding("cl100k_base")

    def encode(self, text: str) -> list[int]:
        return list(self.backend.encode(text))  # type: ignore[attr-defined]

    def decode(self, tokens: Sequence[int]) -> str:
        return b"".join(self.enc.decode_tokens_bytes(list(tokens))).decode(  # type: ignore[attr-defined]
            "utf-8", "replace"
        )

    def tokenize(self, text: str) -> list[int]:
        return self.encode(text)

    def count(self, text: str) -> int:
        return len(self.encode(text))


def locate(text: str, pieces: Sequence[Piece]) -> tuple[list[Span], int]:
    """Exact spans of peer chunks (see the module docstring), and how many were not found."""
    spans: list[Span] = []
    missing = 0
    cursor = 0
    for piece, start in pieces:
        if start is not None and text[start : start + len(piece)] == piece and piece:
            span: Span | None = (start, start + len(piece))
        else:
            span = _search(text, piece, cursor)
        if span is None:
            missing += 1
            continue
        spans.append(span)
        cursor = span[0] + 1
    return spans, missing


def _search(text: str, piece: str, cursor: int) -> Span | None:
    for candidate in (piece, piece.strip()):
        if candidate:
            at = text.find(candidate, cursor)
            if at == -1:
                at = text.find(candidate)  # a peer that reorders; still exact text
            if at != -1:
                return (at, at + len(candidate))
    return None


class PeerRun:
    """A peer as a chunk function; ``unlocated[0]`` counts chunks that could not be placed."""

    def __init__(self, split: Callable[[str], list[Piece]]) -> None:
        self.split = split
        self.unlocated = [0]

    def __call__(self, text: str, source: str) -> list[Span]:
        spans, missing = locate(text, self.split(text))
        self.unlocated[0] += missing
        return sorted(spans)


def _need(module: str, package: str, extra: str | None = "bench") -> Any:
    """``module``, or a MissingDependencyError naming ``package`` and the extra listing it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(package, extra, purpose=f"the {package} peer") from exc


def _langchain(kind: str) -> Callable[[Spec, Embedder | None], ChunkFn]:
    def build(spec: Spec, embedder: Embedder | None) -> ChunkFn:
        lc = _need("langchain_text_splitters", "langchain-text-splitters")
        tok = Cl100k()
        if kind == "recursive":
            splitter = lc.RecursiveCharacterTextSplitter(
                chunk_size=spec.size, chunk_overlap=spec.overlap, length_function=tok.count,
                add_start_index=True,
            )  # fmt: skip
        elif kind == "token":
            return PeerRun(_token_windows(tok, spec))
        else:
            splitter = _langchain_semantic(spec, _require(embedder, spec))
        return PeerRun(lambda text: [
            (d.page_content, d.metadata.get("start_index"))
            for d in splitter.create_documents([text])
        ])  # fmt: skip

    return build


def _token_windows(tok: Cl100k, spec: Spec) -> Callable[[str], list[Piece]]:
    """``TokenTextSplitter``'s windows, with its own decoding (so pieces are its text)."""
    lc = _need("langchain_text_splitters", "langchain-text-splitters")
    from langchain_text_splitters.base import Tokenizer, split_text_on_tokens

    rule = Tokenizer(spec.overlap, spec.size, tok.decode, tok.encode)
    _ = lc
    return lambda text: [(t, None) for t in split_text_on_tokens(text=text, tokenizer=rule)]


def _require(embedder: Embedder | None, spec: Spec) -> Embedder:
    if embedder is None:
        raise ConfigError(f"strategy {spec.text!r} needs the run's embedder")
    return embedder


def _langchain_semantic(spec: Spec, embedder: Embedder) -> Any:
    experimental = _need("langchain_experimental.text_splitter", "langchain-experimental")
    from langchain_core.embeddings import Embeddings

    class Adapter(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed(texts).tolist()  # type: ignore[no-any-return]

        def embed_query(self, text: str) -> list[float]:
            return embedder.embed([text])[0].tolist()  # type: ignore[no-any-return]

    amount = spec.number("bp", float)
    return experimental.SemanticChunker(
        Adapter(), breakpoint_threshold_type="percentile", breakpoint_threshold_amount=amount,
        add_start_index=True,
    )  # fmt: skip


def _chonkie(kind: str) -> Callable[[Spec, Embedder | None], ChunkFn]:
    def build(spec: Spec, embedder: Embedder | None) -> ChunkFn:
        chonkie = _need("chonkie", "chonkie")
        tok = _chonkie_tokenizer()
        if kind == "token":
            chunker = chonkie.TokenChunker(tokenizer=tok, chunk_size=spec.size,
                                           chunk_overlap=spec.overlap)  # fmt: skip
        elif kind == "recursive":
            chunker = chonkie.RecursiveChunker(tokenizer=tok, chunk_size=spec.size)
        elif kind == "code":
            _need("tree_sitter_language_pack", "tree-sitter-language-pack", extra=None)
            chunker = chonkie.CodeChunker(tokenizer=tok, chunk_size=spec.size, language="python")
        else:
            chunker = chonkie.SemanticChunker(
                embedding_model=_chonkie_embeddings(_require(embedder, spec)),
                chunk_size=spec.size, threshold=spec.number("bp", float) or 0.8,
            )  # fmt: skip
        return PeerRun(lambda text: [(c.text, c.start_index) for c in chunker.chunk(text)])

    return build


def _chonkie_tokenizer() -> Any:
    from chonkie.tokenizer import Tokenizer

    class ChonkieCl100k(Tokenizer):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.cl100k = Cl100k()

        def __repr__(self) -> str:
            return "ChonkieCl100k()"

        def encode(self, text: str) -> list[int]:
            return self.cl100k.encode(text)

        def decode(self, tokens: Sequence[int]) -> str:
            return self.cl100k.decode(tokens)

        def tokenize(self, text: str) -> list[int]:
            return self.cl100k.encode(text)

        def count_tokens(self, text: str) -> int:
            return self.cl100k.count(text)

    return ChonkieCl100k()


def _chonkie_embeddings(embedder: Embedder) -> Any:
    from chonkie.embeddings import BaseEmbeddings

    class Adapter(BaseEmbeddings):  # type: ignore[misc]
        def __init__(self) -> None:
            self._tok = Cl100k()

        @property
        def dimension(self) -> int:
            return embedder.dim

        def embed(self, text: str) -> np.ndarray:
            return embedder.embed([text])[0]

        def embed_batch(self, texts: list[str]) -> list[np.ndarray]:
            return list(embedder.embed(texts))

        def get_tokenizer(self) -> Any:
            return self._tok

    return Adapter()


def _llamaindex(kind: str) -> Callable[[Spec, Embedder | None], ChunkFn]:
    def build(spec: Spec, embedder: Embedder | None) -> ChunkFn:
        parsers = _need("llama_index.core.node_parser", "llama-index-core")
        from llama_index.core import Document

        tok = Cl100k()
        if kind == "sentence":
            parser = parsers.SentenceSplitter(
                chunk_size=spec.size, chunk_overlap=spec.overlap, tokenizer=tok.encode
            )
        elif kind == "code":
            _need("tree_sitter_language_pack", "tree-sitter-language-pack", extra=None)
            parser = parsers.CodeSplitter(language="python", max_chars=spec.size * 4)
        else:
            parser = parsers.SemanticSplitterNodeParser(
                embed_model=_llamaindex_embeddings(_require(embedder, spec)),
                breakpoint_percentile_threshold=int(spec.number("bp", float) or 95),
            )

        def split(text: str) -> list[Piece]:
            nodes = parser.get_nodes_from_documents([Document(text=text)])
            return [(n.get_content(), n.start_char_idx) for n in nodes]

        return PeerRun(split)

    return build


def _llamaindex_embeddings(embedder: Embedder) -> Any:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    class Adapter(BaseEmbedding):  # type: ignore[misc]
        def _get_text_embedding(self, text: str) -> list[float]:
            return embedder.embed([text])[0].tolist()  # type: ignore[no-any-return]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed(texts).tolist()  # type: ignore[no-any-return]

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

    return Adapter(model_name=embedder.model_id, embed_batch_size=64)


def _semchunk(spec: Spec, _: Embedder | None) -> ChunkFn:
    semchunk = _need("semchunk", "semchunk")
    chunker = semchunk.chunkerify(Cl100k().count, spec.size)

    def split(text: str) -> list[Piece]:
        chunks, offsets = chunker(text, offsets=True, overlap=spec.overlap or None)
        return [(c, s) for c, (s, _e) in zip(chunks, offsets, strict=True)]

    return PeerRun(split)


PEERS: dict[str, Callable[[Spec, Embedder | None], ChunkFn]] = {
    "langchain-recursive": _langchain("recursive"),
    "langchain-token": _langchain("token"),
    "langchain-semantic": _langchain("semantic"),
    "chonkie-recursive": _chonkie("recursive"),
    "chonkie-token": _chonkie("token"),
    "chonkie-semantic": _chonkie("semantic"),
    "chonkie-code": _chonkie("code"),
    "llamaindex-sentence": _llamaindex("sentence"),
    "llamaindex-semantic": _llamaindex("semantic"),
    "llamaindex-code": _llamaindex("code"),
    "semchunk": _semchunk,
}
