"""``fissure ingest``: chunk, embed and store a folder, a git revision or a GitHub repository."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fissure.cli.common import settings_for
from fissure.cli.options import (
    Address,
    Breakpoint,
    BreakpointAmount,
    ConfigFile,
    Dedup,
    EmbedHeadings,
    EmbedWindow,
    EmbedWindowShare,
    Engine,
    FollowOutsideLinks,
    IngestEmbedder,
    Language,
    MaxBytes,
    MaxChars,
    MaxInflateMb,
    MaxTokens,
    MemoryMb,
    MinTokens,
    NoConfig,
    OverlapTokens,
    PrependContext,
    Preset,
    Progress,
    Store,
    Strategy,
    SubVectors,
    TargetChunks,
    Timeout,
    TimeoutPerMb,
    Tokenizer,
    Workers,
    json_option,
)
from fissure.cli.output import err, fail, print_json, print_summary, summary_json
from fissure.errors import FissureError

if TYPE_CHECKING:
    from fissure.ingest.job import Engine as RunEngine


def ingest(
    ctx: typer.Context,
    source: Annotated[
        str,
        typer.Argument(help="PATH | git:PATH@REV | github:OWNER/REPO\\[@REF]", metavar="SOURCE"),
    ],
    store: Store = None,
    strategy: Strategy = None,
    max_tokens: MaxTokens = None,
    max_chars: MaxChars = None,
    min_tokens: MinTokens = None,
    overlap_tokens: OverlapTokens = None,
    tokenizer: Tokenizer = None,
    language: Language = None,
    prepend_context: PrependContext = None,
    breakpoint: Breakpoint = None,
    breakpoint_amount: BreakpointAmount = None,
    target_chunks: TargetChunks = None,
    ingest_embedder: IngestEmbedder = None,
    embed_window: EmbedWindow = None,
    embed_window_share: EmbedWindowShare = None,
    sub_vectors: SubVectors = None,
    dedup: Dedup = None,
    embed_headings: EmbedHeadings = None,
    timeout: Timeout = None,
    timeout_per_mb: TimeoutPerMb = None,
    workers: Workers = None,
    memory_mb: MemoryMb = None,
    max_inflate_mb: MaxInflateMb = None,
    max_bytes: MaxBytes = None,
    follow_outside_links: FollowOutsideLinks = None,
    export: Annotated[
        Path | None, typer.Option(help="Also write this run's chunks here as JSONL.")
    ] = None,
    progress: Progress = None,
    engine: Engine = None,
    address: Address = None,
    as_json: Annotated[
        bool,
        json_option(
            "Print the run's summary as one JSON object (counts, chunk sizes, seconds per "
            "stage, every failure and fallback) instead of the lines on stderr."
        ),
    ] = False,
    preset: Preset = None,
    config_file: ConfigFile = None,
    no_config: NoConfig = False,
) -> None:
    """Chunk, embed and store SOURCE; re-runs only redo what changed.

    Vanished documents are deleted from the store; failures go to the dead-letter queue
    (fissure dlq) and never stop the run. --store postgresql://… keeps everything in one
    PostgreSQL database that many runs share. With --engine ray, parsing and splitting run
    on a Ray actor pool (--workers actors; default the CPUs the embedding actors leave) and
    embedding on another (GPUs when the cluster has them); see docs/scale.md.

    Exit status: 0 done, 1 done but some documents failed (they are dead letters), 2 an
    error before the run (bad option, source or store; a missing dependency). Files skipped
    on purpose (links outside the folder, pipes and devices, over --max-bytes) are listed
    as dead letters with their reason but do not change the exit status.

    Settings come from the flags, --preset, fissure.toml and the built-in defaults, in that
    order (fissure config show prints them).
    """
    from fissure.embed import lazy_embedder
    from fissure.ingest import Options, default_workers, open_source
    from fissure.ingest import ingest as run
    from fissure.store.open import cache_folder, embedder_for

    s = settings_for(ctx)
    embedder, store = s.ingest.embedder, s.store.path
    try:
        embedder = embedder_for(embedder, store)  # the default keeps the store's variant
        found = open_source(source, cache_dir=cache_folder(store), max_bytes=s.source.max_bytes,
                            follow_outside_links=s.source.follow_outside_links)  # fmt: skip
        model = lazy_embedder(embedder)  # the model loads only if a chunk needs a vector
        options = Options(
            settings=s.chunk,
            workers=s.ingest.workers or default_workers(),
            timeout=s.ingest.timeout,
            memory_mb=s.ingest.memory_mb or None,
            batch_chunks=s.ingest.batch_chunks,
            progress=s.ingest.progress and err.is_terminal,
            timeout_per_mb=s.ingest.timeout_per_mb,
            max_inflate_mb=s.ingest.max_inflate_mb,
        )
        sink = open(export, "w", encoding="utf-8") if export else nullcontext(None)  # noqa: SIM115
        chosen = None
        if s.ingest.engine == "ray":
            chosen = _ray_engine(embedder, s.ingest.address, s.ingest.workers)
        with sink as stream:
            summary = run(found, store, model, options, spec=source, embedder_spec=embedder,
                          export=stream, engine=chosen)  # fmt: skip
    except (FissureError, OSError) as exc:
        fail(str(exc))
    if as_json:
        print_json(summary_json(summary))
    else:
        print_summary(summary)
    if summary.errors:
        raise typer.Exit(1)


def _ray_engine(embedder: str, address: str | None, workers: int | None) -> RunEngine:
    from functools import partial

    from fissure.embed import load_embedder
    from fissure.ingest.ray_engine import RayEngine

    return RayEngine(address=address, make_embedder=partial(load_embedder, embedder),
                     parse_workers=workers)  # fmt: skip
