"""``fissure chunk``: chunk files and folders, print JSONL or a summary table."""

from __future__ import annotations

import sys
from collections import Counter
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer

from fissure.chunker import Chunker, load_document
from fissure.cli.output import (
    Embedder,
    MaxTokens,
    Tokenizer,
    err,
    fail,
    print_table,
    write_jsonl,
)
from fissure.config import STRATEGIES
from fissure.errors import FissureError
from fissure.source import iter_files
from fissure.source.files import DEFAULT_MAX_BYTES


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
    max_bytes: Annotated[
        int, typer.Option(help="Skip files larger than this many bytes.")
    ] = DEFAULT_MAX_BYTES,
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
        files = list(iter_files(paths, max_bytes=max_bytes))
    except FissureError as exc:
        fail(str(exc))
    sink = open(output, "w", encoding="utf-8") if output else nullcontext(sys.stdout)  # noqa: SIM115
    rows: list[tuple[str, str, list[int]]] = []
    formats: Counter[str] = Counter()
    skipped = 0
    with sink as stream:
        for found in files:
            if found.skip:
                skipped += 1
                err.print(f"skipped {found.path}: {found.skip}")
                continue
            try:
                document = load_document(found.path, mime=mime)
                chunks = chunker.chunk_document(document)
            except FissureError as exc:
                skipped += 1
                err.print(f"skipped {found.path}: {exc}")
                continue
            if "fallback" in document.metadata:
                err.print(f"fallback {found.path}: {document.metadata['fallback']}")
            if fmt == "jsonl":
                write_jsonl(chunks, stream)
            formats[document.mime] += 1
            rows.append((str(found.path), document.mime, [c.n_tokens for c in chunks]))
        if fmt == "table":
            print_table(rows, chunker.sizer.name, stream)
    counts = ", ".join(f"{mime} {n}" for mime, n in formats.most_common())
    err.print(f"{len(rows)} documents ({counts or 'none'}); {skipped} skipped")
