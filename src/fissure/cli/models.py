"""``fissure models``: build the static (model2vec-format) embedder offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fissure.cli.output import err, fail
from fissure.errors import FissureError

app = typer.Typer(help="Embedding models kept in the user cache.", no_args_is_help=True)


@app.command("distill")
def distill(
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder to write (default: the user cache).")
    ] = None,
    dims: Annotated[int, typer.Option(help="Dimensions kept by PCA.")] = 256,
    overwrite: Annotated[bool, typer.Option(help="Rebuild an existing model.")] = False,
) -> None:
    """Distil a static embedder from the local all-MiniLM-L6-v2 (offline, ~1-2 minutes)."""
    from fissure.embed import distill_minilm

    try:
        path = distill_minilm(out, pca_dims=dims, overwrite=overwrite)
    except FissureError as exc:
        fail(str(exc))
    err.print(f"static embedder written to {path} (use --embedder static)")
