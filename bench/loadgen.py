"""A light load generator for ``bench.serve``: concurrent upload clients on one event loop.

Each client keeps one keep-alive HTTP/1.1 connection to the server and sends uploads whose
bytes (a ``multipart/form-data`` request, one file in the field ``files``) were built
before the clock starts, so the client's own work per upload is a socket write and the
parsing of one small answer. A client made of an HTTP library in Python threads spent
about as much CPU per upload as the server did (3 ms), on the same two cores, and its
threads' wait for the interpreter lock was counted as the server's latency; this one
measures the server. Latency is taken from the first byte sent to the last byte of the
answer read.

Two ways to load: a closed loop (each client sends its next file as soon as the last is
answered: the server's saturation, where latency is the number of clients over the
throughput), or an open loop (uploads arrive at a given rate, Poisson, whatever the answers
do; a late answer delays nothing, and the latency is counted from the moment the upload was
due, so a server that falls behind is charged for the wait).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RETRY_S = 0.5  # after a connection the server dropped (it was killed): try again soon


def upload_request(host: str, port: int, name: str, data: bytes) -> bytes:
    """The whole HTTP request that uploads ``data`` as ``name`` to ``POST /v1/documents``."""
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    body = head + data + f"\r\n--{boundary}--\r\n".encode()
    return (
        f"POST /v1/documents HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 answer: status, headers (lower-case names) and body.

    Raises:
        asyncio.IncompleteReadError: The connection closed part-way.
        ConnectionError: The answer is not HTTP.
    """
    line = await reader.readline()
    if not line:
        raise ConnectionResetError("the server closed the connection")
    parts = line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
        raise ConnectionError(f"not an HTTP answer: {line[:80]!r}")
    headers: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
        key, _, value = line.decode("latin-1").partition(":")
        headers[key.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        while size := int((await reader.readline()).split(b";")[0], 16):
            body += await reader.readexactly(size)
            await reader.readline()
        await reader.readline()  # the empty trailer
        return int(parts[1]), headers, bytes(body)
    length = int(headers.get("content-length", "0"))
    return int(parts[1]), headers, await reader.readexactly(length)


@dataclass
class LoadResult:
    """What the clients saw: latencies of accepted uploads (seconds), refusals (HTTP status,
    or 0 when the connection failed) and the jobs the server answered with, by id."""

    latencies: list[float] = field(default_factory=list)
    refused: list[int] = field(default_factory=list)
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)


def run_load(
    host: str,
    port: int,
    files: list[Path],
    clients: int,
    on_accept: Callable[[], None] = lambda: None,
    rate: float | None = None,
) -> LoadResult:
    """Upload every file once with ``clients`` concurrent clients, each sending its next
    file as soon as the last one is answered or, with ``rate`` (uploads per second), when
    it is due; refused or dropped uploads are sent again (after ``Retry-After`` when the
    server gave one)."""
    requests = {p: upload_request(host, port, p.name, p.read_bytes()) for p in files}
    result = LoadResult()
    return asyncio.run(_load(host, port, requests, clients, result, on_accept, rate))


async def _load(
    host: str,
    port: int,
    requests: dict[Path, bytes],
    clients: int,
    result: LoadResult,
    on_accept: Callable[[], None],
    rate: float | None,
) -> LoadResult:
    todo: asyncio.Queue[tuple[Path, float]] = asyncio.Queue()
    due, arrivals = time.perf_counter(), random.Random(len(requests))
    for path in requests:  # due 0: at once (the closed loop, and every retry)
        todo.put_nowait((path, due if rate else 0.0))
        if rate:
            due += arrivals.expovariate(rate)
    await asyncio.gather(
        *(_client(host, port, requests, todo, result, on_accept) for _ in range(clients))
    )
    return result


async def _client(
    host: str,
    port: int,
    requests: dict[Path, bytes],
    todo: asyncio.Queue[tuple[Path, float]],
    result: LoadResult,
    on_accept: Callable[[], None],
) -> None:
    conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    try:
        while not todo.empty():
            path, due = todo.get_nowait()
            try:
                if conn is None:
                    conn = await asyncio.open_connection(host, port)
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
                started = time.perf_counter()
                started = min(due, started) if due else started
                conn[1].write(requests[path])
                await conn[1].drain()
                status, headers, body = await read_response(conn[0])
                took = time.perf_counter() - started
            except (OSError, asyncio.IncompleteReadError, ValueError):
                conn = _close(conn)
                result.refused.append(0)
                todo.put_nowait((path, 0.0))
                await asyncio.sleep(RETRY_S)
                continue
            if headers.get("connection", "").lower() == "close":
                conn = _close(conn)
            if status == 202:
                result.latencies.append(took)
                job = json.loads(body)["jobs"][0]
                result.jobs[job["id"]] = job
                on_accept()
            else:
                result.refused.append(status)
                todo.put_nowait((path, 0.0))
                await asyncio.sleep(float(headers.get("retry-after", "1")))
    finally:
        _close(conn)


def _close(conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None) -> None:
    if conn is not None:
        conn[1].close()
