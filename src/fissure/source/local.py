"""A folder (or one file) on disk as a :class:`~fissure.source.protocol.Source`."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from fissure.errors import InputError
from fissure.source.files import DEFAULT_MAX_BYTES, iter_files
from fissure.source.protocol import Item


class FolderSource:
    """Files under a folder, walked as :func:`~fissure.source.iter_files` does.

    Documents are named by their absolute path, so the ids do not depend on the current
    directory.

    Args:
        path: A folder or a file.
        max_bytes: Larger files are listed as skipped.

    Raises:
        InputError: The path does not exist.
    """

    def __init__(self, path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = Path(path).resolve()
        if not self.root.exists():
            raise InputError(f"no such file or folder: {path}")
        self.origin = f"file:{self.root}"
        self.max_bytes = max_bytes

    def scan(self) -> Iterator[Item]:
        """Every file, hashed (blake2b of its bytes)."""
        for found in iter_files([self.root], max_bytes=self.max_bytes):
            name = str(found.path)
            if found.skip:
                yield Item(name, f"skip:{found.path.stat().st_size}", name, skip=found.skip)
                continue
            try:
                data = found.path.read_bytes()
            except OSError as exc:
                yield Item(name, "unreadable", name, skip=f"cannot read: {exc.strerror or exc}")
                continue
            digest = hashlib.blake2b(data, digest_size=16).hexdigest()
            yield Item(name, digest, name, len(data))

    def fetch(self, items: Iterable[Item]) -> Iterator[tuple[Item, bytes | Exception]]:
        """Read each file again (the OS cache makes the second read cheap)."""
        for item in items:
            try:
                yield item, Path(item.ref).read_bytes()
            except OSError as exc:
                yield item, InputError(f"cannot read {item.ref}: {exc.strerror or exc}")
