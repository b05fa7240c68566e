"""Shared output: JSON, JSONL and human-readable tables, and one clean exit path for errors.

With ``--json`` a command prints machine output only on stdout: one JSON document, or JSON
lines for a list that streams (chunks, dead letters, jobs, one answer per query); notes,
progress and errors go to stderr. ``docs/cli.md`` lists what each command prints.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from collections.abc import Iterable
from typing import IO, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fissure.source.names import URI, path_bytes, printable
from fissure.types import Chunk

# Markup and emoji codes off: printed text holds file names and messages, and a name
# like "[red]x" or ":fire:.md" must print as it is. Styled lines ask with markup=True.
err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False, emoji=False)

# Library messages that name a keyword argument where the command line has a flag: the
# CLI says the flag (tests/cli/test_vocabulary.py finds every such message in the library).
KEYWORD_FLAGS = {"overwrite=True": "--overwrite"}


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear line, ``error: <message>`` on stderr, and exit; never a traceback.

    Exit status 2 (the default) for a usage or settings error, 1 for a failure after the
    work began. The message is printed as it is (``pip install 'fissure[store]'`` keeps
    its brackets), control characters escaped, a library keyword said as its flag
    (:data:`KEYWORD_FLAGS`)."""
    for keyword, flag in KEYWORD_FLAGS.items():
        message = message.replace(keyword, flag)
    err.print(f"[bold red]error:[/] {escape(printable(message))}", markup=True)
    raise typer.Exit(code)


def print_json(value: Any) -> None:
    """One JSON document (or one JSON line of a list) on stdout."""
    typer.echo(json.dumps(value, ensure_ascii=False))


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
    if s.fallbacks:
        err.print(f"{len(s.fallbacks)} stored with less structure (a parser fell back):")
        for source, why in s.fallbacks[:10]:
            err.print(f"  {display(source)}: {printable(why)}")


def summary_json(summary: object) -> dict[str, Any]:
    """The end-of-run report as data: what :func:`print_summary` says, every failure and
    fallback included, seconds per stage."""
    from dataclasses import asdict

    from fissure.ingest import Summary

    assert isinstance(summary, Summary)
    s = summary
    stages = asdict(s.timings)
    del stages["failures"], stages["fallbacks"]  # listed below, once
    timings = {k: round(v, 3) if isinstance(v, float) else v for k, v in stages.items()}
    return {
        "origin": s.origin, "listed": s.listed, "processed": s.processed,
        "unchanged": s.unchanged, "removed": s.removed, "chunks": s.chunks,
        "pieces": s.pieces, "duplicates": s.duplicates, "documents": s.documents,
        "corpus_chunks": s.corpus_chunks, "tokens": s.tokens, "timings": timings,
        "failed": len(s.errors), "failures": [failure_json(f) for f in s.failures],
        "fallbacks": [{"source": source, "why": why} for source, why in s.fallbacks],
    }  # fmt: skip


def failure_json(failure: Any) -> dict[str, Any]:
    """A dead letter as data (``time`` in ISO 8601, local, with its offset)."""
    import time

    f = failure
    return {"source": f.source, "origin": f.origin, "stage": f.stage,
            "error_type": f.error_type, "message": f.message, "traceback": f.traceback,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(f.time))}  # fmt: skip


def human_bytes(n: int) -> str:
    """``n`` bytes in B, kB, MB or GB (powers of ten), e.g. ``4.8 kB``."""
    for unit, step in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= step:
            return f"{n / step:.1f} {unit}"
    return f"{n} B"
