"""``fissure status``: what a store holds, per source."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from fissure.cli.ingest import DEFAULT_STORE, StoreOption, display
from fissure.cli.output import fail
from fissure.errors import FissureError


def status(
    store: StoreOption = DEFAULT_STORE,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Also check recall: sampled chunks, queried with their own stored "
            "vectors, must come back first; exit 1 below --min-recall."
        ),
    ] = False,
    sample: Annotated[
        int, typer.Option(help="Chunks to probe with --check (0: every chunk).")
    ] = 200,
    min_recall: Annotated[
        float, typer.Option(help="The share of probes that must pass --check.")
    ] = 0.99,
    search: Annotated[
        str,
        typer.Option(help="The path --check probes: auto (the one queries take), exact or "
                     "index (Chroma's HNSW index).")  # fmt: skip
    ] = "auto",
) -> None:
    """Documents, chunks, failures and settings of each source in the store."""
    from fissure.ingest.pipeline import token_stats

    if search not in ("auto", "exact", "index"):
        fail(f"--search must be auto, exact or index, not {search!r}")
    from fissure.store import Manifest

    if not (store / "manifest.sqlite3").is_file():
        fail(f"no store in {store}: run `fissure ingest PATH --store {store}` first")
    manifest = Manifest(store)
    try:
        runs = manifest.runs()
        model, dim = manifest.get_meta("model"), manifest.get_meta("dim")
        typer.echo(f"store {store}: model {model}, dim {dim}")
        for origin, (spec, config, when) in runs.items():
            ok = failed = 0
            sizes: list[int] = []
            for _, state, tokens in manifest.documents(origin):
                ok += state == "ok"
                failed += state == "failed"
                sizes.extend(tokens)
            st = token_stats(sizes)
            settings = config.get("settings", {})
            stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(when))
            typer.echo(
                f"{spec}  (last run {stamp}; {settings.get('strategy')}, "
                f"{settings.get('tokenizer')}, max {settings.get('max_tokens') or 'default'}; "
                f"embedder {config.get('embedder') or '?'})"
            )
            typer.echo(
                f"  {ok} documents, {len(sizes)} chunks (tokens mean {st['mean']}, min "
                f"{st['min']}, median {st['median']}, max {st['max']}), {failed} failed"
            )
        pending = manifest.pending()
        if pending:
            typer.echo(f"{len(pending)} documents half-written by an interrupted run "
                       "(the next ingest redoes them)")  # fmt: skip
        typer.echo(f"dead letters: {len(manifest.failures())}")
    finally:
        manifest.close()
    if check:
        _check(store, sample, min_recall, search)


def _check(store: Path, sample: int, min_recall: float, search: str) -> None:
    """Print the self-recall of ``sample`` chunks and exit 1 when it is below the bar."""
    from fissure.store import ChromaStore
    from fissure.store.check import self_recall

    try:
        report = self_recall(ChromaStore(store / "chroma"), sample=sample, search=search)
    except FissureError as exc:
        fail(str(exc))
    typer.echo(
        f"self-check ({report.search} search over {report.chunks} chunks): {report.found} of "
        f"{report.sampled} sampled chunks come back first for their own vector "
        f"(recall {report.recall:.3f})"
    )
    if report.groups:
        typer.echo(f"near-copies: {report.copies} chunks in {report.groups} groups (same text "
                   "up to case, spaces and digits in one document; queries show one per "
                   "group)")  # fmt: skip
    for miss in report.misses[:20]:
        first = f"{display(miss.first)} at {miss.score:.3f}" if miss.first else "nothing"
        typer.echo(f"  missed {display(miss.source)}:{miss.lines[0]}-{miss.lines[1]} "
                   f"(chunk {miss.chunk_id[:12]}): first came {first}")  # fmt: skip
    if len(report.misses) > 20:
        typer.echo(f"  … and {len(report.misses) - 20} more")
    if report.recall < min_recall:
        fail(f"self-recall {report.recall:.3f} is below {min_recall}: queries miss stored "
             "chunks; see docs/store.md (exact search, --dedup)", code=1)  # fmt: skip
