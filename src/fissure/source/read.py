"""Reading one file of an untrusted folder: a regular file, inside the folder, bounded.

- Only regular files are opened. A named pipe blocks a reader until a writer comes, a
  device may never end (``/dev/zero``) or act when opened, so the type is checked with
  ``stat`` before opening, and again on the open descriptor (``fstat``): the open itself
  is non-blocking and refuses a final link (``O_NONBLOCK | O_NOFOLLOW``), so an entry
  swapped for a pipe or a link after the listing cannot block or lead elsewhere.
- Inside the folder: the path is resolved (links followed) and must stay under the folder
  being read (its real path), unless following outside links is asked for. On Linux the
  open descriptor's own path (``/proc/self/fd``) is checked too, which also catches a
  folder on the way swapped for a link between the check and the open.
- Bounded: at most ``max_bytes + 1`` bytes are read, whatever ``stat`` said (a file that
  grows after it was listed, a ``/proc`` file that reports 0 bytes).

Every problem is a :class:`Skipped` with the reason, never an ``OSError``.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from fissure.errors import InputError
from fissure.source.names import path_name

DEFAULT_MAX_BYTES = 20_000_000
_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_BINARY", 0)
)
_STEP = 1 << 20  # read size once past what stat promised
OUTSIDE_HINT = "not followed (--follow-outside-links follows it)"


class Skipped(InputError):
    """A file that is not read; the message is the reason."""


def read_file(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    root: str | None = None,
    follow_outside_links: bool = False,
) -> bytes:
    """The bytes of a regular file, at most ``max_bytes`` of them.

    Args:
        path: The file (links are followed within ``root``).
        max_bytes: Larger files are skipped, whether ``stat`` says so or the read finds it.
        root: Real path of the folder the file must stay inside; ``None``: anywhere.
        follow_outside_links: Read it even if it resolves outside ``root``.

    Raises:
        Skipped: Not read, with the reason.
    """
    fd, st = open_regular(path, root=root, follow_outside_links=follow_outside_links)
    try:
        if st.st_size > max_bytes:
            raise Skipped(over_limit(st.st_size, max_bytes))
        data = read_at_most(fd, max_bytes + 1, st.st_size)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise Skipped(
            f"it grew past the {max_bytes:,}-byte limit after it was listed (--max-bytes)"
        )
    return data


def over_limit(size: int, max_bytes: int) -> str:
    """The reason for a file over the size limit."""
    return f"{size:,} bytes is over the {max_bytes:,}-byte limit (--max-bytes)"


def open_regular(
    path: str | os.PathLike[str], *, root: str | None = None, follow_outside_links: bool = False
) -> tuple[int, os.stat_result]:
    """Open a regular file for reading (see the module docstring); the caller closes it.

    Raises:
        Skipped: It is not a regular file, not inside ``root``, or cannot be opened.
    """
    try:
        real = os.path.realpath(path, strict=True)
    except OSError as exc:
        raise Skipped(unreadable(path, exc)) from None
    if root is not None and not follow_outside_links and not inside(real, root):
        raise Skipped(f"a link to {path_name(real)}, outside the folder: {OUTSIDE_HINT}")
    try:
        # Before opening: opening a device can act (a tape rewinds, a watchdog arms).
        before = os.stat(real)
    except OSError as exc:
        raise Skipped(unreadable(path, exc)) from None
    if not stat.S_ISREG(before.st_mode):
        raise Skipped(not_regular(before.st_mode))
    try:
        fd = os.open(real, _FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Skipped("it was replaced by a link after it was listed") from None
        raise Skipped(f"cannot read it: {why(exc)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Skipped(not_regular(st.st_mode))
        if root is not None and not follow_outside_links:
            _check_opened(fd, root)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_at_most(fd: int, limit: int, hint: int = 0) -> bytes:
    """Up to ``limit`` bytes from ``fd``: one read when ``hint`` (the size ``stat`` gave)
    is right, steps of 1 MiB past it."""
    parts: list[bytes] = []
    got = 0
    want = max(hint + 1, 1 << 16)
    while got < limit:
        try:
            part = os.read(fd, min(want, limit - got))
        except BlockingIOError:  # not a regular file after all (checked above): stop
            break
        except OSError as exc:
            raise Skipped(f"cannot read it: {why(exc)}") from None
        if not part:
            break
        parts.append(part)
        got += len(part)
        want = _STEP
    return b"".join(parts)


def inside(path: str, root: str) -> bool:
    """Whether the real path ``path`` is ``root`` or below it."""
    return path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)


def not_regular(mode: int) -> str:
    """The reason for skipping what is not a regular file."""
    return f"not a regular file but {kind(mode)}"


def kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words."""
    for test, name in (
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISLNK, "a link"),
        (stat.S_ISREG, "a regular file"),
    ):
        if test(mode):
            return name
    return "a special file"


def why(exc: OSError) -> str:
    """An OS error's reason without the file name (callers name the file themselves)."""
    return exc.strerror or type(exc).__name__


def unreadable(path: str | os.PathLike[str], exc: OSError) -> str:
    """Why a path that cannot be resolved or stat-ed is skipped."""
    if exc.errno == errno.ELOOP:
        return "a link loop (the link leads back to itself)"
    if exc.errno == errno.ENOENT:
        try:
            target = os.readlink(path)
        except OSError:  # not a link: the file itself is gone
            return "it vanished after it was listed"
        return f"a dangling link (to {path_name(target)}, which does not exist)"
    return f"cannot read it: {why(exc)}"


def _check_opened(fd: int, root: str) -> None:
    """Refuse a descriptor whose file is outside ``root`` (Linux; elsewhere no-op)."""
    try:
        where = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return
    if where.startswith("/") and not inside(where, root):
        raise Skipped(
            f"it resolves to {path_name(where)}, outside the folder (a folder on its way was "
            f"replaced by a link): {OUTSIDE_HINT}"
        )


def real_root(path: str | os.PathLike[str]) -> str:
    """The real path of a folder, for ``root`` above."""
    return os.path.realpath(Path(path))
