"""What an operator and a client see agree with what the service does: ``--max-queued``
holds exactly under concurrent uploads, the served schema's bounds are the checks',
``OPTIONS`` names every method, the start and every request are logged, and ``/metrics``
has query latency, 5xx answers, memory and the queue's oldest job."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from fissure.serve.jobs import CURSOR_PATTERN
from fissure.serve.schemas import QUERY_BOUNDS, query_maxima
from fissure.serve.settings import ServiceSettings
from fissure.serve.sqlite_rows import cursor_seq
from tests.serve.server import Server, upload, wait_jobs

BOUNDS = {"max_query_k": 7, "max_budget_tokens": 300}
MAX_QUEUED = 8
BURST = 24


@pytest.fixture(scope="module")
def bounded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with small query bounds, logging every request (the default)."""
    options = [f"--{k.replace('_', '-')}={v}" for k, v in BOUNDS.items()]
    with Server(tmp_path_factory.mktemp("ops") / "store", options) as running:
        yield running


def _metric(text: str, name: str, default: float | None = None) -> float:
    """The value of one sample (``name`` with its labels, as Prometheus writes it);
    ``default`` when it is absent (else the test fails)."""
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    if found is None and default is not None:
        return default
    assert found is not None, f"{name} is not in /metrics"
    return float(found.group(1))


