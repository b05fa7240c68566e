"""``fissure status``: what a store holds, per source."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer

from fissure.cli.common import open_existing, settings_for
from fissure.cli.options import ConfigFile, NoConfig, Preset, Store
from fissure.cli.output import printable


def status(
    ctx: typer.Context,
    store: Store = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the same facts as one JSON object.")
    ] = False,
    preset: Preset = None,
    config_file: ConfigFile = None,
    no_config: NoConfig = False,
) -> None:
    """Documents, chunks, failures and settings of each source in the store.

    Exit status: 0 shown, 2 no store there.
    """
    from fissure.ingest.pipeline import token_stats
    from fissure.store.open import close_store, is_database
    from fissure.store.pg_schema import redact

    store = settings_for(ctx).store.path
    found, manifest = open_existing(store)
    close_store(found)
    name = redact(store) if is_database(store) else store
    if as_json:
        try:
            typer.echo(json.dumps(_report(manifest, str(name)), ensure_ascii=False))
        finally:
            manifest.close()
        return
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


def _report(manifest: Any, store: str) -> dict[str, Any]:
    """What ``status`` prints, as data: the store, and per source its last run and counts."""
    from fissure.ingest.pipeline import token_stats

    sources = []
    for origin, (spec, config, when) in manifest.runs().items():
        rows = list(manifest.documents(origin))
        sizes = [n for _, _, tokens in rows for n in tokens]
        sources.append({
            "source": spec,
            "origin": origin,
            "last_run": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(when)),
            "documents": sum(state == "ok" for _, state, _ in rows),
            "failed": sum(state == "failed" for _, state, _ in rows),
            "chunks": len(sizes),
            "tokens": token_stats(sizes),
            "settings": config.get("settings", {}),
            "embedder": config.get("embedder") or None,
        })  # fmt: skip
    dim = manifest.get_meta("dim")
    return {
        "store": str(store),
        "model": manifest.get_meta("model"),
        "dim": int(dim) if dim else None,
        "sources": sources,
        "pending": len(manifest.pending()),
        "dead_letters": len(manifest.failures()),
    }
