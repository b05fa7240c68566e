"""Run a command with a time limit and measure the peak memory of its whole process tree.

``ru_maxrss`` of ``RUSAGE_CHILDREN`` gives the largest single process only; a ``fissure``
run is a main process plus workers, so the tree is polled (psutil, every 20 ms) and the
peak of the sum of resident set sizes kept. A short spike between two polls can be missed;
the largest single process's ``ru_maxrss`` is kept as well and the larger figure reported.
"""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

MIB = 1 << 20


@dataclass(frozen=True)
class Measured:
    """What a command did: exit status (``None`` when killed at the time limit), seconds,
    peak resident memory of its process tree (MiB), and its output."""

    rc: int | None
    seconds: float
    peak_mb: float
    stdout: str
    stderr: str

    @property
    def timed_out(self) -> bool:
        """Whether the command was killed at its time limit."""
        return self.rc is None


def run_measured(
    args: list[str], *, timeout: float, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Measured:
    """Run ``args``; kill the whole tree at ``timeout`` seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.Popen(
        args, cwd=cwd, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True,
    )  # fmt: skip
    peak = [0]
    done = threading.Event()
    threading.Thread(target=_poll, args=(proc.pid, peak, done), daemon=True).start()
    try:
        out, err = proc.communicate(timeout=timeout)
        rc: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_tree(proc.pid)
        out, err = proc.communicate()
        rc = None
    finally:
        done.set()
    seconds = time.perf_counter() - started
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    single = largest if largest > before * 1024 else 0
    return Measured(rc, seconds, max(peak[0], single) / MIB, out, err)


def _poll(pid: int, peak: list[int], done: threading.Event) -> None:
    try:
        root = psutil.Process(pid)
    except psutil.Error:
        return
    while not done.is_set():
        total = 0
        try:
            for proc in [root, *root.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    total += proc.memory_info().rss
        except psutil.Error:
            return
        peak[0] = max(peak[0], total)
        time.sleep(0.02)


def _kill_tree(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, 9)
