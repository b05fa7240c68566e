"""Embeddings: the :class:`Embedder` protocol, MiniLM, static, HTTP and a disk cache.

Providers import their heavy dependencies (torch, sentence-transformers, model2vec,
httpx) only when an embedder is built, so importing this package is cheap.
"""

from fissure.embed.cache import CachedEmbedder
from fissure.embed.hashing import HashingEmbedder
from fissure.embed.lazy import LazyEmbedder
from fissure.embed.load import lazy_embedder, load_embedder
from fissure.embed.minilm import MiniLM, SentenceTransformerEmbedder
from fissure.embed.protocol import Embedder
from fissure.embed.remote import EmbeddingServiceError, HttpEmbedder
from fissure.embed.static import StaticEmbedder, default_static_dir, distill_minilm

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "EmbeddingServiceError",
    "HashingEmbedder",
    "HttpEmbedder",
    "LazyEmbedder",
    "MiniLM",
    "SentenceTransformerEmbedder",
    "StaticEmbedder",
    "default_static_dir",
    "distill_minilm",
    "lazy_embedder",
    "load_embedder",
]
