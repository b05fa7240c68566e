"""A real ``fissure serve`` in a subprocess, on a free loopback port, for the tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import httpx
from bench.service import tree

from tests.processes import free_port, spawn, stop_group

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "tests.ingest.helpers"  # the hanging and memory-hogging test parsers


class Server:
    """``fissure serve`` on ``store``; :meth:`start` waits until it is ready.

    Args:
        store: The store folder (with ``spec``, the process's own ``--state`` folder).
        options: More command-line options (``--embedder hashing`` is the default).
        env: More environment variables.
        spec: ``--store`` when it is not ``store``: a ``postgresql://`` database.
    """

    def __init__(
        self,
        store: Path,
        options: Sequence[str] = (),
        env: dict[str, str] | None = None,
        *,
        spec: str | None = None,
    ) -> None:
        self.store = store
        self.spec = spec or str(store)  # what --store says: the folder, or a database
        self.options = list(options)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = env or {}
        self.process: subprocess.Popen[bytes] | None = None
        self.log = store.parent / f"{store.name}-server.log"

    def command(self) -> list[str]:
        """The command line."""
        base = ["--store", self.spec, "--port", str(self.port)]
        if not any(o.startswith("--embedder") for o in self.options):
            base += ["--embedder", "hashing"]
        if not any(o.startswith("--workers") for o in self.options):
            base += ["--workers", "1"]
        return [sys.executable, "-m", "fissure", "serve", *base, *self.options]

    def start(self, timeout: float = 120.0) -> Server:
        """Start and wait for ``/readyz``."""
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
            "FISSURE_PLUGINS": PLUGIN,
            **self.env,
        }
        self.process = spawn(self.command(), env, self.log)
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Wait until the server answers ``/readyz`` with 200.

        Raises:
            RuntimeError: It exited or did not get ready in time (with its log).
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"the server exited ({self.process.returncode}):\n{self.tail()}")
            try:
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the server did not get ready in {timeout:g} s:\n{self.tail()}")

    def tail(self, n: int = 40) -> str:
        """The end of the server's log."""
        try:
            return "\n".join(self.log.read_text("utf-8", "replace").splitlines()[-n:])
        except OSError:
            return ""

    def pids(self) -> dict[str, list[int]]:
        """The server's process tree: ``server`` (the supervisor), ``engine``, ``parsers``."""
        assert self.process is not None
        return {"server": [self.process.pid], **tree(self.process.pid)}

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal the supervisor process (its engine and parsers die with it)."""
        assert self.process is not None
        os.kill(self.process.pid, sig)
        self.process.wait(30)

    def stop(self) -> None:
        """Stop the server and everything it started."""
        if self.process is None:
            return
        stop_group(self.process, 30)
        self.process = None

    def client(self, key: str | None = None, **kwargs: Any) -> httpx.Client:
        """An HTTP client for this server (with ``key`` as the bearer token)."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60, **kwargs)

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def upload(client: httpx.Client, files: Iterable[tuple[str, bytes]]) -> httpx.Response:
    """POST files to ``/v1/documents``."""
    return client.post("/v1/documents", files=[("files", (n, d)) for n, d in files])


def wait_jobs(client: httpx.Client, ids: Iterable[str], timeout: float = 120.0) -> dict[str, Any]:
    """Wait until every job is done or failed; returns them by id.

    Raises:
        TimeoutError: Some are still queued or running (their states are in the message).
    """
    pending = set(ids)
    found: dict[str, Any] = {}
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for job_id in sorted(pending):
            job = client.get(f"/v1/jobs/{job_id}").json()
            if job["state"] in ("done", "failed"):
                found[job_id] = job
                pending.discard(job_id)
        if pending:
            time.sleep(0.2)
    if pending:
        states = {i: client.get(f"/v1/jobs/{i}").json().get("state") for i in pending}
        raise TimeoutError(f"jobs not finished after {timeout:g} s: {states}")
    return found
