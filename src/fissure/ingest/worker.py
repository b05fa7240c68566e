"""A parsing worker: ``python -m fissure.ingest.worker FD``, started by the
:class:`~fissure.ingest.workers.WorkerPool`.

It reads its settings, then ``(source, bytes)`` messages from the socket ``FD``, and answers
each with the chunks (and their windows and sentence pieces, when those are on) or the
failure. It imports the plugin modules first (they may register
parsers), caps its own address space, and dies with its parent.
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
from multiprocessing.connection import Connection
from typing import Any

from fissure.config import ChunkSettings
from fissure.types import Chunk, Document


def main(fd: int) -> None:
    """Serve on the socket ``fd`` until told to stop or the parent goes away."""
    conn = Connection(fd)
    settings, plugins, memory_mb = pickle.loads(conn.recv_bytes())
    serve(conn, settings, plugins, memory_mb)


def serve(
    conn: Connection, settings: ChunkSettings, plugins: tuple[str, ...], memory_mb: int | None
) -> None:
    """A worker's loop: receive ``(source, bytes)``, send back chunks or the failure."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's business
    for name in plugins:
        importlib.import_module(name)
    from fissure.chunker import Chunker
    from fissure.ingest.pieces import piece_maker, repeated
    from fissure.parse import parse

    chunker = Chunker(settings)
    window = _windower(settings)
    make_pieces = piece_maker(settings)
    if memory_mb:
        _limit_memory(memory_mb)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        source, data = message
        started, stage = time.perf_counter(), "parse"
        try:
            document = parse(data, source)
            stage = "split"
            chunks = chunker.chunk_document(document)
            windows = window(document, chunks)
            duplicates = 0
            if settings.dedup:
                again = repeated(chunks)
                duplicates = sum(again)
                chunks = [c for c, r in zip(chunks, again, strict=True) if not r]
                windows = [w for w, r in zip(windows, again, strict=False) if not r]
            pieces = make_pieces(document, chunks)
            reply: tuple[Any, ...] = (
                "ok", source, chunks, time.perf_counter() - started, windows, pieces, duplicates
            )  # fmt: skip
        except (Exception, MemoryError, RecursionError) as exc:
            seconds = time.perf_counter() - started
            message_text = str(exc).splitlines()[0][:500] if str(exc) else repr(exc)
            trace = traceback.format_exc(limit=20)
            reply = ("error", source, stage, type(exc).__name__, message_text, trace, seconds)
        del data
        conn.send(reply)


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
