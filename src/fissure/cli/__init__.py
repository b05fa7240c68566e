"""The ``fissure`` command line: a thin layer over the library, one module per command."""

from __future__ import annotations

import sys

import typer

from fissure.cli import chunk as chunk_cmd
from fissure.cli import config as config_cmd
from fissure.cli import dlq as dlq_cmd
from fissure.cli import embed_serve as embed_serve_cmd
from fissure.cli import estimate as estimate_cmd
from fissure.cli import eval as eval_cmd
from fissure.cli import ingest as ingest_cmd
from fissure.cli import key as key_cmd
from fissure.cli import models as models_cmd
from fissure.cli import query as query_cmd
from fissure.cli import recommend as recommend_cmd
from fissure.cli import serve as serve_cmd
from fissure.cli import show as show_cmd
from fissure.cli import status as status_cmd
from fissure.cli import submit as submit_cmd
from fissure.cli import tune as tune_cmd
from fissure.cli.common import Command, Group

app = typer.Typer(
    name="fissure",
    help="Split documents into retrieval chunks along their natural fault lines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=Group,  # one help vocabulary and one error path (fissure.cli.common)
)
app.command("chunk", cls=Command)(chunk_cmd.chunk)
app.command("ingest", cls=Command)(ingest_cmd.ingest)
app.command("query", cls=Command)(query_cmd.query)
app.command("status", cls=Command)(status_cmd.status)
app.command("show", cls=Command)(show_cmd.show)
app.command("eval", cls=Command)(eval_cmd.eval_)
app.command("serve", cls=Command)(serve_cmd.serve)
app.command("embed-serve", cls=Command)(embed_serve_cmd.embed_serve)
app.command("submit", cls=Command)(submit_cmd.submit)
app.command("key", cls=Command)(key_cmd.key)
app.command("recommend", cls=Command)(recommend_cmd.recommend)
app.command("estimate", cls=Command)(estimate_cmd.estimate)
app.command("tune", cls=Command)(tune_cmd.tune)
app.add_typer(dlq_cmd.app, name="dlq")
app.add_typer(models_cmd.app, name="models")
app.add_typer(config_cmd.app, name="config")


@app.callback()
def _root() -> None:
    """Split documents into retrieval chunks along their natural fault lines."""


def main() -> None:
    """Console entry point."""
    app(prog_name="fissure")
    sys.exit(0)
