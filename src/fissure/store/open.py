"""A store and its manifest from what the user wrote for ``--store``.

A folder is the embedded default: Chroma under ``FOLDER/chroma`` and the SQLite manifest in
``FOLDER/manifest.sqlite3`` (one run at a time). ``postgresql://…`` (or ``postgres://…``) is
the shared one: chunks, vectors, manifest and dead letters in one PostgreSQL database with
pgvector, for any number of runs at once. A namespace other than ``default`` is a separate
store: another namespace in the database, or the folder ``FOLDER/namespaces/NAME``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fissure.errors import ConfigError, MissingDependencyError
from fissure.store.manifest import FILENAME, Manifest, ManifestProtocol
from fissure.store.protocol import Hit, Piece, Store
from fissure.store.readonly import check_writable
from fissure.types import Chunk

if TYPE_CHECKING:
    from fissure.store.chroma import ChromaStore

DEFAULT_NAMESPACE = "default"
_SCHEMES = ("postgresql://", "postgres://")
_NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def is_database(spec: str | Path) -> bool:
    """Whether ``spec`` names a PostgreSQL database rather than a folder."""
    return str(spec).startswith(_SCHEMES)


def open_store(
    spec: str | Path,
    *,
    namespace: str = DEFAULT_NAMESPACE,
    create: bool = True,
    read_only: bool = False,
) -> tuple[Store, ManifestProtocol]:
    """The store and the manifest that ``spec`` names.

    Args:
        spec: A folder, or ``postgresql://user:password@host:port/database``.
        namespace: Which store inside it (letters, digits, ``_.-``).
        create: Make a new store when there is none; when false, there must be one.
        read_only: Only read (``fissure query``, ``status``, ``dlq list``): nothing in the
            folder is written or created, so a store on a read-only mount, a shared
            snapshot or a full disk can be searched (:mod:`fissure.store.chroma_reader`);
            every write raises :class:`~fissure.errors.StoreError`. There must be a
            store. A database store opens as usual.

    Raises:
        ConfigError: The namespace is malformed; ``create`` is false (or ``read_only``
            true) and there is no store; it cannot be read; or, to write, the folder is
            read-only or its disk is full (the message says which).
        StoreError: The database cannot be reached or lacks pgvector.
        MissingDependencyError: The database needs ``fissure[postgres]``.
    """
    if not _NAMESPACE.fullmatch(namespace):
        raise ConfigError(f"namespace {namespace!r}: use 1-128 letters, digits, '_', '.', '-'")
    if is_database(spec):
        from fissure.store.pg_manifest import PostgresManifest
        from fissure.store.pg_schema import redact
        from fissure.store.postgres import PostgresStore

        manifest = PostgresManifest(str(spec), namespace)
        if not create and manifest.get_meta("dim") is None:
            manifest.close()
            raise ConfigError(f"no store in {redact(str(spec))} (namespace {namespace}): run "
                              "`fissure ingest PATH --store URL` first")  # fmt: skip
        return PostgresStore(str(spec), namespace), manifest
    folder = Path(spec)
    if namespace != DEFAULT_NAMESPACE:
        folder = folder / "namespaces" / namespace
    if (read_only or not create) and not (folder / FILENAME).is_file():
        raise ConfigError(f"no store in {folder}: run `fissure ingest PATH --store {spec}` first")
    if read_only:
        return LazyChroma(folder / "chroma", read_only=True), Manifest(folder, read_only=True)
    check_writable(folder)  # one clear line now, not whichever error the first write meets
    return LazyChroma(folder / "chroma"), Manifest(folder)


def built_with(spec: str | Path, namespace: str = DEFAULT_NAMESPACE) -> str | None:
    """The embedder spec the store ``spec`` names was built with
    (:func:`fissure.embed.load.stored_embedder`); ``None`` where there is no store yet or
    it records none."""
    from fissure.embed.load import stored_embedder

    try:
        store, manifest = open_store(spec, namespace=namespace, create=False, read_only=True)
    except ConfigError:
        return None
    try:
        return stored_embedder(manifest)
    finally:
        manifest.close()
        store.close()


def embedder_for(spec: str, store: str | Path | None) -> str:
    """The embedder variant a run on ``store`` uses: ``spec`` as this machine runs it
    (:func:`fissure.embed.load.resolve`), except that the default (``minilm:auto``) keeps
    the variant the store was built with (:func:`built_with`; a store made with the exact
    fp32 MiniLM stays exact). ``store`` ``None``: nothing to keep."""
    from fissure.embed.load import AUTO, resolve

    kept = built_with(store) if spec == AUTO and store is not None else None
    return kept or resolve(spec)


def cache_folder(spec: str | Path) -> Path:
    """Where the GitHub source keeps its ETag cache for the store ``spec`` names: in the
    store folder, or in ``.fissure/`` for a database store."""
    return Path(".fissure") / "http-cache" if is_database(spec) else Path(spec) / "http-cache"


def close_store(store: Store) -> None:
    """Close a store (:meth:`Store.close <fissure.store.protocol.Store.close>`)."""
    store.close()


class LazyChroma:
    """The default store, opened on first use: a run with nothing to change never pays
    for importing and opening Chroma (seconds), which keeps no-change re-runs instant.

    The :class:`~fissure.store.protocol.Store` methods are its own; any other attribute
    is the opened :class:`~fissure.store.chroma.ChromaStore`'s.

    Args:
        folder: Where Chroma keeps its files.
        read_only: Open a :class:`~fissure.store.chroma_reader.ReadOnlyChroma` instead,
            which reads the folder without writing to it.
    """

    def __init__(self, folder: Path, read_only: bool = False) -> None:
        import importlib.util

        # Found (not imported) now: a missing chromadb is one clear error before the run,
        # not a dead letter per document when the first batch is written.
        if importlib.util.find_spec("chromadb") is None:
            raise MissingDependencyError("chromadb", purpose="the vector store")
        self.folder = folder
        self.read_only = read_only
        self._store: ChromaStore | None = None

    def _opened(self) -> ChromaStore:
        if self._store is None:
            if self.read_only:
                from fissure.store.chroma_reader import ReadOnlyChroma

                self._store = ReadOnlyChroma(self.folder)
            else:
                from fissure.store.chroma import ChromaStore

                self._store = ChromaStore(self.folder)
        return self._store

    def upsert(self, chunks: Sequence[Chunk], embeddings: np.ndarray) -> None:
        """:meth:`ChromaStore.upsert <fissure.store.chroma.ChromaStore.upsert>`."""
        self._opened().upsert(chunks, embeddings)

    def upsert_pieces(self, pieces: Sequence[Piece], embeddings: np.ndarray) -> None:
        """:meth:`ChromaStore.upsert_pieces <fissure.store.chroma.ChromaStore.upsert_pieces>`."""
        self._opened().upsert_pieces(pieces, embeddings)

    def delete_sources(self, sources: Sequence[str]) -> None:
        """:meth:`ChromaStore.delete_sources <fissure.store.chroma.ChromaStore.delete_sources>`."""
        self._opened().delete_sources(sources)

    def query(
        self,
        vector: np.ndarray | None,
        k: int = 5,
        where: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> list[Hit]:
        """:meth:`ChromaStore.query <fissure.store.chroma.ChromaStore.query>` (its keyword
        options included)."""
        return self._opened().query(vector, k, where, **options)

    def count(self) -> int:
        """:meth:`ChromaStore.count <fissure.store.chroma.ChromaStore.count>`."""
        return self._opened().count()

    def count_pieces(self) -> int:
        """:meth:`ChromaStore.count_pieces <fissure.store.chroma.ChromaStore.count_pieces>`."""
        return self._opened().count_pieces()

    def items(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """:meth:`ChromaStore.items <fissure.store.chroma.ChromaStore.items>`."""
        return self._opened().items()

    def source_items(self, source: str) -> list[tuple[str, str, dict[str, Any]]]:
        """:meth:`ChromaStore.source_items <fissure.store.chroma.ChromaStore.source_items>`."""
        return self._opened().source_items(source)

    def pieces(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """:meth:`ChromaStore.pieces <fissure.store.chroma.ChromaStore.pieces>`."""
        return self._opened().pieces()

    def close(self) -> None:
        """Close the store if it was opened (nothing to do otherwise)."""
        if self._store is not None:
            self._store.close()

    def __getattr__(self, name: str) -> Any:
        if name == "_store":  # not set yet (a copy being built): never recurse
            raise AttributeError(name)
        return getattr(self._opened(), name)
