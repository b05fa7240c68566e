"""``fissure dlq list | retry | clear``: the dead-letter queue of failed documents."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fissure.cli.common import Command, Group, open_existing, settings_for
from fissure.cli.options import ConfigFile, NoConfig, Preset, Store, json_option
from fissure.cli.output import (
    display,
    err,
    fail,
    failure_json,
    print_json,
    print_summary,
    printable,
    summary_json,
)
from fissure.errors import FissureError

if TYPE_CHECKING:
    from fissure.store.manifest import ManifestProtocol

app = typer.Typer(help="The dead-letter queue: documents that failed, and why.", cls=Group,
                  no_args_is_help=True)  # fmt: skip


def _manifest(store: str, read_only: bool = False) -> ManifestProtocol:
    from fissure.store.open import close_store

    found, manifest = open_existing(store, read_only=read_only)
    close_store(found)
    return manifest


@app.command("list", cls=Command)
def list_(
    ctx: typer.Context,
    store: Store = None,
    traceback: Annotated[bool, typer.Option("--traceback", help="Show tracebacks.")] = False,
    as_json: Annotated[
        bool,
        json_option(
            "Print JSON lines, one dead letter per line: source, origin, stage, error_type, "
            "message, traceback, time (ISO 8601)."
        ),
    ] = False,
    preset: Preset = None,
    config_file: ConfigFile = None,
    no_config: NoConfig = False,
) -> None:
    """Every failed document: source, stage, error and when (tab-separated)."""
    manifest = _manifest(settings_for(ctx).store.path, read_only=True)
    failures = manifest.failures()
    manifest.close()
    for f in failures:
        if as_json:
            print_json(failure_json(f))
            continue
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(f.time))
        fields = (printable(f.stage), printable(f.error_type), when, printable(f.message))
        typer.echo("\t".join((display(f.source), *fields)))
        if traceback and f.traceback:
            for line in f.traceback.rstrip().split("\n"):
                typer.echo(printable(line))
    err.print(f"{len(failures)} dead letters")


@app.command("retry", cls=Command)
def retry(
    ctx: typer.Context,
    store: Store = None,
    retry_timeout: Annotated[
        float | None,
        typer.Option("--timeout", help="Per-document timeout (default: the last run's)."),
    ] = None,
    retry_timeout_per_mb: Annotated[
        float | None,
        typer.Option("--timeout-per-mb", help="Extra seconds per MB (default: the last run's)."),
    ] = None,
    retry_memory_mb: Annotated[
        int | None,
        typer.Option("--memory-mb", help="Memory cap per worker, MiB (default: the last run's)."),
    ] = None,
    retry_max_inflate_mb: Annotated[
        int | None,
        typer.Option(
            "--max-inflate-mb",
            help="How far compressed content may inflate, MiB (default: the last run's).",
        ),
    ] = None,
    as_json: Annotated[
        bool,
        json_option(
            "Print JSON lines, one run summary per source retried, as fissure ingest "
            "--json prints it (none when nothing failed)."
        ),
    ] = False,
    preset: Preset = None,
    config_file: ConfigFile = None,
    no_config: NoConfig = False,
) -> None:
    """Ingest the failed documents again, with the settings of their last run.

    Exit status: 0 all went in, 1 some failed again, 2 an error.
    """
    from fissure.config import ChunkSettings
    from fissure.embed import load_embedder
    from fissure.ingest import Options, ingest, open_source
    from fissure.store.open import cache_folder

    settings = settings_for(ctx)
    store = settings.store.path
    manifest = _manifest(store)
    failures, runs = manifest.failures(), manifest.runs()
    manifest.close()
    origins = sorted({f.origin for f in failures})
    if not origins:
        err.print("nothing to retry")
        return
    failed = False
    try:
        for origin in origins:
            spec, config, _ = runs[origin]
            # A limit given here wins, then the last run's, then the settings in force.
            given = {
                "timeout": retry_timeout,
                "timeout_per_mb": retry_timeout_per_mb,
                "memory_mb": retry_memory_mb,
                "max_inflate_mb": retry_max_inflate_mb,
            }
            limits: dict[str, Any] = {
                k: v if v is not None else config.get(k, getattr(settings.ingest, k))
                for k, v in given.items()
            }
            if limits["memory_mb"] == 0:
                limits["memory_mb"] = None
            options = Options(settings=ChunkSettings.from_dict(config["settings"]), **limits)
            force = {f.source for f in failures if f.origin == origin}
            source = open_source(spec, cache_dir=cache_folder(store))
            model = load_embedder(config.get("embedder") or settings.ingest.embedder)
            named = config.get("embedder") or settings.ingest.embedder
            summary = ingest(source, store, model, options, spec=spec, embedder_spec=named,
                             force=force)  # fmt: skip
            if as_json:
                print_json(summary_json(summary))
            else:
                print_summary(summary)
            failed = failed or bool(summary.errors)
    except (FissureError, KeyError) as exc:
        fail(f"cannot retry: {exc}")
    if failed:
        raise typer.Exit(1)


@app.command("clear", cls=Command)
def clear(
    ctx: typer.Context,
    store: Store = None,
    source: Annotated[
        list[str] | None, typer.Option(help="Only these sources (default: all).")
    ] = None,
    as_json: Annotated[bool, json_option('Print one JSON object: {"cleared": N}.')] = False,
    preset: Preset = None,
    config_file: ConfigFile = None,
    no_config: NoConfig = False,
) -> None:
    """Forget failures; the next ingest tries those documents again."""
    manifest = _manifest(settings_for(ctx).store.path)
    n = manifest.clear_failures(source or None)
    manifest.close()
    if as_json:
        print_json({"cleared": n})
    else:
        err.print(f"cleared {n} dead letters")
