"""Run a command with a time limit and measure the peak memory of its whole process tree.

``ru_maxrss`` of ``RUSAGE_CHILDREN`` gives the largest single process only, and in a test
session it also counts every earlier child; a ``fissure`` run is a main process plus
workers, so the tree is polled (psutil, every 20 ms) and the peak of the sum of resident set
sizes kept. A spike shorter than a poll can be missed in that sum, so each process's own
high-water mark (``VmHWM``, kept by the kernel) is read too, and the larger figure reported.
"""

from __future__ import annotations

import contextlib
import os
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
    started = time.perf_counter()
    proc = subprocess.Popen(
        args, cwd=cwd, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True,
    )  # fmt: skip
    peak = [0]
    done = threading.Event()
    watcher = threading.Thread(target=_poll, args=(proc.pid, peak, done), daemon=True)
    watcher.start()
    try:
        out, err = proc.communicate(timeout=timeout)
        rc: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_tree(proc.pid)
        out, err = proc.communicate()
        rc = None
    finally:
        done.set()
        watcher.join(5)
    return Measured(rc, time.perf_counter() - started, peak[0] / MIB, out, err)


def _poll(pid: int, peak: list[int], done: threading.Event) -> None:
    try:
        root = psutil.Process(pid)
    except psutil.Error:
        return
    while not done.is_set():
        total = 0
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        for proc in tree:
            with contextlib.suppress(psutil.Error):
                total += proc.memory_info().rss
            peak[0] = max(peak[0], _high_water(proc.pid))
        peak[0] = max(peak[0], total)
        time.sleep(0.02)


def _high_water(pid: int) -> int:
    """A process's peak resident memory so far (bytes), 0 if it is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _kill_tree(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, 9)
