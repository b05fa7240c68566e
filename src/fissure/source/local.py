"""A folder (or one file) on disk as a :class:`~fissure.source.protocol.Source`."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from fissure.errors import InputError
from fissure.source.files import DEFAULT_MAX_BYTES, iter_files
from fissure.source.names import path_name
from fissure.source.protocol import Item
from fissure.source.read import Skipped, read_file


class FolderSource:
    """Files under a folder, walked as :func:`~fissure.source.iter_files` does.

    Documents are named by their absolute path (:func:`~fissure.source.names.path_name`:
    as it is when it is UTF-8, else as a ``file://`` URI), so the ids do not depend on the
    current directory. Every read is bounded by ``max_bytes``, and a file is hashed and
    chunked from the same bounded read's bytes: the listing hashes it, and the read
    for chunking checks that hash again (a file that changed since is stored as it is
    now, under its new hash).

    Args:
        path: A folder or a file.
        max_bytes: Larger files are listed as skipped.
        follow_outside_links: Follow links whose target is outside the folder.

    Raises:
        InputError: The path does not exist.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        follow_outside_links: bool = False,
    ) -> None:
        self.root = Path(path).resolve()
        if not self.root.exists():
            raise InputError(f"no such file or folder: {path_name(path)}")
        self.origin = f"file:{path_name(self.root)}"
        self.max_bytes = max_bytes
        self.follow_outside_links = follow_outside_links
        self._inside = os.fspath(self.root) if self.root.is_dir() else None

    def scan(self) -> Iterator[Item]:
        """Every file, hashed (blake2b of its bytes, read at most ``max_bytes`` + 1)."""
        found_all = iter_files([self.root], max_bytes=self.max_bytes,
                               follow_outside_links=self.follow_outside_links)  # fmt: skip
        for found in found_all:
            name, ref = path_name(found.path), os.fspath(found.path)
            skip = found.skip
            if skip is None:
                try:
                    data = self._read(ref)
                except Skipped as exc:
                    skip = str(exc)
                else:
                    yield Item(name, _digest(data), ref, len(data))
                    continue
            yield Item(name, "skip:" + _digest(skip.encode("utf-8", "replace")), ref, skip=skip)

    def fetch(self, items: Iterable[Item]) -> Iterator[tuple[Item, bytes | Exception]]:
        """Read each file again, as boundedly; an item whose bytes changed since the
        listing comes back with the new hash and size."""
        for item in items:
            try:
                data = self._read(item.ref)
            except Skipped as exc:
                yield item, exc
                continue
            digest = _digest(data)
            yield (item if digest == item.digest else replace(item, digest=digest,
                                                               size=len(data))), data  # fmt: skip

    def _read(self, ref: str) -> bytes:
        return read_file(ref, max_bytes=self.max_bytes, root=self._inside,
                         follow_outside_links=self.follow_outside_links)  # fmt: skip


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()
