"""Servers a test starts: a free port for one, starting it in a session of its own, and
stopping it with its process group."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


def stop_group(process: subprocess.Popen, wait: float) -> None:
    """SIGTERM, ``wait`` seconds for it to end (else SIGKILL), then SIGKILL to whatever is
    left of its session (it should leave nothing)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(wait)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def free_port() -> int:
    """A TCP port nobody listens on (now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn(command: Sequence[str], env: Mapping[str, str], log: Path) -> subprocess.Popen:
    """Start ``command`` in a session of its own (so :func:`stop_group` reaches all it
    starts), its output appended to ``log``, no input."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            list(command),
            env=dict(env),
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
