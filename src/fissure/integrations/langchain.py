"""fissure for LangChain: a ``TextSplitter``, a document loader and MiniLM ``Embeddings``.

Needs ``pip install 'fissure[langchain]'`` (langchain-core and langchain-text-splitters)::

    from fissure.integrations.langchain import FissureLoader, FissureTextSplitter

    docs = FissureLoader("docs/").load()              # any format fissure routes
    splitter = FissureTextSplitter(max_tokens=254)     # ChunkSettings fields, or chunker=
    chunks = splitter.split_documents(docs)
    chunks[0].metadata["start_index"]                   # exact: text[start:end] == chunk

Each chunk is a ``Document`` whose ``id`` is fissure's content-addressed ``chunk_id``
(stable across runs) and whose metadata is its parent's plus ``start_index`` and
``end_index`` (exact offsets into the parent's ``page_content``), ``line_start``,
``line_end``, ``headings`` (the breadcrumb, joined with " › "), ``entity``, ``page``,
``cell`` (where the format has them), ``n_tokens``, ``cut``, ``strategy``, ``doc_id`` and
``index``. Values are scalars, so any vector store takes them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from typing import Any

from fissure.integrations._common import FileWalk, chunk_fields, document_for, need

need("langchain_core", "langchain-core", "langchain")
need("langchain_text_splitters", "langchain-text-splitters", "langchain")

import numpy as np  # noqa: E402
from langchain_core.document_loaders import BaseLoader  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_text_splitters import TextSplitter  # noqa: E402

from fissure.chunker import Chunker  # noqa: E402
from fissure.embed import Embedder, load_embedder  # noqa: E402
from fissure.errors import ConfigError  # noqa: E402

__all__ = ["FissureEmbeddings", "FissureLoader", "FissureTextSplitter"]


class FissureTextSplitter(TextSplitter):
    """LangChain's ``TextSplitter`` over a fissure :class:`~fissure.Chunker`.

    Args:
        chunker: A ready chunker; or pass :class:`~fissure.ChunkSettings` fields as
            keywords (``strategy``, ``max_tokens``, ``tokenizer``, ``overlap_tokens`` …).
        add_start_index: Put ``start_index`` (and ``end_index``) in each chunk's metadata;
            on by default, and exact — found by the chunker, never by ``str.find``.

    ``split_documents`` and ``create_documents`` find each document's structure (headings,
    code entities, pages) from its ``source`` metadata: the file is parsed again and used
    when its text is exactly the document's, else the text is parsed by its format (the
    extension of ``source``, or ``metadata["mime"]``). ``split_text`` has no source and
    chunks the text as plain text.

    Raises:
        ConfigError: Invalid settings, or both ``chunker`` and settings given.
    """

    def __init__(
        self, chunker: Chunker | None = None, *, add_start_index: bool = True, **settings: Any
    ) -> None:
        if chunker is not None and settings:
            raise ConfigError("pass a chunker or chunk settings, not both")
        self.chunker = chunker or Chunker(**settings)
        s = self.chunker.settings
        super().__init__(
            chunk_size=s.budget,
            chunk_overlap=s.overlap_tokens,
            length_function=self.chunker.sizer.count,
            add_start_index=add_start_index,
            strip_whitespace=False,  # fissure's chunks are exact slices; nothing is trimmed
        )

    def split_text(self, text: str) -> list[str]:
        """The chunks of ``text`` (chunked as plain text), as strings."""
        return [c.text for c in self.chunker.chunk(text)]

    def create_documents(
        self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None
    ) -> list[Document]:
        """One ``Document`` per chunk of each text, carrying a copy of that text's metadata."""
        metadatas = metadatas or [{}] * len(texts)
        if len(metadatas) != len(texts):
            raise ValueError(f"{len(metadatas)} metadatas for {len(texts)} texts")
        out: list[Document] = []
        for text, metadata in zip(texts, metadatas, strict=True):
            source, mime = metadata.get("source"), metadata.get("mime")
            document = document_for(text, str(source) if source else None, mime)
            for chunk in self.chunker.chunk_document(document):
                meta = copy.deepcopy(metadata)
                meta.update(chunk_fields(chunk))
                if self._add_start_index:
                    meta["start_index"], meta["end_index"] = chunk.start, chunk.end
                out.append(Document(page_content=chunk.text, metadata=meta, id=chunk.chunk_id))
        return out

    def split_documents(self, documents: Iterable[Document]) -> list[Document]:
        """Split each document; its metadata is copied onto every chunk."""
        documents = list(documents)
        return self.create_documents(
            [d.page_content for d in documents], [d.metadata for d in documents]
        )


class FissureLoader(FileWalk, BaseLoader):
    """A document loader over fissure's format routing: Markdown, code, HTML, PDF, DOCX,
    notebooks, reStructuredText, JSON/YAML, CSV, plain text.

    Args:
        paths: Files and folders (walked recursively; ``.gitignore`` honoured, hidden
            folders and caches skipped).
        mime: Parse every file as this MIME type instead of detecting it.
        max_bytes: Skip larger files.

    Each file becomes one ``Document``: ``page_content`` is the text fissure indexes (the
    file itself for text formats, the extracted text for HTML, PDF, DOCX and notebooks),
    metadata ``source`` (the path) and ``mime``, plus ``fallback`` when a coarser parser
    had to stand in. A file that cannot be read as text is logged, kept in
    :attr:`skipped` with its reason, and does not stop the load.
    """

    def lazy_load(self) -> Iterator[Document]:
        """Yield one ``Document`` per readable file, in walk order."""
        for got in self.parsed():
            yield Document(page_content=got.text, metadata={"source": got.source,
                                                            **self.facts(got)})  # fmt: skip


class FissureEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over a fissure embedder: by default all-MiniLM-L6-v2,
    loaded from its PyPI package, offline.

    Args:
        embedder: A fissure embedder, or a spec for :func:`fissure.embed.load_embedder`
            (``minilm``, ``minilm:bf16``, ``static``, ``http:URL#MODEL`` …).
    """

    def __init__(self, embedder: Embedder | str = "minilm:auto") -> None:
        self.embedder = load_embedder(embedder) if isinstance(embedder, str) else embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Unit vectors of ``texts``."""
        return _as_lists(self.embedder.embed(texts))

    def embed_query(self, text: str) -> list[float]:
        """The unit vector of a query."""
        return _as_lists(self.embedder.embed([text]))[0]


def _as_lists(vectors: np.ndarray) -> list[list[float]]:
    return vectors.astype(np.float64).tolist()  # type: ignore[no-any-return]
