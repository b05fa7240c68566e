"""The ids of stored records, derived once for every backend.

A chunk's id is its own (``Chunk.chunk_id``: content-addressed from the document id, the
offsets and the text). A sentence piece's id is a hash of its source, offsets and text; a
piece is stored once per chunk it overlaps, and each of those records (a *link*) is keyed by
the piece and the chunk together. Chroma and PostgreSQL key their records with these same
functions, so the two stores hold the same ids for the same input.
"""

from __future__ import annotations

import hashlib

ID_CHARS = 32  # hex digits kept of a sha256: 128 bits, ids never collide in practice


def piece_id(source: str, start: int, end: int, text: str) -> str:
    """A sentence piece's id: a hash of its source, offsets and text (lone surrogates in a
    source that is not UTF-8 are hashed as they are)."""
    raw = f"{source}\0{start}\0{end}\0{text}"
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:ID_CHARS]


def link_id(piece: str, chunk: str) -> str:
    """The id of the record that links the piece ``piece`` (a :func:`piece_id`) to the
    chunk ``chunk`` (a ``chunk_id``) it overlaps."""
    return hashlib.sha256(f"{piece}\0{chunk}".encode()).hexdigest()[:ID_CHARS]
