"""Intake does not wait for the engine (issue 32.4): uploads are accepted while the engine is
still loading its embedder, and ``/readyz`` tells intake and engine apart.

The engine's embedder here is an OpenAI-compatible server in this process, on loopback,
whose answers are held behind a gate: the engine cannot finish loading (it learns the
vector width from the first answer) until the test opens it. No production hook is needed
and nothing depends on how fast the machine is.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from fissure.embed.hashing import HashingEmbedder
from tests.serve.server import Server, free_port, upload, wait_jobs

UPLOADS = 12
GATE_SECONDS = 40.0  # the longest a held answer waits (the test opens the gate far sooner)


class GatedEmbeddings:
    """``POST /v1/embeddings`` with the hashing embedder's vectors, each answer held until
    :attr:`gate` is set; :attr:`held` counts the requests that waited at it."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.held = 0
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        owner = self
        embedder = HashingEmbedder()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if not owner.gate.is_set():
                    owner.held += 1
                    owner.gate.wait(GATE_SECONDS)
                vectors = embedder.embed(list(body["input"]))
                data = [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
                raw = json.dumps({"data": data, "model": body["model"]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.http.daemon_threads = True
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)

    def __enter__(self) -> GatedEmbeddings:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.gate.set()
        self.http.shutdown()
        self.http.server_close()


class Starting(Server):
    """A server whose :meth:`start` returns once its API answers, engine ready or not."""

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"the server exited ({self.process.returncode}):\n{self.tail()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the API did not answer in {timeout:g} s:\n{self.tail()}")


@pytest.fixture
def embeddings() -> Iterator[GatedEmbeddings]:
    with GatedEmbeddings() as running:
        yield running


def _options(embeddings: GatedEmbeddings) -> list[str]:
    return ["--embedder", f"http:{embeddings.url}#gated", "--timeout", "20"]


ENV = {"FISSURE_EMBED_TIMEOUT": "50", "FISSURE_EMBED_RETRIES": "0"}


def _documents(n: int) -> list[tuple[str, bytes]]:
    return [(f"restart-{i}.md", f"# Note {i}\n\nWritten during the restart, {i}.\n".encode())
            for i in range(n)]  # fmt: skip


@pytest.mark.timeout(120)
def test_uploads_during_the_engines_model_load_are_accepted_and_end_done(
    embeddings: GatedEmbeddings, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    embeddings.gate.set()
    with Server(store, _options(embeddings), ENV) as first, first.client() as client:
        job = upload(client, [("before.md", b"# Before\n\nStored before the restart.\n")])
        assert job.status_code == 202, job.text
        assert wait_jobs(client, [job.json()["jobs"][0]["id"]], 30)
    embeddings.gate.clear()
    embeddings.held = 0
    server = Starting(store, _options(embeddings), ENV)
    try:
        server.start()
        docs = _documents(UPLOADS)
        with server.client() as client:
            answers = [upload(client, [doc]) for doc in docs[: UPLOADS // 2]]  # engine starting
            deadline = time.monotonic() + 30
            while not embeddings.held and time.monotonic() < deadline:
                time.sleep(0.05)
            assert embeddings.held, "the engine never reached its model load"
            answers += [upload(client, [doc]) for doc in docs[UPLOADS // 2 :]]  # it is loading
            codes = [a.status_code for a in answers]
            ready = client.get("/readyz")
            assert not embeddings.gate.is_set()  # the engine is still loading
            refused = sum(c == 503 for c in codes)
            assert codes == [202] * UPLOADS, f"{refused} of {UPLOADS} uploads got 503: {codes}"
            assert ready.status_code == 503, ready.text
            assert ready.json()["intake"]["ready"] is True
            assert ready.json()["engine"]["ready"] is False
            assert ready.headers["Retry-After"]
            intake = client.get("/readyz", params={"need": "intake"})
            assert intake.status_code == 200, intake.text
            embeddings.gate.set()
            ids = [a.json()["jobs"][0]["id"] for a in answers]
            jobs = wait_jobs(client, ids, 45)
            assert {j["state"] for j in jobs.values()} == {"done"}, jobs
            final = client.get("/readyz").json()
            assert final["status"] == "ok" and final["engine"]["ready"] and final["intake"]["ready"]
            hits = client.post("/v1/query", json={"text": "restart note", "k": 20}).json()["hits"]
            assert {h["name"] for h in hits} >= {f"restart-{i}.md" for i in range(UPLOADS)}
    finally:
        embeddings.gate.set()
        server.stop()
