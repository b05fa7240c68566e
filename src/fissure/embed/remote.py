"""An OpenAI-compatible ``/v1/embeddings`` client: batches, retries with backoff, no SDK.

It speaks httpx when installed (connection reuse) and the standard library otherwise.
"""

from __future__ import annotations

import json
import os
import random
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from fissure.embed.protocol import empty, normalize_rows
from fissure.errors import ConfigError, FissureError

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_MAX_DELAY = 60.0


class EmbeddingServiceError(FissureError, RuntimeError):
    """The embedding service refused or failed a request, after any retries."""


class HttpEmbedder:
    """Embeddings from any server that speaks OpenAI's ``POST /v1/embeddings``.

    Args:
        base_url: The API root (``https://api.openai.com/v1``, ``http://localhost:8080/v1``)
            or the full ``…/embeddings`` endpoint.
        model: The model name the server expects.
        api_key: Bearer token; defaults to the environment variable ``api_key_env``.
            Without one no ``Authorization`` header is sent (local servers).
        api_key_env: Where to look for the key.
        batch_size: Texts per request.
        max_retries: Retries of a request that failed with 408/409/429/5xx or a network error
            (default ``$FISSURE_EMBED_RETRIES``, else 5). Once a request has failed for
            good on network errors (the server is gone), later requests try once until one
            succeeds, so a run's remaining documents reach the dead-letter queue at once
            instead of each waiting out the whole schedule.
        backoff: First retry delay in seconds (default ``$FISSURE_EMBED_BACKOFF``, else 0.5);
            it doubles each time (with jitter) unless the server sends ``Retry-After``.
        timeout: Seconds per request (default ``$FISSURE_EMBED_TIMEOUT``, else 60).
        dim: Vector width if known; otherwise learned from the first response.
        max_tokens: The model's input limit in its tokens (8191 for OpenAI's models).

    Raises:
        ConfigError: The URL or a setting is malformed.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        batch_size: int = 128,
        max_retries: int | None = None,
        backoff: float | None = None,
        timeout: float | None = None,
        dim: int | None = None,
        max_tokens: int = 8191,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"not an http(s) URL: {base_url!r} (e.g. http://localhost:8080/v1)")
        if not model:
            raise ConfigError("an embedding model name is needed (http:URL#MODEL)")
        max_retries = int(_env("FISSURE_EMBED_RETRIES", 5)) if max_retries is None else max_retries
        backoff = _env("FISSURE_EMBED_BACKOFF", 0.5) if backoff is None else backoff
        timeout = _env("FISSURE_EMBED_TIMEOUT", 60.0) if timeout is None else timeout
        if batch_size < 1 or max_retries < 0 or backoff < 0 or timeout <= 0:
            raise ConfigError("batch_size >= 1, max_retries >= 0, backoff >= 0, timeout > 0")
        url = base_url.rstrip("/")
        self.endpoint = url if url.endswith("/embeddings") else f"{url}/embeddings"
        self.model = model
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.backoff = backoff
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.model_id = f"http:{self.endpoint}#{model}"
        self._dim = dim
        self._unreachable = False  # the last request failed for good on network errors
        key = api_key or os.environ.get(api_key_env)
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            self._headers["Authorization"] = f"Bearer {key}"
        self._send = _transport()

    def __repr__(self) -> str:
        return f"HttpEmbedder({self.model_id!r})"

    @property
    def dim(self) -> int:
        """Vector width; asks the server once if it was not given."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (see :class:`~fissure.embed.protocol.Embedder`).

        Raises:
            EmbeddingServiceError: A request failed for good or the answer was malformed.
        """
        if not texts:
            return empty(self.dim)
        parts = [
            self._request(list(texts[at : at + self.batch_size]))
            for at in range(0, len(texts), self.batch_size)
        ]
        return normalize_rows(np.concatenate(parts))

    def _request(self, batch: list[str]) -> np.ndarray:
        body = json.dumps({"model": self.model, "input": batch}).encode("utf-8")
        payload = self._post(body)
        try:
            rows = sorted(payload["data"], key=lambda item: item["index"])
            vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingServiceError(f"{self.endpoint} sent no embeddings list: {exc}") from exc
        if vectors.ndim != 2 or len(vectors) != len(batch):
            raise EmbeddingServiceError(
                f"{self.endpoint} sent {len(vectors)} vectors for {len(batch)} texts"
            )
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        elif vectors.shape[1] != self._dim:
            raise EmbeddingServiceError(
                f"{self.endpoint} sent vectors of width {vectors.shape[1]}, expected {self._dim}"
            )
        return vectors

    def _post(self, body: bytes) -> Any:
        """POST with retries on throttling, server errors and network errors (one try only
        while the server is unreachable, see ``max_retries``)."""
        tries = 1 if self._unreachable else self.max_retries + 1
        for attempt in range(tries):
            try:
                status, content, retry_after = self._send(
                    self.endpoint, body, self._headers, self.timeout
                )
            except OSError as exc:
                status, content, retry_after = None, str(exc).encode(), None
            if status is not None:
                self._unreachable = False  # it answered, whatever it said
            if status == 200:
                try:
                    return json.loads(content)
                except ValueError as exc:
                    raise EmbeddingServiceError(f"{self.endpoint} sent invalid JSON") from exc
            detail = content[:300].decode("utf-8", "replace")
            if status is not None and status not in RETRY_STATUS:
                raise EmbeddingServiceError(f"{self.endpoint} answered {status}: {detail}")
            if attempt < tries - 1:
                time.sleep(self._delay(attempt, retry_after))
        note = ""
        if tries == 1 and self.max_retries > 0:
            note = " (tried once: it was unreachable on the request before)"
        self._unreachable = status is None
        raise EmbeddingServiceError(
            f"{self.endpoint} failed {tries} time{'s' * (tries > 1)}, last with "
            f"{status or 'a network error'}: {detail}{note}"
        )

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), _MAX_DELAY)
            except ValueError:
                pass  # an HTTP date; fall back to our own schedule
        return min(self.backoff * 2**attempt * random.uniform(0.5, 1.0), _MAX_DELAY)


def _env(name: str, default: float) -> float:
    """A number from the environment, else ``default``.

    Raises:
        ConfigError: The variable is set but is not a number.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"${name}={raw!r} is not a number (e.g. {default:g})") from None


Sender = Any  # (url, body, headers, timeout) -> (status, content, retry_after)


def _import_httpx() -> Any:
    try:
        import httpx
    except ImportError:
        return None
    return httpx


def _transport() -> Sender:
    """A POST function over httpx (pooled connections) or urllib."""
    httpx = _import_httpx()
    if httpx is None:
        return _urllib_post
    client = httpx.Client()

    def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> tuple:
        try:
            reply = client.post(url, content=body, headers=headers, timeout=timeout)
        except httpx.TransportError as exc:  # connect, read, timeouts: all retryable
            raise OSError(str(exc)) from exc
        return reply.status_code, reply.content, reply.headers.get("retry-after")

    return post


def _urllib_post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> tuple:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, reply.read(), reply.headers.get("Retry-After")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers.get("Retry-After")
