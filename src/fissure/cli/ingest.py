"""``fissure ingest``: chunk, embed and store a folder, a git revision or a GitHub repository."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fissure.cli.output import (
    FollowOutsideLinks,
    MaxBytes,
    MaxInflateMb,
    MemoryMb,
    Timeout,
    TimeoutPerMb,
    display,
    err,
    fail,
    printable,
)
from fissure.config import STRATEGIES, ChunkSettings
from fissure.errors import FissureError
from fissure.source.files import DEFAULT_MAX_BYTES

if TYPE_CHECKING:
    from fissure.ingest.job import Engine
    from fissure.store.manifest import ManifestProtocol
    from fissure.store.protocol import Store

DEFAULT_STORE = ".fissure/store"
StoreOption = Annotated[
    str,
    typer.Option(
        "--store", help="Store folder (manifest, dead letters, Chroma), or postgresql://… "
        "(all of it in one shared PostgreSQL database with pgvector)."
    ),
]


def ingest(
    source: Annotated[
        str, typer.Argument(help="PATH | git:PATH@REV | github:OWNER/REPO[@REF]", metavar="SOURCE")
    ],
    store: StoreOption = DEFAULT_STORE,
    strategy: Annotated[
        str, typer.Option("--strategy", "-s", help=f"One of: {', '.join(STRATEGIES)}.")
    ] = "structural",
    max_tokens: Annotated[
        int | None, typer.Option(help="Hard budget per chunk (default: the tokenizer's).")
    ] = None,
    min_tokens: Annotated[int, typer.Option(help="Merge smaller chunks into a neighbour.")] = 0,
    tokenizer: Annotated[
        str, typer.Option("--tokenizer", "-t", help="minilm | cl100k_base | chars | words | PATH")
    ] = "minilm",
    embedder: Annotated[
        str, typer.Option(help="minilm | minilm:bf16 | static | static:PATH | http:URL#MODEL")
    ] = "minilm",
    embed_window: Annotated[
        int | None,
        typer.Option(
            help="Also embed each chunk with its surrounding text, up to this many MiniLM "
            "word pieces (254: MiniLM's limit), and store the blend of the two vectors."
        ),
    ] = None,
    embed_window_share: Annotated[
        float, typer.Option(help="The window vector's weight in that blend, 0..1.")
    ] = 0.6,
    sub_vectors: Annotated[
        int | None,
        typer.Option(
            "--sub-vectors",
            help="Also store sentence pieces of at most this many cl100k_base tokens (30 "
            "works well), linked to the chunks they overlap, for `fissure query --sub-weight`.",
        ),
    ] = None,
    dedup: Annotated[
        bool,
        typer.Option(
            "--dedup", help="Leave out chunks whose text repeats an earlier chunk's in the "
            "same document."
        ),
    ] = False,
    embed_headings: Annotated[
        bool,
        typer.Option(
            "--embed-headings", help="Embed each chunk (and its window and pieces) after its "
            "headings breadcrumb line; the stored text does not change."
        ),
    ] = False,
    timeout: Timeout = 120,
    timeout_per_mb: TimeoutPerMb = 10,
    workers: Annotated[
        int | None,
        typer.Option(help="Parsing processes (default: cores - 1, 1 to 4; with --engine ray: "
                     "parsing actors, default the CPUs the embedding actors leave)."),
    ] = None,
    memory_mb: MemoryMb = 4096,
    max_inflate_mb: MaxInflateMb = 256,
    max_bytes: MaxBytes = DEFAULT_MAX_BYTES,
    follow_outside_links: FollowOutsideLinks = False,
    export: Annotated[
        Path | None, typer.Option(help="Also write this run's chunks here as JSONL.")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Progress bars on stderr.")] = True,
    engine: Annotated[
        str, typer.Option(help="local (worker processes here) | ray (a Ray cluster).")
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(help="Ray cluster HOST:PORT (default: $RAY_ADDRESS, else a local Ray)."),
    ] = None,
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
    """
    from fissure.embed import lazy_embedder
    from fissure.ingest import Options, default_workers, open_source
    from fissure.ingest import ingest as run

    try:
        settings = ChunkSettings(
            strategy=strategy,
            max_tokens=max_tokens,
            min_tokens=min_tokens,
            tokenizer=tokenizer,
            embed_window_tokens=embed_window,
            embed_window_share=embed_window_share,
            sub_vector_tokens=sub_vectors,
            dedup=dedup,
            embed_headings=embed_headings,
        )
        if engine not in ("local", "ray"):
            fail(f"--engine {engine!r}: use local or ray")
        found = open_source(source, cache_dir=cache_folder(store), max_bytes=max_bytes,
                            follow_outside_links=follow_outside_links)  # fmt: skip
        model = lazy_embedder(embedder)  # the model loads only if a chunk needs a vector
        options = Options(
            settings=settings,
            workers=workers or default_workers(),
            timeout=timeout,
            memory_mb=memory_mb or None,
            progress=progress and err.is_terminal,
            timeout_per_mb=timeout_per_mb,
            max_inflate_mb=max_inflate_mb,
        )
        sink = open(export, "w", encoding="utf-8") if export else nullcontext(None)  # noqa: SIM115
        chosen = _ray_engine(embedder, address, workers) if engine == "ray" else None
        with sink as stream:
            summary = run(found, store, model, options, spec=source, embedder_spec=embedder,
                          export=stream, engine=chosen)  # fmt: skip
    except (FissureError, OSError) as exc:
        fail(str(exc))
    print_summary(summary)
    if summary.errors:
        raise typer.Exit(1)


