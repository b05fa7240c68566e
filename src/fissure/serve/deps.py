"""What every request handler shares: the app's context, the caller's key, and the error
answers a route documents. The app (:mod:`fissure.serve.app`) and the routers import it; it
imports neither, so the routes and the app factory do not circle."""

from __future__ import annotations

import ipaddress
import time
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from fissure.serve.auth import ANONYMOUS, Keys, Principal
from fissure.serve.commits import GroupCommit
from fissure.serve.engine import expected_stamp
from fissure.serve.jobs import Counts
from fissure.serve.queue import JobQueue
from fissure.serve.rpc import EngineClient
from fissure.serve.schemas import ErrorBody
from fissure.serve.settings import ServiceSettings
from fissure.serve.spool import Spool
from fissure.serve.uploads import Refused

COUNTS_TTL = 0.5


@dataclass
class Context:
    """What every request handler shares (no per-process state besides caches)."""

    settings: ServiceSettings
    queue: JobQueue
    spool: Spool
    keys: Keys
    engine: EngineClient
    _stamp: str | None = field(default=None, repr=False)
    _counts: tuple[float, Counts] | None = field(default=None, repr=False)
    _commits: GroupCommit | None = field(default=None, repr=False)

    def counts(self) -> Counts:
        """The queue's counts, at most half a second old: backpressure needs no more, and
        counting jobs on every upload would grow with the table."""
        cached = self.fresh_counts()
        if cached is None:
            cached = self.queue.counts()
            self._counts = (time.monotonic(), cached)
        return cached

    def fresh_counts(self) -> Counts | None:
        """The cached counts while they are fresh, else ``None`` (then :meth:`counts`, in a
        thread: it may read the database)."""
        if self._counts is not None and time.monotonic() - self._counts[0] <= COUNTS_TTL:
            return self._counts[1]
        return None

    def added(self, jobs: int, size: int) -> None:
        """Count jobs this process just queued into the cached counts (so its own uploads
        are never missed by the bound; other processes' show up within ``COUNTS_TTL``)."""
        if self._counts is not None:
            at, counts = self._counts
            by_state = {**counts.by_state, "queued": counts.by_state.get("queued", 0) + jobs}
            self._counts = (at, Counts(by_state, counts.spool_bytes + size))

    @property
    def commits(self) -> GroupCommit:
        """The process's group committer (made on first use, inside the event loop); it
        holds ``max_queued`` exactly."""
        if self._commits is None:
            self._commits = GroupCommit(self.queue, self.settings.max_queued)
        return self._commits

    def stamp(self) -> str:
        """The settings fingerprint that names documents: the one ``fissure serve`` computed
        for every process (``$FISSURE_STAMP``), else computed here once. Never the engine's
        business, so uploads are accepted while the engine loads its model.

        Raises:
            ConfigError: The embedder spec is unknown or names a model that is not there.
        """
        if self._stamp is None:
            self._stamp = expected_stamp(self.settings)
        return self._stamp


_bearer = HTTPBearer(auto_error=False, description="An API key: Authorization: Bearer <key>.")
_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="An API key.")


def context(request: Request) -> Context:
    """The app's shared context."""
    return request.app.state.ctx  # type: ignore[no-any-return]


async def _principal(  # async: no I/O, and a sync dependency costs a trip to a thread
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    header: Annotated[str | None, Depends(_header)],
) -> Principal:
    ctx = context(request)
    if not ctx.keys.enabled:
        host = request.client.host if request.client else ""
        if not is_loopback(host):
            raise Refused(403, "this server has no API keys, so it answers loopback clients only")
        return ANONYMOUS
    key = bearer.credentials if bearer else header
    found = ctx.keys.identify(key)
    if found is None:
        raise Refused(401, "a valid API key is needed: Authorization: Bearer <key>")
    return found


def _require(scope: str) -> Any:
    """A dependency: the request's principal, which must have ``scope``."""

    async def check(principal: Annotated[Principal, Depends(_principal)]) -> Principal:
        if not principal.allows(scope):
            raise Refused(403, f"this key has no {scope!r} scope")
        return principal

    return Depends(check)


Reader = Annotated[Principal, _require("read")]
Writer = Annotated[Principal, _require("write")]


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries for the error answers a route may give (every route may answer 401,
    403, 422 and 503, all with the same one-message body)."""
    return {code: {"model": ErrorBody} for code in sorted({*codes, 401, 403, 422, 503})}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address, not a name) is a loopback address."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
