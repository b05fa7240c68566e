"""Hostile folder entries for the walk (issue 13, cases 1-7 and 9 and the minor ones).

Each ``build_<case>(folder)`` writes one hostile entry (or a few of one kind) and the two
good files of :data:`GOOD` into ``folder`` (the source root) and returns the expected
outcome as ``"<kind>: <why>"``, where kind is one of:

- ``skip``: the hostile entry is not stored; the run reports it (a skip line from
  ``fissure chunk``, a dead letter from ``fissure ingest``).
- ``chunks``: the hostile entry is chunked and stored under its lossless name.
- ``ignored``: the hostile entry is left out by the folder's own rules (``.gitignore``).
- ``bounded``: chunks or a skip, depending on timing; memory stays under the ceiling.

Nothing is written outside ``folder``; links point at system files that exist anyway
(``/etc/passwd``, ``/proc/self/environ``, ``/dev/zero``). The one case with a moving part,
:func:`build_growing`, starts a daemon thread that only touches its own file and stops by
itself. Huge files are sparse, so they cost no disk.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

GOOD: dict[str, str] = {
    "good_one.md": "# Lighthouse keepers\n\nThe lighthouse keeper records tide tables, "
    "fog signals and passing schooners in the harbour logbook every morning.\n",
    "good_two.txt": "Quarterly invoice reconciliation: the accountant matches vendor "
    "receipts against purchase orders before the ledger closes.\n",
}
# A query copied from each good file, to find it with ``fissure query``.
QUERIES: dict[str, str] = {
    "good_one.md": "lighthouse keeper tide tables fog signals schooners harbour logbook",
    "good_two.txt": "invoice reconciliation accountant vendor receipts purchase orders ledger",
}
# The good file bench/hostile.py looks for among the hits of good_phrase.
GOOD_FILE = "good_one.md"


def good_phrase(folder: Path) -> str:
    """The query that must find :data:`GOOD_FILE` in any case's store."""
    return QUERIES[GOOD_FILE]


# Text that must never reach a store: the first field of /etc/passwd's first line.
OUTSIDE_MARKERS = ("root:x:0:0", "root:*:0:0")


def _good(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in GOOD.items():
        (folder / name).write_text(text, encoding="utf-8")


def build_fifo(folder: Path) -> str:
    """A named pipe (case 1): opening it for reading would block until a writer comes."""
    _good(folder)
    os.mkfifo(folder / "pipe.md")
    return "skip: a FIFO is not a regular file"


def build_socket(folder: Path) -> str:
    """A Unix socket left behind by a program (case 1)."""
    _good(folder)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(folder / "agent.sock.txt"))
    finally:
        sock.close()
    return "skip: a socket is not a regular file"


def build_dev_zero(folder: Path) -> str:
    """A link to ``/dev/zero`` (case 2): ``stat`` says 0 bytes, a read never ends."""
    _good(folder)
    (folder / "zero.txt").symlink_to("/dev/zero")
    return "skip: a link to a device outside the folder"


def build_passwd(folder: Path) -> str:
    """File links to ``/etc/passwd`` and ``/proc/self/environ`` (case 3)."""
    _good(folder)
    (folder / "passwd.txt").symlink_to("/etc/passwd")
    (folder / "environ.txt").symlink_to("/proc/self/environ")
    return "skip: links to files outside the folder"


def build_dir_outside(folder: Path) -> str:
    """A folder link to ``/etc`` (case 3): its files are outside the folder."""
    _good(folder)
    (folder / "etc").symlink_to("/etc", target_is_directory=True)
    return "skip: a link to a folder outside the folder"


def build_link_inside(folder: Path) -> str:
    """Links whose targets stay inside the folder: followed, like the files themselves."""
    _good(folder)
    notes = folder / "notes"
    notes.mkdir()
    (notes / "inside.md").write_text("# Orchard\n\nPear trees are pruned in late winter.\n")
    (folder / "alias.md").symlink_to("notes/inside.md")
    (folder / "shortcut").symlink_to("notes", target_is_directory=True)
    return "chunks: links inside the folder are followed"


def build_dangling(folder: Path) -> str:
    """A link to nothing (case 4)."""
    _good(folder)
    (folder / "gone.md").symlink_to("missing.md")
    return "skip: a dangling link"


def build_link_loop(folder: Path) -> str:
    """Link loops (case 4): a link to itself, two links to each other, a folder link up."""
    _good(folder)
    (folder / "self.md").symlink_to("self.md")
    (folder / "ping.md").symlink_to("pong.md")
    (folder / "pong.md").symlink_to("ping.md")
    sub = folder / "sub"
    sub.mkdir()
    (sub / "up").symlink_to("..", target_is_directory=True)
    return "skip: link loops, and a folder already walked"


