"""Two ``fissure serve`` processes and two ``fissure ingest`` runs on one PostgreSQL at once.

Real servers on 127.0.0.1: a PostgreSQL (``pg_dsn``; a database of this test's own), two
service processes (own ports, own ``--state`` folders, one shared ``--spool``) and two
ingest runs of one folder. Clients upload to both services; mid-run one service process is
killed with SIGKILL (supervisor, engine and parsers), and its clients move to the other.
Afterwards: every accepted job is done exactly once in effect, the jobs the killed process
held were finished by the other after their lease expired, the other service streamed the
events the killed one made, and the store holds every document once: no duplicate chunk
ids, manifest and store in agreement, nothing pending, every chunk an exact slice of its file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.ingest.conftest import snapshot
from tests.serve.server import ROOT, Server, wait_jobs

psycopg = pytest.importorskip("psycopg")
pytest.importorskip("psycopg_pool")

STDLIB = Path(os.__file__).parent
UPLOADS = sorted(STDLIB.glob("[a-m]*.py"))[:60]
INGESTED = sorted(STDLIB.glob("[n-z]*.py"))[:30]
LEASE = 4
OPTIONS = ["--workers", "1", "--lease-seconds", str(LEASE), "--batch-chunks", "64"]


@pytest.fixture
def database(pg_dsn: str) -> Iterator[str]:
    """A fresh database (with pgvector) on the test server, dropped afterwards."""
    name = "svc" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    base, _, query = pg_dsn.partition("?")  # a URL, as --store wants: swap its database
    dsn = base.rsplit("/", 1)[0] + "/" + name + (f"?{query}" if query else "")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    yield dsn
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _ingest(corpus: Path, dsn: str, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "fissure", "ingest", str(corpus), "--store", dsn,
             "--embedder", "hashing", "--workers", "1"],
            env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip


class Load:
    """Clients uploading files one request each, to a preferred server and to the other
    when it does not answer; ``accepted`` maps file name to job id."""

    def __init__(self, servers: list[Server]) -> None:
        self.servers = servers
        self.accepted: dict[str, str] = {}
        self.by_server: Counter[str] = Counter()
        self._lock = threading.Lock()

    def send(self, at: int, path: Path) -> None:
        deadline = time.monotonic() + 120
        order = self.servers[at % 2 :] + self.servers[: at % 2]
        while time.monotonic() < deadline:
            for server in order:
                try:
                    files = [("files", (path.name, path.read_bytes()))]
                    answer = httpx.post(server.url + "/v1/documents", timeout=30, files=files)
                except httpx.HTTPError:
                    continue  # that server is down: the other one takes it
                if answer.status_code == 202:
                    with self._lock:
                        self.accepted[path.name] = answer.json()["jobs"][0]["id"]
                        self.by_server[server.url] += 1
                    return
                assert answer.status_code in (429, 503), answer.text
            time.sleep(0.3)
        raise AssertionError(f"{path.name} was never accepted")


def _follow(server: Server, seen: list[dict[str, Any]], stop: threading.Event) -> None:
    """Collect the job events ``server`` streams (from the start), until ``stop``."""
    from httpx_sse import connect_sse

    with httpx.Client(base_url=server.url, timeout=httpx.Timeout(5, read=60)) as client:
        try:
            with connect_sse(client, "GET", "/v1/events", params={"after": 0}) as source:
                for event in source.iter_sse():
                    if event.event == "job":  # not the comments (greeting, keep-alive)
                        seen.append(json.loads(event.data))
                    if stop.is_set():
                        return
        except httpx.HTTPError:
            return  # the server stopped at the end of the test


def _running_on(dsn: str, state: Path) -> set[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT id FROM fissure_jobs WHERE state = 'running' AND "
                            "worker LIKE %s", (f"%:{state.resolve()}",)).fetchall()  # fmt: skip
    return {i for (i,) in rows}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_services_and_two_ingest_runs_share_one_database(tmp_path: Path, database: str) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for path in INGESTED:
        shutil.copy(path, corpus / path.name)
    spool = tmp_path / "spool"
    shared = ["--spool", str(spool), *OPTIONS]
    one = Server(tmp_path / "one", [*shared, "--state", str(tmp_path / "one")], spec=database)
    two = Server(tmp_path / "two", [*shared, "--state", str(tmp_path / "two")], spec=database)
    seen: list[dict[str, Any]] = []
    stop = threading.Event()
    try:
        one.start()
        two.start()
        follower = threading.Thread(target=_follow, args=(two, seen, stop), daemon=True)
        follower.start()
        runs = [_ingest(corpus, database, tmp_path / f"ingest{i}.log") for i in (1, 2)]
        load = Load([one, two])
        with ThreadPoolExecutor(4) as pool:
            sent = [pool.submit(load.send, i, p) for i, p in enumerate(UPLOADS)]
            _wait_for_work(database, tmp_path / "one")
            held = _kill(one, database, tmp_path / "one")
            for future in sent:
                future.result()
        for run in runs:
            assert run.wait(300) == 0, (tmp_path / "ingest1.log").read_text()[-2000:]
        assert len(load.accepted) == len(UPLOADS)
        assert load.by_server[one.url] > 0 and load.by_server[two.url] > 0
        with two.client() as client:
            jobs = wait_jobs(client, load.accepted.values(), timeout=300)
            time.sleep(1.0)  # the stream polls every 0.2 s
            stop.set()
            _check_store(database, jobs)
            _read_and_delete(client, jobs)
    finally:
        one.stop()
        two.stop()
    assert {j["state"] for j in jobs.values()} == {"done"}, jobs
    # What the killed process held when it died, the other finished once its lease ran out.
    assert held and all(jobs[i]["attempts"] >= 2 for i in held), {i: jobs[i] for i in held}
    # The surviving service streamed every job's end, wherever it was worked.
    finished = {e["job_id"] for e in seen if e["state"] == "done"}
    assert set(load.accepted.values()) <= finished


def _read_and_delete(client: httpx.Client, jobs: dict[str, Any]) -> None:
    """The API on the database: chunks, queries and deletes of documents any process
    stored, through the process that is left."""
    job = max(jobs.values(), key=lambda j: j["chunks"])
    chunks = client.get(f"/v1/documents/{job['document_id']}/chunks").json()["chunks"]
    assert len(chunks) == job["chunks"] and [c["start"] for c in chunks] == sorted(
        c["start"] for c in chunks
    )
    hits = client.post("/v1/query", json={"text": chunks[0]["text"], "k": 3}).json()["hits"]
    assert any(h["document_id"] == job["document_id"] for h in hits)
    assert client.delete(f"/v1/documents/{job['document_id']}").status_code == 200
    assert client.get(f"/v1/documents/{job['document_id']}").status_code == 404
    hits = client.post("/v1/query", json={"text": chunks[0]["text"], "k": 3}).json()["hits"]
    assert all(h["document_id"] != job["document_id"] for h in hits)


def _kill(server: Server, dsn: str, state: Path) -> set[str]:
    """SIGKILL a service process (supervisor; its engine and parsers die with it), wait
    until every process of it is gone, and return the jobs it still held: no one can
    finish them but another process, after their lease expires."""
    every = [pid for pids in server.pids().values() for pid in pids]
    # Freeze it first, so the kill lands while it holds jobs: a running service may finish
    # what it held between a look and the kill (under load it did, and held nothing).
    deadline = time.monotonic() + 120
    while True:
        _signal(every, signal.SIGSTOP)
        if _running_on(dsn, state) or time.monotonic() > deadline:
            break
        _signal(every, signal.SIGCONT)
        time.sleep(0.05)
    server.kill(signal.SIGKILL)
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in every) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _running_on(dsn, state)


def _signal(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie runs nothing


def _wait_for_work(dsn: str, state: Path) -> set[str]:
    """The ids of jobs the service with ``state`` holds, as soon as it holds some."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = _running_on(dsn, state)
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("the first service never leased a job")


