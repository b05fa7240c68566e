"""``fissure query``: the chunks closest to a question."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from fissure.cli.ingest import DEFAULT_STORE, StoreOption, display
from fissure.cli.output import err, fail
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
    all_copies: Annotated[
        bool,
        typer.Option(
            "--all-copies", help="Show every near-copy (same text up to case, spaces and "
            "digits in one document), not only the best of each group."
        ),
    ] = False,
) -> None:
    """Print the K closest chunks: source:lines, breadcrumb or entity, score and a snippet.

    Every chunk is scored exactly up to a million chunks (docs/store.md).
    """
    from fissure.embed import load_embedder
    from fissure.store import ChromaStore, Manifest

    if k < 1:
        fail("-k must be at least 1")
    if sub_weight is not None and not 0 <= sub_weight <= 1:
        fail("--sub-weight must be within 0..1")
    if not (store / "manifest.sqlite3").is_file():
        fail(f"no store in {store}: run `fissure ingest PATH --store {store}` first")
    try:
        filters = _filters(where or [])
        manifest = Manifest(store)
        spec = embedder or _embedder_of(manifest)
        built_with = manifest.get_meta("model")
        manifest.close()
        model = load_embedder(spec)
        if built_with and built_with != model.model_id:
            fail(f"the store was built with {built_with}, not {model.model_id}: pass --embedder")
        chroma = ChromaStore(store / "chroma")
        if sub_weight is not None and chroma.count() and not chroma.count_pieces():
            err.print("note: this store has no sentence pieces (ingest with --sub-vectors N); "
                      "--sub-weight is ignored")  # fmt: skip
        hits = chroma.query(model.embed([text])[0], k, filters, sub_weight=sub_weight,
                            collapse=not all_copies)  # fmt: skip
    except FissureError as exc:
        fail(str(exc))
    if not hits:
        typer.echo("no results")
    for hit in hits:
        m = hit.metadata
        where_ = f"{display(str(m.get('source', '?')))}:{m.get('line_start')}-{m.get('line_end')}"
        label = m.get("entity") or m.get("headings") or ""
        snippet = " ".join(hit.text.split())
        snippet = snippet[:197] + "…" if len(snippet) > 200 else snippet
        more = f"  (+{hit.copies - 1} near-copies)" if hit.copies > 1 else ""
        typer.echo(f"{hit.score:.3f}  {where_}  {label}".rstrip() + more)
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
    specs = {config.get("embedder") for _, config, _ in manifest.runs().values()}
    specs.discard("")
    specs.discard(None)
    return str(specs.pop()) if len(specs) == 1 else "minilm"
