"""The store folder's lock: ``flock`` between processes, an ``RLock`` between threads.

Writers of the exact copy (and of Chroma, inside the same lock) hold it exclusively;
readers share it while they list and open files. A read-only store folder goes without.
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
def locked(path: Path, exclusive: bool) -> Iterator[None]:
    """The store's lock: ``flock`` between processes, an ``RLock`` between threads, and
    re-entrant within a thread (a writer may read the rows it is about to change)."""
    with _HELD_GUARD:
        guard, depth = _HELD.setdefault(str(path), (threading.RLock(), [0]))
    with guard:
        depth[0] += 1
        try:
            if depth[0] > 1 or fcntl is None:
                yield
            else:
                with _flocked(path, exclusive):
                    yield
        finally:
            depth[0] -= 1


@contextmanager
def _flocked(path: Path, exclusive: bool) -> Iterator[None]:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        try:  # a read-only store: share the lock if the file is there, else go without
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            yield
            return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)
