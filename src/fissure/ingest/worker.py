"""A parsing worker: ``python -m fissure.ingest.worker FD``, started by the
:class:`~fissure.ingest.workers.WorkerPool`.

It reads its settings, then ``(source, bytes)`` messages from the socket ``FD``, and answers
each with the chunks (and their windows and sentence pieces, when those are on) or the
failure. It imports the plugin modules first (they may register
parsers), caps its own address space, and dies with its parent. While it embeds for
semantic cuts it says so (``("embedding", True)`` / ``("embedding", False)``), so that the
time spent embedding, legitimate work in proportion to the text, does not count as hung.
A breach of the memory cap comes back as ``LimitError: memory limit (N MiB, --memory-mb)``.
"""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any

from fissure import limits as bounds
from fissure.config import ChunkSettings
from fissure.embed.protocol import Embedder
from fissure.limits import Limits
from fissure.types import Chunk, Document


def main(fd: int) -> None:
    """Serve on the socket ``fd`` until told to stop or the parent goes away."""
    conn = Connection(fd)
    settings, plugins, limits = pickle.loads(conn.recv_bytes())
    with bounds.using(limits):
        serve(conn, settings, plugins, limits)


def serve(
    conn: Connection, settings: ChunkSettings, plugins: tuple[str, ...], limits: Limits
) -> None:
    """A worker's loop: receive ``(source, bytes, mime)``, send back chunks or the failure.

    If the worker cannot start (a plugin that fails to import, settings or an embedder that
    cannot load), it sends ``("fatal", message)`` and exits.
    """
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's business
    try:
        job = _Job(conn, settings, plugins, limits)
    except Exception as exc:
        conn.send(("fatal", f"{type(exc).__name__}: {exc}".splitlines()[0][:500]))
        return
    if limits.memory_mb:
        _limit_memory(limits.memory_mb)
    conn.send(("ready",))  # the parent starts the first document's clock now
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        source, data, mime = message
        started = time.perf_counter()
        try:
            reply = job.run(source, data, mime)
        except MemoryError:  # the cap: say which, and free what the document took
            reply = _memory_reply(source, job.stage, limits, time.perf_counter() - started)
        except (Exception, RecursionError) as exc:
            seconds = time.perf_counter() - started
            message_text = str(exc).splitlines()[0][:500] if str(exc) else repr(exc)
            trace = traceback.format_exc(limit=20)
            reply = ("error", source, job.stage, type(exc).__name__, message_text, trace, seconds)
        del data
        conn.send(reply)


class _Job:
    """What a worker does with one document: parse, split, windows, dedup, pieces."""

    def __init__(
        self, conn: Connection, settings: ChunkSettings, plugins: tuple[str, ...], limits: Limits
    ) -> None:
        for name in plugins:
            importlib.import_module(name)
        from fissure.chunker import Chunker
        from fissure.ingest.pieces import piece_maker

        self.settings = settings
        # The worker's own cap replaces the chunker's in-process one.
        self.chunker = Chunker(settings, limits=replace(limits, memory_mb=None))
        if self.chunker.embedder is not None:
            self.chunker.embedder = _Announced(self.chunker.embedder, conn)
        self.window = _windower(settings)
        self.make_pieces = piece_maker(settings)
        self.stage = "parse"

    def run(self, source: str, data: bytes, mime: str | None) -> tuple[Any, ...]:
        """The ``"ok"`` reply for one document (raises what parsing or splitting raise)."""
        from fissure.ingest.pieces import repeated
        from fissure.parse import parse

        started, self.stage = time.perf_counter(), "parse"
        document = parse(data, source, mime)
        self.stage = "split"
        chunks = self.chunker.chunk_document(document)
        windows = self.window(document, chunks)
        duplicates = 0
        if self.settings.dedup:
            again = repeated(chunks)
            duplicates = sum(again)
            chunks = [c for c, r in zip(chunks, again, strict=True) if not r]
            windows = [w for w, r in zip(windows, again, strict=False) if not r]
        pieces = self.make_pieces(document, chunks)
        seconds = time.perf_counter() - started
        fallback = document.metadata.get("fallback")
        return ("ok", source, chunks, seconds, windows, pieces, duplicates, document.mime,
                fallback)  # fmt: skip


class _Announced:
    """An embedder that tells the parent when it starts and stops embedding."""

    def __init__(self, inner: Embedder, conn: Connection) -> None:
        self.inner, self.conn = inner, conn

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed(self, texts: Any) -> Any:
        """The inner embedder's vectors, between two notices to the parent."""
        self.conn.send(("embedding", True))
        try:
            return self.inner.embed(texts)
        finally:
            self.conn.send(("embedding", False))


def _memory_reply(source: str, stage: str, limits: Limits, seconds: float) -> tuple[Any, ...]:
    import gc

    gc.collect()
    _trim_heap()
    error = bounds.memory_error(source, limits.memory_mb)
    return ("error", source, stage, "LimitError", str(error), "", seconds)


def _trim_heap() -> None:
    """Hand freed memory back to the system, so the next document starts small."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass


def _windower(settings: ChunkSettings) -> Callable[[Document, list[Chunk]], list[str]]:
    """``window(document, chunks)``: the texts to embed as the chunks' windows (see
    :mod:`fissure.embed.window`), or ``[]`` when ``embed_window_tokens`` is off."""
    tokens = settings.embed_window_tokens
    if tokens is None:
        return lambda document, chunks: []
    from fissure.embed.window import window_texts
    from fissure.size import Sizer

    sizer = Sizer.minilm()
    before, headings = settings.embed_window_before, settings.embed_headings
    return lambda document, chunks: window_texts(
        document.text, chunks, sizer, tokens, before=before, headings=headings
    )


def _limit_memory(memory_mb: int) -> None:
    try:
        import resource

        limit = memory_mb * 1024 * 1024
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):
        pass  # no RLIMIT_AS here (macOS, Windows): the timeout still applies


def die_with_parent() -> None:
    """End this process when its parent dies, even if a parser hangs in a loop (the
    ingestion service's engine uses it too)."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


if __name__ == "__main__":
    main(int(sys.argv[1]))
