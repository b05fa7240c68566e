"""Limits and backpressure over HTTP: 413 before a body is read whole, 415 with the reason,
429 with Retry-After, and no listening beyond loopback without keys."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.serve.server import ROOT, Server, upload

LIMITS = [
    "--max-file-bytes",
    "2000",
    "--max-request-bytes",
    "5000",
    "--max-files",
    "3",
    "--max-queued",
    "3",
    "--timeout",
    "60",
    "--retry-after-seconds",
    "7",
]


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(tmp_path_factory.mktemp("limits") / "store", LIMITS) as running:
        yield running


def _leftovers(server: Server) -> list[Path]:
    return list((server.store / "spool" / "tmp").iterdir())


def _response(s: socket.socket, got: bytes = b"") -> bytes:
    """Read one HTTP response (headers and its Content-Length body) from a socket."""
    while b"\r\n\r\n" not in got:
        got += s.recv(4096)
    head, _, body = got.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += s.recv(4096)
    return head + b"\r\n\r\n" + body


def test_a_declared_oversize_body_is_refused_unread(limited: Server) -> None:
    with socket.create_connection(("127.0.0.1", limited.port), timeout=10) as s:
        s.sendall(
            b"POST /v1/documents HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n"
            b"Content-Type: multipart/form-data; boundary=b\r\n\r\n"
        )
        reply = _response(s)
    assert reply.startswith(b"HTTP/1.1 413") and b"max_request_bytes" in reply


def test_an_oversize_stream_is_cut_off_early(limited: Server) -> None:
    """No Content-Length (chunked): the server stops reading at the limit and answers 413,
    while the client still has almost all of a 50 MB file to send."""
    total = 50_000_000
    sent = 0
    with socket.create_connection(("127.0.0.1", limited.port), timeout=10) as s:
        s.sendall(
            b"POST /v1/documents HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            b"Content-Type: multipart/form-data; boundary=b\r\n\r\n"
        )
        part = b'--b\r\nContent-Disposition: form-data; name="files"; filename="big.txt"\r\n\r\n'
        s.sendall(b"%x\r\n%s\r\n" % (len(part), part))
        block = b"x" * 65536
        s.settimeout(0.05)
        reply = b""
        while sent < total:
            try:
                s.sendall(b"%x\r\n%s\r\n" % (len(block), block))
            except OSError:
                break
            sent += len(block)
            try:
                reply = s.recv(4096)
            except TimeoutError:
                continue
            if reply:
                break
        s.settimeout(10)
        reply = _response(s, reply)
    assert reply.startswith(b"HTTP/1.1 413") and b"byte limit (max_" in reply, reply[:300]
    assert sent < 5_000_000, f"the server read {sent:,} bytes before refusing"
    time.sleep(0.2)
    assert _leftovers(limited) == []


@pytest.mark.parametrize(
    ("files", "why"),
    [
        ([("big.md", b"x" * 2001)], "max_file_bytes"),
        ([(f"f{i}.md", b"# f\n") for i in range(4)], "max_files"),
        ([(f"f{i}.md", b"y" * 1900) for i in range(3)], "max_request_bytes"),
    ],
)
def test_over_a_limit_is_413_and_nothing_is_queued(
    limited: Server, files: list[tuple[str, bytes]], why: str
) -> None:
    with limited.client() as client:
        before = client.get("/v1/jobs", params={"limit": 1000}).json()["jobs"]
        answer = upload(client, files)
        assert answer.status_code == 413 and why in answer.json()["detail"], answer.text
        assert client.get("/v1/jobs", params={"limit": 1000}).json()["jobs"] == before
    assert _leftovers(limited) == []


@pytest.mark.parametrize(
    ("name", "data", "kind"),
    [
        ("photo.png", b"\x89PNG\r\n\x1a\n" + bytes(200), "image/png"),
        ("tool", b"\x7fELF\x02\x01\x01" + bytes(200), "application/x-executable"),
        ("archive.zip", b"PK\x03\x04" + b"\x14\x00" * 20 + b"notes.txt" + bytes(50), "zip"),
        ("blob.md", b"\x00\x01\x02\x03" * 100, "NUL bytes"),
    ],
)
def test_a_binary_without_a_parser_is_415_with_the_reason(
    limited: Server, name: str, data: bytes, kind: str
) -> None:
    with limited.client() as client:
        answer = upload(client, [(name, data)])
    assert answer.status_code == 415, answer.text
    assert kind in answer.json()["detail"] and "no parser" in answer.json()["detail"]


def test_other_content_types_are_415(limited: Server) -> None:
    with limited.client() as client:
        answer = client.post(
            "/v1/documents", content=b"hello", headers={"content-type": "text/plain"}
        )
    assert answer.status_code == 415 and "multipart/form-data" in answer.json()["detail"]


def test_a_full_queue_answers_429_with_retry_after(limited: Server) -> None:
    """One hanging document holds the only parser; the queue fills to max_queued."""
    with limited.client() as client:
        held = [upload(client, [(f"stuck{i}.hang", f"hang {i}".encode())]) for i in range(3)]
        assert all(a.status_code == 202 for a in held), [a.text for a in held]
        refused = upload(client, [("one-more.md", b"# one more\n")])
        assert refused.status_code == 429, refused.text
        assert refused.headers["retry-after"] == "7" and "max_queued" in refused.json()["detail"]
        metrics = client.get("/metrics").text
        assert 'fissure_uploads_total{outcome="refused 429"}' in metrics
        assert "fissure_queue_depth 3.0" in metrics


def test_a_public_address_needs_api_keys(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fissure",
            "serve",
            "--store",
            str(tmp_path / "s"),
            "--host",
            "0.0.0.0",
            "--embedder",
            "hashing",
        ],
        capture_output=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin"},
    )
    assert done.returncode != 0
    message = done.stderr.decode()
    assert "refusing to listen on 0.0.0.0 without API keys" in message
    assert "Traceback" not in message


def test_healthz_answers_without_anything(limited: Server) -> None:
    assert httpx.get(limited.url + "/healthz").json() == {"status": "ok", "detail": ""}


def test_bytes_the_disk_refuses_get_503_and_queue_nothing(server: Server) -> None:
    """A spool that cannot take a large upload's bytes (here: its shard folder's name taken
    by a file) answers 503 with Retry-After; once the disk takes them, the same upload is
    accepted. (Small uploads go into the queue's transaction: tests/serve/test_accept_path.)"""
    import hashlib

    from fissure.serve.spool import IN_MEMORY

    data = b"# refused once\n\nthen taken\n" + b"a line of text\n" * (IN_MEMORY // 15 + 1)
    shard = server.store / "spool" / "objects" / hashlib.sha256(data).hexdigest()[:2]
    if shard.is_dir():
        pytest.skip("another test's upload made this shard already")
    shard.write_bytes(b"")
    with httpx.Client(base_url=server.url, timeout=30) as client:
        try:
            refused = upload(client, [("disk.md", data)])
            assert refused.status_code == 503, refused.text
            assert "spool cannot store" in refused.json()["detail"]
            assert refused.headers["retry-after"]
            assert list((server.store / "spool" / "tmp").iterdir()) == []
            jobs = client.get("/v1/jobs", params={"limit": 1000}).json()["jobs"]
            assert all(j["name"] != "disk.md" for j in jobs)
        finally:
            shard.unlink()
        accepted = upload(client, [("disk.md", data)])
        assert accepted.status_code == 202, accepted.text
