"""docs/service.md and ``--help`` agree: every flag of ``fissure serve`` and ``fissure
submit`` is documented, and nothing documented is missing from the commands."""

from __future__ import annotations

import re

import typer.main

from fissure.cli import app
from tests.serve.server import ROOT

DOC = (ROOT / "docs" / "service.md").read_text()


def _flags(command: str) -> set[str]:
    click = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    found = set()
    for param in click.params:
        found.update(o for o in (*param.opts, *param.secondary_opts) if o.startswith("--"))
    return found - {"--help"}


def test_the_settings_table_lists_every_serve_flag() -> None:
    table = DOC.split("## Limits and settings", 1)[1].split("\n## ", 1)[0]
    documented = {flag for row in table.splitlines() if row.startswith("| `--")
                  for flag in re.findall(r"`(--[a-z-]+)`", row.split("|")[1])}  # fmt: skip
    assert documented == _flags("serve")


def test_the_submit_synopsis_lists_every_submit_flag() -> None:
    synopsis = re.search(r"`fissure submit PATH\.\.\. ([^`]+)`", DOC)
    assert synopsis is not None
    documented = set(re.findall(r"--[a-z-]+", synopsis.group(1)))
    assert documented | {"--follow"} == _flags("submit")
