"""HttpEmbedder against a real HTTP server on 127.0.0.1, not mocks."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from fissure.embed import EmbeddingServiceError, HttpEmbedder, load_embedder
from fissure.embed import remote as remote_module
from fissure.errors import ConfigError


class Server:
    """An OpenAI-style embeddings endpoint: vector i of text t is len(t) + i, unnormalised."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.failures: list[int] = []  # statuses to answer first, one per request
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                auth = self.headers["Authorization"]
                server.requests.append({"path": self.path, "auth": auth, **body})
                if server.failures:
                    self._reply(server.failures.pop(0), {"error": "try later"}, retry_after="0")
                    return
                data = [
                    {"index": i, "embedding": [len(t) + 1.0, float(i), 1.0, 2.0]}
                    for i, t in enumerate(body["input"])
                ]
                self._reply(200, {"object": "list", "data": data[::-1], "model": body["model"]})

            def _reply(self, status: int, payload: dict, retry_after: str | None = None) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                if retry_after is not None:
                    self.send_header("Retry-After", retry_after)
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    thread = threading.Thread(target=srv.httpd.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


def expected(texts: list[str], offsets: list[int]) -> np.ndarray:
    pairs = zip(texts, offsets, strict=True)
    rows = np.array([[len(t) + 1.0, i, 1.0, 2.0] for t, i in pairs], np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize("transport", ["httpx", "urllib"])
def test_batches_in_order_with_key(server: Server, monkeypatch: pytest.MonkeyPatch, transport: str):
    if transport == "urllib":
        monkeypatch.setattr(remote_module, "_import_httpx", lambda: None)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    emb = HttpEmbedder(server.url, "tiny", batch_size=3, backoff=0)
    texts = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g"]
    out = emb.embed(texts)
    assert out.dtype == np.float32 and out.shape == (7, 4) and emb.dim == 4
    np.testing.assert_allclose(out, expected(texts, [0, 1, 2, 0, 1, 2, 0]), rtol=1e-6)
    assert [len(r["input"]) for r in server.requests] == [3, 3, 1]
    assert {(r["path"], r["auth"], r["model"]) for r in server.requests} == {
        ("/v1/embeddings", "Bearer sk-test", "tiny")
    }


def test_retries_throttling_and_server_errors(server: Server):
    server.failures = [429, 503]
    emb = HttpEmbedder(server.url, "tiny", backoff=0.001)
    assert emb.embed(["x"]).shape == (1, 4)
    assert len(server.requests) == 3


def test_gives_up_after_the_retries(server: Server):
    server.failures = [500] * 3
    emb = HttpEmbedder(server.url, "tiny", max_retries=2, backoff=0.001)
    with pytest.raises(EmbeddingServiceError, match="failed 3 times, last with 500"):
        emb.embed(["x"])


def test_client_errors_are_not_retried(server: Server):
    server.failures = [400]
    with pytest.raises(EmbeddingServiceError, match="answered 400"):
        HttpEmbedder(server.url, "tiny", backoff=0.001).embed(["x"])
    assert len(server.requests) == 1


def test_unreachable_server_is_retried_then_reported():
    emb = HttpEmbedder("http://127.0.0.1:9/v1", "tiny", max_retries=1, backoff=0.001, timeout=2)
    with pytest.raises(EmbeddingServiceError, match="network error"):
        emb.embed(["x"])


def test_spec_and_validation(server: Server):
    emb = load_embedder(f"http:{server.url}#tiny")
    assert isinstance(emb, HttpEmbedder) and emb.endpoint == f"{server.url}/embeddings"
    assert emb.model_id == f"http:{server.url}/embeddings#tiny"
    assert emb.embed([]).shape == (0, 4)  # learns the width from the server
    with pytest.raises(ConfigError, match="model"):
        load_embedder(f"http:{server.url}")
    with pytest.raises(ConfigError, match="URL"):
        HttpEmbedder("ftp://example.org", "m")
