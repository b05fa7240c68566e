"""github:OWNER/REPO sources against a real HTTP server on 127.0.0.1 that answers like the
GitHub REST API, rate limits and server errors included (no mocks)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fissure.errors import InputError
from fissure.ingest import open_source
from fissure.source.github import GitHubSource
from tests.ingest.conftest import run, snapshot

FILES = {
    "README.md": b"# Demo\n\n" + b"readme words " * 40,
    "src/app.py": b"def main():\n    return 'app'\n",
    "docs/guide.md": b"# Guide\n\n## Install\n\n" + b"install words " * 30,
    ".github/ci.yml": b"on: push\n",
}


def _sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class FakeGitHub:
    """The few endpoints a GitHub source uses, with ETags and injectable faults."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = dict(files)
        self.faults: dict[str, list[tuple[int, dict[str, str]]]] = {}
        self.log: list[tuple[str, str | None, str | None]] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                fake.handle(self)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def fail(self, path: str, *answers: tuple[int, dict[str, str]]) -> None:
        self.faults.setdefault(path, []).extend(answers)

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        with self.lock:
            self.log.append(
                (h.path, h.headers.get("If-None-Match"), h.headers.get("Authorization"))
            )
            fault = self.faults.get(h.path.split("?")[0], [])
            answer = fault.pop(0) if fault else None
        if answer is not None:
            return self._send(h, answer[0], b'{"message": "API rate limit exceeded"}', answer[1])
        status, body = self.route(h.path, h.headers.get("Accept", ""))
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        if status == 200 and h.headers.get("If-None-Match") == etag:
            return self._send(h, 304, b"", {"ETag": etag})
        self._send(h, status, body, {"ETag": etag} if status == 200 else {})

    def route(self, path: str, accept: str) -> tuple[int, bytes]:
        tree = [{"path": p, "mode": "100644", "type": "blob", "sha": _sha(d), "size": len(d)}
                for p, d in sorted(self.files.items())]  # fmt: skip
        tree_sha = hashlib.sha1(json.dumps(tree).encode()).hexdigest()
        blobs = {_sha(d): d for d in self.files.values()}
        base = "/repos/octo/demo"
        if path == base:
            return 200, json.dumps({"default_branch": "main"}).encode()
        if path == f"{base}/commits/main":
            return 200, json.dumps(
                {"sha": "c" * 40, "commit": {"tree": {"sha": tree_sha}}}
            ).encode()
        if path == f"{base}/git/trees/{tree_sha}?recursive=1":
            return 200, json.dumps({"sha": tree_sha, "tree": tree, "truncated": False}).encode()
        if path.startswith(f"{base}/git/blobs/") and path.rsplit("/", 1)[1] in blobs:
            assert "raw" in accept
            return 200, blobs[path.rsplit("/", 1)[1]]
        return 404, b'{"message": "Not Found"}'

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]) -> None:
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub(FILES)
    thread = threading.Thread(target=fake.httpd.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.httpd.shutdown()
    fake.httpd.server_close()


def _source(fake: FakeGitHub, tmp_path: Path, **kw: Any) -> GitHubSource:
    opts: dict[str, Any] = {"base_url": fake.url, "cache_dir": tmp_path / "cache",
                            "backoff": 0.01, "token": "secret", **kw}  # fmt: skip
    return GitHubSource("octo", "demo", **opts)


def test_lists_and_fetches_the_default_branch(github: FakeGitHub, tmp_path: Path) -> None:
    source = _source(github, tmp_path)
    items = list(source.scan())
    assert sorted(i.source for i in items) == [
        "github:octo/demo/README.md", "github:octo/demo/docs/guide.md",
        "github:octo/demo/src/app.py"]  # fmt: skip
    got = {i.source.split("/", 2)[2]: d for i, d in source.fetch(items)}
    assert got == {p: d for p, d in FILES.items() if not p.startswith(".")}
    assert all(auth == "Bearer secret" for _, _, auth in github.log)


def test_conditional_requests_come_back_not_modified(github: FakeGitHub, tmp_path: Path) -> None:
    list(_source(github, tmp_path).scan())
    again = _source(github, tmp_path)
    assert len(list(again.scan())) == 3
    assert again.not_modified == 3 and all(etag for _, etag, _ in github.log[3:])


def test_rate_limits_and_server_errors_are_retried(github: FakeGitHub, tmp_path: Path) -> None:
    github.fail("/repos/octo/demo", (429, {"Retry-After": "0"}), (502, {}))
    reset = str(int(time.time()))
    github.fail("/repos/octo/demo/commits/main",
                (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset}))  # fmt: skip
    blob = "/repos/octo/demo/git/blobs/" + _sha(FILES["README.md"])
    github.fail(blob, (500, {}), (503, {}))
    source = _source(github, tmp_path)
    items = list(source.scan())
    got = dict(source.fetch(items))
    assert all(isinstance(d, bytes) for d in got.values())
    assert [p for p, _, _ in github.log].count("/repos/octo/demo") == 3


def test_the_retry_cap_turns_one_blob_into_a_failure(github: FakeGitHub, tmp_path: Path) -> None:
    blob = "/repos/octo/demo/git/blobs/" + _sha(FILES["src/app.py"])
    github.fail(blob, *[(500, {})] * 10)
    source = _source(github, tmp_path, retries=2)
    got = {i.source: d for i, d in source.fetch(list(source.scan()))}
    bad = got.pop("github:octo/demo/src/app.py")
    assert isinstance(bad, InputError) and "gave up after 3 attempts" in str(bad)
    assert all(isinstance(d, bytes) for d in got.values())


def test_a_long_rate_limit_gives_a_clear_error(github: FakeGitHub, tmp_path: Path) -> None:
    reset = str(int(time.time()) + 3600)
    github.fail(
        "/repos/octo/demo", (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset})
    )
    with pytest.raises(InputError, match="GITHUB_TOKEN"):
        list(_source(github, tmp_path).scan())


def test_ingest_github_spec_end_to_end(
    github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    store = tmp_path / "store"
    first = run("github:octo/demo", store)
    assert first.processed == 3 and first.failures == [] and first.chunks > 3
    github.files["README.md"] = b"# Demo\n\nrewritten readme " * 10
    second = run("github:octo/demo", store)
    assert (second.processed, second.unchanged) == (1, 2)
    assert {s for s, *_ in snapshot(store)["chunks"].values()} == {
        "github:octo/demo/README.md", "github:octo/demo/docs/guide.md",
        "github:octo/demo/src/app.py"}  # fmt: skip
    with pytest.raises(InputError, match="OWNER/REPO"):
        open_source("github:octo")
