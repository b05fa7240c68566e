"""``kill -9`` during a load: the whole server, and separately the engine, at random moments.

Clients keep uploading (retrying whatever was not answered); after the restart every
accepted job ends done, and the store equals a clean run's: the same chunk ids, no
duplicates, manifest and store in agreement, nothing pending.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from fissure.serve.engine import read_stamp
from tests.ingest.conftest import assert_same_store, snapshot
from tests.serve.server import Server, wait_jobs

STDLIB = Path(os.__file__).parent
FILES = sorted(STDLIB.glob("[a-m]*.py"))[:90] + sorted((STDLIB / "json").glob("*.py"))
OPTIONS = ["--workers", "2", "--lease-seconds", "6", "--batch-chunks", "64"]
SEED = int(os.environ.get("FISSURE_FAULT_SEED", "12"))


def load(server: Server, files: list[Path], stop_at: float) -> dict[str, str]:
    """Upload every file (one request each, 4 clients), retrying until it is accepted;
    returns file name → job id."""
    accepted: dict[str, str] = {}
    lock = threading.Lock()

    def send(path: Path) -> None:
        while time.monotonic() < stop_at:
            try:
                answer = httpx.post(
                    server.url + "/v1/documents",
                    timeout=30,
                    files=[("files", (path.name, path.read_bytes()))],
                )
            except httpx.HTTPError:
                time.sleep(0.3)  # the server is down: try again
                continue
            if answer.status_code == 202:
                with lock:
                    accepted[path.name] = answer.json()["jobs"][0]["id"]
                return
            assert answer.status_code in (429, 503), answer.text
            time.sleep(0.3)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(send, files))
    return accepted


def finish(server: Server, accepted: dict[str, str]) -> dict[str, Any]:
    with server.client() as client:
        jobs = wait_jobs(client, accepted.values(), timeout=300)
        listed = client.get("/v1/jobs", params={"limit": 1000}).json()["jobs"]
    assert {j["state"] for j in jobs.values()} == {"done"}, jobs
    assert len(listed) == len({j["document_id"] for j in listed}) == len(accepted)
    return jobs


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    store = tmp_path_factory.mktemp("clean") / "store"
    with Server(store, OPTIONS) as server:
        accepted = load(server, FILES, time.monotonic() + 300)
        finish(server, accepted)
    return snapshot(store)


def _kills(
    server: Server, strike: Callable[[], None], rng: random.Random, n: int
) -> threading.Thread:
    """A thread that strikes ``n`` times at random moments of the load."""

    def run() -> None:
        for _ in range(n):
            time.sleep(rng.uniform(0.5, 3.0))
            strike()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
def test_kill_9_of_the_server_loses_nothing(clean: dict[str, Any], tmp_path: Path) -> None:
    rng = random.Random(SEED)
    server = Server(tmp_path / "store", OPTIONS).start()

    def strike() -> None:
        server.kill(signal.SIGKILL)
        print(f"killed the server at {time.monotonic():.1f}", file=sys.stderr)
        server.start()

    try:
        striker = _kills(server, strike, rng, 2)
        accepted = load(server, FILES, time.monotonic() + 300)
        striker.join(60)
        assert len(accepted) == len(FILES)
        finish(server, accepted)
    finally:
        server.stop()
    assert_same_store(snapshot(tmp_path / "store"), clean)


@pytest.mark.slow
def test_kill_9_of_the_engine_loses_nothing(clean: dict[str, Any], tmp_path: Path) -> None:
    rng = random.Random(SEED + 1)
    server = Server(tmp_path / "store", OPTIONS).start()
    killed: list[int] = []

    def strike() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the new engine is up and working
            info = read_stamp(server.store)
            engines = [p for p in server.pids()["engine"] if p not in killed]
            if info and engines and info["pid"] == engines[0]:
                time.sleep(rng.uniform(0.2, 1.5))
                os.kill(engines[0], signal.SIGKILL)
                killed.append(engines[0])
                return
            time.sleep(0.1)

    try:
        striker = _kills(server, strike, rng, 2)
        accepted = load(server, FILES, time.monotonic() + 300)
        striker.join(60)
        finish(server, accepted)
        want = 'fissure_worker_restarts_total{kind="engine"} 2.0'
        with server.client() as client:
            deadline = time.monotonic() + 30  # the supervisor may see the last death late
            metrics = client.get("/metrics").text
            while want not in metrics and time.monotonic() < deadline:
                time.sleep(0.2)
                metrics = client.get("/metrics").text
    finally:
        server.stop()
    assert len(killed) == 2
    assert want in metrics
    assert_same_store(snapshot(tmp_path / "store"), clean)
