"""Shared output: JSONL and human-readable tables, and one clean exit path for errors."""

from __future__ import annotations

import json
import os
import statistics
import sys
from collections.abc import Iterable
from typing import IO, Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fissure.source.names import URI, path_bytes, printable
from fissure.types import Chunk

# Markup and emoji codes off: printed text holds file names and messages, and a name
# like "[red]x" or ":fire:.md" must print as it is. Styled lines ask with markup=True.
err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False, emoji=False)

# Options that several commands share, defined once so their names and help agree.
MaxTokens = Annotated[
    int | None,
    typer.Option(help="Hard budget per chunk (default: the tokenizer's; 254 for minilm)."),
]
Tokenizer = Annotated[
    str,
    typer.Option(
        "--tokenizer",
        "-t",
        help="minilm | cl100k_base | o200k_base | chars | words | PATH/tokenizer.json",
    ),
]
Embedder = Annotated[
    str,
    typer.Option(
        "--embedder",
        "-e",
        help="For semantic/hybrid: minilm:auto | minilm | minilm:bf16 | static | hashing",
    ),
]

MaxBytes = Annotated[
    int,
    typer.Option(
        help="Skip files larger than this many bytes; a read stops here whatever the file "
        "system said (a file that grows, a /proc file)."
    ),
]
FollowOutsideLinks = Annotated[
    bool,
    typer.Option(
        "--follow-outside-links",
        help="Also follow links that lead outside the folder (by default they are skipped, "
        "with a reason).",
    ),
]
# The limits on one document (see fissure.limits), shared by chunk and ingest.
Timeout = Annotated[
    float,
    typer.Option(
        help="Seconds one document may take to parse and split before its worker is killed "
        "as hung, plus --timeout-per-mb per MB (embedding for semantic cuts does not count)."
    ),
]
TimeoutPerMb = Annotated[float, typer.Option(help="Extra seconds per MB of a document.")]
MemoryMb = Annotated[
    int,
    typer.Option(
        help="Memory (address space) one document may take, MiB: the cap of each worker "
        "process; 0 for none."
    ),
]
MaxInflateMb = Annotated[
    int,
    typer.Option(
        help="How far one document's compressed content (DOCX members, PDF streams) may "
        "inflate, MiB; content inflating over 100 times its size (more when this is raised) "
        "is refused as a bomb."
    ),
]


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear line and exit; never a traceback. The message is printed as it is
    (``pip install 'fissure[store]'`` keeps its brackets), control characters escaped."""
    err.print(f"[bold red]error:[/] {escape(printable(message))}", markup=True)
    raise typer.Exit(code)


def display(source: str) -> str:
    """A document name as the user would write it, safe to print: relative to the current
    folder when inside it, control characters escaped (:func:`printable`); a name stored
    as a ``file://`` URI (not UTF-8) as its path, with the odd bytes as ``\\xe9``."""
    scheme, uri, rest = source.partition(URI)
    if uri and scheme in ("", "git:"):
        source = scheme + os.fsdecode(path_bytes(uri + rest))
    if source.startswith("/"):
        try:
            here = os.getcwd()
        except OSError:  # the current folder was deleted
            here = ""
        if here and source.startswith(here.rstrip(os.sep) + os.sep):
            source = os.path.relpath(source, here)
    return printable(source)


def write_jsonl(chunks: Iterable[Chunk], stream: IO[str]) -> int:
    """One JSON object per chunk; returns how many were written."""
    n = 0
    for c in chunks:
        stream.write(json.dumps(c.to_dict(), ensure_ascii=False))
        stream.write("\n")
        n += 1
    return n


def token_stats(sizes: list[int]) -> dict[str, float]:
    """Count, mean, min, median and max of chunk sizes."""
    if not sizes:
        return {"chunks": 0, "mean": 0, "min": 0, "median": 0, "max": 0}
    return {
        "chunks": len(sizes),
        "mean": round(statistics.fmean(sizes), 1),
        "min": min(sizes),
        "median": round(statistics.median(sizes), 1),
        "max": max(sizes),
    }


def print_table(rows: list[tuple[str, str, list[int]]], unit: str, stream: IO[str]) -> None:
    """Per-document rows (source, format, chunk sizes) and a total line."""
    console = Console(file=stream, highlight=False, markup=False, emoji=False,
                      width=max(100, _width(stream)))  # fmt: skip
    table = Table(title=f"fissure chunks (sizes in {unit})", show_footer=False)
    for name in ("source", "format", "chunks", "mean", "min", "median", "max"):
        table.add_column(name, justify="left" if name in ("source", "format") else "right")
    everything: list[int] = []
    for source, fmt, sizes in rows:
        s = token_stats(sizes)
        everything.extend(sizes)
        numbers = (str(s[k]) for k in ("chunks", "mean", "min", "median", "max"))
        table.add_row(display(source), fmt, *numbers)
    console.print(table)
    t = token_stats(everything)
    console.print(
        f"{len(rows)} documents, {t['chunks']} chunks; {unit} per chunk: mean {t['mean']}, "
        f"min {t['min']}, median {t['median']}, max {t['max']}"
    )


def _width(stream: IO[str]) -> int:
    return 160 if stream is not sys.stdout else Console().width
