"""The store folder's lock: ``flock`` between processes, an ``RLock`` between threads.

Writers of the exact copy (and of Chroma, inside the same lock) hold it exclusively;
readers share it while they list and open files. A read-only store folder goes without,
and a reader that must not write (``create=False``) never makes the lock file.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: one writer at a time is up to the user
    fcntl = None  # type: ignore[assignment]

_HELD: dict[str, tuple[threading.RLock, list[int]]] = {}
_HELD_GUARD = threading.Lock()


@contextmanager
def locked(path: Path, exclusive: bool, create: bool = True) -> Iterator[None]:
    """The store's lock: ``flock`` between processes, an ``RLock`` between threads, and
    re-entrant within a thread (a writer may read the rows it is about to change).
    ``create``: make the lock file (and its folder) when missing; a read-only reader
    shares the lock only if the file is there."""
    with _HELD_GUARD:
        guard, depth = _HELD.setdefault(str(path), (threading.RLock(), [0]))
    with guard:
        depth[0] += 1
        try:
            if depth[0] > 1 or fcntl is None:
                yield
            else:
                with _flocked(path, exclusive, create):
                    yield
        finally:
            depth[0] -= 1


@contextmanager
def _flocked(path: Path, exclusive: bool, create: bool) -> Iterator[None]:
    fd = _open(path, create)
    if fd is None:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


def _open(path: Path, create: bool) -> int | None:
    """The lock file's descriptor (made if missing and ``create``), or ``None``: none is
    there and none can or may be made."""
    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            pass
    try:  # a read-only store: share the lock if the file is there, else go without
        return os.open(path, os.O_RDONLY)
    except OSError:
        return None
