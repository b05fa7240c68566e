"""The public entry points: :class:`Chunker` and :func:`chunk`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from fissure.config import ChunkSettings
from fissure.errors import InputError
from fissure.size import Ruler, Sizer, as_sizer
from fissure.split.strategies import split_spans
from fissure.types import Block, Chunk, Document


class Chunker:
    """Splits documents with one set of validated settings.

    Build it once and reuse it: the tokenizer is loaded at construction and its counts
    are cached across documents.

    Args:
        settings: A :class:`ChunkSettings`; or pass its fields as keywords.
        sizer: A ready :class:`~fissure.size.Sizer` to use instead of ``settings.tokenizer``.

    Raises:
        ConfigError: The settings cannot work (the message says how to fix them).

    Example:
        >>> chunker = Chunker(strategy="recursive", max_tokens=200, tokenizer="chars")
        >>> [c.text for c in chunker.chunk("One.\\n\\nTwo.")]
        ['One.\\n\\nTwo.']
    """

    def __init__(
        self, settings: ChunkSettings | None = None, *, sizer: Sizer | None = None, **fields: Any
    ) -> None:
        base = settings or ChunkSettings()
        self.settings = replace(base, **fields) if fields else base
        self.sizer = sizer or as_sizer(self.settings.tokenizer)
        if self.settings.budget < self.sizer.min_budget:
            from fissure.errors import ConfigError

            raise ConfigError(
                f"max_tokens={self.settings.budget} is too small for {self.sizer.name}: one "
                f"character can take {self.sizer.min_budget} tokens; use at least that"
            )

    def chunk(self, text: str, *, source: str = "<text>") -> list[Chunk]:
        """Chunk a string of text."""
        return self.chunk_document(Document.from_text(text, source=source))

    def chunk_document(self, document: Document) -> list[Chunk]:
        """Chunk a parsed document (its Block tree guides ``structural``)."""
        text = document.text
        if not text.strip():
            return []
        ruler = Ruler(text, self.sizer)
        spans, ends = split_spans(self.settings, ruler, document.blocks)
        return self._build(document, ruler, spans, ends)

    def chunk_file(self, path: str | os.PathLike[str]) -> list[Chunk]:
        """Read a file and chunk it."""
        return self.chunk_document(load_document(path))

    def _build(
        self,
        document: Document,
        ruler: Ruler,
        spans: list[tuple[int, int]],
        ends: list[str],
    ) -> list[Chunk]:
        if not spans:
            return []
        text, doc_id = document.text, document.id
        starts = np.fromiter((s for s, _ in spans), dtype=np.int64, count=len(spans))
        stops = np.fromiter((e for _, e in spans), dtype=np.int64, count=len(spans))
        first, last = ruler.index.lines(starts, stops)
        chunks = []
        for i, ((s, e), cut) in enumerate(zip(spans, ends, strict=True)):
            body = text[s:e]
            trail = _trail(document.blocks, s)
            headings = tuple(b.title for b in trail if b.title)
            entity = next((b.metadata["entity"] for b in reversed(trail)
                           if "entity" in b.metadata), None)
            meta: dict[str, Any] = {"cut": cut}
            chunks.append(
                Chunk(
                    text=body,
                    start=s,
                    end=e,
                    doc_id=doc_id,
                    chunk_id=Chunk.make_id(doc_id, s, e, body),
                    index=i,
                    n_tokens=ruler.count(s, e),
                    lines=(int(first[i]), int(last[i])),
                    strategy=self.settings.strategy,
                    source=document.source,
                    headings=headings,
                    entity=entity,
                    page=_inherited(trail, "page"),
                    cell=_inherited(trail, "cell"),
                    context=" › ".join(headings) or None,
                    metadata=meta,
                )
            )
        return chunks


def _trail(blocks: Sequence[Block], position: int) -> list[Block]:
    """The chain of nested blocks that contain ``position``, outermost first."""
    trail: list[Block] = []
    level = blocks
    while level:
        found = next((b for b in level if b.start <= position < b.end), None)
        if found is None:
            break
        trail.append(found)
        level = found.children
    return trail


def _inherited(trail: list[Block], key: str) -> Any:
    for block in reversed(trail):
        if key in block.metadata:
            return block.metadata[key]
    return None


def load_document(path: str | os.PathLike[str]) -> Document:
    """Read a file as a Document (UTF-8, BOM removed). Binary files raise InputError."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {p}: {exc.strerror or exc}") from exc
    if b"\x00" in data[:8192]:
        raise InputError(f"{p} looks binary (it contains NUL bytes); fissure chunks text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{p} is not valid UTF-8 (byte {exc.start}); convert it first") from exc
    return Document.from_text(text, source=str(p))


def chunk(text_or_path: str | os.PathLike[str], **settings: Any) -> list[Chunk]:
    """Chunk a string, or a file when given a ``pathlib.Path`` (strings are always text).

    Keyword arguments are :class:`~fissure.config.ChunkSettings` fields.
    """
    chunker = Chunker(**settings)
    if isinstance(text_or_path, os.PathLike):
        return chunker.chunk_file(text_or_path)
    return chunker.chunk(text_or_path)
