"""The README's command synopsis agrees with the commands' ``--help``.

How strict: every option the synopsis shows must be in that command's ``--help`` (the
synopsis may leave options out: it is a summary), and every command and subcommand of the
CLI must appear in it (a new command is documented, or this fails).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from fissure.cli import app

README = Path(__file__).resolve().parents[2] / "README.md"
OPTION = re.compile(r"(?<![\w\-./])(--?[A-Za-z][\w-]*)")


def _synopsis() -> list[str]:
    """The block under "## Command line": one entry per command, continuations joined,
    comments dropped, ``a | fissure b`` split in two."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"^## Command line\n+```bash\n(.*?)^```", text, re.S | re.M)
    assert block, "README.md has no ```bash block under ## Command line"
    lines: list[str] = []
    for raw in block.group(1).splitlines():
        line = re.sub(r"\s+#\s.*$", "", raw).rstrip()
        if not line:
            continue
        if line[0].isspace() and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return [part.strip() for line in lines for part in re.split(r"\s\|\s(?=fissure\s)", line)]


def _commands(entry: str) -> list[tuple[str, ...]]:
    """The command paths an entry names: ``fissure dlq list|retry|clear`` names three."""
    group = typer.main.get_command(app)
    words = entry.split()
    assert words[0] == "fissure", entry
    path: tuple[str, ...] = ()
    for word in words[1:]:
        names = word.split("|")
        known = getattr(group, "commands", {})
        if not all(name in known for name in names):
            break
        if len(names) > 1:
            return [(*path, name) for name in names]
        path, group = (*path, word), known[word]
    assert path, f"no fissure command in {entry!r}"
    return [path]


@cache
def _help(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(
        app, [*path, "--help"], env={"COLUMNS": "400", "TERMINAL_WIDTH": "400"}
    )
    assert result.exit_code == 0, result.output
    return result.output


ENTRIES = _synopsis()


@pytest.mark.parametrize("entry", ENTRIES)
def test_every_option_in_the_synopsis_is_in_help(entry: str) -> None:
    options = OPTION.findall(entry.split(" ", 2)[-1])
    for path in _commands(entry):
        text = _help(path)
        missing = [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)]
        assert not missing, f"fissure {' '.join(path)} --help has no {missing} (README synopsis)"


def test_every_command_is_in_the_synopsis() -> None:
    named = {path for entry in ENTRIES for path in _commands(entry)}
    everything = set()
    for name, command in typer.main.get_command(app).commands.items():  # type: ignore[attr-defined]
        subs = getattr(command, "commands", None)
        everything |= {(name, sub) for sub in subs} if subs else {(name,)}
    missing = sorted(" ".join(p) for p in everything - named)
    assert not missing, f"README.md's synopsis (## Command line) lacks: {missing}"


def test_the_check_sees_a_missing_option() -> None:
    # The test above can fail: an option that no command has is reported missing.
    assert "--no-such-option" not in _help(("chunk",))
    assert _commands("fissure dlq list|retry|clear") == [
        ("dlq", "list"),
        ("dlq", "retry"),
        ("dlq", "clear"),
    ]
