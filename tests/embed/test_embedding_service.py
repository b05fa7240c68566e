"""The shared embedding service (``fissure embed-serve``) as a real process on 127.0.0.1,
and what uses it: HttpEmbedder, ``fissure ingest``, ``fissure query`` and ``fissure serve``.

The service runs the hashing embedder (deterministic, no model), so every vector is
checked against :class:`HashingEmbedder` itself.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from fissure.embed import HashingEmbedder, HttpEmbedder, load_embedder
from fissure.store.open import close_store, open_store
from tests.embed.embed_server import MODEL, ROOT, EmbedServer

LOCAL = HashingEmbedder()
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
    "FISSURE_NO_CONFIG": "1",
}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbedServer]:
    """``fissure embed-serve --embedder hashing``, shared by this module's tests."""
    log = tmp_path_factory.mktemp("embed-serve") / "server.log"
    with EmbedServer(log, ["--max-wait-ms", "20", "--max-text-chars", "1000"]) as running:
        yield running


def fissure(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the ``fissure`` command line in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "fissure", *args],
        env=env or ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def post(server: EmbedServer, body: dict[str, object]) -> httpx.Response:
    return httpx.post(server.url + "/v1/embeddings", json=body, timeout=30)


def test_openai_shape_order_and_base64(service: EmbedServer) -> None:
    texts = ["alpha beta", "gamma", "alpha gamma delta", "beta beta"]
    answer = post(service, {"model": MODEL, "input": texts})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["object"] == "list" and body["model"] == MODEL
    assert [d["index"] for d in body["data"]] == [0, 1, 2, 3]
    assert {d["object"] for d in body["data"]} == {"embedding"}
    assert body["usage"] == {"prompt_tokens": 8, "total_tokens": 8}
    got = np.array([d["embedding"] for d in body["data"]], dtype=np.float32)
    np.testing.assert_array_equal(got, LOCAL.embed(texts))

    packed = post(service, {"model": MODEL, "input": texts, "encoding_format": "base64"}).json()
    rows = [np.frombuffer(base64.b64decode(d["embedding"]), "<f4") for d in packed["data"]]
    np.testing.assert_array_equal(np.stack(rows), LOCAL.embed(texts))

    one = post(service, {"model": MODEL, "input": "gamma"}).json()
    assert len(one["data"]) == 1
    np.testing.assert_array_equal(
        np.float32(one["data"][0]["embedding"]), LOCAL.embed(["gamma"])[0]
    )

    models = httpx.get(service.url + "/v1/models").json()
    assert [(m["id"], m["dim"]) for m in models["data"]] == [(MODEL, 256)]
    health = httpx.get(service.url + "/health").json()
    assert health["status"] == "ok" and health["model"] == MODEL


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"model": MODEL, "input": []}, 400, "non-empty list"),
        ({"model": MODEL, "input": ["ok", 7]}, 400, "input[1] is int"),
        ({"model": MODEL, "input": [[1, 2, 3]]}, 400, "token arrays"),
        ({"model": MODEL, "input": ["x" * 1001]}, 400, "at most 1000"),
        ({"model": MODEL}, 400, "'input' must be"),
        ({"input": ["a"]}, 400, "'model'"),
        ({"model": MODEL, "input": "a", "encoding_format": "hex"}, 400, "encoding_format"),
        ({"model": "text-embedding-3-small", "input": "a"}, 404, "serves 'hashing'"),
    ],
)
def test_bad_requests_get_a_clear_openai_error(
    service: EmbedServer, body: dict[str, object], status: int, says: str
) -> None:
    answer = post(service, body)
    assert answer.status_code == status
    error = answer.json()["error"]
    assert says in error["message"]
    assert error["type"] == "invalid_request_error"


