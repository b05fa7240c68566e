"""``fissure show``: chunk one file and write an HTML page that shows the cuts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fissure.chunker import Chunker, load_document
from fissure.cli.output import Embedder, MaxTokens, Tokenizer, err, fail
from fissure.config import STRATEGIES
from fissure.errors import FissureError
from fissure.viz import render_html


def show(
    path: Annotated[Path, typer.Argument(help="The file to chunk.")],
    strategy: Annotated[
        str,
        typer.Option(
            "--strategy",
            "-s",
            help=f"One of: {', '.join(STRATEGIES)}. semantic and hybrid add the distance curve.",
        ),
    ] = "structural",
    max_tokens: MaxTokens = None,
    tokenizer: Tokenizer = "minilm",
    embedder: Embedder = "minilm:auto",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="The page to write (default: ./NAME.html)."),
    ] = None,
) -> None:
    """Write a self-contained HTML page: the file with every chunk tinted; hover a chunk
    for its size, lines and cut reason; for semantic/hybrid, the distance curve."""
    target = output or Path(f"{path.name}.html")
    try:
        chunker = Chunker(
            strategy=strategy, max_tokens=max_tokens, tokenizer=tokenizer, embedder=embedder
        )
        document = load_document(path)
        traced = chunker.trace_document(document)
    except FissureError as exc:
        fail(str(exc))
    page = render_html(document, traced.chunks, traced.trace)
    try:
        target.write_text(page, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror or exc}")
    err.print(f"{len(traced.chunks)} chunks of {path} → {target}")
