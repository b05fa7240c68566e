"""``fissure serve``: the supervisor that starts the engine and the API processes.

It checks the settings (a non-loopback address needs API keys), prepares the store folder
(queue schema, an empty metrics folder), starts the engine (``python -m
fissure.serve.engine``) and restarts it whenever it dies, binds the port (and says
``listening on http://HOST:PORT`` on stderr once it accepts connections) and runs uvicorn
(``--api-workers`` processes) on it in the foreground. If the engine reports a setting it
cannot work with, the service stops and says why.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from fissure.errors import ConfigError
from fissure.serve.settings import SETTINGS_ENV, ServiceSettings

log = logging.getLogger("fissure.serve")
ENGINE_FATAL = 3
_QUICK_DEATH = 10.0  # an engine that dies sooner than this is restarted with backoff


class EngineSupervisor:
    """Keeps one engine process running.

    Args:
        env: The engine's environment (settings, key, metrics folder).
        on_fatal: Called with the engine's message when it exits with status 3.
    """

    def __init__(self, env: dict[str, str], on_fatal: Callable[[str], None]) -> None:
        self.env = env
        self.on_fatal = on_fatal
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="fissure-engine")

    def start(self) -> None:
        """Start the engine and its watcher."""
        self.process = self._spawn()
        self._thread.start()

    def _spawn(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "fissure.serve.engine"],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def _watch(self) -> None:
        wait = 0.0
        while not self._stop.is_set():
            process = self.process
            assert process is not None
            started = time.monotonic()
            tail = _relay(process)
            code = process.wait()
            if self._stop.is_set():
                return
            if code == ENGINE_FATAL:
                self.on_fatal(tail.strip().splitlines()[-1] if tail.strip() else "engine failed")
                return
            lived = time.monotonic() - started
            wait = min(30.0, max(1.0, wait * 2)) if lived < _QUICK_DEATH else 0.2
            log.warning("the engine exited (%s); starting a new one in %.1f s", code, wait)
            from fissure.serve.metrics import WORKER_RESTARTS

            # Counted when the death is seen, not after the wait: /metrics tells at once.
            WORKER_RESTARTS.labels("engine").inc()
            self.restarts += 1
            if self._stop.wait(wait):
                return
            self.process = self._spawn()

    def stop(self) -> None:
        """Stop the engine (it finishes the documents in flight, up to a few seconds)."""
        self._stop.set()
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _relay(process: subprocess.Popen[bytes]) -> str:
    """Copy the engine's stderr to ours until it closes; returns the last lines."""
    tail: list[str] = []
    assert process.stderr is not None
    for raw in process.stderr:
        line = raw.decode("utf-8", "replace")
        sys.stderr.write(line)
        tail = (tail + [line])[-20:]
    return "".join(tail)


def check(settings: ServiceSettings) -> None:
    """Refuse settings that would be unsafe to serve.

    Raises:
        ConfigError: A non-loopback address without API keys, or unreadable keys.
    """
    from fissure.serve.auth import Keys

    keys = Keys.load(settings.keys_file)
    if not settings.loopback and not keys.enabled:
        raise ConfigError(
            f"refusing to listen on {settings.host} without API keys: configure keys "
            "(--keys-file or $FISSURE_API_KEYS; make one with `fissure key`) or listen on "
            "127.0.0.1"
        )
    for root in settings.allowed_roots:
        if not root.is_dir():
            raise ConfigError(f"allowed root {root} is not a folder")


def environment(settings: ServiceSettings) -> dict[str, str]:
    """The environment of every process of the service (set here too, before the
    metrics library is imported: it reads its folder at import).

    Raises:
        ConfigError: The embedder spec is unknown or names a model that is not there.
    """
    from fissure.serve.engine import STAMP_ENV, expected_stamp
    from fissure.serve.memory import SERVICE_PID_ENV
    from fissure.serve.rpc import KEY_ENV

    stamp = expected_stamp(settings)  # the API names documents with it before the engine is up
    metrics_dir = settings.store / "metrics"
    shutil.rmtree(metrics_dir, ignore_errors=True)
    metrics_dir.mkdir(parents=True)
    extra = {
        SETTINGS_ENV: settings.to_json(),
        KEY_ENV: secrets.token_hex(32),
        STAMP_ENV: stamp,
        SERVICE_PID_ENV: str(os.getpid()),
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir.resolve()),
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }
    os.environ.update(extra)
    return dict(os.environ)


def listen(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A listening TCP socket on ``host:port`` (IPv6 when ``host`` has a colon), inheritable
    by uvicorn's worker processes: connections queue on it from now on.

    Raises:
        ConfigError: The address cannot be bound (in use, not an address of this machine).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(backlog)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    """``http://HOST:PORT`` of a listening socket (an IPv6 host in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def serve(settings: ServiceSettings) -> None:
    """Run the service in the foreground until interrupted.

    Raises:
        ConfigError: The settings cannot work (before or while starting).
    """
    from fissure.serve.middleware import configure_logging

    check(settings)
    configure_logging()
    settings.store.mkdir(parents=True, exist_ok=True)
    from fissure.serve.engine import STAMP_FILE
    from fissure.serve.queue import open_queue

    (settings.store / STAMP_FILE).unlink(missing_ok=True)
    open_queue(settings).close()  # the schema exists before any process opens it
    env = environment(settings)
    fatal: list[str] = []
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    config = uvicorn.Config("fissure.serve.app:from_env", factory=True, host=settings.host,
                            port=settings.port, workers=settings.api_workers, access_log=False,
                            log_level="warning", timeout_graceful_shutdown=5)  # fmt: skip
    server = uvicorn.Server(config)

    def on_fatal(message: str) -> None:
        fatal.append(message)
        if settings.api_workers == 1:
            server.should_exit = True
        else:
            os.kill(os.getpid(), signal.SIGTERM)  # uvicorn's process manager stops on it

    sock = listen(settings.host, settings.port, config.backlog)
    engine = EngineSupervisor(env, on_fatal)
    engine.start()
    log.info("listening on %s", url_of(sock))
    try:
        if settings.api_workers == 1:
            server.run(sockets=[sock])
        else:
            Multiprocess(config, sockets=[sock]).run()
    finally:
        engine.stop()
        sock.close()
    if fatal:
        raise ConfigError(fatal[0].removeprefix("fissure engine: "))
