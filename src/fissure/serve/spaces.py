"""The engine's side of the store: one store and manifest per namespace.

A namespace is opened as ``fissure ingest`` opens one (:func:`fissure.store.open.open_store`):
``default`` is the store folder itself, another namespace ``<store>/namespaces/<name>``, each
with its own Chroma and manifest (origin ``serve:<namespace>``), so ``fissure query --store
DIR`` searches the default namespace. Each namespace writes through its own
:class:`~fissure.ingest.writer.Writer` (the crash-safe order of ``fissure ingest``: pending
mark → embed → delete by source → upsert → manifest commit); a lock per namespace keeps a
delete from interleaving with a write.

A namespace is opened once, completely (its Chroma included, which otherwise opens on first
use), under one lock: Chroma's clients share process-wide state, and two threads opening the
same folder at once failed with Chroma's internal errors (issue 32.3). The runner's writes
wait for an opening namespace; a request of the API waits :data:`REQUEST_WAIT` seconds, then
is answered :class:`~fissure.serve.rpc.Opening` (503 with Retry-After).

The embedded Chroma must have one owner process: another process's queries would read a
stale vector index. That owner is the engine (one per store folder: it holds
``engine.lock``), so across processes too a namespace is opened by one process; the API
never opens a store, it reaches the engine over :mod:`fissure.serve.rpc`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fissure.embed import Embedder
from fissure.errors import ConfigError, InputError
from fissure.ingest.pipeline import check_model, reconcile
from fissure.ingest.workers import Outcome
from fissure.ingest.writer import Writer
from fissure.serve.jobs import DEFAULT_NAMESPACE, NAMESPACE
from fissure.serve.rpc import Opening
from fissure.store.manifest import Failure, ManifestProtocol
from fissure.store.open import LazyChroma, close_store, is_database, open_store
from fissure.store.protocol import Store

log = logging.getLogger("fissure.serve")
REQUEST_WAIT = 2.0  # seconds a query, chunk read or delete waits for a namespace being opened


def origin_of(namespace: str) -> str:
    """The manifest origin of a namespace."""
    return f"serve:{namespace}"


@dataclass
class _Space:
    store: Store
    manifest: ManifestProtocol
    writer: Writer
    lock: threading.Lock


class Spaces:
    """The namespaces' stores, opened on first use.

    Args:
        folder: The store folder, or a ``postgresql://…`` database.
        embedder: The service's embedder.
        stamp: The settings fingerprint.
        window_share: ``ChunkSettings.embed_window_share``.
        embed_headings: ``ChunkSettings.embed_headings``.
    """

    def __init__(
        self,
        folder: str | Path,
        embedder: Embedder,
        stamp: str,
        *,
        window_share: float = 0.6,
        embed_headings: bool = False,
    ) -> None:
        self.folder = folder
        self.embedder = embedder
        self.stamp = stamp
        self.window_share = window_share
        self.embed_headings = embed_headings
        self._spaces: dict[str, _Space] = {}
        self._guard = threading.Lock()  # the table of open namespaces
        self._opening = threading.Lock()  # held while a namespace opens: one at a time

    def open(self, namespace: str, wait: float | None = None) -> _Space:
        """A namespace's store, manifest and writer, opened on first use.

        Args:
            namespace: The namespace.
            wait: Seconds to wait while another thread opens a namespace (``None``: as
                long as it takes).

        Raises:
            Opening: It is still being opened after ``wait`` seconds.
            ConfigError: Its store was built with another embedder (another width, or
                another variant of the model: vectors that would not match the queries').
        """
        with self._guard:
            found = self._spaces.get(namespace)
        if found is not None:
            return found
        if not self._opening.acquire(timeout=-1 if wait is None else wait):
            raise Opening(f"namespace {namespace} is opening (namespaces open one at a time, "
                          "on first use since the service started): retry in a moment")  # fmt: skip
        try:
            with self._guard:
                found = self._spaces.get(namespace)
            if found is None:
                found = self._open(namespace)
                with self._guard:
                    self._spaces[namespace] = found
            return found
        finally:
            self._opening.release()

    def _open(self, namespace: str) -> _Space:
        """Open a namespace whole (called with the opening lock held)."""
        store, manifest = open_store(self.folder, namespace=namespace)
        try:
            if isinstance(store, LazyChroma):
                store.count()  # opens Chroma here, under the lock, not in a request's thread
            check_model(manifest, self.embedder, self.folder, same_model=True)
            reconcile(store, manifest)  # what a killed engine left half-written
        except BaseException:
            manifest.close()
            close_store(store)
            raise
        writer = Writer(store, manifest, self.embedder, origin_of(namespace), self.stamp, {},
                        window_share=self.window_share,
                        embed_headings=self.embed_headings)  # fmt: skip
        return _Space(store, manifest, writer, threading.Lock())

    def recover(self) -> list[str]:
        """Open every namespace the folder holds, which undoes half-written documents;
        returns the names of those that opened (one that cannot is logged: its jobs will
        fail with the reason).

        Raises:
            ConfigError: The default namespace cannot be used (the service cannot work).
        """
        default = self.open(DEFAULT_NAMESPACE)
        names = [DEFAULT_NAMESPACE]
        if is_database(self.folder):
            # Only namespaces with documents marked pending can hold half-written ones
            # (of this engine or another that died); the rest open at their first job.
            pending = getattr(default.manifest, "pending_namespaces", list)
            others = [n for n in pending() if n != DEFAULT_NAMESPACE]
        else:
            under = Path(self.folder) / "namespaces"
            others = sorted(p.name for p in under.iterdir()) if under.is_dir() else []
        for name in others:
            if NAMESPACE.match(name):
                try:
                    self.open(name)
                    names.append(name)
                except ConfigError as exc:
                    log.warning("namespace %s cannot be used: %s", name, exc)
        return names

    def write(
        self, namespace: str, group: Sequence[Outcome], digests: dict[str, str]
    ) -> list[Failure]:
        """Embed and store one group of a namespace's documents; returns its failures."""
        space = self.open(namespace)
        writer = space.writer
        with space.lock:
            writer.digests.update(digests)
            writer.timings.failures = []  # this group's, and nothing kept between groups
            try:
                writer.write(group)
                return writer.timings.failures
            finally:
                writer.timings.failures = []
                for source in digests:
                    writer.digests.pop(source, None)

    def delete(self, namespace: str, source: str) -> None:
        """Remove a document's chunks and pieces, then its manifest rows."""
        space = self.open(namespace, REQUEST_WAIT)
        with space.lock:
            space.store.delete_sources([source])
            space.manifest.forget([source])

    def query(
        self, namespace: str, vector: Any, k: int, where: dict[str, Any] | None,
        sub_weight: float | None, text: str | None = None, mode: str | None = None,
    ) -> list[tuple[str, float, str, dict[str, Any]]]:  # fmt: skip
        """The ``k`` best chunks of a namespace (``mode``, ``text``: as
        :meth:`fissure.store.protocol.Store.query`): ``(chunk_id, score, text, metadata)``."""
        store = self.open(namespace, REQUEST_WAIT).store
        hits = store.query(vector, k, where, sub_weight=sub_weight, text=text, mode=mode)
        return [(h.chunk_id, h.score, h.text, h.metadata) for h in hits]

    def chunks(self, namespace: str, source: str) -> list[tuple[str, str, dict[str, Any]]]:
        """A document's stored chunks, in order.

        Raises:
            InputError: The store cannot list a document's chunks.
        """
        items = getattr(self.open(namespace, REQUEST_WAIT).store, "source_items", None)
        if items is None:
            raise InputError("this store cannot list a document's chunks")
        return list(items(source))

    def close(self) -> None:
        """Close every manifest and store."""
        with self._opening, self._guard:
            for space in self._spaces.values():
                space.manifest.close()
                close_store(space.store)
            self._spaces.clear()
