"""``fissure status``: what a store holds, per source."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fissure.cli.common import open_existing, settings_for
from fissure.cli.options import ConfigFile, NoConfig, Preset, Store, json_option
from fissure.cli.output import display, fail, print_json, printable
from fissure.errors import FissureError

if TYPE_CHECKING:
    from fissure.store.check import Report


def status(
    ctx: typer.Context,
    store: Store = None,
    as_json: Annotated[
        bool,
        json_option(
            "Print the same facts as one JSON object: store, model, dim, sources (each "
            "with its last run, settings, counts and token sizes), pending, dead_letters, "
            "and with --check the check."
        ),
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Also check recall: sampled chunks, queried with their own stored "
            "vectors, must come back first; exit 1 below --min-recall.",
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
        typer.Option(
            help="The path --check probes: auto (the one queries take), exact or "
            "index (Chroma's HNSW index)."
        ),
    ] = "auto",
    preset: Preset = None,
    config_file: ConfigFile = None,
    no_config: NoConfig = False,
) -> None:
    """Documents, chunks, failures and settings of each source in the store.

    Exit status: 0 shown (and, with --check, recall at or above --min-recall), 1 --check
    found recall below --min-recall, 2 no store there.
    """
    from fissure.ingest.pipeline import token_stats
    from fissure.store.open import close_store, is_database
    from fissure.store.pg_schema import redact

    store = settings_for(ctx).store.path
    if search not in ("auto", "exact", "index"):
        fail(f"--search must be auto, exact or index, not {search!r}")
    if check and is_database(store):
        fail("--check reads the embedded store's own vector copy; a PostgreSQL store is "
             "searched exactly up to 10,000 chunks per namespace (docs/scale.md)")  # fmt: skip
    found, manifest = open_existing(store, read_only=True)
    close_store(found)
    name = redact(store) if is_database(store) else store
    if as_json:
        try:
            facts = _report(manifest, str(name))
        finally:
            manifest.close()
        report = _self_recall(store, sample, search) if check else None
        if report is not None:
            facts["check"] = {
                "search": report.search, "chunks": report.chunks, "sampled": report.sampled,
                "found": report.found, "recall": report.recall, "min_recall": min_recall,
                "near_copies": report.copies, "near_copy_groups": report.groups,
                "misses": [{"chunk_id": m.chunk_id, "source": m.source, "lines": list(m.lines),
                            "first": m.first, "score": m.score} for m in report.misses],
            }  # fmt: skip
        print_json(facts)
        if report is not None and report.recall < min_recall:
            raise typer.Exit(1)
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
    if check:
        _check(store, sample, min_recall, search)


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


def _self_recall(store: str, sample: int, search: str) -> Report:
    """The self-recall of ``sample`` chunks (one line and exit 2 when it cannot be read)."""
    from fissure.store.check import self_recall
    from fissure.store.chroma_reader import ReadOnlyChroma

    try:  # read as queries read it (a read-only store too), Chroma only for --search index
        return self_recall(ReadOnlyChroma(Path(store) / "chroma"), sample=sample, search=search)
    except FissureError as exc:
        fail(str(exc))


def _check(store: str, sample: int, min_recall: float, search: str) -> None:
    """Print the self-recall of ``sample`` chunks and exit 1 when it is below the bar."""
    report = _self_recall(store, sample, search)
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
