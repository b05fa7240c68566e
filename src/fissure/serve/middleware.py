"""What wraps every request of the API: the access log, the count of 5xx answers, and an
``Allow`` header that names every method a URL serves.

Both are plain ASGI middleware (no per-request task or body buffering), so an upload's
answer pays only a clock read and, with the access log on, one log line.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from urllib.parse import unquote

from starlette.datastructures import MutableHeaders
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOG_FORMAT = "%(asctime)s serve[%(process)d] %(levelname)s %(message)s"
access = logging.getLogger("fissure.serve.access")
# Query parameters whose values are never logged (a key or a token a client put in a URL).
_SECRET = re.compile(r"(?i)key|token|secret|pass|auth|sig|cred|session")
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]")
_METHODS = ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")


def configure_logging() -> None:
    """Log INFO and up to stderr, one line per record, in every process of the service
    (a no-op where logging is configured already)."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=LOG_FORMAT)


def loggable_target(scope: Scope) -> str:
    """The request's path and query as sent (percent-encoded), with the values of
    secret-looking query parameters replaced by ``***`` and control characters escaped,
    so a log line is one line and holds no credential."""
    raw = scope.get("raw_path") or scope["path"].encode("utf-8")
    target = raw.decode("ascii", "backslashreplace")
    query = scope.get("query_string", b"").decode("ascii", "backslashreplace")
    if query:
        parts = []
        for part in query.split("&"):
            name, eq, _ = part.partition("=")
            parts.append(f"{name}=***" if eq and _SECRET.search(unquote(name)) else part)
        target += "?" + "&".join(parts)
    return _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}", target)[:2000]


class AccessLog:
    """Counts 5xx answers (``fissure_http_server_errors_total``) and, when ``enabled``,
    logs one line per request: client, method, path (query secrets hidden), status and
    milliseconds from arrival to the last byte of the answer.

    Args:
        app: The application it wraps.
        enabled: Whether to write the access log (the count is kept either way).
    """

    def __init__(self, app: ASGIApp, enabled: bool = True) -> None:
        self.app = app
        self.enabled = enabled

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the client gets if the app raises before answering

        async def record(message: Message) -> None:
            """Send ``message``, noting the status; log once the last body part went."""
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self._done(scope, status, started)

        try:
            await self.app(scope, receive, record)
        except BaseException:
            self._done(scope, status, started)
            raise

    def _done(self, scope: Scope, status: int, started: float) -> None:
        if status >= 500:
            from fissure.serve.metrics import SERVER_ERRORS

            SERVER_ERRORS.labels(str(status)).inc()
        if self.enabled:
            client = scope.get("client")
            access.info(
                '%s "%s %s" %d %.1f ms',
                client[0] if client else "-",
                scope["method"],
                loggable_target(scope),
                status,
                (time.perf_counter() - started) * 1000,
            )


class AllowedMethods:
    """``OPTIONS`` on a URL answers ``204`` with ``Allow`` naming every method its routes
    serve, and a ``405`` names them all too (the router alone names those of the first
    route it matched: ``GET`` for a document, not ``DELETE``).

    Args:
        app: The application it wraps.
        routes: The application's routes (``app.router.routes``), read at each use.
    """

    def __init__(self, app: ASGIApp, routes: list[BaseRoute]) -> None:
        self.app = app
        self.routes = routes

    def allowed(self, path: str, root_path: str = "") -> list[str]:
        """The methods some route serves at ``path`` (with ``OPTIONS``), sorted; empty
        when no route has that path. Each method is tried on the routes as the router
        tries a request (``BaseRoute.matches``), so included routers count too."""
        found = ["OPTIONS"]
        for method in _METHODS:
            probe: Scope = {"type": "http", "path": path, "root_path": root_path,
                            "method": method}  # fmt: skip
            if any(route.matches(probe)[0] == Match.FULL for route in self.routes):
                found.append(method)
        return sorted(found) if len(found) > 1 else []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, root = scope["path"], scope.get("root_path", "")
        if scope["method"] == "OPTIONS":
            allowed = self.allowed(path, root)
            if allowed:
                headers = [(b"allow", ", ".join(allowed).encode()), (b"content-length", b"0")]
                await send({"type": "http.response.start", "status": 204, "headers": headers})
                await send({"type": "http.response.body", "body": b""})
                return

        async def name_all(message: Message) -> None:
            """Send ``message``, a 405's ``Allow`` naming every method."""
            if message["type"] == "http.response.start" and message["status"] == 405:
                MutableHeaders(scope=message)["allow"] = ", ".join(self.allowed(path, root))
            await send(message)

        await self.app(scope, receive, name_all)
