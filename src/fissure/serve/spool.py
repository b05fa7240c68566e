"""The spool: uploaded bytes on disk, named by their sha256, durable before a 202.

An upload is hashed and counted as it arrives (:class:`Incoming`). A small one (up to
``IN_MEMORY``) stays in memory: the API stores it in the job queue, in the transaction that
queues its job (:meth:`Incoming.held`; see ``commits``). A larger one streams into ``tmp/``;
when it is complete the file is fsynced, renamed to ``objects/<2 hex>/<sha256>`` and the
folder is fsynced, so the bytes survive a crash once :meth:`Incoming.finish` returns
(:meth:`Spool.put` does the same for bytes the server read from a source). The API ends an
upload in two steps: :meth:`Incoming.complete` on the event loop (the hash and first bytes,
to judge the file), then the queue's commit or :meth:`Incoming.finish` in a thread. The
same bytes uploaded twice are one file. Client file names never reach the file system.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from fissure.errors import InputError

HEAD = 8192  # bytes kept for sniffing the format in the API
IN_MEMORY = 256 * 1024  # an upload up to this size is held in memory until it is finished


class TooLarge(InputError):
    """An upload is over its byte limit."""


@dataclass(frozen=True, slots=True)
class Spooled:
    """A file in the spool: its hash, size and first bytes."""

    digest: str
    size: int
    head: bytes


class Spool:
    """Content-addressed files under ``folder``.

    Args:
        folder: The spool folder (``<store>/spool``), created if missing.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.objects = self.folder / "objects"
        self.tmp = self.folder / "tmp"
        self.objects.mkdir(parents=True, exist_ok=True)
        self.tmp.mkdir(parents=True, exist_ok=True)

    def writable(self) -> bool:
        """Whether this process may write into the spool (not a read-only mount, say)."""
        return os.access(self.tmp, os.W_OK) and os.access(self.objects, os.W_OK)

    def path(self, digest: str) -> Path:
        """Where the bytes of ``digest`` are."""
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            raise InputError(f"not a spool digest: {digest[:80]!r}")
        return self.objects / digest[:2] / digest

    def incoming(self, limit: int) -> Incoming:
        """A new file to stream into, refused past ``limit`` bytes."""
        return Incoming(self, limit)

    def read(self, digest: str) -> bytes:
        """The bytes of ``digest``.

        Raises:
            InputError: They are not in the spool (purged, or the disk lost them).
        """
        try:
            return self.path(digest).read_bytes()
        except FileNotFoundError:
            raise InputError(
                f"the uploaded bytes {digest[:12]}… are no longer spooled; "
                "upload the document again"
            ) from None

    def put(self, data: bytes) -> Spooled:
        """Spool ``data`` held in memory (documents the server read from a source)."""
        incoming = self.incoming(len(data) + 1)
        try:
            incoming.write(data)
            return incoming.finish()
        finally:
            incoming.discard()

    def delete(self, digest: str) -> None:
        """Remove the bytes of ``digest`` (nothing if they are gone already)."""
        with contextlib.suppress(FileNotFoundError):
            self.path(digest).unlink()

    def stale(self, older_than: float) -> Iterator[str]:
        """Digests of files not written or re-spooled since ``older_than`` (Unix time), and
        left-over partial uploads of that age are removed on the way."""
        for leftover in self.tmp.iterdir():
            with contextlib.suppress(FileNotFoundError):
                if leftover.stat().st_mtime < older_than:
                    leftover.unlink()
        for shard in self.objects.iterdir():
            for blob in shard.iterdir():
                with contextlib.suppress(FileNotFoundError):
                    if blob.stat().st_mtime < older_than:
                        yield blob.name


class Incoming:
    """One upload being written: :meth:`write` its bytes, then :meth:`finish` (or
    :meth:`discard`). Not thread-safe; one per upload."""

    def __init__(self, spool: Spool, limit: int) -> None:
        self.spool = spool
        self.limit = limit
        self.size = 0
        self._hash = hashlib.sha256()
        self._head = bytearray()
        self._path: Path | None = None  # named when the bytes first go to a file
        # Most uploads are small: they stay in memory (held() hands them to the queue's
        # transaction), and only a large one is streamed to a file as it comes.
        self._memory: bytearray | None = bytearray()
        self._file: BinaryIO | None = None
        self._done: Spooled | None = None

    def write(self, data: bytes) -> None:
        """Append bytes.

        Raises:
            TooLarge: The file went over its limit (it is discarded).
        """
        self.size += len(data)
        if self.size > self.limit:
            self.discard()
            raise TooLarge(f"the file is over the {self.limit:,}-byte limit")
        self._hash.update(data)
        if len(self._head) < HEAD:
            self._head += data[: HEAD - len(self._head)]
        if self._memory is not None and self.size <= IN_MEMORY:
            self._memory += data
            return
        self._spill().write(data)

    def _spill(self) -> BinaryIO:
        """The file the bytes go to (made, with what memory held, on first need)."""
        if self._file is None:
            self._path = self.spool.tmp / uuid.uuid4().hex
            self._file = open(self._path, "wb")  # noqa: SIM115 - closed by finish or discard
            if self._memory:
                self._file.write(self._memory)
            self._memory = None
        return self._file

    def complete(self) -> Spooled:
        """The upload is whole: what it is (hash, size, first bytes). Not durable yet —
        :meth:`finish` makes it so; no more :meth:`write` after this."""
        if self._done is None:
            self._done = Spooled(self._hash.hexdigest(), self.size, bytes(self._head))
        return self._done

    def held(self) -> bytes | None:
        """The whole upload when it is still in memory (none of it went to a file): the
        API then stores it with its job row instead of in a file (see ``commits``)."""
        if self._file is not None or self._memory is None:
            return None
        return bytes(self._memory)

    def finish(self) -> Spooled:
        """Make the file durable under its hash and return what it is."""
        done = self.complete()
        target = self.spool.path(done.digest)
        if target.exists() and self._file is None:
            # Same bytes already spooled: keep that file, and mark it fresh so the purge,
            # which only removes files older than the retention, cannot race this upload.
            os.utime(target, (time.time(), time.time()))
            self._memory = None
            return done
        file = self._spill()
        file.flush()
        os.fsync(file.fileno())
        file.close()
        shard = target.parent
        if not shard.is_dir():
            shard.mkdir(exist_ok=True)
            _fsync_dir(self.spool.objects)
        assert self._path is not None  # _spill named it
        if target.exists():
            os.utime(target, (time.time(), time.time()))  # as above
            self._path.unlink()
        else:
            os.replace(self._path, target)
            _fsync_dir(shard)
        return done

    def discard(self) -> None:
        """Drop the partial upload."""
        self._memory = None
        if self._file is not None and self._path is not None:
            self._file.close()
            with contextlib.suppress(FileNotFoundError):
                self._path.unlink()


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