def _ray_engine(embedder: str, address: str | None, workers: int | None) -> Engine:
    from functools import partial

    from fissure.embed import load_embedder
    from fissure.ingest.ray_engine import RayEngine

    return RayEngine(address=address, make_embedder=partial(load_embedder, embedder),
                     parse_workers=workers)  # fmt: skip


def cache_folder(store: str) -> Path:
    """Where the GitHub source keeps its ETag cache: in the store folder, or in
    ``.fissure/`` for a database store."""
    from fissure.store.open import is_database

    return Path(".fissure") / "http-cache" if is_database(store) else Path(store) / "http-cache"


def open_existing(store: str) -> tuple[Store, ManifestProtocol]:
    """The store and the manifest that ``--store`` names; fails (one line) when there is none."""
    from fissure.store.open import open_store

    try:
        return open_store(store, create=False)
    except FissureError as exc:
        fail(str(exc))


def print_summary(summary: object) -> None:
    """The end-of-run report on stderr: counts, chunk sizes, failures, time per stage."""
    from fissure.ingest import Summary

    assert isinstance(summary, Summary)
    s, t = summary, summary.timings
    err.print(
        f"{printable(s.origin)}: {s.listed} files listed, {s.processed} chunked, "
        f"{s.unchanged} unchanged, {s.removed} removed; {s.chunks} chunks embedded"
        + (f", {s.pieces} sentence pieces" if s.pieces else "")
        + (f", {s.duplicates} repeated chunks left out" if s.duplicates else "")
    )
    tk = s.tokens
    err.print(
        f"store now: {s.documents} documents, {s.corpus_chunks} chunks; tokens per chunk "
        f"mean {tk['mean']}, min {tk['min']}, median {tk['median']}, max {tk['max']}"
    )
    err.print(
        f"time: {t.total:.1f} s (list {t.scan:.1f}, read {t.fetch:.1f}, parse+split "
        f"{t.parse:.1f} in workers, embed {t.embed:.1f}, store {t.store:.1f})"
    )
    if s.failures:
        err.print(f"[bold red]{len(s.failures)} failed[/]; see `fissure dlq list`:", markup=True)
        for f in s.failures[:10]:
            what = printable(f"{f.stage}: {f.error_type}: {f.message}")
            err.print(f"  {display(f.source)}: {what}")
    else:
        err.print("0 failed")
