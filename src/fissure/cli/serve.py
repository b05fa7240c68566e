"""``fissure serve``: the ingestion service (HTTP API + engine) on a store folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fissure.cli.output import MaxTokens, Tokenizer, fail
from fissure.config import STRATEGIES, ChunkSettings
from fissure.errors import FissureError
from fissure.source.files import DEFAULT_MAX_BYTES

DEFAULT_STORE = Path(".fissure/serve")
_D = 86_400.0


def serve(
    store: Annotated[
        Path, typer.Option(help="Store folder: job queue, spool, manifest and Chroma.")
    ] = DEFAULT_STORE,
    host: Annotated[
        str, typer.Option(help="Address to listen on; anything but loopback needs API keys.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    api_workers: Annotated[int, typer.Option(help="HTTP worker processes.")] = 1,
    workers: Annotated[
        int | None, typer.Option(help="Parsing processes (default: cores - 1, 1 to 4).")
    ] = None,
    keys_file: Annotated[
        Path | None, typer.Option(help="API keys, hashed, one JSON line each (fissure key).")
    ] = None,
    allow_root: Annotated[
        list[Path] | None,
        typer.Option(help="A server folder that JSON uploads may name (repeatable)."),
    ] = None,
    allow_github: Annotated[
        bool, typer.Option(help="Let JSON uploads name github: sources.")
    ] = False,
    embedder: Annotated[
        str,
        typer.Option(help="minilm | minilm:bf16 | static | static:PATH | http:URL#MODEL | hashing"),
    ] = "minilm",
    strategy: Annotated[
        str, typer.Option("--strategy", "-s", help=f"One of: {', '.join(STRATEGIES)}.")
    ] = "structural",
    max_tokens: MaxTokens = None,
    min_tokens: Annotated[int, typer.Option(help="Merge smaller chunks into a neighbour.")] = 0,
    tokenizer: Tokenizer = "minilm",
    timeout: Annotated[float, typer.Option(help="Seconds one document may take to parse.")] = 120,
    memory_mb: Annotated[
        int, typer.Option(help="Address-space cap per parser, MiB; 0: none.")
    ] = 4096,
    recycle_after: Annotated[int, typer.Option(help="Replace a parser after N documents.")] = 1000,
    batch_chunks: Annotated[int, typer.Option(help="Chunks per embedding batch.")] = 256,
    lease_seconds: Annotated[
        float, typer.Option(help="Job lease; a dead worker's jobs return after it.")
    ] = 60,
    max_attempts: Annotated[int, typer.Option(help="Attempts before the dead-letter queue.")] = 3,
    backoff_seconds: Annotated[
        float, typer.Option(help="First retry wait; doubles per attempt.")
    ] = 2,
    backoff_max_seconds: Annotated[float, typer.Option(help="Longest retry wait.")] = 300,
    max_file_bytes: Annotated[
        int, typer.Option(help="Largest document (413).")
    ] = DEFAULT_MAX_BYTES,
    max_request_bytes: Annotated[
        int, typer.Option(help="Largest request body (413).")
    ] = 200_000_000,
    max_files: Annotated[int, typer.Option(help="Most files per request (413).")] = 100,
    max_queued: Annotated[int, typer.Option(help="Most jobs waiting or running (429).")] = 100_000,
    max_spool_bytes: Annotated[
        int, typer.Option(help="Most bytes spooled (429).")
    ] = 10_000_000_000,
    retry_after_seconds: Annotated[int, typer.Option(help="Retry-After of a 429 or 503.")] = 5,
    retention_seconds: Annotated[float, typer.Option(help="Keep finished jobs and events.")] = 7
    * _D,
    spool_retention_seconds: Annotated[
        float, typer.Option(help="Keep a finished job's bytes.")
    ] = 3600,
    dlq_retention_seconds: Annotated[float, typer.Option(help="Keep failed jobs.")] = 30 * _D,
    purge_interval_seconds: Annotated[float, typer.Option(help="How often to purge.")] = 300,
    max_query_k: Annotated[int, typer.Option(help="Largest k of a query.")] = 100,
    plugin: Annotated[
        list[str] | None, typer.Option(help="A module the parsers import first (repeatable).")
    ] = None,
) -> None:
    """Serve the HTTP API: uploads are answered at once (202 + a job); the engine parses,
    chunks, embeds and stores them behind a durable queue. See docs/service.md."""
    from fissure.ingest import default_workers
    from fissure.serve.settings import ServiceSettings
    from fissure.serve.supervisor import serve as run

    try:
        settings = ServiceSettings(
            store=store,
            host=host,
            port=port,
            api_workers=api_workers,
            workers=workers or default_workers(),
            embedder=embedder,
            chunk=ChunkSettings(
                strategy=strategy, max_tokens=max_tokens, min_tokens=min_tokens, tokenizer=tokenizer
            ),
            timeout=timeout,
            memory_mb=memory_mb or None,
            recycle_after=recycle_after,
            batch_chunks=batch_chunks,
            lease_seconds=lease_seconds,
            max_attempts=max_attempts,
            backoff_seconds=backoff_seconds,
            backoff_max_seconds=backoff_max_seconds,
            max_file_bytes=max_file_bytes,
            max_request_bytes=max_request_bytes,
            max_files=max_files,
            max_queued=max_queued,
            max_spool_bytes=max_spool_bytes,
            retry_after_seconds=retry_after_seconds,
            retention_seconds=retention_seconds,
            spool_retention_seconds=spool_retention_seconds,
            dlq_retention_seconds=dlq_retention_seconds,
            purge_interval_seconds=purge_interval_seconds,
            allowed_roots=tuple(p.resolve() for p in allow_root or ()),
            allow_github=allow_github,
            keys_file=keys_file,
            max_query_k=max_query_k,
            plugins=tuple(plugin or ()),
        )
        run(settings)
    except (FissureError, OSError) as exc:
        fail(str(exc))
