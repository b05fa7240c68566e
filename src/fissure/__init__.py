"""fissure: split documents into retrieval chunks along their natural fault lines."""

from typing import Any

from fissure.chunker import Chunker, chunk
from fissure.config import ChunkSettings
from fissure.errors import ConfigError, FissureError, InputError
from fissure.size import Sizer
from fissure.types import Block, Chunk, Document

__all__ = [
    "Block",
    "Chunk",
    "ChunkSettings",
    "Chunker",
    "ConfigError",
    "Document",
    "FissureError",
    "InputError",
    "Sizer",
    "chunk",
    "load_settings",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # load_settings is imported on first use: `import fissure` stays light for chunking.
    if name == "load_settings":
        from fissure.settings import load_settings

        return load_settings
    raise AttributeError(f"module 'fissure' has no attribute {name!r}")
