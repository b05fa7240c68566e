"""``fissure dlq list | retry | clear``: the dead-letter queue of failed documents."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fissure.cli.ingest import (
    DEFAULT_STORE,
    StoreOption,
    cache_folder,
    open_existing,
    print_summary,
)
from fissure.cli.output import display, err, fail, printable
from fissure.errors import FissureError

if TYPE_CHECKING:
    from fissure.store.manifest import ManifestProtocol

app = typer.Typer(help="The dead-letter queue: documents that failed, and why.",
                  no_args_is_help=True)  # fmt: skip


def _manifest(store: str) -> ManifestProtocol:
    from fissure.store.open import close_store

    found, manifest = open_existing(store)
    close_store(found)
    return manifest


@app.command("list")
def list_(
    store: StoreOption = DEFAULT_STORE,
    traceback: Annotated[bool, typer.Option("--traceback", help="Show tracebacks.")] = False,
) -> None:
    """Every failed document: source, stage, error and when."""
    manifest = _manifest(store)
    failures = manifest.failures()
    manifest.close()
    for f in failures:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(f.time))
        fields = (printable(f.stage), printable(f.error_type), when, printable(f.message))
        typer.echo("\t".join((display(f.source), *fields)))
        if traceback and f.traceback:
            for line in f.traceback.rstrip().split("\n"):
                typer.echo(printable(line))
    err.print(f"{len(failures)} dead letters")


@app.command("retry")
def retry(
    store: StoreOption = DEFAULT_STORE,
    timeout: Annotated[
        float | None, typer.Option(help="Per-document timeout (default: the last run's).")
    ] = None,
    timeout_per_mb: Annotated[
        float | None, typer.Option(help="Extra seconds per MB (default: the last run's).")
    ] = None,
    memory_mb: Annotated[
        int | None, typer.Option(help="Memory cap per worker, MiB (default: the last run's).")
    ] = None,
    max_inflate_mb: Annotated[
        int | None,
        typer.Option(help="How far compressed content may inflate, MiB (default: the last run's)."),
    ] = None,
) -> None:
    """Ingest the failed documents again, with the settings of their last run.

    Exit status: 0 all went in, 1 some failed again, 2 an error.
    """
    from fissure.config import ChunkSettings
    from fissure.embed import load_embedder
    from fissure.ingest import Options, ingest, open_source

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
            raw = dict(config["settings"])
            if raw.get("separators") is not None:
                raw["separators"] = tuple(raw["separators"])
            given = {"timeout": timeout, "timeout_per_mb": timeout_per_mb,
                     "memory_mb": memory_mb, "max_inflate_mb": max_inflate_mb}  # fmt: skip
            limits: dict[str, Any] = {k: v if v is not None else config[k] for k, v in
                                      given.items() if v is not None or k in config}  # fmt: skip
            options = Options(settings=ChunkSettings(**raw), **limits)
            force = {f.source for f in failures if f.origin == origin}
            source = open_source(spec, cache_dir=cache_folder(store))
            model = load_embedder(config.get("embedder") or "minilm")
            named = config.get("embedder") or "minilm"
            summary = ingest(source, store, model, options, spec=spec, embedder_spec=named,
                             force=force)  # fmt: skip
            print_summary(summary)
            failed = failed or bool(summary.errors)
    except (FissureError, KeyError) as exc:
        fail(f"cannot retry: {exc}")
    if failed:
        raise typer.Exit(1)


@app.command("clear")
def clear(
    store: StoreOption = DEFAULT_STORE,
    source: Annotated[
        list[str] | None, typer.Option(help="Only these sources (default: all).")
    ] = None,
) -> None:
    """Forget failures; the next ingest tries those documents again."""
    manifest = _manifest(store)
    n = manifest.clear_failures(source or None)
    manifest.close()
    err.print(f"cleared {n} dead letters")
