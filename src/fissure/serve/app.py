"""The HTTP API: a FastAPI app factory, versioned under ``/v1``.

Every API process is stateless: jobs, documents and events are read from the queue's
database, bytes go to the spool, and what needs the store (queries, chunks, deletes) goes to
the engine. So ``fissure serve --api-workers N`` runs N of these behind one port. Intake
(uploads) needs only the queue and the spool, never the engine: uploads are accepted while
the engine loads its model or restarts, and ``/readyz`` reports the two parts apart.
"""

from __future__ import annotations

import gc
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from fissure.errors import FissureError, InputError
from fissure.serve.auth import Keys
from fissure.serve.deps import Context, context
from fissure.serve.engine import STAMP_ENV
from fissure.serve.middleware import AccessLog, AllowedMethods, configure_logging
from fissure.serve.queue import open_queue
from fissure.serve.rpc import EngineClient, EngineUnavailable, RemoteError, address, engine_key
from fissure.serve.schemas import (
    ErrorBody,
    Health,
    PartReady,
    Readiness,
    bound_schema,
    query_maxima,
)
from fissure.serve.settings import ServiceSettings
from fissure.serve.spool import Spool
from fissure.serve.uploads import Refused

VERSION = "1"


def create_app(
    settings: ServiceSettings, keys: Keys, engine: EngineClient, *, stamp: str | None = None
) -> FastAPI:
    """The API for ``settings``; ``keys`` and ``engine`` are passed in so tests and other
    deployments can supply their own, and ``stamp`` (the settings fingerprint that names
    documents) when it is known, else it is computed from ``settings`` on first use."""
    from fissure.serve import routes_documents, routes_jobs

    app = FastAPI(
        title="fissure ingestion service",
        version=VERSION,
        description="Upload documents and get a job at once; workers chunk, embed and store "
        "them behind a durable queue. See docs/service.md.",
        lifespan=_frozen_startup,
    )
    app.state.ctx = Context(
        settings,
        open_queue(settings),
        Spool(settings.spool_folder),
        keys,
        engine,
        _stamp=stamp,
    )
    app.include_router(routes_documents.router, prefix="/v1")
    app.include_router(routes_jobs.router, prefix="/v1")
    _health(app)
    _handlers(app)
    app.add_middleware(AllowedMethods, routes=app.router.routes)
    app.add_middleware(AccessLog, enabled=settings.access_log)  # outermost: sees every answer
    _bounded_schema(app, settings)
    return app


def _bounded_schema(app: FastAPI, settings: ServiceSettings) -> None:
    """Serve the schema with the bounds the handlers check (``max_query_k``,
    ``max_budget_tokens``) as its maxima, read through the same
    :func:`~fissure.serve.schemas.query_maxima`."""

    def openapi() -> dict[str, Any]:
        """FastAPI's schema, bounded once (it is cached)."""
        if app.openapi_schema is None:
            bound_schema(FastAPI.openapi(app), query_maxima(settings))
        assert app.openapi_schema is not None
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


@asynccontextmanager
async def _frozen_startup(app: FastAPI) -> AsyncIterator[None]:
    """Once the process has imported and built everything, move those objects out of the
    collector's reach (``gc.freeze``): a full collection otherwise walks every module,
    class and schema of FastAPI and pydantic, about 60 ms with the interpreter held, and
    every upload in flight waited for it (the slowest batch of a closed-loop run)."""
    gc.collect()
    gc.freeze()
    yield


