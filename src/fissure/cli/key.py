"""``fissure key``: make an API key for ``fissure serve`` (only its hash is stored)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from fissure.cli.options import json_option
from fissure.cli.output import err, fail, print_json
from fissure.errors import FissureError


def key(
    namespace: Annotated[str, typer.Option(help="The namespace the key reads and writes.")],
    scope: Annotated[
        list[str] | None, typer.Option(help="read and/or write (repeatable; default: both).")
    ] = None,
    name: Annotated[str, typer.Option(help="A label for logs.")] = "key",
    keys_file: Annotated[
        Path | None,
        typer.Option(help="Append the key's hashed entry here (else it is printed on stderr)."),
    ] = None,
    as_json: Annotated[
        bool,
        json_option(
            'Print one JSON object: {"key": the secret, "entry": its hashed entry, '
            '"keys_file": where it was added, or null}.'
        ),
    ] = False,
) -> None:
    """Print a new API key on stdout, once; store only its sha256 (in KEYS_FILE, for
    `fissure serve --keys-file`, or as a line for $FISSURE_API_KEYS)."""
    from fissure.serve.auth import new_key

    try:
        secret, line = new_key(name, namespace, scope or ["read", "write"])
    except FissureError as exc:
        fail(str(exc))
    if keys_file is None and not as_json:
        err.print(line, markup=False)
    elif keys_file is not None:
        fd = os.open(keys_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            out.write(line + "\n")
        err.print(f"added {name} ({namespace}) to {keys_file}")
    if as_json:
        keys = None if keys_file is None else str(keys_file)
        print_json({"key": secret, "entry": json.loads(line), "keys_file": keys})
    else:
        typer.echo(secret)
