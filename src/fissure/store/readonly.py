"""Reading a store that cannot be written (a read-only mount, a shared snapshot, a full
disk), and the one line a write gets there instead of a traceback.

Search is a read: ``fissure query``, ``status`` and ``dlq list`` open a store with
``open_store(..., read_only=True)``, which writes nothing in the folder: no lock file, no
rebuilt index, no schema, and Chroma is not opened (it writes on every open:
:mod:`fissure.store.chroma_reader`).

**SQLite files** (the manifest, the lexical index, Chroma's ``chroma.sqlite3``) are
opened with a ``file:…?mode=ro`` URI, which keeps SQLite's locking, so a read next to a
running ingest sees whole transactions. The manifest and the lexical index are in WAL
mode, where a reader needs the ``-shm`` and ``-wal`` files beside the database: SQLite
creates them, empty, when they are missing (the next writer reuses them), and a
read-only folder or a full disk refuses that. There the file is opened ``immutable=1``
(no locks, no side files; also on a disk with under :data:`LOW_SPACE` free, where SQLite
would leave a stub ``-shm``), which is only right when no ``-wal`` holds pages that are not
in the file yet: a clean close leaves none, a killed writer may. That last case, where
the ``-shm`` cannot be made either, is an error that says what to do.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

from fissure.errors import ConfigError, DiskFullError

LOW_SPACE = 1 << 20  # bytes free under which an ambiguous write error is a full disk
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)
_FULL = (errno.ENOSPC, errno.EDQUOT)


def connect(path: Path) -> sqlite3.Connection:
    """The SQLite file ``path``, opened for reading only (it is never written or created).

    Raises:
        ConfigError: It is missing or cannot be read.
    """
    if not path.is_file():
        raise ConfigError(f"cannot read {path}: there is no such file")
    wal = path.with_name(path.name + "-wal")
    pending = wal.is_file() and wal.stat().st_size > 0
    # mode=ro first where SQLite can make its -shm (it keeps the locks; on a full disk it
    # would leave a stub); immutable=1 only when the file alone holds every committed page.
    can_make = os.access(path.parent, os.W_OK) and _free(path.parent) >= LOW_SPACE
    modes = ["mode=ro"] if pending or can_make else []
    modes += [] if pending else ["immutable=1"]
    error: sqlite3.Error | None = None
    for mode in modes:
        conn = None
        try:
            conn = sqlite3.connect(f"{path.absolute().as_uri()}?{mode}", uri=True, timeout=60,
                                   check_same_thread=False)  # fmt: skip
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens it now
            return conn
        except sqlite3.Error as exc:
            error = exc
            if conn is not None:
                conn.close()
    hint = ""
    if pending:
        hint = (f"; its write-ahead log {wal.name} holds writes that are not in the file yet, "
                f"which SQLite reads only beside a {path.name}-shm it could not create here: "
                "copy the store with its -wal and -shm files, or open it once where it can be "
                "written (fissure ingest) so that the log is folded in")  # fmt: skip
    raise ConfigError(f"cannot read {path}: {error}{hint}")


def refusal(folder: Path, exc: BaseException, what: str) -> str | None:
    """What to tell the user when writing ``what`` in the store ``folder`` failed with
    ``exc`` because the folder is read-only or its disk is full (``None``: some other
    failure). Callers raise it as :class:`~fissure.errors.ConfigError` when the store
    cannot be opened, :class:`~fissure.errors.StoreError` when a write was refused."""
    text = str(exc).lower()
    code = getattr(exc, "errno", None)
    if code in _READ_ONLY or "readonly" in text or "read-only" in text or not writable(folder):
        return read_only_message(folder, f"{what}: {exc}")
    if code in _FULL or "full" in text or "no space" in text or _free(folder) < LOW_SPACE:
        return (f"the store in {folder} cannot be written: its disk is full ({what}: {exc}); "
                "free some space and run the ingest again, which redoes whatever this run "
                "left unfinished (what the store holds is intact)")  # fmt: skip
    return None


# Room a write must find free beyond its own estimate: SQLite's journal and Chroma's log
# and index files grow in steps, and a full disk stops Chroma's writer without an error.
ROOM_MARGIN = 8 << 20


def check_room(folder: Path, rows: int, width: int, text_bytes: int) -> None:
    """Refuse a write of ``rows`` vectors of ``width`` floats and ``text_bytes`` of text
    when the disk under ``folder`` lacks room for it: chromadb 1.5 waits forever on a disk
    that fills under it, so a write that might fill it is not started.

    Raises:
        DiskFullError: Less is free than about four copies of the vectors (the index, its
            log, the exact copy), three of the text (record, full-text and lexical
            indexes) and :data:`ROOM_MARGIN`.
    """
    need = rows * (16 * width + 512) + 3 * text_bytes + ROOM_MARGIN
    free = _free(folder)
    if free < need:
        raise DiskFullError(
            f"the store in {folder} cannot be written: its disk is full ({free >> 20} MiB "
            f"free, a write of {rows:,} records needs about {need >> 20} MiB); free some "
            "space and run the ingest again, which redoes whatever this run left unfinished "
            "(what the store holds is intact)"
        )


def read_only_message(folder: Path, why: str = "") -> str:
    """What a write to a read-only store is told (``why``: the refusal, if there was one)."""
    detail = f" ({why})" if why else ""
    return (f"the store in {folder} is read-only{detail}: fissure ingest, dlq retry and "
            "dlq clear need to write there; fissure query, status and dlq list read it as "
            "it is")  # fmt: skip


def check_writable(folder: Path) -> None:
    """Refuse a store folder that cannot be written, before a write is attempted: one clear
    line, rather than whichever error the first write happens to hit.

    Raises:
        ConfigError: The folder (or the nearest folder above it that exists) is read-only.
    """
    if not writable(folder):
        raise ConfigError(read_only_message(folder))


def writable(folder: Path) -> bool:
    """Whether files can be made in ``folder`` (or, if it does not exist yet, in the
    nearest folder above it that does)."""
    return os.access(_existing(folder), os.W_OK)


def _free(folder: Path) -> int:
    try:
        return shutil.disk_usage(_existing(folder)).free
    except OSError:
        return LOW_SPACE  # unknown: not evidence of a full disk


def _existing(folder: Path) -> Path:
    """``folder``, or the nearest folder above it that exists."""
    at = folder.absolute()
    while not at.exists() and at != at.parent:
        at = at.parent
    return at
