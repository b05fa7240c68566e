"""Embedding as a shared service: OpenAI's ``POST /v1/embeddings`` over one embedder, with
texts batched across concurrent requests (``fissure embed-serve``; docs/embedding-service.md).

Needs the ``serve`` extra (FastAPI, uvicorn, prometheus-client); the batcher alone needs
nothing more than the embedder.
"""

from fissure.embed.service.batcher import Batcher, Closed, EmbedFailed, Overloaded

__all__ = ["Batcher", "Closed", "EmbedFailed", "Overloaded", "embedding_app"]


def __getattr__(name: str) -> object:
    if name == "embedding_app":  # FastAPI only when the app is asked for
        from fissure.embed.service.app import embedding_app

        return embedding_app
    raise AttributeError(name)
