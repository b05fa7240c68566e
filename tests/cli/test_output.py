"""Clean errors: one line, printed as written (brackets kept), control characters escaped."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fissure.cli import app

runner = CliRunner()


def test_brackets_in_an_error_are_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the [postgres] extra were missing
    out = runner.invoke(app, ["query", "anything", "--store", "postgresql://x@127.0.0.1:1/db"])
    assert out.exit_code == 2
    assert "pip install 'fissure[postgres]'" in out.output
    assert "Traceback" not in out.output


def test_names_in_errors_are_printed_as_they_are_and_escaped(tmp_path: Path) -> None:
    missing = tmp_path / "[bold]not\x1b[31mhere"
    out = runner.invoke(app, ["chunk", str(missing)])
    assert out.exit_code == 2
    assert "[bold]not\\x1b[31mhere" in out.output and "\x1b" not in out.output
    assert len(out.output.strip().splitlines()) == 1