def test_http_embedder_gets_the_same_vectors(service: EmbedServer) -> None:
    texts = [f"text number {i} about {'cats' if i % 2 else 'dogs'}" for i in range(11)]
    remote = HttpEmbedder(service.url + "/v1", MODEL, batch_size=4)
    got = remote.embed(texts)
    assert remote.dim == 256 and got.shape == (11, 256)
    np.testing.assert_allclose(got, LOCAL.embed(texts), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
    spec = load_embedder(service.spec)
    assert spec.model_id == f"http:{service.url}/v1/embeddings#{MODEL}"
    np.testing.assert_allclose(spec.embed(texts[:2]), got[:2], atol=1e-6)


def test_fifty_concurrent_clients_share_batches(service: EmbedServer) -> None:
    clients, rounds, per = 50, 4, 3
    before = service.metrics()
    start = threading.Barrier(clients)
    wrong: list[str] = []

    def client(c: int) -> None:
        with httpx.Client(base_url=service.url, timeout=30) as http:
            start.wait()
            for r in range(rounds):
                texts = [f"client {c} round {r} text {t} word{c * 7 + t}" for t in range(per)]
                answer = http.post("/v1/embeddings", json={"model": MODEL, "input": texts})
                rows = np.float32([d["embedding"] for d in answer.json()["data"]])
                if not np.array_equal(rows, LOCAL.embed(texts)):
                    wrong.append(f"client {c} round {r}")

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not wrong
    after = service.metrics()
    texts = after["fissure_embed_texts_total"] - before["fissure_embed_texts_total"]
    batches = after["fissure_embed_batch_texts_count"] - before["fissure_embed_batch_texts_count"]
    assert texts == clients * rounds * per
    mean = texts / batches
    print(
        f"\n{clients} clients x {rounds} requests x {per} texts: {int(batches)} batches, "
        f"mean batch {mean:.1f} texts, {after['fissure_embed_texts_per_second']:.0f} texts/s"
    )
    assert mean > 1.5 * per  # requests were batched together, not one call each


def test_overload_gets_429_and_http_embedder_rides_it_out(tmp_path: Path) -> None:
    options = ["--max-batch", "2", "--max-queue", "4"]
    with EmbedServer(tmp_path / "slow.log", options, delay_ms=200) as slow:
        answers: list[httpx.Response] = []
        go = threading.Barrier(12)

        def burst(i: int) -> None:
            go.wait()
            answers.append(post(slow, {"model": MODEL, "input": [f"burst {i}", f"more {i}"]}))

        threads = [threading.Thread(target=burst, args=(i,)) for i in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        refused = [a for a in answers if a.status_code == 429]
        served = [a for a in answers if a.status_code == 200]
        assert refused and served and len(refused) + len(served) == 12
        assert refused[0].headers["retry-after"] == "1"
        assert refused[0].json()["error"]["type"] == "rate_limit_error"

        results: dict[int, np.ndarray] = {}

        def patient(i: int) -> None:
            remote = HttpEmbedder(slow.url + "/v1", MODEL, max_retries=20, backoff=0.1)
            results[i] = remote.embed([f"patient {i}", f"client {i}"])

        threads = [threading.Thread(target=patient, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        for i in range(6):
            np.testing.assert_allclose(
                results[i], LOCAL.embed([f"patient {i}", f"client {i}"]), atol=1e-6
            )
        metrics = slow.metrics()
        assert metrics["fissure_embed_requests_total{outcome=overloaded}"] > len(refused)


def test_an_embedder_error_is_a_500_and_the_worker_survives(tmp_path: Path) -> None:
    with EmbedServer(tmp_path / "explode.log", delay_ms=1) as server:
        bad = post(server, {"model": MODEL, "input": ["fine", "explode now"]})
        assert bad.status_code == 500
        assert "explodes on 'explode'" in bad.json()["error"]["message"]
        good = post(server, {"model": MODEL, "input": ["fine"]})
        assert good.status_code == 200
        assert server.metrics()["fissure_embed_batch_failures_total"] == 1


def _corpus(folder: Path, n: int) -> list[Path]:
    folder.mkdir()
    topics = ["volcano lava", "glacier ice", "desert sand", "reef coral", "forest moss"]
    paths = []
    for i in range(n):
        topic = topics[i % len(topics)]
        text = f"# Note {i} on {topic}\n\nThis note {i} is about {topic}.\n\n## More\n\n"
        text += f"Another paragraph {i} on {topic} and nothing else.\n"
        path = folder / f"note{i:02d}.md"
        path.write_text(text)
        paths.append(path)
    return paths


def test_ingest_and_query_through_the_service(service: EmbedServer, tmp_path: Path) -> None:
    paths = _corpus(tmp_path / "docs", 5)
    store = str(tmp_path / "store")
    ran = fissure(
        "ingest",
        str(tmp_path / "docs"),
        "--store",
        store,
        "--embedder",
        service.spec,
        "--workers",
        "1",
    )
    assert ran.returncode == 0, ran.stderr
    found = fissure("query", "glacier ice", "--store", store, "--json")
    assert found.returncode == 0, found.stderr
    assert paths[1].name in found.stdout.splitlines()[0]
    _, manifest = open_store(store)
    try:
        assert manifest.get_meta("model") == f"http:{service.url}/v1/embeddings#{MODEL}"
        assert manifest.get_meta("embedder") == service.spec
    finally:
        manifest.close()


def _documents(store: str) -> tuple[dict[str, int], dict[str, int], dict[str, str]]:
    """Chunks per stored document in the manifest and with vectors in the store, and the
    dead letters' reasons, by file name."""
    chroma, manifest = open_store(store)
    try:
        listed = {
            Path(s).name: len(tokens)
            for s, status, tokens in manifest.documents()
            if status == "ok"
        }
        rows = chroma.rows()  # type: ignore[attr-defined]  # the exact copy of the vectors
        row_of = {bytes(i).decode(): n for n, i in enumerate(rows.ids)}
        stored = {}
        for source, _, _ in manifest.documents():
            ids = [i for i, _, _ in chroma.source_items(source)]  # type: ignore[attr-defined]
            if ids:
                vectors = rows.at(np.asarray([row_of[i] for i in ids]))
                assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
                stored[Path(source).name] = len(ids)
        dead = {
            Path(f.source).name: f"{f.stage}: {f.error_type}: {f.message}"
            for f in manifest.failures()
        }
    finally:
        manifest.close()
        close_store(chroma)
    return listed, stored, dead


def test_killed_mid_ingest_leaves_no_document_half_embedded(tmp_path: Path) -> None:
    names = {p.name for p in _corpus(tmp_path / "docs", 24)}
    settings = tmp_path / "fissure.toml"
    settings.write_text("[ingest]\nbatch_chunks = 4\nworkers = 1\n")  # many small groups
    store = str(tmp_path / "store")
    env = {**ENV, "FISSURE_EMBED_RETRIES": "3", "FISSURE_EMBED_BACKOFF": "0.1"}
    env.pop("FISSURE_NO_CONFIG")
    args = ["--store", store, "--config", str(settings)]
    server = EmbedServer(tmp_path / "slow.log", delay_ms=150).start()
    try:
        ingest = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fissure",
                "ingest",
                str(tmp_path / "docs"),
                *args,
                "--embedder",
                server.spec,
            ],
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while server.metrics()["fissure_embed_batches_total"] < 4:  # the probe, then 3 groups
            assert time.monotonic() < deadline and ingest.poll() is None, server.tail()
            time.sleep(0.05)
        server.kill()
        out, err = ingest.communicate(timeout=90)
        assert ingest.returncode == 1, err  # done, some documents failed
    finally:
        server.stop()

    listed, stored, dead = _documents(store)
    assert listed == stored  # every stored document has all its chunks, each with a vector
    assert stored and dead and set(stored) | set(dead) == names and not set(stored) & set(dead)
    for reason in dead.values():
        assert reason.startswith("embed: EmbeddingServiceError: ")
        assert f"{server.url}/v1/embeddings failed" in reason and "network error" in reason
    print(
        f"\nkilled after {len(stored)} of {len(names)} documents; {len(dead)} dead letters, "
        f"e.g. {next(iter(dead.values()))[:160]}"
    )

    with EmbedServer(tmp_path / "again.log", delay_ms=1, port=server.port):
        again = fissure("dlq", "retry", *args, env=env)
        assert again.returncode == 0, again.stderr
    listed, stored, dead = _documents(store)
    assert set(stored) == names and listed == stored and not dead


def test_fissure_serve_embeds_through_the_service(service: EmbedServer, tmp_path: Path) -> None:
    from tests.serve.server import Server, upload, wait_jobs

    before = service.metrics()["fissure_embed_texts_total"]
    options = ["--embedder", service.spec, "--timeout", "10"]
    with Server(tmp_path / "store", options) as api, api.client() as client:
        answer = upload(
            client,
            [
                ("lava.md", b"# Lava\n\nMolten volcano rock.\n"),
                ("ice.md", b"# Ice\n\nA glacier moves slowly.\n"),
            ],
        )
        jobs = wait_jobs(client, [j["id"] for j in answer.json()["jobs"]], timeout=60)
        assert {j["state"] for j in jobs.values()} == {"done"}
        hits = client.post("/v1/query", json={"text": "glacier", "k": 1, "mode": "dense"})
        assert hits.json()["hits"][0]["text"].startswith("# Ice")
    assert service.metrics()["fissure_embed_texts_total"] > before


class Recording:
    """The hashing embedder, recording the size of every call."""

    def __init__(self) -> None:
        self.dim, self.max_tokens, self.model_id = 256, 512, "recording"
        self.calls: list[int] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return LOCAL.embed(texts)


def test_the_batcher_spreads_a_large_request_over_batches_in_order() -> None:
    from fissure.embed.service import Batcher, Closed, Overloaded

    inner = Recording()
    batcher = Batcher(inner, max_batch=4, max_wait_ms=0, max_queue=12)
    try:
        texts = [f"word{i} shared" for i in range(10)]
        np.testing.assert_array_equal(batcher.submit(texts).result(10), LOCAL.embed(texts))
        assert inner.calls == [4, 4, 2]
        with pytest.raises(ValueError, match="1 to 12 texts"):
            batcher.submit([])
        assert batcher.stats.mean_batch() == pytest.approx(10 / 3)
    finally:
        batcher.close()
    with pytest.raises(Closed):
        batcher.submit(["late"])
    assert not batcher.alive()
    assert issubclass(Overloaded, Exception)


def test_a_key_when_set_and_the_body_limit() -> None:
    from fastapi.testclient import TestClient

    from fissure.embed.service.app import Limits, embedding_app

    app = embedding_app(
        LOCAL, model_name=MODEL, limits=Limits(max_request_bytes=200), api_key="s3cret"
    )
    with TestClient(app) as client:
        body = {"model": MODEL, "input": ["a b"]}
        assert client.post("/v1/embeddings", json=body).status_code == 401
        wrong = {"Authorization": "Bearer nope"}
        assert client.post("/v1/embeddings", json=body, headers=wrong).status_code == 401
        good = {"Authorization": "Bearer s3cret"}
        assert client.post("/v1/embeddings", json=body, headers=good).status_code == 200
        big = {"model": MODEL, "input": ["word " * 60]}
        assert client.post("/v1/embeddings", json=big, headers=good).status_code == 413
        assert client.get("/v1/models", headers=good).json()["data"][0]["id"] == MODEL
        assert client.get("/health").status_code == 200  # open, for load balancers
        text = client.get("/metrics").text
        assert 'fissure_embed_requests_total{outcome="unauthorized"} 2.0' in text
        assert 'fissure_embed_requests_total{outcome="too_large"} 1.0' in text


def test_embed_serve_wants_a_key_off_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from fissure.cli import app

    monkeypatch.delenv("FISSURE_EMBED_API_KEY", raising=False)
    ran = CliRunner().invoke(app, ["embed-serve", "--embedder", "hashing", "--host", "0.0.0.0"])
    assert ran.exit_code == 2
    assert "FISSURE_EMBED_API_KEY" in ran.output
