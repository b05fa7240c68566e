"""``fissure query``: the chunks closest to a question."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from fissure.cli.ingest import DEFAULT_STORE, StoreOption, open_existing
from fissure.cli.output import display, err, fail, printable
from fissure.errors import FissureError


def query(
    text: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("-k", help="How many chunks.")] = 5,
    where: Annotated[
        list[str] | None,
        typer.Option(help="key=value filter on chunk metadata (source, entity, strategy …)."),
    ] = None,
    store: StoreOption = DEFAULT_STORE,
    embedder: Annotated[
        str | None, typer.Option(help="Default: the embedder the store was built with.")
    ] = None,
    sub_weight: Annotated[
        float | None,
        typer.Option(
            "--sub-weight",
            help="Blend each chunk's score with its best sentence piece's, this much (0..1; "
            "0.4 works well); needs a store ingested with --sub-vectors.",
        ),
    ] = None,
) -> None:
    """Print the K closest chunks: source:lines, breadcrumb or entity, score and a snippet."""
    from fissure.embed import load_embedder
    from fissure.store.open import close_store

    if k < 1:
        fail("-k must be at least 1")
    if sub_weight is not None and not 0 <= sub_weight <= 1:
        fail("--sub-weight must be within 0..1")
    filters = _filters(where or [])
    found, manifest = open_existing(store)
    try:
        try:
            spec = embedder or _embedder_of(manifest)
            built_with = manifest.get_meta("model")
        finally:
            manifest.close()
        model = load_embedder(spec)
        if built_with and built_with != model.model_id:
            fail(f"the store was built with {built_with}, not {model.model_id}: pass --embedder")
        pieces = getattr(found, "count_pieces", lambda: 1)
        if sub_weight is not None and found.count() and not pieces():
            err.print("note: this store has no sentence pieces (ingest with --sub-vectors N); "
                      "--sub-weight is ignored")  # fmt: skip
        hits = found.query(model.embed([text])[0], k, filters, sub_weight=sub_weight)
    except FissureError as exc:
        fail(str(exc))
    finally:
        close_store(found)
    if not hits:
        typer.echo("no results")
    for hit in hits:
        m = hit.metadata
        where_ = f"{display(str(m.get('source', '?')))}:{m.get('line_start')}-{m.get('line_end')}"
        label = printable(str(m.get("entity") or m.get("headings") or ""))
        snippet = " ".join(hit.text.split())
        snippet = printable(snippet[:197] + "…" if len(snippet) > 200 else snippet)
        typer.echo(f"{hit.score:.3f}  {where_}  {label}".rstrip())
        typer.echo(f"       {snippet}")


def _filters(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            fail(f"--where {pair!r} is not key=value")
        out[key] = int(value) if value.lstrip("-").isdigit() else value
    return out


def _embedder_of(manifest: Any) -> str:
    """The embedder to query with: the one the store records (written before a run's
    first document, so a store whose first run was killed has it too), else the one its
    runs agree on, else the built-in that makes the recorded model, else MiniLM."""
    recorded = manifest.get_meta("embedder")
    if recorded:
        return str(recorded)
    specs = {config.get("embedder") for _, config, _ in manifest.runs().values()}
    specs.discard("")
    specs.discard(None)
    if len(specs) == 1:
        return str(specs.pop())
    model = manifest.get_meta("model") or ""
    return "hashing" if model.startswith("hashing-") else "minilm"
