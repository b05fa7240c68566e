"""CPU seconds spent by each kind of process in this network namespace, while a block runs.

``bench/scale.py`` runs its Ray cluster inside a loopback-only namespace, so every process
there is the driver (this process), Ray's own (GCS, raylets, agents), Ray's actor processes,
or a fissure worker process under an actor. Reading their CPU times before and after (and
every ``interval`` seconds in between, for processes that exit early) says where a run's CPU
went: which work scales with the actors, and which is the driver's and Ray's overhead that
the actors share the cores with.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any


def role(pid: int, me: int) -> str:
    """The kind of process ``pid`` is: ``driver``, ``fissure worker``, ``parse actor`` (a
    Ray Data map worker), ``ray NAME`` for Ray's other worker processes (agents, Ray Data's
    coordinators), or the Ray process's own name (``raylet``, ``gcs_server``, …)."""
    import psutil

    if pid == me:
        return "driver"
    try:
        process = psutil.Process(pid)
        cmdline = " ".join(process.cmdline())
        name = process.name()
    except psutil.Error:
        return "gone"
    if "fissure.ingest.worker" in cmdline:
        return "fissure worker"
    if cmdline.startswith("ray::"):  # a Ray worker process, named for its actor or task
        title = cmdline.split()[0].removeprefix("ray::").split("(")[0].split(".")[0]
        if title == "IDLE":
            return "ray worker (idle)"
        return "parse actor" if title == "MapWorker" else f"ray {title}"
    program = Path(cmdline.split(" ", 1)[0]).name
    if program in ("raylet", "gcs_server"):
        return program
    for script in ("default_worker.py", "log_monitor.py", "monitor.py", "dashboard",
                   "runtime_env"):  # fmt: skip
        if script in cmdline:  # default_worker.py: a Ray worker process still starting
            return "ray worker (starting)" if script == "default_worker.py" else script
    return name or "other"


#: Roles a process keeps once it has one; the others are looked at again on each sample
#: (a Ray worker process is renamed ``ray::…`` once it has started and has work).
FINAL = frozenset({"driver", "fissure worker", "parse actor", "raylet", "gcs_server"})


class CpuByRole:
    """``with CpuByRole() as cpu: ...`` then ``cpu.totals()``: CPU seconds by role.

    Args:
        interval: Seconds between samples (a process that exits loses at most this much).
    """

    def __init__(self, interval: float = 0.5) -> None:
        self.interval = interval
        self._me = os.getpid()
        self._net = _netns(self._me)
        self._base: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._roles: dict[int, str] = {}
        self._marked: dict[int, float] = {}
        self._own = 0.0  # the sampling thread's own CPU, taken off the driver's
        self._marked_own = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> CpuByRole:
        self._base = self._sample()
        self._last = dict(self._base)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._last.update(self._sample())

    def mark(self) -> None:
        """Note the CPU times now: :meth:`totals` ``(since_mark=True)`` counts from here
        (e.g. from the first result on, the actors started)."""
        # A process that exited since its last sample keeps that last figure as its mark.
        self._marked = {**self._last, **self._sample()}
        self._marked_own = self._own

    def totals(self, since_mark: bool = False) -> dict[str, float]:
        """CPU seconds (user + system) each role spent inside the block (or since
        :meth:`mark`), largest first."""
        base = self._marked if since_mark else self._base
        out: dict[str, float] = defaultdict(float)
        for pid, seconds in self._last.items():
            out[self._roles.get(pid, "other")] += seconds - base.get(pid, 0.0)
        out["driver"] -= self._own - (self._marked_own if since_mark else 0.0)
        return dict(sorted(((k, round(v, 2)) for k, v in out.items() if v > 0.005),
                           key=lambda kv: -kv[1]))  # fmt: skip

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._last.update(self._sample())
            self._own = time.thread_time()

    def _sample(self) -> dict[str, Any]:
        import psutil

        seen: dict[int, float] = {}
        for process in psutil.process_iter():
            with contextlib.suppress(OSError, psutil.Error):
                if _netns(process.pid) != self._net:
                    continue
                times = process.cpu_times()
                seen[process.pid] = times.user + times.system
                if self._roles.get(process.pid) not in FINAL:
                    self._roles[process.pid] = role(process.pid, self._me)
        return seen


def _netns(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/ns/net")
