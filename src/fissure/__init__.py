"""fissure: split documents into retrieval chunks along their natural fault lines."""

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
]
__version__ = "0.1.0"