def build_non_utf8(folder: Path) -> str:
    """File and folder names with bytes that are not UTF-8 (case 5)."""
    _good(folder)
    raw = os.fsencode(folder)
    with open(raw + b"/caf\xe9-menu.md", "wb") as f:
        f.write(b"# Menu\n\nCroissants and cafe au lait are served until noon.\n")
    os.mkdir(raw + b"/\xff\xfe-folder")
    with open(raw + b"/\xff\xfe-folder/inner.txt", "wb") as f:
        f.write(b"Inner notes about the espresso machine descaling schedule.\n")
    return "chunks: stored under lossless names"


def build_control_names(folder: Path) -> str:
    """Names with an ANSI escape, a newline and rich markup (the minor list): stored, and
    printed escaped, never raw."""
    _good(folder)
    (folder / "\x1b[31mred\x1b[0m.md").write_text("# Alarm\n\nThe red alarm light blinks.\n")
    (folder / "fake\n0 failed.md").write_text("# Forged\n\nA forged summary line.\n")
    (folder / "[bold red]loud.md").write_text("# Markup\n\nSquare brackets in a name.\n")
    return "chunks: names are printed escaped"


def build_deep(folder: Path, depth: int = 1200) -> str:
    """A folder tree ``depth`` levels deep with a file at the bottom (case 6)."""
    _good(folder)
    bottom = os.fsencode(folder)
    for _ in range(depth):  # not os.makedirs: it recurses once per level
        bottom += b"/d"
        os.mkdir(bottom)
    with open(os.path.join(bottom, b"bottom.md"), "wb") as f:
        f.write(b"# Bottom\n\nThe deepest note in the well.\n")
    return "chunks: the walk is iterative"


def build_gitignore_redos(folder: Path) -> str:
    """A ``.gitignore`` pattern that backtracking regexes take hours over (case 7)."""
    _good(folder)
    (folder / ".gitignore").write_text("*a*a*a*a*a*a*a*a*a*a*a*ab\n")
    (folder / ("a" * 60)).write_text("Sixty letters a, and the pattern wants a b at the end.\n")
    return "chunks: the pattern is matched in linear time and does not match"


def build_gitignore_huge(folder: Path, size: int = 3 << 30) -> str:
    """A 3 GB ``.gitignore`` (sparse) whose first line ignores ``secret.md`` (case 7)."""
    _good(folder)
    (folder / "secret.md").write_text("# Secret\n\nignored by the first rule\n")
    ignore = folder / ".gitignore"
    ignore.write_text("secret.md\n" + "# filler\n" * 1000)
    os.truncate(ignore, size)
    return "ignored: rules from the first part apply; the oversize .gitignore is reported"


def build_growing(folder: Path, size: int = 3 << 30, wait_s: float = 20.0) -> str:
    """A 1 MB log that grows to ``size`` bytes (sparse) once it is first read (case 9).

    A daemon thread watches the log's access time (set older than its modification time,
    so a first read moves it on relatime mounts) and extends the file when it moves, or
    after ``wait_s`` seconds; then it stops.
    """
    _good(folder)
    log = folder / "growing.log"
    log.write_text("2024-01-01 service started\n" * 38_000)  # ~1 MB
    now = time.time()
    os.utime(log, (now - 3600, now))
    listed = log.stat().st_atime

    def grow() -> None:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                if log.stat().st_atime != listed:
                    break
            except OSError:
                return
            time.sleep(0.005)
        with contextlib.suppress(OSError):
            os.truncate(log, size)

    threading.Thread(target=grow, name="hostile-grow", daemon=True).start()
    return "bounded: read at most --max-bytes, whatever it grows to"


def remove_tree(folder: Path) -> None:
    """Delete a case folder; ``shutil.rmtree`` recurses once per level and fails on
    :func:`build_deep`, ``rm -rf`` does not."""
    subprocess.run(["rm", "-rf", "--", str(folder)], check=False)


CASES: dict[str, Callable[[Path], str]] = {
    "fifo": build_fifo,
    "socket": build_socket,
    "dev_zero": build_dev_zero,
    "passwd": build_passwd,
    "dir_outside": build_dir_outside,
    "link_inside": build_link_inside,
    "dangling": build_dangling,
    "link_loop": build_link_loop,
    "non_utf8": build_non_utf8,
    "control_names": build_control_names,
    "deep": build_deep,
    "gitignore_redos": build_gitignore_redos,
    "gitignore_huge": build_gitignore_huge,
    "growing": build_growing,
}
