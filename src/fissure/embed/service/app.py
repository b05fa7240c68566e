"""The HTTP face of the batcher: OpenAI's ``POST /v1/embeddings`` and a few more routes.

``embedding_app`` builds a FastAPI app around one embedder; ``fissure embed-serve`` runs it
under uvicorn. Requests are validated here, then their texts wait in the
:class:`~fissure.embed.service.batcher.Batcher`'s queue, so an answer is only the embedding
of the batch it rode in. Errors have OpenAI's shape, ``{"error": {"message", "type",
"param", "code"}}``, so OpenAI clients show them as they are.
"""

from __future__ import annotations

import asyncio
import base64
import gc
import hmac
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from fissure.embed.protocol import Embedder
from fissure.embed.service.batcher import Batcher, Closed, EmbedFailed, Overloaded
from fissure.embed.service.metrics import render
from fissure.errors import ConfigError

VERSION = "1"


@dataclass(frozen=True)
class Limits:
    """What one request may hold.

    Attributes:
        max_inputs: Texts per request (OpenAI's own limit is 2048).
        max_text_chars: Characters per text.
        max_request_bytes: Bytes of a request body.
        retry_after: The ``Retry-After`` seconds of a 429 or 503.
    """

    max_inputs: int = 2048
    max_text_chars: int = 100_000
    max_request_bytes: int = 32 * 2**20
    retry_after: int = 1

    def __post_init__(self) -> None:
        if min(self.max_inputs, self.max_text_chars, self.max_request_bytes) < 1:
            raise ConfigError("max_inputs, max_text_chars and max_request_bytes must be >= 1")
        if self.retry_after < 0:
            raise ConfigError("retry_after must be >= 0 seconds")


