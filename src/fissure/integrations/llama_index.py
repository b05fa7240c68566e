"""fissure for LlamaIndex: a ``NodeParser``, a reader and a MiniLM ``BaseEmbedding``.

Needs ``pip install 'fissure[llama-index]'`` (llama-index-core)::

    from llama_index.core import VectorStoreIndex
    from fissure.integrations.llama_index import (
        FissureEmbedding, FissureNodeParser, FissureReader)

    documents = FissureReader("docs/").load_data()
    parser = FissureNodeParser.from_defaults(max_tokens=254)
    nodes = parser.get_nodes_from_documents(documents)
    index = VectorStoreIndex(nodes, embed_model=FissureEmbedding())

Each node's ``start_char_idx`` / ``end_char_idx`` are fissure's exact offsets into its
document's text (LlamaIndex's own parsers find them again with ``str.find``, which lands
on an earlier copy of a repeated passage); ``id_`` is fissure's content-addressed
``chunk_id`` unless you pass an ``id_func``; SOURCE, PREVIOUS and NEXT relationships are
set. Metadata is the document's plus ``line_start``, ``line_end``, ``headings``,
``entity``, ``page``, ``cell``, ``n_tokens``, ``cut``, ``strategy``, ``doc_id`` and
``index``; the bookkeeping keys are excluded from what is embedded and shown to an LLM.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from fissure.integrations._common import (
    BOOKKEEPING,
    FileWalk,
    chunk_fields,
    document_for,
    need,
)

need("llama_index.core", "llama-index-core", "llama-index")

from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding  # noqa: E402
from llama_index.core.bridge.pydantic import Field, PrivateAttr  # noqa: E402
from llama_index.core.node_parser import NodeParser  # noqa: E402
from llama_index.core.node_parser.node_utils import default_id_func  # noqa: E402
from llama_index.core.readers.base import BaseReader  # noqa: E402
from llama_index.core.schema import (  # noqa: E402
    BaseNode,
    Document,
    MetadataMode,
    NodeRelationship,
    TextNode,
)

from fissure.chunker import Chunker  # noqa: E402
from fissure.embed import Embedder, load_embedder  # noqa: E402

__all__ = ["FissureEmbedding", "FissureNodeParser", "FissureReader"]

# What LlamaIndex's file readers keep out of embeddings and prompts, and fissure's own.
_HIDDEN = ["file_path", "file_type", *BOOKKEEPING]


class FissureNodeParser(NodeParser):
    """LlamaIndex's ``NodeParser`` over a fissure :class:`~fissure.Chunker`.

    Build it with :meth:`from_defaults` (chunk settings as keywords) or pass
    ``chunker=Chunker(...)``. A document's structure (headings, code entities, pages) is
    found from its ``file_path`` (or ``source``) metadata: the file is parsed again and
    used when its text is exactly the document's, else the text is parsed by its format.
    """

    chunker: Chunker = Field(default_factory=Chunker, exclude=True,
                             description="The fissure Chunker that cuts the text.")  # fmt: skip

    @classmethod
    def from_defaults(cls, chunker: Chunker | None = None, **kwargs: Any) -> FissureNodeParser:
        """A parser; keywords are :class:`~fissure.ChunkSettings` fields or the parser's own
        (``include_metadata``, ``include_prev_next_rel``, ``id_func``, ``callback_manager``)."""
        own = {k: kwargs.pop(k) for k in list(kwargs) if k in cls.model_fields}
        return cls(chunker=chunker or Chunker(**kwargs), **own)

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serialises the component under."""
        return "FissureNodeParser"

    def _parse_nodes(
        self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any
    ) -> list[BaseNode]:
        out: list[BaseNode] = []
        for node in nodes:
            out.extend(self._split(node))
        return out

    def _split(self, node: BaseNode) -> list[TextNode]:
        text = node.get_content(metadata_mode=MetadataMode.NONE)
        meta = node.metadata
        source = meta.get("file_path") or meta.get("source")
        document = document_for(text, str(source) if source else None, meta.get("mime"))
        source_rel = {NodeRelationship.SOURCE: node.as_related_node_info()}
        hidden = list(dict.fromkeys([*node.excluded_embed_metadata_keys, *_HIDDEN]))
        hidden_llm = list(dict.fromkeys([*node.excluded_llm_metadata_keys, *_HIDDEN]))
        # Documents and text nodes have a text template (how metadata and text are joined).
        template = {"text_template": node.text_template} if hasattr(node, "text_template") else {}
        nodes = []
        for i, chunk in enumerate(self.chunker.chunk_document(document)):
            nodes.append(TextNode(
                id_=chunk.chunk_id if self.id_func is default_id_func else self.id_func(i, node),
                text=chunk.text,
                start_char_idx=chunk.start,
                end_char_idx=chunk.end,
                metadata=chunk_fields(chunk),
                excluded_embed_metadata_keys=hidden,
                excluded_llm_metadata_keys=hidden_llm,
                metadata_separator=node.metadata_separator,
                metadata_template=node.metadata_template,
                relationships=dict(source_rel),
                **template,
            ))  # fmt: skip
        return nodes

    def _postprocess_parsed_nodes(
        self, nodes: list[BaseNode], parent_doc_map: dict[str, Document]
    ) -> list[BaseNode]:
        """LlamaIndex's step (parent metadata merged in, PREVIOUS/NEXT links), then the
        exact offsets put back: that step finds each node's text again with ``str.find``."""
        spans = [(getattr(n, "start_char_idx", None), getattr(n, "end_char_idx", None))
                 for n in nodes]  # fmt: skip
        nodes = super()._postprocess_parsed_nodes(nodes, parent_doc_map)
        for node, (start, end) in zip(nodes, spans, strict=True):
            if isinstance(node, TextNode):
                node.start_char_idx, node.end_char_idx = start, end
        return nodes


