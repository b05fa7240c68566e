"""What both adapters share: finding a text's structure again, chunk metadata, file loading.

A framework's document carries only text and flat metadata, so the Block tree fissure's
parsers found is gone by the time the splitter sees it. :func:`document_for` finds it
again without trusting anything: the source file is parsed anew and used only if its text
is exactly the document's, else the text itself is parsed by its format; either way every
chunk's offsets index into the text the framework holds.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fissure.chunker import load_document
from fissure.errors import FissureError
from fissure.errors import need as need_modules
from fissure.parse import parse_text
from fissure.source.files import DEFAULT_MAX_BYTES, iter_files
from fissure.store.chroma import chunk_metadata
from fissure.types import Chunk, Document

log = logging.getLogger("fissure.integrations")

# Bookkeeping fields: useful to filter on, noise to an embedding model or an LLM.
BOOKKEEPING = ("doc_id", "index", "line_start", "line_end", "n_tokens", "strategy", "cut",
               "start_index", "end_index", "mime", "fallback")  # fmt: skip


def need(module: str, package: str, extra: str) -> None:
    """Import ``module`` or raise :class:`MissingDependencyError` naming ``extra``."""
    purpose = f"fissure.integrations.{extra.replace('-', '_')}"
    need_modules({module: package}, extra, purpose=purpose)


def document_for(text: str, source: str | None, mime: str | None = None) -> Document:
    """The fissure Document behind a framework's text, with its Block tree when one is found.

    The source file, when ``source`` names one and parsing it gives exactly ``text`` (the
    text of a PDF, an HTML page …); else ``text`` parsed by its format (see
    :func:`fissure.parse.parse_text`). ``document.text == text`` always.
    """
    name = source or "<text>"
    if source and os.path.isfile(source):
        try:
            document = load_document(source, mime=mime)
        except (FissureError, OSError):
            document = None
        if document is not None and document.text == text:
            return document
    return parse_text(text, name, mime)


def chunk_fields(chunk: Chunk) -> dict[str, str | int]:
    """The chunk's facts as flat metadata (scalars only, as vector stores want): offsets
    are left to the caller, ``source`` to the parent document."""
    meta: dict[str, Any] = chunk_metadata(chunk)
    for key in ("source", "start", "end"):
        meta.pop(key, None)
    if not meta["headings"]:
        del meta["headings"]  # no breadcrumb: no "headings: " line in what is embedded
    cut = chunk.metadata.get("cut")
    if isinstance(cut, str):
        meta["cut"] = cut
    return meta


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file a loader could not turn into a document, and why."""

    path: str
    reason: str


class FileWalk:
    """What a loader or reader does with its paths: walk them and parse every file.

    Args:
        paths: Files and folders (walked recursively; ``.gitignore`` honoured, hidden
            folders and caches skipped).
        mime: Parse every file as this MIME type instead of detecting it.
        max_bytes: Skip larger files.

    A file that cannot be read as a document is logged and kept in :attr:`skipped` with
    its reason; it does not stop the walk.
    """

    def __init__(
        self,
        paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        mime: str | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.paths = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
        self.mime = mime
        self.max_bytes = max_bytes
        self.skipped: list[Skipped] = []

    def parsed(self) -> Iterator[Document]:
        """Every readable file as a fissure Document, in walk order.

        Raises:
            InputError: A path does not exist.
        """
        self.skipped = []
        for found in iter_files([Path(p) for p in self.paths], max_bytes=self.max_bytes):
            reason = found.skip
            if reason is None:
                try:
                    yield load_document(found.path, mime=self.mime)
                    continue
                except FissureError as exc:
                    reason = str(exc)
            log.warning("skipped %s: %s", found.path, reason)
            self.skipped.append(Skipped(str(found.path), reason))

    @staticmethod
    def facts(document: Document) -> dict[str, Any]:
        """The flat metadata every loaded document carries: ``mime``, and ``fallback``
        when a coarser parser had to stand in."""
        meta: dict[str, Any] = {"mime": document.mime}
        if document.metadata.get("fallback"):
            meta["fallback"] = str(document.metadata["fallback"])
        return meta
