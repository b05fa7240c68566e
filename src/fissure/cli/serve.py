"""``fissure serve``: the ingestion service (HTTP API + engine) on a store folder.

The service's own options are :class:`~fissure.serve.settings.ServiceSettings` fields of the
same name, with that field's default (docs/service.md lists them all). How documents are
chunked and embedded, and the per-document limits, are the shared settings of ``fissure
ingest`` (the same flags, ``--preset``, ``fissure.toml``; docs/settings.md), so the service
chunks an upload exactly as ``fissure chunk`` and ``fissure ingest`` chunk that file.
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from pathlib import Path
from typing import Annotated, Any

import typer

from fissure.cli.common import settings_for
from fissure.cli.options import (
    Breakpoint,
    BreakpointAmount,
    ConfigFile,
    Dedup,
    EmbedHeadings,
    EmbedWindow,
    EmbedWindowShare,
    IngestEmbedder,
    Language,
    MaxInflateMb,
    MaxTokens,
    MemoryMb,
    MinTokens,
    NoConfig,
    OverlapTokens,
    PrependContext,
    Preset,
    Strategy,
    SubVectors,
    TargetChunks,
    Timeout,
    TimeoutPerMb,
    Tokenizer,
)
from fissure.cli.output import fail
from fissure.errors import SERVE_MODULES, FissureError, need
from fissure.serve.settings import ServiceSettings

D: dict[str, Any] = {f.name: f.default for f in fields(ServiceSettings) if f.default is not MISSING}


def _opt(help: str) -> Any:  # noqa: A002 - typer's own keyword
    return typer.Option(help=help)


def serve(
    ctx: typer.Context,
    location: Annotated[
        str,
        typer.Option(
            "--store",
            help="Store folder (job queue, spool, manifest, Chroma), or postgresql://… (queue, "
            "manifest, DLQ, chunks and vectors, shared by many service processes).",
        ),
    ] = str(D["store"]),
    spool: Annotated[
        Path | None,
        _opt(
            "Upload spool (default STORE/spool); with postgresql://, a folder every service "
            "process shares."
        ),
    ] = None,
    state: Annotated[
        Path | None,
        _opt(
            "With postgresql://: this process's own folder (engine lock and socket, "
            "metrics); default .fissure/serve-PORT."
        ),
    ] = None,
    host: Annotated[str, _opt("Address to listen on; anything but loopback needs API keys.")] = D[
        "host"
    ],
    port: Annotated[int, _opt("TCP port.")] = D["port"],
    api_workers: Annotated[int, _opt("HTTP worker processes.")] = D["api_workers"],
    parsers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            help="Parser processes (default: cores - 1, 1 to 4); with --engine ray: parse actors "
            "(default: the cluster's CPUs).",
        ),
    ] = None,
    parse_engine: Annotated[
        str,
        typer.Option(
            "--engine", help="local (parser processes here) | ray (parse actors on a Ray cluster)."
        ),
    ] = D["engine"],
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--address",
            help="With --engine ray: the cluster HOST:PORT (default: $RAY_ADDRESS, else a Ray "
            "started here).",
        ),
    ] = None,
    keys_file: Annotated[
        Path | None, _opt("API keys, hashed, one JSON line each (fissure key).")
    ] = None,
    allow_root: Annotated[
        list[Path] | None, _opt("A server folder JSON uploads may name (repeatable).")
    ] = None,
    allow_github: Annotated[bool, _opt("Let JSON uploads name github: sources.")] = D[
        "allow_github"
    ],
    ingest_embedder: IngestEmbedder = None,
    strategy: Strategy = None,
    max_tokens: MaxTokens = None,
    min_tokens: MinTokens = None,
    overlap_tokens: OverlapTokens = None,
    tokenizer: Tokenizer = None,
    language: Language = None,
    prepend_context: PrependContext = None,
    breakpoint: Breakpoint = None,
    breakpoint_amount: BreakpointAmount = None,
    target_chunks: TargetChunks = None,
    embed_window: EmbedWindow = None,
    embed_window_share: EmbedWindowShare = None,
    sub_vectors: SubVectors = None,
    dedup: Dedup = None,
    embed_headings: EmbedHeadings = None,
    timeout: Timeout = None,
    timeout_per_mb: TimeoutPerMb = None,
    memory_mb: MemoryMb = None,
    max_inflate_mb: MaxInflateMb = None,
    recycle_after: Annotated[int, _opt("Replace a parser after this many documents.")] = D[
        "recycle_after"
    ],
    batch_chunks: Annotated[int, _opt("Chunks per embedding batch, across documents.")] = D[
        "batch_chunks"
    ],
    lease_seconds: Annotated[
        float, _opt("A job's lease; a dead engine's jobs return after it.")
    ] = D["lease_seconds"],
    max_attempts: Annotated[int, _opt("Attempts before the dead-letter queue.")] = D[
        "max_attempts"
    ],
    backoff_seconds: Annotated[
        float, _opt("Wait before the first retry; doubles per attempt.")
    ] = D["backoff_seconds"],
    backoff_max_seconds: Annotated[float, _opt("Longest wait between attempts.")] = D[
        "backoff_max_seconds"
    ],
    max_file_bytes: Annotated[int, _opt("Largest document (413).")] = D["max_file_bytes"],
    max_request_bytes: Annotated[int, _opt("Largest request body (413).")] = D["max_request_bytes"],
    max_files: Annotated[int, _opt("Most files per request (413).")] = D["max_files"],
    max_queued: Annotated[int, _opt("Most jobs queued or running (429).")] = D["max_queued"],
    max_spool_bytes: Annotated[int, _opt("Most bytes in the spool (429).")] = D["max_spool_bytes"],
    retry_after_seconds: Annotated[int, _opt("Retry-After of a 429 or 503.")] = D[
        "retry_after_seconds"
    ],
    retention_seconds: Annotated[float, _opt("Keep finished jobs and events this long.")] = D[
        "retention_seconds"
    ],
    spool_retention_seconds: Annotated[float, _opt("Keep a finished job's bytes this long.")] = D[
        "spool_retention_seconds"
    ],
    dlq_retention_seconds: Annotated[float, _opt("Keep failed jobs this long.")] = D[
        "dlq_retention_seconds"
    ],
    purge_interval_seconds: Annotated[float, _opt("Purge this often.")] = D[
        "purge_interval_seconds"
    ],
    max_query_k: Annotated[int, _opt("Largest k of a query.")] = D["max_query_k"],
    max_budget_tokens: Annotated[
        int, _opt("Largest reader budget (budget_tokens) of a query.")
    ] = D["max_budget_tokens"],
    plugin: Annotated[
        list[str] | None, _opt("A module the parsers import first (repeatable).")
    ] = None,
    access_log: Annotated[
        bool, _opt("Log one line per request to stderr (method, path, status, ms).")
    ] = D["access_log"],
    preset: Preset = None,
    config_file: ConfigFile = None,
    no_config: NoConfig = False,
) -> None:
    """Serve the HTTP API: uploads are answered at once (202 + a job); the engine parses,
    chunks, embeds and stores them behind a durable queue. See docs/service.md.

    Chunking, the embedder and the per-document limits come from the flags, --preset,
    fissure.toml and the built-in defaults, in that order, as for fissure ingest.
    """
    from fissure.ingest import default_workers
    from fissure.serve.supervisor import serve as run
    from fissure.store.open import embedder_for, is_database

    given = dict(locals())
    need(SERVE_MODULES, "serve", purpose="fissure serve")
    s = settings_for(ctx)
    names = {f.name for f in fields(ServiceSettings)}
    mine = {k: v for k, v in given.items() if k in names and k not in _SHARED + ("spool",)}
    database = location if is_database(location) else None
    folder = (state or Path(f".fissure/serve-{port}")) if database else Path(location)
    try:
        if state is not None and database is None:
            fail("--state is only for --store postgresql://… (a folder store is its own state)")
        settings = ServiceSettings(
            **mine,
            store=folder,
            database=database,
            spool=spool.resolve() if spool else None,
            workers=parsers or (None if parse_engine == "ray" else default_workers()),
            engine=parse_engine,
            address=ray_address,
            # One variant for every worker and actor; the default keeps a folder store's.
            embedder=embedder_for(s.ingest.embedder, folder if database is None else None),
            chunk=s.chunk,
            timeout=s.ingest.timeout,
            memory_mb=s.ingest.memory_mb or None,
            timeout_per_mb=s.ingest.timeout_per_mb,
            max_inflate_mb=s.ingest.max_inflate_mb,
            allowed_roots=tuple(p.resolve() for p in allow_root or ()),
            plugins=tuple(plugin or ()),
        )  # fmt: skip
        run(settings)
    except (FissureError, OSError) as exc:
        fail(str(exc))


# ServiceSettings fields that come from the shared settings (settings_for), not from
# serve's own options.
_SHARED = ("embedder", "chunk", "timeout", "memory_mb", "timeout_per_mb", "max_inflate_mb")