def test_max_queued_holds_exactly_under_concurrent_uploads(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A hanging document holds the only parser (nothing finishes), then BURST uploads
    arrive at once: exactly MAX_QUEUED jobs wait, every other upload is 429 with
    Retry-After, and once the parser is freed every accepted document is stored. Also:
    without the access log no request is logged, and the oldest queued job's age shows."""
    options = ["--max-queued", str(MAX_QUEUED), "--max-attempts", "1", "--timeout", "300",
               "--no-access-log"]  # fmt: skip
    with Server(tmp_path_factory.mktemp("queued") / "store", options) as server:
        client = server.client()
        (stuck,) = upload(client, [("stuck.hang", b"hang here")]).json()["jobs"]
        deadline = time.monotonic() + 60
        while client.get(f"/v1/jobs/{stuck['id']}").json()["state"] != "running":
            assert time.monotonic() < deadline, "the hanging job was never leased"
            time.sleep(0.1)
        start = threading.Barrier(BURST)

        def send(i: int) -> httpx.Response:
            with server.client() as mine:
                start.wait()
                return upload(mine, [(f"doc{i}.md", f"# Document {i}\n\nText {i}.\n".encode())])

        with ThreadPoolExecutor(BURST) as pool:
            answers = list(pool.map(send, range(BURST)))
        accepted = [a.json()["jobs"][0]["id"] for a in answers if a.status_code == 202]
        refused = [a for a in answers if a.status_code != 202]
        assert len(accepted) == MAX_QUEUED - 1, [a.status_code for a in answers]
        assert all(a.status_code == 429 and a.headers["retry-after"] for a in refused)
        assert all("max_queued" in a.json()["detail"] for a in refused)
        listed = client.get("/v1/jobs", params={"limit": 1000}).json()["jobs"]
        assert sorted(j["id"] for j in listed) == sorted([stuck["id"], *accepted])
        time.sleep(1.1)
        assert _metric(client.get("/metrics").text, "fissure_queue_oldest_seconds") >= 1.0
        for parser in server.pids()["parsers"]:  # free the parser: the hang is a dead letter
            os.kill(parser, signal.SIGKILL)
        finished = wait_jobs(client, [stuck["id"], *accepted])
        assert finished.pop(stuck["id"])["state"] == "failed"
        assert {j["state"] for j in finished.values()} == {"done"}
        assert _metric(client.get("/metrics").text, "fissure_queue_oldest_seconds") == 0.0
        client.close()
    assert ' "GET /v1/jobs' not in server.log.read_text()


def test_the_schema_bounds_are_the_handlers_checks(bounded: Server) -> None:
    """The served schema's maxima are the settings the query handler checks, and its
    cursor pattern the one the queue checks; values at each bound pass, past it fail."""
    with bounded.client() as client:
        schema = client.get("/openapi.json").json()
        fields = schema["components"]["schemas"]["QueryIn"]["properties"]
        maxima = query_maxima(ServiceSettings(**BOUNDS))  # type: ignore[arg-type]
        assert set(maxima) == set(QUERY_BOUNDS) and maxima == {"k": 7, "budget_tokens": 300}
        assert fields["k"]["maximum"] == maxima["k"]
        (budget,) = [b for b in fields["budget_tokens"]["anyOf"] if b.get("type") == "integer"]
        assert budget["maximum"] == maxima["budget_tokens"]
        for name, most in maxima.items():
            body = {"text": "columns of basalt", name: most}
            assert client.post("/v1/query", json=body).status_code == 200
            past = client.post("/v1/query", json={**body, name: most + 1})
            assert past.status_code == 400 and QUERY_BOUNDS[name] in past.json()["detail"]
        for path in ("/v1/jobs", "/v1/dlq"):
            (cursor,) = [p for p in schema["paths"][path]["get"]["parameters"]
                         if p["name"] == "cursor"]  # fmt: skip
            assert cursor["schema"]["anyOf"][0]["pattern"] == CURSOR_PATTERN
            for good in ("0", "9" * 18):
                assert cursor_seq(good) == int(good)
                assert client.get(path, params={"cursor": good}).status_code == 200
            for bad in ("1" * 19, "12a", "-1", "٣"):
                assert client.get(path, params={"cursor": bad}).status_code == 422, bad


def test_options_and_405_name_every_method_of_the_url(bounded: Server) -> None:
    with bounded.client() as client:
        for path, methods in (
            ("/v1/documents/abc", "DELETE, GET, OPTIONS"),
            ("/v1/documents", "OPTIONS, POST"),
            ("/v1/dlq/abc", "DELETE, OPTIONS"),
        ):
            answer = client.options(path)
            assert answer.status_code == 204 and answer.headers["allow"] == methods, path
        wrong = client.put("/v1/documents/abc")
        assert wrong.status_code == 405 and wrong.headers["allow"] == "DELETE, GET, OPTIONS"
        assert client.options("/v1/nothing-here").status_code == 404


def test_start_and_every_request_are_logged(bounded: Server) -> None:
    with bounded.client() as client:
        client.get("/v1/jobs", params={"limit": 3, "api_key": "s3cret-value"})
        client.get("/v1/documents/missing")
    time.sleep(0.3)
    log = bounded.log.read_text()
    assert f"listening on http://127.0.0.1:{bounded.port}\n" in log
    assert re.search(r'"GET /v1/jobs\?limit=3&api_key=\*\*\*" 200 \d+\.\d ms$', log, re.M), log
    assert re.search(r'"GET /v1/documents/missing" 404 \d+\.\d ms$', log, re.M), log
    assert "s3cret-value" not in log


def test_metrics_have_query_latency_5xx_and_memory(bounded: Server) -> None:
    """A query is timed; a large upload the disk refuses (its shard folder's name taken
    by a file) is a 503, counted (as are the 503s of /readyz while the engine started);
    the processes' memory is there, by role."""
    from fissure.serve.spool import IN_MEMORY

    data = b"# refused\n\n" + b"a line of text\n" * (IN_MEMORY // 15 + 1)
    shard = bounded.store / "spool" / "objects" / hashlib.sha256(data).hexdigest()[:2]
    shard.parent.mkdir(parents=True, exist_ok=True)
    shard.write_bytes(b"")
    with bounded.client() as client:
        before = client.get("/metrics").text
        try:
            assert upload(client, [("disk.md", data)]).status_code == 503
        finally:
            shard.unlink()
        client.post("/v1/query", json={"text": "timed", "k": 1}).raise_for_status()
        text = client.get("/metrics").text
    unavailable = 'fissure_http_server_errors_total{status="503"}'
    assert _metric(text, unavailable) == _metric(before, unavailable, 0.0) + 1
    assert _metric(text, "fissure_query_seconds_count") >= 1.0
    assert 'fissure_query_seconds_bucket{le="+Inf"}' in text
    for role in ("server", "engine", "parsers"):
        rss = _metric(text, f'fissure_process_resident_memory_bytes{{process="{role}"}}')
        assert rss > 5_000_000, role
    assert _metric(text, "fissure_queue_oldest_seconds") == 0.0
