"""fissure's core nouns: Document, Block and Chunk.

All three are frozen dataclasses. Offsets are character offsets into ``Document.text``;
``document.text[chunk.start:chunk.end] == chunk.text`` holds for every chunk fissure makes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any


def _digest(*parts: str) -> str:
    data = "\x00".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Detection:
    """What a document was detected to be, and why."""

    mime: str
    reason: str


@dataclass(frozen=True, slots=True)
class Block:
    """A structural unit of a document, located by offsets in ``Document.text``.

    Attributes:
        kind: What the block is: ``section``, ``heading``, ``paragraph``, ``code``, ``table``,
            ``list``, ``function``, ``class``, ``page``, ``cell`` …
        start: First character (inclusive).
        end: Last character (exclusive).
        level: Rank of the boundary in front of this block; lower is stronger (a chapter
            boundary beats a paragraph boundary). Parsers publish their levels as an enum.
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


@dataclass(frozen=True, slots=True)
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
