"""The engine's side of the store: one Chroma collection per namespace, one manifest.

Each namespace writes through its own :class:`~fissure.ingest.writer.Writer` (the same
crash-safe order as ``fissure ingest``: pending mark → embed → delete by source → upsert →
manifest commit), with origin ``serve:<namespace>``. A lock per namespace keeps a delete
from interleaving with a write of the same collection.

The embedded Chroma must have one owner process: another process's queries would read a
stale vector index. That owner is the engine; the API reaches it over
:mod:`fissure.serve.rpc`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fissure.embed import Embedder
from fissure.ingest.workers import Outcome
from fissure.ingest.writer import Writer
from fissure.serve.jobs import DEFAULT_NAMESPACE, is_service_source, namespace_of
from fissure.store.chroma import COLLECTION, ChromaStore
from fissure.store.manifest import Failure, Manifest


def collection_of(namespace: str) -> str:
    """The Chroma collection of a namespace (``default`` keeps fissure's own, so that
    ``fissure query --store DIR`` searches it)."""
    return COLLECTION if namespace == DEFAULT_NAMESPACE else f"{COLLECTION}-ns-{namespace}"


def origin_of(namespace: str) -> str:
    """The manifest origin of a namespace."""
    return f"serve:{namespace}"


class Spaces:
    """Stores and writers per namespace, opened on first use.

    Args:
        folder: The store folder (Chroma in ``chroma/``, the manifest beside it).
        manifest: The store's manifest.
        embedder: The service's embedder.
        stamp: The settings fingerprint.
        window_share: ``ChunkSettings.embed_window_share``.
        embed_headings: ``ChunkSettings.embed_headings``.
    """

    def __init__(
        self,
        folder: Path,
        manifest: Manifest,
        embedder: Embedder,
        stamp: str,
        *,
        window_share: float = 0.6,
        embed_headings: bool = False,
    ) -> None:
        self.folder = folder
        self.manifest = manifest
        self.embedder = embedder
        self.stamp = stamp
        self.window_share = window_share
        self.embed_headings = embed_headings
        self._stores: dict[str, ChromaStore] = {}
        self._writers: dict[str, Writer] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def store(self, namespace: str) -> ChromaStore:
        """The namespace's collection."""
        with self._guard:
            found = self._stores.get(namespace)
            if found is None:
                found = ChromaStore(self.folder / "chroma", collection=collection_of(namespace))
                self._stores[namespace] = found
                self._locks[namespace] = threading.Lock()
            return found

    def _lock(self, namespace: str) -> threading.Lock:
        self.store(namespace)
        return self._locks[namespace]

    def write(
        self, namespace: str, group: Sequence[Outcome], digests: dict[str, str]
    ) -> list[Failure]:
        """Embed and store one group of a namespace's documents; returns its failures."""
        store = self.store(namespace)
        with self._lock(namespace):
            writer = self._writers.get(namespace)
            if writer is None:
                writer = Writer(
                    store,
                    self.manifest,
                    self.embedder,
                    origin_of(namespace),
                    self.stamp,
                    {},
                    window_share=self.window_share,
                    embed_headings=self.embed_headings,
                )
                self._writers[namespace] = writer
            writer.digests.update(digests)
            try:
                return writer.write(group)
            finally:
                for source in digests:
                    writer.digests.pop(source, None)

    def delete(self, namespace: str, source: str) -> None:
        """Remove a document's chunks and pieces, then its manifest rows."""
        store = self.store(namespace)
        with self._lock(namespace):
            store.delete_sources([source])
            self.manifest.forget([source])

    def chunks(self, namespace: str, source: str) -> list[tuple[str, str, dict[str, Any]]]:
        """A document's stored chunks, in order."""
        return self.store(namespace).source_items(source)

    def reconcile(self) -> int:
        """Undo what a killed engine left half-written (its jobs run again). Returns how
        many documents were reset."""
        pending = [s for s in self.manifest.pending() if is_service_source(s)]
        for source in pending:
            self.delete(namespace_of(source), source)
        return len(pending)
