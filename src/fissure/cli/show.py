"""``fissure show``: chunk one file and write an HTML page that shows the cuts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fissure.chunker import Chunker, load_document
from fissure.cli.common import settings_for
from fissure.cli.options import (
    ConfigFile,
    Embedder,
    MaxTokens,
    MinTokens,
    NoConfig,
    Preset,
    Strategy,
    Tokenizer,
    json_option,
)
from fissure.cli.output import err, fail, print_json
from fissure.errors import FissureError
from fissure.viz import render_html


def show(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="The file to chunk.")],
    strategy: Strategy = None,
    max_tokens: MaxTokens = None,
    min_tokens: MinTokens = None,
    tokenizer: Tokenizer = None,
    embedder: Embedder = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="The page to write (default: ./NAME.html)."),
    ] = None,
    as_json: Annotated[
        bool,
        json_option('Print one JSON object: {"source": …, "output": the page, "chunks": N}.'),
    ] = False,
    preset: Preset = None,
    config_file: ConfigFile = None,
    no_config: NoConfig = False,
) -> None:
    """Write a self-contained HTML page: the file with every chunk tinted; hover a chunk
    for its size, lines and cut reason; for semantic/hybrid, the distance curve. Chunk
    settings as for fissure chunk (flags, --preset, fissure.toml)."""
    target = output or Path(f"{path.name}.html")
    settings = settings_for(ctx)
    try:
        chunker = Chunker(settings.chunk)
        document = load_document(path)
        traced = chunker.trace_document(document)
    except FissureError as exc:
        fail(str(exc))
    page = render_html(document, traced.chunks, traced.trace)
    try:
        target.write_text(page, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror or exc}")
    if as_json:
        print_json({"source": str(path), "output": str(target), "chunks": len(traced.chunks)})
    else:
        err.print(f"{len(traced.chunks)} chunks of {path} → {target}")