def _check_store(dsn: str, jobs: dict[str, Any]) -> None:
    got = snapshot(dsn)
    assert got["pending"] == [] and got["failures"] == []
    assert got["listed"] == set(got["chunks"]), "manifest and store disagree"
    with psycopg.connect(dsn) as conn:
        ids = [i for (i,) in conn.execute("SELECT chunk_id FROM fissure_chunks").fetchall()]
    assert len(ids) == len(set(ids)), "a chunk id is stored twice"
    files = {p.name: p.read_text("utf-8") for p in UPLOADS + INGESTED}
    per_source = Counter(source for source, *_ in got["chunks"].values())
    for source, start, end, text in got["chunks"].values():
        assert files[Path(source).name][start:end] == text, source
    # Every uploaded document once, with the chunks its job reported.
    by_name = {Path(s).name: n for s, n in per_source.items()}
    for job in jobs.values():
        assert by_name[job["name"]] == job["chunks"], job["name"]
    # Every ingested file once in the manifest, with as many chunks as it says.
    ingested = {Path(s).name: n for s, (status, n) in got["documents"].items()
                if Path(s).name in {p.name for p in INGESTED}}  # fmt: skip
    assert set(ingested) == {p.name for p in INGESTED}
    assert all(by_name[name] == n for name, n in ingested.items())
    assert len(got["documents"]) == len(UPLOADS) + len(INGESTED)
