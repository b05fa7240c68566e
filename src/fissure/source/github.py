"""A GitHub repository as a source, through the REST API (async httpx).

One listing call gives every blob with its id (the content hash), so an unchanged
repository costs three requests, and those are conditional: ETags are kept on disk and
answered ``304 Not Modified``, which GitHub does not count against the rate limit. Blobs
are fetched concurrently as raw bytes. Rate limits (403/429 with ``Retry-After`` or
``X-RateLimit-Reset``), server errors and dropped connections are retried with exponential
backoff and jitter, up to a cap.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import queue
import random
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fissure.errors import InputError, MissingDependencyError
from fissure.source.files import DEFAULT_MAX_BYTES
from fissure.source.protocol import Item

API = "https://api.github.com"
_JSON = "application/vnd.github+json"
_RAW = "application/vnd.github.raw+json"
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", ".venv", "venv"})


class GitHubSource:
    """The files of ``OWNER/REPO`` at ``ref`` (``github:OWNER/REPO@REF``).

    Args:
        owner: Repository owner.
        repo: Repository name.
        ref: Branch, tag or commit; ``None`` for the default branch.
        token: API token (``GITHUB_TOKEN``); without one GitHub allows 60 requests an hour.
        base_url: API address (GitHub Enterprise, or a test server).
        cache_dir: Where ETags and bodies are kept for conditional requests; ``None``: none.
        max_bytes: Larger blobs are listed as skipped.
        concurrency: Blob requests in flight.
        retries: Retries per request after the first attempt.
        backoff: First backoff in seconds; it doubles per retry, with jitter.
        max_wait: Longest wait for a rate-limit reset before giving up, in seconds.
    """

    def __init__(
        self,
        owner: str,
        repo: str,
        ref: str | None = None,
        *,
        token: str | None = None,
        base_url: str = API,
        cache_dir: str | Path | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        concurrency: int = 8,
        retries: int = 5,
        backoff: float = 1.0,
        max_wait: float = 120.0,
    ) -> None:
        try:
            import httpx  # noqa: F401
        except ImportError as exc:
            raise MissingDependencyError("httpx", purpose="GitHub sources") from exc
        self.owner, self.repo, self.ref = owner, repo, ref
        self.origin = f"github:{owner}/{repo}"
        self.token = token
        self.base_url = base_url.rstrip("/")
        self.cache = _EtagCache(Path(cache_dir) / "github") if cache_dir else None
        self.max_bytes = max_bytes
        self.concurrency = max(1, concurrency)
        self.retries, self.backoff, self.max_wait = retries, backoff, max_wait
        self.requests = 0
        self.not_modified = 0

    def scan(self) -> Iterator[Item]:
        """Every blob of the tree at ``ref``, hashed by its blob id."""
        return iter(asyncio.run(self._scan()))

    def fetch(self, items: Iterable[Item]) -> Iterator[tuple[Item, bytes | Exception]]:
        """Blobs as raw bytes, ``concurrency`` at a time, on an event loop in a thread;
        a bounded queue hands them over, so a slow consumer holds the downloads back."""
        out: queue.Queue[Any] = queue.Queue(maxsize=self.concurrency * 2)
        stop = threading.Event()
        done = object()

        def run() -> None:
            try:
                asyncio.run(self._fetch_all(list(items), out, stop))
            finally:
                out.put(done)

        thread = threading.Thread(target=run, name="fissure-github", daemon=True)
        thread.start()
        try:
            while (got := out.get()) is not done:
                yield got
        finally:
            stop.set()
            while thread.is_alive():  # unblock a producer waiting on a full queue
                with contextlib.suppress(queue.Empty):
                    out.get(timeout=0.1)
            thread.join()

    async def _scan(self) -> list[Item]:
        base = f"/repos/{self.owner}/{self.repo}"
        async with self._client() as client:
            ref = self.ref
            if ref is None:
                ref = json.loads(await self._get(client, base, _JSON))["default_branch"]
            commit = json.loads(await self._get(client, f"{base}/commits/{quote(ref, '')}", _JSON))
            tree_sha = commit["commit"]["tree"]["sha"]
            tree = json.loads(await self._get(client, f"{base}/git/trees/{tree_sha}?recursive=1",
                                              _JSON))  # fmt: skip
        if tree.get("truncated"):
            raise InputError(
                f"{self.origin} is too large for one GitHub tree listing: clone it and "
                "ingest git:PATH@REV instead"
            )
        return [self._item(e) for e in tree["tree"] if _wanted(e)]

    def _item(self, entry: dict[str, Any]) -> Item:
        source, blob, size = f"{self.origin}/{entry['path']}", entry["sha"], entry.get("size", -1)
        if size > self.max_bytes:
            return Item(source, blob, blob, size, f"{size:,} bytes is over the {self.max_bytes:,}"
                        "-byte limit")  # fmt: skip
        return Item(source, blob, blob, size)

    async def _fetch_all(self, items: list[Item], out: queue.Queue[Any], stop: Any) -> None:
        todo = iter(items)
        base = f"/repos/{self.owner}/{self.repo}/git/blobs/"
        async with self._client() as client:

            async def worker() -> None:
                for item in todo:
                    if stop.is_set():
                        return
                    try:
                        got: bytes | Exception = await self._get(client, base + item.ref, _RAW)
                    except Exception as exc:  # one bad blob is a dead letter, not the end
                        got = exc
                    await asyncio.to_thread(_put, out, (item, got), stop)

            await asyncio.gather(*(worker() for _ in range(self.concurrency)))

    def _client(self) -> Any:
        import httpx

        headers = {"X-GitHub-Api-Version": "2022-11-28", "User-Agent": "fissure"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return httpx.AsyncClient(headers=headers, timeout=30.0, follow_redirects=True)

    async def _get(self, client: Any, path: str, accept: str) -> bytes:
        """One GET with conditional caching and retries; the body, or an InputError."""
        import httpx

        url = self.base_url + path
        cached = self.cache.get(url, accept) if self.cache else None
        headers = {"Accept": accept}
        if cached is not None:
            headers["If-None-Match"] = cached[0]
        problem, wait = "", 0.0
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(wait)
            self.requests += 1
            try:
                response = await client.get(url, headers=headers)
            except httpx.TransportError as exc:
                problem, wait = f"{type(exc).__name__}: {exc}", self._backoff(attempt)
                continue
            if response.status_code == 304 and cached is not None:
                self.not_modified += 1
                return cached[1]
            if response.status_code == 200:
                if self.cache is not None and response.headers.get("ETag"):
                    self.cache.put(url, accept, response.headers["ETag"], response.content)
                return bytes(response.content)
            wait_or_none = self._retry_after(response, attempt)
            if wait_or_none is None:
                raise InputError(_explain(response.status_code, url, response.text))
            problem, wait = f"HTTP {response.status_code}", wait_or_none
        raise InputError(f"GitHub {url}: gave up after {self.retries + 1} attempts ({problem})")

    def _retry_after(self, response: Any, attempt: int) -> float | None:
        """Seconds to wait before retrying, or ``None`` if retrying cannot help."""
        status, h = response.status_code, response.headers
        limited = status == 429 or (
            status == 403 and (h.get("X-RateLimit-Remaining") == "0" or "Retry-After" in h)
        )
        if limited:
            wait = _seconds(h.get("Retry-After"))
            if wait is None and h.get("X-RateLimit-Reset", "").isdigit():
                wait = max(0.0, int(h["X-RateLimit-Reset"]) - time.time()) + 1.0
            if wait is None:
                wait = self._backoff(attempt)
            if wait > self.max_wait:
                raise InputError(
                    f"GitHub rate limit reached; it resets in {wait:.0f} s: set GITHUB_TOKEN "
                    "(5,000 requests an hour) or try again later"
                )
            return wait
        if status >= 500 or status == 408:
            return self._backoff(attempt)
        return None

    def _backoff(self, attempt: int) -> float:
        return float(min(60.0, self.backoff * 2**attempt) * random.uniform(0.5, 1.5))


def _put(out: queue.Queue[Any], value: Any, stop: Any) -> None:
    while not stop.is_set():
        try:
            out.put(value, timeout=0.1)
            return
        except queue.Full:
            continue


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _wanted(entry: dict[str, Any]) -> bool:
    if entry.get("type") != "blob" or entry.get("mode") == "120000":
        return False
    parts = entry["path"].split("/")
    return not any(p.startswith(".") for p in parts) and not any(
        p in _SKIP_DIRS for p in parts[:-1]
    )


def _explain(status: int, url: str, body: str) -> str:
    if status == 401:
        return "GitHub refused the token (401): check GITHUB_TOKEN"
    if status == 404:
        return (
            f"GitHub has no {url} (404): check the name and ref; private repositories "
            "need GITHUB_TOKEN"
        )
    first = body.strip().splitlines()[0][:200] if body.strip() else ""
    return f"GitHub {url}: HTTP {status} {first}".rstrip()


class _EtagCache:
    """ETag and body per (URL, media type), one pair of files each, written atomically."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _key(self, url: str, accept: str) -> Path:
        return self.folder / hashlib.sha256(f"{accept} {url}".encode()).hexdigest()

    def get(self, url: str, accept: str) -> tuple[str, bytes] | None:
        base = self._key(url, accept)
        try:
            return base.with_suffix(".etag").read_text(), base.with_suffix(".body").read_bytes()
        except OSError:
            return None

    def put(self, url: str, accept: str, etag: str, body: bytes) -> None:
        base = self._key(url, accept)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            for suffix, data in ((".body", body), (".etag", etag.encode())):
                tmp = base.with_suffix(f"{suffix}.{os.getpid()}.tmp")
                tmp.write_bytes(data)
                tmp.replace(base.with_suffix(suffix))
        except OSError:
            pass  # a cache that cannot be written only costs a full request next time
