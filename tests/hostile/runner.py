"""Run the ``fissure`` command line in a child process with a hard time limit, and measure it.

The child gets its own process group, so a timeout kills its workers too, and its peak
memory comes from ``wait4`` for that child alone (its own and its waited-for workers'
largest resident set), not from the whole test session's children.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


@dataclass(frozen=True)
class Ran:
    """What one run did: exit code (``None`` when killed at the limit), output, seconds,
    and peak resident memory in MiB."""

    rc: int | None
    stdout: str
    stderr: str
    seconds: float
    peak_mib: float

    @property
    def timed_out(self) -> bool:
        """Whether the run was killed at its time limit."""
        return self.rc is None


def run_fissure(
    args: Sequence[str],
    *,
    timeout: float = 60.0,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    memory_mib: int | None = 4096,
) -> Ran:
    """``python -m fissure ARGS``, killed (with its process group) after ``timeout`` s.

    ``memory_mib`` caps the child's address space (``RLIMIT_AS``) so that a runaway case
    cannot take the machine down with it; the measured peak is what matters.
    """
    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = os.pathsep.join([str(SRC), full_env.get("PYTHONPATH", "")])
    full_env.setdefault("HF_HUB_OFFLINE", "1")
    full_env.setdefault("TOKENIZERS_PARALLELISM", "false")

    def limit() -> None:
        if memory_mib:
            import resource

            cap = memory_mib * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-m", "fissure", *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=limit,
    )
    out: dict[str, bytes] = {}
    readers = [
        threading.Thread(target=lambda k=k, s=s: out.__setitem__(k, s.read()), daemon=True)
        for k, s in (("stdout", child.stdout), ("stderr", child.stderr))
    ]
    for r in readers:
        r.start()
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        _, status, usage = os.wait4(child.pid, 0)
    finally:
        timer.cancel()
    child.returncode = os.waitstatus_to_exitcode(status)
    if killed.is_set():  # the workers of a killed run may linger: end the whole group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
    for r in readers:
        r.join(10)
    return Ran(
        rc=None if killed.is_set() else child.returncode,
        stdout=out.get("stdout", b"").decode("utf-8", "replace"),
        stderr=out.get("stderr", b"").decode("utf-8", "replace"),
        seconds=time.monotonic() - started,
        peak_mib=usage.ru_maxrss / 1024,
    )
