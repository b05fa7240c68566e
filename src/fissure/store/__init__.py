"""Stores: the :class:`Store` protocol, the default Chroma store and the manifest;
:func:`open_store` opens either kind (a folder, or ``postgresql://…``).

``chromadb`` is imported only when a :class:`ChromaStore` is built, ``psycopg`` only when a
PostgreSQL store is opened.
"""

from fissure.store.chroma import ChromaStore
from fissure.store.manifest import Entry, Failure, Manifest, ManifestProtocol
from fissure.store.open import open_store
from fissure.store.protocol import Hit, Piece, Store

__all__ = ["ChromaStore", "Entry", "Failure", "Hit", "Manifest", "ManifestProtocol", "Piece",
           "Store", "open_store"]  # fmt: skip
