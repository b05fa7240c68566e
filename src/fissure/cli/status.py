"""``fissure status``: what a store holds, per source."""

from __future__ import annotations

import time

import typer

from fissure.cli.ingest import DEFAULT_STORE, StoreOption, open_existing
from fissure.cli.output import printable


def status(store: StoreOption = DEFAULT_STORE) -> None:
    """Documents, chunks, failures and settings of each source in the store."""
    from fissure.ingest.pipeline import token_stats
    from fissure.store.open import close_store, is_database
    from fissure.store.pg_schema import redact

    found, manifest = open_existing(store)
    close_store(found)
    name = redact(store) if is_database(store) else store
    try:
        runs = manifest.runs()
        model, dim = manifest.get_meta("model"), manifest.get_meta("dim")
        typer.echo(printable(f"store {name}: model {model}, dim {dim}"))
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
                f"{printable(spec)}  (last run {stamp}; {settings.get('strategy')}, "
                f"{settings.get('tokenizer')}, max {settings.get('max_tokens') or 'default'}; "
                f"embedder {config.get('embedder') or '?'})"
            )
            typer.echo(
                f"  {ok} documents, {len(sizes)} chunks (tokens mean {st['mean']}, min "
                f"{st['min']}, median {st['median']}, max {st['max']}), {failed} failed"
            )
        pending = manifest.pending()
        if pending:
            typer.echo(f"{len(pending)} documents being written, or half-written by an "
                       "interrupted run (the next ingest redoes those)")  # fmt: skip
        typer.echo(f"dead letters: {len(manifest.failures())}")
    finally:
        manifest.close()
