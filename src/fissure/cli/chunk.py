"""``fissure chunk``: chunk files and folders, print JSONL or a summary table."""

from __future__ import annotations

import sys
from collections import Counter
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer

from fissure.chunker import Chunker
from fissure.cli.output import (
    Embedder,
    FollowOutsideLinks,
    MaxBytes,
    MaxTokens,
    Tokenizer,
    display,
    err,
    fail,
    print_table,
    printable,
    write_jsonl,
)
from fissure.config import STRATEGIES
from fissure.errors import FissureError
from fissure.parse import parse
from fissure.source import iter_files
from fissure.source.files import DEFAULT_MAX_BYTES
from fissure.source.names import path_name
from fissure.source.read import read_file


def chunk(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (walked recursively).")],
    strategy: Annotated[
        str, typer.Option("--strategy", "-s", help=f"One of: {', '.join(STRATEGIES)}.")
    ] = "structural",
    max_tokens: MaxTokens = None,
    min_tokens: Annotated[int, typer.Option(help="Merge smaller chunks into a neighbour.")] = 0,
    overlap_tokens: Annotated[int, typer.Option(help="Extend chunks backwards by this much.")] = 0,
    tokenizer: Tokenizer = "minilm",
    language: Annotated[
        str | None, typer.Option(help="Separator preset for --strategy recursive.")
    ] = None,
    mime: Annotated[
        str | None, typer.Option(help="Parse every file as this MIME type (skip detection).")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="jsonl | table")] = "jsonl",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
    max_bytes: MaxBytes = DEFAULT_MAX_BYTES,
    follow_outside_links: FollowOutsideLinks = False,
    prepend_context: Annotated[
        bool, typer.Option(help="Count each chunk's context line inside its budget.")
    ] = False,
    embedder: Embedder = "minilm:auto",
    breakpoint: Annotated[
        str,
        typer.Option(help="percentile | standard_deviation | interquartile | gradient"),
    ] = "percentile",
    breakpoint_amount: Annotated[
        float | None, typer.Option(help="The breakpoint method's amount.")
    ] = None,
    target_chunks: Annotated[
        int | None, typer.Option(help="Semantic: cut at the strongest N-1 boundaries.")
    ] = None,
) -> None:
    """Split documents into chunks with exact offsets and a hard token budget."""
    if fmt not in ("jsonl", "table"):
        fail(f"unknown --format {fmt!r}: use jsonl or table")
    try:
        chunker = Chunker(
            strategy=strategy,
            max_tokens=max_tokens,
            min_tokens=min_tokens,
            overlap_tokens=overlap_tokens,
            tokenizer=tokenizer,
            language=language,
            prepend_context=prepend_context,
            embedder=embedder,
            breakpoint=breakpoint,
            breakpoint_amount=breakpoint_amount,
            target_chunks=target_chunks,
        )
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
