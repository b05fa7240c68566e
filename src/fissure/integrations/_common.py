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
from fissure.errors import FissureError, MissingDependencyError
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
    import importlib

    try:
        importlib.import_module(module)
    except ImportError as exc:
        purpose = f"fissure.integrations.{extra.replace('-', '_')}"
        raise MissingDependencyError(package, extra, purpose=purpose) from exc


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


def load_files(
    paths: Sequence[str | os.PathLike[str]], mime: str | None, max_bytes: int = DEFAULT_MAX_BYTES
) -> Iterator[Document | Skipped]:
    """Every file under ``paths`` parsed by its format; one that fails is a :class:`Skipped`.

    Raises:
        InputError: A path does not exist.
    """
    for found in iter_files([Path(p) for p in paths], max_bytes=max_bytes):
        if found.skip:
            yield _skipped(str(found.path), found.skip)
            continue
        try:
            yield load_document(found.path, mime=mime)
        except FissureError as exc:
            yield _skipped(str(found.path), str(exc))


def _skipped(path: str, reason: str) -> Skipped:
    log.warning("skipped %s: %s", path, reason)
    return Skipped(path, reason)
