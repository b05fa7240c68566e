"""What every source provides: a listing with content hashes, then the bytes on demand.

Listing first and reading later lets the ingest pipeline compare each document's hash with
its manifest and read only what changed; git and GitHub even give the hash for free (the
blob id), so an unchanged repository is never read at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Item:
    """One document of a source.

    Attributes:
        source: Stable id of the document; it ends with the file's path, so its extension
            is evidence for format detection.
        digest: Content hash (blake2b for files, the blob id for git and GitHub).
        ref: Where the source finds the bytes again (a path, a blob id).
        size: Size in bytes, when known (``-1`` otherwise).
        skip: Set when the document will not be read, with the reason.
    """

    source: str
    digest: str
    ref: str
    size: int = -1
    skip: str | None = None


class Source(Protocol):
    """A corpus: local folder, git revision, GitHub repository …

    Attributes:
        origin: Stable id of the corpus; documents that vanish from it are deleted.
    """

    origin: str

    def scan(self) -> Iterator[Item]:
        """Every document, with its content hash, without necessarily reading it."""
        ...

    def fetch(self, items: Iterable[Item]) -> Iterator[tuple[Item, bytes | Exception]]:
        """The bytes of ``items`` (in any order); a document that cannot be read comes back
        with its exception instead, so one bad document never ends the run."""
        ...
