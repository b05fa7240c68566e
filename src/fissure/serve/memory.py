"""The resident memory of a running service's processes, from ``/proc`` (Linux).

``fissure serve`` names its own process in ``$FISSURE_SERVICE_PID``; every API process
reads the tree under it at scrape time, so ``/metrics`` tells the same whichever process
answers, and counts engines and parsers that restarted since the last scrape.
"""

from __future__ import annotations

import os
from pathlib import Path

SERVICE_PID_ENV = "FISSURE_SERVICE_PID"
PROC = Path("/proc")
_ENGINE = b"fissure.serve.engine"


def rss_bytes(pid: int) -> int:
    """A process's resident memory in bytes (0 if it is gone or unreadable)."""
    try:
        pages = int((PROC / str(pid) / "statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def children(pid: int) -> list[int]:
    """The children of ``pid`` (of every thread of it)."""
    found: list[int] = []
    for task in (PROC / str(pid) / "task").glob("*"):
        try:
            found.extend(int(p) for p in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process under ``pid``, depth first."""
    out: list[int] = []
    stack = children(pid)
    while stack:
        child = stack.pop()
        out.append(child)
        stack.extend(children(child))
    return out


def _is_engine(pid: int) -> bool:
    try:
        return _ENGINE in (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return False


def service_rss(root: int | None = None) -> dict[str, int]:
    """Resident bytes of the service under ``root`` (default ``$FISSURE_SERVICE_PID``,
    else this process), by role: ``server`` (the supervisor and its API processes),
    ``engine`` and ``parsers`` (the engine's children, summed). Empty without ``/proc``.
    """
    if not (PROC / "self" / "statm").exists():
        return {}
    if root is None:
        root = int(os.environ.get(SERVICE_PID_ENV) or os.getpid())
    sizes = {"server": rss_bytes(root), "engine": 0, "parsers": 0}
    for child in children(root):
        below = descendants(child)
        if _is_engine(child):
            sizes["engine"] += rss_bytes(child)
            sizes["parsers"] += sum(rss_bytes(p) for p in below)
        else:
            sizes["server"] += rss_bytes(child) + sum(rss_bytes(p) for p in below)
    return sizes
