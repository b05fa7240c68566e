"""``fissure chunk``: chunk files and folders, print JSONL or a summary table."""

from __future__ import annotations

import sys
from collections import Counter
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer

from fissure.chunker import Chunker
from fissure.cli.common import settings_for
from fissure.cli.options import (
    Breakpoint,
    BreakpointAmount,
    ConfigFile,
    Embedder,
    FollowOutsideLinks,
    Language,
    MaxBytes,
    MaxTokens,
    MinTokens,
    NoConfig,
    OverlapTokens,
    PrependContext,
    Preset,
    Strategy,
    TargetChunks,
    Tokenizer,
)
from fissure.cli.output import display, err, fail, print_table, printable, write_jsonl
from fissure.errors import FissureError
from fissure.parse import parse
from fissure.source import iter_files
from fissure.source.names import path_name
from fissure.source.read import read_file


def chunk(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (walked recursively).")],
    strategy: Strategy = None,
    max_tokens: MaxTokens = None,
    min_tokens: MinTokens = None,
    overlap_tokens: OverlapTokens = None,
    tokenizer: Tokenizer = None,
    language: Language = None,
    mime: Annotated[
        str | None, typer.Option(help="Parse every file as this MIME type (skip detection).")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="jsonl | table")] = "jsonl",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
    max_bytes: MaxBytes = None,
    follow_outside_links: FollowOutsideLinks = None,
    prepend_context: PrependContext = None,
    embedder: Embedder = None,
    breakpoint: Breakpoint = None,
    breakpoint_amount: BreakpointAmount = None,
    target_chunks: TargetChunks = None,
    preset: Preset = None,
    config_file: ConfigFile = None,
    no_config: NoConfig = False,
) -> None:
    """Split documents into chunks with exact offsets and a hard token budget.

    Settings come from the flags, --preset, fissure.toml and the built-in defaults, in that
    order (fissure config show prints them).
    """
    if fmt not in ("jsonl", "table"):
        fail(f"unknown --format {fmt!r}: use jsonl or table")
    settings = settings_for(ctx)
    max_bytes = settings.source.max_bytes
    follow_outside_links = settings.source.follow_outside_links
    try:
        chunker = Chunker(settings.chunk)
        files = list(iter_files(paths, max_bytes=max_bytes,
                                follow_outside_links=follow_outside_links))  # fmt: skip
    except FissureError as exc:
        fail(str(exc))
    sink = open(output, "w", encoding="utf-8") if output else nullcontext(sys.stdout)  # noqa: SIM115
    rows: list[tuple[str, str, list[int]]] = []
    formats: Counter[str] = Counter()
    skipped = 0
    with sink as stream:
        for found in files:
            name = path_name(found.path)
            if found.skip:
                skipped += 1
                err.print(f"skipped {display(name)}: {printable(found.skip)}")
                continue
            try:
                # One bounded read (links, pipes and devices refused as the walk does):
                # the bytes chunked are the bytes the walk let through.
                data = read_file(found.path, max_bytes=max_bytes, root=found.root,
                                 follow_outside_links=follow_outside_links)  # fmt: skip
                document = parse(data, name, mime)
                chunks = chunker.chunk_document(document)
            except FissureError as exc:
                skipped += 1
                err.print(f"skipped {display(name)}: {printable(str(exc))}")
                continue
            if "fallback" in document.metadata:
                err.print(f"fallback {display(name)}: {printable(document.metadata['fallback'])}")
            if fmt == "jsonl":
                write_jsonl(chunks, stream)
            formats[document.mime] += 1
            rows.append((name, document.mime, [c.n_tokens for c in chunks]))
        if fmt == "table":
            print_table(rows, chunker.sizer.name, stream)
    counts = ", ".join(f"{mime} {n}" for mime, n in formats.most_common())
    err.print(f"{len(rows)} documents ({counts or 'none'}); {skipped} skipped")
