"""The ``fissure`` command line: a thin layer over the library, one module per command."""

from __future__ import annotations

import sys

import typer

from fissure.cli import chunk as chunk_cmd

app = typer.Typer(
    name="fissure",
    help="Split documents into retrieval chunks along their natural fault lines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("chunk")(chunk_cmd.chunk)


@app.callback()
def _root() -> None:
    """Split documents into retrieval chunks along their natural fault lines."""


def main() -> None:
    """Console entry point."""
    app(prog_name="fissure")
    sys.exit(0)