class BadRequest(Exception):
    """A request this service will not take: its status, message and the field at fault."""

    def __init__(
        self,
        status: int,
        message: str,
        param: str | None = None,
        kind: str = "invalid_request_error",
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.param, self.kind, self.code = status, param, kind, code


@dataclass(frozen=True)
class Asked:
    """A valid request: its texts, whether vectors go back as base64, and the model."""

    texts: list[str]
    base64: bool
    model: str


def embedding_app(
    embedder: Embedder,
    *,
    max_batch: int = 64,
    max_wait_ms: float = 5.0,
    max_queue: int = 1024,
    model_name: str | None = None,
    limits: Limits | None = None,
    api_key: str | None = None,
) -> FastAPI:
    """An OpenAI-compatible embedding service around ``embedder``.

    Args:
        embedder: What embeds; called from one thread only.
        max_batch: Most texts per embedding call, gathered across requests.
        max_wait_ms: How long the oldest waiting text waits for others to join its batch.
        max_queue: Most texts waiting; past it requests get 429 with ``Retry-After``.
        model_name: The one model name requests must send (others get 404
            ``model_not_found``); default the embedder's ``model_id``.
        limits: Per-request limits.
        api_key: When given, ``/v1/…`` wants ``Authorization: Bearer <api_key>``.

    Raises:
        ConfigError: A setting is out of range.
    """
    limits = limits or Limits()
    if max_queue < limits.max_inputs:  # a request must fit the queue, or it waits forever
        limits = replace(limits, max_inputs=max_queue)
    batcher = Batcher(embedder, max_batch=max_batch, max_wait_ms=max_wait_ms, max_queue=max_queue)
    name = model_name or embedder.model_id

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        gc.collect()
        gc.freeze()  # as fissure.serve.app: keep full collections off the request path
        yield
        batcher.close()

    app = FastAPI(
        title="fissure embedding service",
        version=VERSION,
        description="OpenAI-compatible embeddings, batched across concurrent requests. "
        "See docs/embedding-service.md.",
        lifespan=lifespan,
    )
    app.state.batcher = batcher
    app.state.model_name = name
    _embeddings_route(app, batcher, name, limits, api_key)
    _other_routes(app, batcher, name, api_key)
    return app


def _embeddings_route(
    app: FastAPI, batcher: Batcher, name: str, limits: Limits, api_key: str | None
) -> None:
    retry = {"Retry-After": str(limits.retry_after)}

    @app.post("/v1/embeddings", tags=["embeddings"], openapi_extra=_REQUEST_SCHEMA)
    async def embeddings(request: Request) -> Response:
        """Embed ``input`` (a string or a list of strings) with the served model."""
        started = time.monotonic()
        try:
            _authorize(request, api_key)
            asked = parse(await _body(request, limits.max_request_bytes), limits, batcher.dim)
            if asked.model != name:
                raise BadRequest(
                    404,
                    f"model {asked.model!r} is not served here; this server "
                    f"serves {name!r} (GET /v1/models)",
                    "model",
                    code="model_not_found",
                )
            future = batcher.submit(asked.texts)
        except BadRequest as exc:
            batcher.stats.request(_OUTCOMES.get(exc.status, "invalid"))
            return _error(exc.status, str(exc), exc.kind, exc.param, exc.code)
        except Overloaded as exc:
            batcher.stats.request("overloaded")
            return _error(429, str(exc), "rate_limit_error", code="overloaded", headers=retry)
        except Closed as exc:
            batcher.stats.request("unavailable")
            return _error(503, str(exc), "server_error", code="unavailable", headers=retry)
        try:
            rows = await asyncio.wrap_future(future)
        except (EmbedFailed, Closed) as exc:
            failed = isinstance(exc, EmbedFailed)
            batcher.stats.request("failed" if failed else "unavailable")
            status, headers = (500, None) if failed else (503, retry)
            return _error(
                status,
                f"embedding failed: {exc}" if failed else str(exc),
                "server_error",
                headers=headers,
            )
        batcher.stats.request("ok", time.monotonic() - started)
        return Response(answer(rows, asked, name), media_type="application/json")


def _other_routes(app: FastAPI, batcher: Batcher, name: str, api_key: str | None) -> None:
    created = int(time.time())

    def card() -> dict[str, Any]:
        return {
            "id": name,
            "object": "model",
            "created": created,
            "owned_by": "fissure",
            "dim": batcher.dim,
            "model_id": batcher.embedder.model_id,
        }

    @app.get("/v1/models", tags=["models"])
    def models(request: Request) -> Any:
        """The one model this server serves."""
        try:
            _authorize(request, api_key)
        except BadRequest as exc:
            return _error(exc.status, str(exc), exc.kind, code=exc.code)
        return {"object": "list", "data": [card()]}

    @app.get("/v1/models/{model:path}", tags=["models"])
    def model(model: str, request: Request) -> Any:
        """The served model, or 404."""
        try:
            _authorize(request, api_key)
        except BadRequest as exc:
            return _error(exc.status, str(exc), exc.kind, code=exc.code)
        if model != name:
            return _error(
                404,
                f"model {model!r} is not served here; {name!r} is",
                param="model",
                code="model_not_found",
            )
        return card()

    @app.get("/health", tags=["health"])
    def health() -> JSONResponse:
        """``ok`` while the batcher takes work, else 503."""
        ok = batcher.alive()
        body = {
            "status": "ok" if ok else "unavailable",
            "model": name,
            "dim": batcher.dim,
            "queued_texts": batcher.queued,
        }
        return JSONResponse(body, status_code=200 if ok else 503)

    @app.get("/metrics", tags=["health"])
    def metrics() -> Response:
        """Prometheus text: requests, texts, batch sizes, queue wait, texts per second."""
        return Response(render(batcher), media_type="text/plain; version=0.0.4; charset=utf-8")


def parse(raw: bytes, limits: Limits, dim: int) -> Asked:
    """A request body as :class:`Asked`.

    Raises:
        BadRequest: It is not JSON, lacks ``input`` or ``model``, or breaks a limit.
    """
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(400, f"the body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise BadRequest(400, "the body must be a JSON object with 'input' and 'model'")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest(400, "'model' must be the served model's name (GET /v1/models)", "model")
    fmt = body.get("encoding_format", "float")
    if fmt not in ("float", "base64"):
        raise BadRequest(
            400, f"encoding_format {fmt!r}: use 'float' or 'base64'", "encoding_format"
        )
    dimensions = body.get("dimensions")
    if dimensions is not None and dimensions != dim:
        raise BadRequest(
            400, f"this model makes {dim}-wide vectors only, not {dimensions!r}", "dimensions"
        )
    return Asked(_texts(body.get("input"), limits), fmt == "base64", model)


def _texts(given: Any, limits: Limits) -> list[str]:
    texts = [given] if isinstance(given, str) else given
    if not isinstance(texts, list) or not texts:
        raise BadRequest(400, "'input' must be a string or a non-empty list of strings", "input")
    if len(texts) > limits.max_inputs:
        raise BadRequest(
            400, f"{len(texts)} inputs: at most {limits.max_inputs} per request", "input"
        )
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise BadRequest(
                400,
                f"input[{i}] is {type(text).__name__}, not a string (token "
                "arrays are not supported: send the text)",
                "input",
            )
        if len(text) > limits.max_text_chars:
            raise BadRequest(
                400,
                f"input[{i}] has {len(text)} characters: at most {limits.max_text_chars}",
                "input",
            )
    return texts


def answer(rows: np.ndarray, asked: Asked, model: str) -> bytes:
    """OpenAI's response body: one ``embedding`` object per text, in order, and ``usage``
    (``prompt_tokens`` estimated as whitespace-separated words)."""
    if asked.base64:
        vectors: list[Any] = [base64.b64encode(r.astype("<f4").tobytes()).decode() for r in rows]
    else:
        vectors = rows.tolist()
    tokens = sum(len(t.split()) for t in asked.texts)
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    body = {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
    return json.dumps(body, separators=(",", ":")).encode()


async def _body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) as soon as it is known to pass ``limit`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BadRequest(413, f"the body has {declared} bytes: at most {limit}")
    parts, size = [], 0
    async for part in request.stream():
        size += len(part)
        if size > limit:
            raise BadRequest(413, f"the body passes {limit} bytes")
        parts.append(part)
    return b"".join(parts)


def _authorize(request: Request, api_key: str | None) -> None:
    if api_key is None:
        return
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(token.encode(), api_key.encode()):
        raise BadRequest(
            401,
            "send 'Authorization: Bearer <key>' with this service's key",
            kind="authentication_error",
            code="invalid_api_key",
        )


def _error(
    status: int,
    message: str,
    kind: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status_code=status, headers=headers)


_OUTCOMES = {401: "unauthorized", 404: "unknown_model", 413: "too_large"}
_REQUEST_SCHEMA: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["input", "model"],
                    "properties": {
                        "input": {
                            "anyOf": [
                                {"type": "string"},
                                {"type": "array", "items": {"type": "string"}, "minItems": 1},
                            ]
                        },
                        "model": {"type": "string"},
                        "encoding_format": {"enum": ["float", "base64"], "default": "float"},
                        "dimensions": {"type": "integer"},
                        "user": {"type": "string"},
                    },
                }
            }
        },
    }
}
