"""Stores: the :class:`Store` protocol, the default Chroma store and the manifest.

``chromadb`` is imported only when a :class:`ChromaStore` is built.
"""

from fissure.store.chroma import ChromaStore
from fissure.store.manifest import Entry, Failure, Manifest
from fissure.store.protocol import Hit, Piece, Store

__all__ = ["ChromaStore", "Entry", "Failure", "Hit", "Manifest", "Piece", "Store"]