class FissureReader(FileWalk, BaseReader):
    """A reader over fissure's format routing: Markdown, code, HTML, PDF, DOCX, notebooks,
    reStructuredText, JSON/YAML, CSV, plain text.

    Args:
        paths: Files and folders (walked recursively; ``.gitignore`` honoured).
        mime: Parse every file as this MIME type instead of detecting it.
        max_bytes: Skip larger files.

    Each file becomes one ``Document`` with ``id_`` its path (so re-ingesting a changed
    file replaces it, as ``SimpleDirectoryReader(filename_as_id=True)`` does) and
    metadata ``file_path``, ``file_name``, ``mime`` (and ``fallback`` when a coarser
    parser stood in). A file that cannot be read is kept in :attr:`skipped` with its
    reason and does not stop the load.
    """

    def lazy_load_data(self, *args: Any, **load_kwargs: Any) -> Iterator[Document]:
        """Yield one ``Document`` per readable file, in walk order."""
        for got in self.parsed():
            meta = {"file_path": got.source, "file_name": Path(got.source).name,
                    **self.facts(got)}  # fmt: skip
            yield Document(id_=got.source, text=got.text, metadata=meta,
                           excluded_embed_metadata_keys=list(_HIDDEN),
                           excluded_llm_metadata_keys=list(_HIDDEN))  # fmt: skip


class FissureEmbedding(BaseEmbedding):
    """LlamaIndex ``BaseEmbedding`` over a fissure embedder: by default all-MiniLM-L6-v2,
    loaded from its PyPI package, offline.

    Args:
        embedder: A fissure embedder, or a spec for :func:`fissure.embed.load_embedder`.
    """

    _embedder: Any = PrivateAttr()

    def __init__(self, embedder: Embedder | str = "minilm:auto", **kwargs: Any) -> None:
        model = load_embedder(embedder) if isinstance(embedder, str) else embedder
        super().__init__(model_name=model.model_id, **kwargs)
        self._embedder = model

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serialises the component under."""
        return "FissureEmbedding"

    def _get_query_embedding(self, query: str) -> Embedding:
        return self._get_text_embeddings([query])[0]

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._get_text_embeddings([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return self._embedder.embed(texts).astype("float64").tolist()  # type: ignore[no-any-return]
