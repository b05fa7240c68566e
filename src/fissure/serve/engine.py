"""The engine: ``python -m fissure.serve.engine``, started (and restarted) by ``fissure serve``.

One engine owns a store folder (an exclusive lock on ``engine.lock``): it loads the embedder,
opens Chroma and the manifest, undoes what a killed predecessor left half-written, takes
back its own leases, publishes that it is up (``engine.json``), and then runs the
:class:`~fissure.serve.runner.Runner` while answering the API's queries, chunk reads and
deletes on its socket (:mod:`fissure.serve.rpc`).

The API names documents with the settings fingerprint without waiting for any of this
(:func:`expected_stamp`: the model's id is known from the spec and the model's config files,
without loading it), so uploads are accepted while the engine loads; the engine checks that
the model it loaded has that id.

Exit status 3 means a setting is wrong (the supervisor stops the service and says why);
any other death is a crash, and the supervisor starts a fresh engine.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from fissure.errors import ConfigError, FissureError, MissingDependencyError
from fissure.serve.jobs import check_namespace
from fissure.serve.settings import ServiceSettings

FATAL = 3
STOP_GRACE = 8.0  # seconds an engine told to stop may spend finishing its documents
STAMP_FILE = "engine.json"
STAMP_ENV = "FISSURE_STAMP"  # the fingerprint, computed once by the supervisor for every process
log = logging.getLogger("fissure.serve")


def expected_stamp(settings: ServiceSettings) -> str:
    """The settings fingerprint of ``settings``, without loading the model (a MiniLM's id
    comes from its config files; the other embedders are cheap to build).

    Raises:
        ConfigError: The embedder spec is unknown or names a model that is not there.
    """
    from fissure.embed import lazy_embedder
    from fissure.ingest.plan import fingerprint

    return fingerprint(settings.chunk, lazy_embedder(settings.embedder).model_id)


def read_stamp(store: Path) -> dict[str, Any] | None:
    """What the running engine published (``stamp``, ``model``, ``dim``), if it has."""
    try:
        return json.loads((store / STAMP_FILE).read_text("utf-8"))  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return None


class Engine:
    """The store's owner: the runner plus the read requests of the API.

    Args:
        settings: The service settings.

    Raises:
        ConfigError: The embedder or the store cannot be used.
    """

    def __init__(self, settings: ServiceSettings) -> None:
        from fissure.embed import load_embedder
        from fissure.ingest import fingerprint
        from fissure.serve.metrics import Observed
        from fissure.serve.queue import open_queue
        from fissure.serve.runner import Runner
        from fissure.serve.spaces import Spaces
        from fissure.serve.spool import Spool

        s = settings
        self.settings = s
        self.embedder = Observed(load_embedder(s.embedder))
        self.stamp = fingerprint(s.chunk, self.embedder.model_id)
        named = os.environ.get(STAMP_ENV)
        if named and named != self.stamp:  # the API names documents with the expected one
            raise ConfigError(f"the embedder {s.embedder!r} loaded as {self.embedder.model_id}, "
                              f"not as its spec and config files say (fingerprint {named}, "
                              f"not {self.stamp}): reinstall the model")  # fmt: skip
        self.spaces = Spaces(
            s.database or s.store,
            self.embedder,
            self.stamp,
            window_share=s.chunk.embed_window_share,
            embed_headings=s.chunk.embed_headings,
        )
        self.queue = open_queue(s, worker=True)
        self.spool = Spool(s.spool_folder)
        # Stable across restarts (a restarted engine takes back its own leases at once), and
        # one per service process: its own folder, on its own machine.
        self.worker = f"{socket.gethostname()}:{s.store.resolve()}"
        self.runner = Runner(self.queue, self.spool, self.spaces, s, self.worker)

    def recover(self) -> None:
        """Open every namespace (checking its embedder, undoing a killed engine's
        half-written documents) and take back this engine's leases.

        Raises:
            ConfigError: The default namespace's store was built with another embedder.
        """
        names = self.spaces.recover()
        released = self.queue.release(self.worker)
        log.info("namespaces %s open; %d jobs of a previous engine put back", ", ".join(names),
                 released)  # fmt: skip

    def publish(self) -> None:
        """Write ``engine.json`` (atomically): this engine is up, with this model."""
        info = {
            "stamp": self.stamp,
            "model": self.embedder.model_id,
            "dim": self.embedder.dim,
            "pid": os.getpid(),
        }
        tmp = self.settings.store / f".{STAMP_FILE}.{os.getpid()}"
        tmp.write_text(json.dumps(info), "utf-8")
        os.replace(tmp, self.settings.store / STAMP_FILE)

    def handlers(self) -> dict[str, Any]:
        """The requests the API may send."""
        return {
            "ping": self.ping,
            "query": self.query,
            "chunks": self.chunks,
            "delete": self.delete,
        }

    def ping(self) -> dict[str, Any]:
        """Alive: the fingerprint and model."""
        return {"stamp": self.stamp, "model": self.embedder.model_id}

    def query(
        self,
        namespace: str,
        text: str,
        k: int,
        where: dict[str, Any] | None,
        sub_weight: float | None,
        mode: str | None = None,
    ) -> list[tuple[str, float, str, dict[str, Any]]]:
        """The ``k`` best chunks of a namespace for ``text`` in ``mode`` (``None``: the
        store's default): ``(chunk_id, score, text, metadata)``."""
        check_namespace(namespace)
        vector = None if mode == "lexical" else self.embedder.inner.embed([text])[0]
        return self.spaces.query(namespace, vector, k, where or None, sub_weight, text, mode)

    def chunks(self, namespace: str, source: str) -> list[tuple[str, str, dict[str, Any]]]:
        """A document's stored chunks."""
        check_namespace(namespace)
        return self.spaces.chunks(namespace, source)

    def delete(self, namespace: str, document_id: str) -> str:
        """Remove a document from the store, the manifest and the queue: ``deleted``,
        ``missing`` or ``busy`` (its job is queued or running)."""
        check_namespace(namespace)
        record = self.queue.document(namespace, document_id)
        if record is None:
            return "missing"
        if record.state in ("queued", "running"):
            return "busy"
        self.spaces.delete(namespace, record.source)
        self.queue.forget_document(namespace, document_id)
        if not self.queue.referenced([record.digest]):
            self.spool.delete(record.digest)
        return "deleted"


def hold_lock(store: Path) -> IO[str]:
    """Take the store's engine lock, waiting while another engine holds it."""
    store.mkdir(parents=True, exist_ok=True)
    handle = open(store / "engine.lock", "w")  # noqa: SIM115 - held for the process's life
    waited = False
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return handle
        except BlockingIOError:
            if not waited:
                log.warning("another engine holds %s; waiting for it to stop", store)
                waited = True
            time.sleep(0.5)


def main() -> None:
    """Run an engine with the settings the supervisor passed."""
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s engine[%(process)d] %(levelname)s %(message)s",
    )
    from fissure.ingest.worker import die_with_parent
    from fissure.serve.rpc import EngineServer, address, engine_key

    die_with_parent()
    stop = threading.Event()

    def on_signal(*_: object) -> None:
        # Finish what is in flight, but not for long: a hanging parser could hold the stop for
        # its whole timeout, and whatever is cut short is leased to this engine's name, so the
        # next engine takes it back at once (and undoes any half-written document).
        stop.set()
        timer = threading.Timer(STOP_GRACE, os._exit, args=(0,))
        timer.daemon = True
        timer.start()

    def on_signals() -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, on_signal)

    on_signals()
    try:
        settings = ServiceSettings.from_env()
        os.nice(settings.engine_nice)
        lock = hold_lock(settings.store)
        engine = Engine(settings)
        engine.recover()
        engine.runner.pool.start()  # with --engine ray: joins the cluster (a bad address is fatal)
        on_signals()  # ray.init puts in a SIGTERM handler of its own; ours must stand
        server = EngineServer(address(settings.store), engine_key(), engine.handlers())
        server.start()
        engine.publish()
        log.info("engine ready: model %s, fingerprint %s", engine.embedder.model_id, engine.stamp)
    except (ConfigError, MissingDependencyError) as exc:
        print(f"fissure engine: {exc}", file=sys.stderr, flush=True)
        sys.exit(FATAL)
    try:
        engine.runner.run(stop)
    except FissureError:
        log.exception("the engine stopped")
        raise
    finally:
        server.close()
        lock.close()


if __name__ == "__main__":
    main()