def _health(app: FastAPI) -> None:
    @app.get("/healthz", response_model=Health, tags=["health"])
    def healthz() -> Health:
        """The process is up."""
        return Health(status="ok")

    @app.get(
        "/readyz",
        response_model=Readiness,
        tags=["health"],
        responses={422: {"model": ErrorBody}, 503: {"model": Readiness}},
    )
    def readyz(request: Request, need: Literal["all", "intake"] = "all") -> Any:
        """Ready: 200 when the parts ``need`` names are (``all``: intake and the engine;
        ``intake``: uploads are accepted, engine or not), else 503 with Retry-After. The body
        reports both parts either way."""
        ctx = context(request)
        intake, engine = _intake(ctx), _engine(ctx)
        missing = [p for p in ((intake,) if need == "intake" else (intake, engine)) if not p.ready]
        if not missing:
            return Readiness(status="ok", intake=intake, engine=engine)
        body = Readiness(status="unavailable", detail="; ".join(p.detail for p in missing),
                         intake=intake, engine=engine)  # fmt: skip
        return JSONResponse(
            body.model_dump(),
            status_code=503,
            headers={"Retry-After": str(ctx.settings.retry_after_seconds)},
        )

    @app.get(
        "/metrics",
        tags=["health"],
        responses={
            200: {
                "content": {"text/plain": {"schema": {"type": "string"}}},
                "description": "Prometheus text format.",
            }
        },
    )
    async def metrics_route(request: Request) -> Response:
        """Prometheus metrics of every process of the service."""
        from fissure.serve.metrics import render

        body = await run_in_threadpool(render, context(request).queue)
        return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")


def _intake(ctx: Context) -> PartReady:
    """Uploads can be accepted: the queue answers, the spool is writable and documents can
    be named."""
    try:
        ctx.queue.counts()
        ctx.stamp()
    except (FissureError, OSError) as exc:
        return PartReady(ready=False, detail=f"intake: {exc}")
    if not ctx.spool.writable():
        return PartReady(ready=False, detail=f"intake: the spool {ctx.spool.folder} is not "
                                             "writable")  # fmt: skip
    return PartReady(ready=True)


def _engine(ctx: Context) -> PartReady:
    """The engine answers (it has loaded its model and opened the store)."""
    try:
        ctx.engine.call("ping")
    except (FissureError, OSError) as exc:
        return PartReady(ready=False, detail=f"engine: {exc}")
    return PartReady(ready=True)


def _handlers(app: FastAPI) -> None:
    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused) -> JSONResponse:
        headers = {}
        if exc.status in (429, 503):
            headers["Retry-After"] = str(context(request).settings.retry_after_seconds)
        if exc.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        return JSONResponse({"detail": str(exc)}, status_code=exc.status, headers=headers)

    @app.exception_handler(EngineUnavailable)
    async def unavailable(request: Request, exc: EngineUnavailable) -> JSONResponse:
        retry = str(context(request).settings.retry_after_seconds)
        return JSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": retry})

    @app.exception_handler(RemoteError)
    async def remote(request: Request, exc: RemoteError) -> JSONResponse:
        status = 400 if exc.kind in ("InputError", "ConfigError") else 500
        return JSONResponse({"detail": str(exc)}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ())) or "request"
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        return JSONResponse(
            {"detail": f"{where}: {first.get('msg', 'invalid')}{more}"}, status_code=422
        )

    @app.exception_handler(InputError)
    async def bad_input(request: Request, exc: InputError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=400)


def from_env() -> FastAPI:
    """The app of one uvicorn worker process, from the supervisor's environment."""
    configure_logging()  # a worker process of its own (--api-workers > 1) logs as the rest
    settings = ServiceSettings.from_env()
    if settings.api_workers > 1:
        from fissure.ingest.worker import die_with_parent

        die_with_parent()  # not orphaned, still bound to the port, if the supervisor dies
    keys = Keys.load(settings.keys_file)
    engine = EngineClient(address(Path(settings.store)), engine_key())
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return create_app(settings, keys, engine, stamp=os.environ.get(STAMP_ENV) or None)


def openapi_document() -> dict[str, Any]:
    """The API's OpenAPI schema, as served (``python -m fissure.serve.app`` prints it; it is
    committed as docs/openapi.json)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        settings = ServiceSettings(store=Path(folder))
        app = create_app(settings, Keys({}), EngineClient(address(Path(folder)), b"-"))
        app.state.ctx.queue.close()
        return app.openapi()


if __name__ == "__main__":
    import json
    import sys

    json.dump(openapi_document(), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
