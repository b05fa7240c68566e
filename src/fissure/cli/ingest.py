"""``fissure ingest``: chunk, embed and store a folder, a git revision or a GitHub repository."""

from __future__ import annotations

import os
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer

from fissure.cli.output import MaxInflateMb, MemoryMb, Timeout, TimeoutPerMb, err, fail
from fissure.config import STRATEGIES, ChunkSettings
from fissure.errors import FissureError
from fissure.source.files import DEFAULT_MAX_BYTES

DEFAULT_STORE = Path(".fissure/store")
StoreOption = Annotated[
    Path, typer.Option("--store", help="Store folder (manifest, dead letters, Chroma).")
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
        int | None, typer.Option(help="Parsing processes (default: cores - 1, 1 to 4).")
    ] = None,
    memory_mb: MemoryMb = 4096,
    max_inflate_mb: MaxInflateMb = 256,
    max_bytes: Annotated[int, typer.Option(help="Skip larger files.")] = DEFAULT_MAX_BYTES,
    export: Annotated[
        Path | None, typer.Option(help="Also write this run's chunks here as JSONL.")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Progress bars on stderr.")] = True,
) -> None:
    """Chunk, embed and store SOURCE; re-runs only redo what changed.

    Vanished documents are deleted from the store; failures go to the dead-letter queue
    (fissure dlq) and never stop the run.
    """
    from fissure.embed import load_embedder
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
        found = open_source(source, cache_dir=store / "http-cache", max_bytes=max_bytes)
        model = load_embedder(embedder)
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
        with sink as stream:
            summary = run(found, store, model, options, spec=source, embedder_spec=embedder,
                          export=stream)  # fmt: skip
    except (FissureError, OSError) as exc:
        fail(str(exc))
    print_summary(summary)


def print_summary(summary: object) -> None:
    """The end-of-run report on stderr: counts, chunk sizes, failures, time per stage."""
    from fissure.ingest import Summary

    assert isinstance(summary, Summary)
    s, t = summary, summary.timings
    err.print(
        f"{s.origin}: {s.listed} files listed, {s.processed} chunked, {s.unchanged} unchanged, "
        f"{s.removed} removed; {s.chunks} chunks embedded"
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
            err.print(f"  {display(f.source)}: {f.stage}: {f.error_type}: {f.message}")
    else:
        err.print("0 failed")


def display(source: str) -> str:
    """A source as the user would write it: relative to the current folder when inside it."""
    if source.startswith("/"):
        here = os.getcwd()
        if source.startswith(here.rstrip(os.sep) + os.sep):
            return os.path.relpath(source, here)
    return source
