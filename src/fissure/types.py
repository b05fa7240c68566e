"""fissure's core nouns: Document, Block and Chunk, and the Embedder protocol.

The nouns are frozen dataclasses. Offsets are character offsets into ``Document.text``;
``document.text[chunk.start:chunk.end] == chunk.text`` holds for every chunk fissure makes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from fissure.ranks import Boundary, Rank, boundary, rank

if TYPE_CHECKING:
    import numpy as np


def _digest(*parts: str) -> str:
    """128-bit hex content hash. sha256 (truncated) rather than blake2b: CPUs with SHA
    extensions hash ~3x faster, and every document is hashed whole."""
    h = hashlib.sha256()
    for i, part in enumerate(parts):  # the parts joined by NUL, without copying them
        if i:
            h.update(b"\x00")
        h.update(part.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Detection:
    """What a document was detected to be, and why."""

    mime: str
    reason: str


@dataclass(frozen=True, slots=True, init=False)
class Block:
    """A structural unit of a document, located by offsets in ``Document.text``.

    Attributes:
        kind: What the block is: ``section``, ``heading``, ``paragraph``, ``code``, ``table``,
            ``list``, ``function``, ``class``, ``page``, ``cell`` …
        start: First character (inclusive).
        end: Last character (exclusive).
        level: The format's own level of this block (its parser's enum, ordered inside
            the format: h1 before h2, a class before its methods). The packer reads the
            :attr:`rank` derived from it, the same scale for every format.
        title: Heading text or entity name, when the block has one.
        children: Sub-blocks, in order, inside ``[start, end)``.
        metadata: Format-specific facts (fence language, element path, page number …).
    """

    kind: str
    start: int
    end: int
    level: int = 0
    title: str | None = None
    children: tuple[Block, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __init__(
        self,
        kind: str,
        start: int,
        end: int,
        level: int = 0,
        title: str | None = None,
        children: tuple[Block, ...] = (),
        metadata: dict[str, Any] | None = None,
    ) -> None:
        # The generated frozen __init__, through the slot descriptors (as Chunk's): parsers
        # make a block per statement or paragraph, tens of thousands per megabyte.
        set_kind, set_start, set_end, set_level, set_title, set_children, set_metadata = (
            _BLOCK_SETTERS
        )
        set_kind(self, kind)
        set_start(self, start)
        set_end(self, end)
        set_level(self, level)
        set_title(self, title)
        set_children(self, children)
        set_metadata(self, {} if metadata is None else metadata)

    @property
    def rank(self) -> Rank:
        """Strength of the boundary in front of this block on the one scale of
        :mod:`fissure.ranks` (lower is stronger: a chapter beats a paragraph)."""
        return rank(self.kind, self.level)

    @property
    def boundary(self) -> Boundary:
        """The cut in front of this block: its name (``section 2``, ``function``) and rank."""
        return boundary(self.kind, self.level)


@dataclass(frozen=True, slots=True)
class Document:
    """A text to chunk.

    Attributes:
        id: Stable identifier (by default a hash of ``source`` and ``text``).
        source: Path or URI the text came from ("<text>" for strings).
        mime: Detected MIME type.
        text: The exact text that chunk offsets index into.
        blocks: The Block tree a parser found (empty for unparsed text).
        metadata: Free metadata (detection reason, encoding, fallbacks …).
    """

    id: str
    source: str
    mime: str
    text: str
    blocks: tuple[Block, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @classmethod
    def from_text(
        cls,
        text: str,
        *,
        source: str = "<text>",
        mime: str = "text/plain",
        blocks: tuple[Block, ...] = (),
        metadata: dict[str, Any] | None = None,
    ) -> Document:
        """Build a document whose id is a content hash of its source and text."""
        return cls(
            id=_digest(source, text),
            source=source,
            mime=mime,
            text=text,
            blocks=blocks,
            metadata=dict(metadata or {}),
        )


@dataclass(frozen=True, slots=True, init=False)
class Chunk:
    """A piece of a document, ready to embed.

    ``text`` is always exactly ``document.text[start:end]``; ``context`` is a breadcrumb
    that may be prepended for embedding only. ``chunk_id`` is derived from the document
    id, the offsets and the text, so it is stable and content-addressed.
    """

    text: str
    start: int
    end: int
    doc_id: str
    index: int
    n_tokens: int
    lines: tuple[int, int]
    strategy: str
    source: str | None = None
    headings: tuple[str, ...] = ()
    entity: str | None = None
    page: int | None = None
    cell: int | None = None
    context: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __init__(
        self,
        text: str,
        start: int,
        end: int,
        doc_id: str,
        index: int,
        n_tokens: int,
        lines: tuple[int, int],
        strategy: str,
        source: str | None = None,
        headings: tuple[str, ...] = (),
        entity: str | None = None,
        page: int | None = None,
        cell: int | None = None,
        context: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        # What the generated frozen __init__ does, through the slot descriptors instead of
        # object.__setattr__ by name: half the cost, and chunks are made by the hundred
        # thousand.
        (set_text, set_start, set_end, set_doc_id, set_index, set_n_tokens, set_lines,
         set_strategy, set_source, set_headings, set_entity, set_page, set_cell, set_context,
         set_metadata) = _SETTERS  # fmt: skip
        set_text(self, text)
        set_start(self, start)
        set_end(self, end)
        set_doc_id(self, doc_id)
        set_index(self, index)
        set_n_tokens(self, n_tokens)
        set_lines(self, lines)
        set_strategy(self, strategy)
        set_source(self, source)
        set_headings(self, headings)
        set_entity(self, entity)
        set_page(self, page)
        set_cell(self, cell)
        set_context(self, context)
        set_metadata(self, {} if metadata is None else metadata)

    @staticmethod
    def make_id(doc_id: str, start: int, end: int, text: str) -> str:
        """The stable, content-addressed id of a chunk."""
        return _digest(doc_id, str(start), str(end), text)

    @property
    def chunk_id(self) -> str:
        """The stable, content-addressed id: a hash of doc id, offsets and text."""
        return _digest(self.doc_id, str(self.start), str(self.end), self.text)

    def embedding_text(self) -> str:
        """What to embed: the context and the text when the chunker counted the context in
        the budget (``metadata["context_tokens"]``), else the text alone."""
        if self.context and "context_tokens" in self.metadata:
            return f"{self.context}\n{self.text}"
        return self.text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping with every field (``None`` where not applicable)."""
        return {
            "source": self.source,
            "doc_id": self.doc_id,
            "chunk_id": self.chunk_id,
            "index": self.index,
            "start": self.start,
            "end": self.end,
            "lines": list(self.lines),
            "text": self.text,
            "n_tokens": self.n_tokens,
            "headings": list(self.headings),
            "entity": self.entity,
            "page": self.page,
            "cell": self.cell,
            "context": self.context,
            "strategy": self.strategy,
            "metadata": self.metadata,
        }


# The slot setters of Block's and Chunk's fields, in field order (see their __init__).
_BLOCK_SETTERS: tuple[Any, ...] = tuple(
    Block.__dict__[name].__set__ for name in Block.__dataclass_fields__
)
CHUNK_FIELDS: tuple[str, ...] = tuple(Chunk.__dataclass_fields__)
_SETTERS: tuple[Any, ...] = tuple(Chunk.__dict__[name].__set__ for name in CHUNK_FIELDS)


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into vectors.

    Attributes:
        dim: Width of each vector.
        max_tokens: The model's input limit in its own tokens, special tokens excluded;
            text past it is truncated by the model, so chunks should fit under it.
        model_id: A stable name of the model and its settings; caches key on it.
    """

    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def model_id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``: float32 array of shape ``(len(texts), dim)``, rows of unit length."""
        ...
