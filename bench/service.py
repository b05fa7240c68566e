"""The service under load for ``bench.serve``: ``fissure serve`` in a subprocess with an
RSS sampler, concurrent upload clients, and the process-tree helpers the tests share."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

CACHE = Path(__file__).parent / ".cache" / "serve"
ROOT = Path(__file__).resolve().parents[1]


class Service:
    """``fissure serve`` (the default MiniLM unless told) on a fresh store, and an RSS
    sampler."""

    def __init__(self, store: Path, embedder: str = "minilm") -> None:
        shutil.rmtree(store, ignore_errors=True)
        store.parent.mkdir(parents=True, exist_ok=True)
        # Write back what the previous phase left dirty (the baseline's or the last run's
        # store, the corpus copy). Otherwise the kernel flushes it about 30 s later, in the
        # middle of this run, and every fsync of the queue waits behind that writeback: on
        # this disk one fsync took 297 ms while 600 MB another process had written went out.
        # A deployed service does not share its disk with the benchmark's other phases.
        os.sync()
        self.embedder = embedder
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.store = store
        self.log = open(store.parent / f"{store.name}.log", "w")  # noqa: SIM115
        self.process = self._spawn()
        self.kills = 0
        self.peaks: dict[str, float] = {"api": 0.0, "engine": 0.0, "parsers": 0.0}
        self.api_curve: list[tuple[int, float]] = []
        self.uploaded = 0
        self._stop = threading.Event()

    def _spawn(self) -> subprocess.Popen[bytes]:
        cmd = [sys.executable, "-m", "fissure", "serve", "--store", str(self.store), "--port",
               str(self.port), "--max-queued", "1000000", "--embedder", self.embedder]  # fmt: skip
        return subprocess.Popen(cmd, env=env(), stdout=self.log, stderr=self.log,
                                start_new_session=True)  # fmt: skip

    def kill_server(self) -> None:
        """``kill -9`` the supervisor (its engine and parsers die with it), then restart."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.kills += 1
        self.process = self._spawn()
        self.wait_ready(sample=False)

    def kill_engine(self) -> None:
        """``kill -9`` the engine; the supervisor starts a new one."""
        engines = tree(self.process.pid)["engine"]
        if engines:
            os.kill(engines[0], signal.SIGKILL)
            self.kills += 1

    def wait_ready(self, *, sample: bool = True) -> None:
        import httpx

        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    if sample:
                        threading.Thread(target=self._sample, daemon=True).start()
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the service did not get ready; see {self.log.name}")

    def _sample(self) -> None:
        step = 0
        while not self._stop.wait(0.5):
            procs = tree(self.process.pid)
            rss = {"api": rss_mb(self.process.pid),
                   "engine": sum(rss_mb(p) for p in procs["engine"]),
                   "parsers": max((rss_mb(p) for p in procs["parsers"]), default=0.0)}  # fmt: skip
            for role, mb in rss.items():
                self.peaks[role] = max(self.peaks[role], mb)
            if self.uploaded >= step:
                self.api_curve.append((self.uploaded, rss["api"]))
                step = self.uploaded + 50

    def cpu_seconds(self) -> dict[str, float]:
        """CPU time so far of the API process and of the engine with its parsers (live ones
        and the ones it has reaped): a measure of the work that the load on a shared machine
        does not distort."""
        procs = tree(self.process.pid)
        work = sum(cpu_seconds(p, children=True) for p in procs["engine"])
        work += sum(cpu_seconds(p) for p in procs["parsers"])
        return {"api": cpu_seconds(self.process.pid), "engine": work}

    def stop(self) -> None:
        self._stop.set()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log.close()


def load(
    service: Service, files: list[Path], clients: int, rate: float | None = None
) -> dict[str, Any]:
    """Every file uploaded once by ``clients`` concurrent clients (``bench.loadgen``), in a
    closed loop or at ``rate`` uploads per second; latencies of the answers."""
    from bench.loadgen import run_load

    def accepted() -> None:
        service.uploaded += 1

    got = run_load("127.0.0.1", service.port, files, clients, accepted, rate)
    return {"latencies": got.latencies, "refused": got.refused, "jobs": got.jobs}


def wait_done(service: Service, n: int, limit_s: float = 4 * 3600) -> list[dict[str, Any]]:
    """Every job of the namespace once there are ``n`` and none is queued or running.

    Raises:
        TimeoutError: Not so after ``limit_s`` seconds (the message says what was seen).
    """
    import httpx

    deadline = time.monotonic() + limit_s
    jobs: list[dict[str, Any]] = []
    with httpx.Client(base_url=service.url, timeout=60) as http:
        while time.monotonic() < deadline:
            try:
                jobs = _all_jobs(http)
            except httpx.HTTPError:
                jobs = []
            if len(jobs) >= n and all(j["state"] in ("done", "failed") for j in jobs):
                return jobs
            time.sleep(1.0)
    states = sorted({j["state"] for j in jobs})
    raise TimeoutError(f"{len(jobs)} of {n} jobs after {limit_s:.0f} s (states {states})")


def _all_jobs(http: Any) -> list[dict[str, Any]]:
    found, cursor = [], None
    while True:
        params = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
        page = http.get("/v1/jobs", params=params).json()
        found.extend(page["jobs"])
        cursor = page["next_cursor"]
        if cursor is None:
            return found


def tree(pid: int) -> dict[str, list[int]]:
    """The processes a ``fissure serve`` started: ``engine`` and ``parsers``."""
    found: dict[str, list[int]] = {"engine": [], "parsers": []}
    for child in children(pid):
        if "fissure.serve.engine" in cmdline(child):
            found["engine"].append(child)
            found["parsers"].extend(children(child))
    return found


def children(pid: int) -> list[int]:
    """Children of every thread of ``pid`` (a thread's children are listed under it)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found.extend(int(p) for p in (task / "children").read_text().split())
        except OSError:
            continue
    return found


def cmdline(pid: int) -> str:
    """A process's command line, arguments joined by NULs."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


def cpu_seconds(pid: int, *, children: bool = False) -> float:
    """User + system CPU seconds of a process (and of its reaped children)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = sum(int(fields[i]) for i in ((11, 12, 13, 14) if children else (11, 12)))
    return ticks / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def own_peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
            "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}  # fmt: skip
