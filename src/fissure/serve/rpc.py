"""The API's line to the engine, the one owner of the embedded store.

A Unix socket in the store folder (``multiprocessing.connection``, authenticated with a key
the supervisor hands to both sides), one request per connection: ``query``, ``chunks``,
``delete`` and ``ping``. Replies are plain data. A store every process can reach directly
(PostgreSQL + pgvector) would need no such line: the API would call it in place of
:class:`EngineClient`.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Client, Connection, Listener
from pathlib import Path
from typing import Any

from fissure.errors import ConfigError, FissureError

KEY_ENV = "FISSURE_ENGINE_KEY"
log = logging.getLogger("fissure.serve")


class EngineUnavailable(FissureError):
    """The engine is not answering (starting, restarting, or overloaded)."""


class Opening(EngineUnavailable):
    """The engine is opening the request's namespace (once, on its first use): the API
    answers 503 with Retry-After, as for an engine that is not answering."""


def address(store: Path) -> str:
    """The engine's socket: in the store folder, or in the temporary folder when that path
    is too long for a Unix socket (about 100 bytes)."""
    path = str(store.resolve() / "engine.sock")
    if len(path.encode()) < 100:
        return path
    digest = hashlib.sha256(path.encode()).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"fissure-{digest}.sock")


def engine_key() -> bytes:
    """The key the supervisor generated for this run.

    Raises:
        ConfigError: It is not set (start the service with ``fissure serve``).
    """
    raw = os.environ.get(KEY_ENV, "")
    if not raw:
        raise ConfigError(f"${KEY_ENV} is not set: start the service with fissure serve")
    return bytes.fromhex(raw)


class EngineServer:
    """Answers requests on the engine's socket, a few at a time, on threads.

    Args:
        where: The socket path (a stale one is removed).
        key: The shared key.
        handlers: Request name → function of the request's arguments.
    """

    def __init__(self, where: str, key: bytes, handlers: dict[str, Callable[..., Any]]) -> None:
        if os.path.exists(where):
            os.unlink(where)
        self.listener = Listener(where, family="AF_UNIX", authkey=key)
        os.chmod(where, 0o600)  # the key is the lock; this is the door
        self.handlers = handlers
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="fissure-rpc")
        self._thread = threading.Thread(target=self._accept, daemon=True, name="fissure-rpc")

    def start(self) -> None:
        """Serve on a background thread."""
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn = self.listener.accept()
            except OSError:
                return  # closed
            except Exception:  # a client that failed the key handshake
                continue
            self._pool.submit(self._serve, conn)

    def _serve(self, conn: Connection) -> None:
        with conn:
            try:
                name, args = conn.recv()
                handler = self.handlers[name]
            except (EOFError, OSError, KeyError, ValueError, TypeError):
                return
            try:
                reply: tuple[Any, ...] = ("ok", handler(*args))
            except FissureError as exc:
                reply = ("error", type(exc).__name__, str(exc))
            except Exception as exc:  # reported to the API as a 500, logged here
                log.exception("engine request %s failed", name)
                reply = ("error", "InternalError", f"{type(exc).__name__}: {exc}")
            with contextlib.suppress(OSError, ValueError):
                conn.send(reply)

    def close(self) -> None:
        """Stop listening."""
        self.listener.close()
        self._pool.shutdown(wait=False)


class EngineClient:
    """Calls the engine. Each call opens a connection (cheap on a Unix socket).

    Args:
        where: The socket path.
        key: The shared key.
        timeout: Seconds to wait for an answer.
    """

    def __init__(self, where: str, key: bytes, timeout: float = 60.0) -> None:
        self.where = where
        self.key = key
        self.timeout = timeout

    def call(self, name: str, *args: Any) -> Any:
        """One request.

        Raises:
            EngineUnavailable: The engine does not answer, or (:class:`Opening`) it is still
                opening the namespace.
            FissureError: The engine refused the request (the message says why).
        """
        try:
            conn = Client(self.where, family="AF_UNIX", authkey=self.key)
        except (OSError, EOFError) as exc:
            raise EngineUnavailable(f"the engine is not answering ({exc}); try again soon") from exc
        with conn:
            try:
                conn.send((name, args))
                if not conn.poll(self.timeout):
                    raise EngineUnavailable(f"the engine did not answer within {self.timeout:g} s")
                reply = conn.recv()
            except (OSError, EOFError) as exc:
                raise EngineUnavailable(f"the engine went away ({exc}); try again soon") from exc
        if reply[0] == "ok":
            return reply[1]
        _, kind, message = reply
        if kind == Opening.__name__:
            raise Opening(message)
        raise RemoteError(kind, message)


class RemoteError(FissureError):
    """An error the engine raised, by kind (``InputError``, ``ConfigError``, …)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
