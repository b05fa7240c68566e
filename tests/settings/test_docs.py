"""``docs/settings.md`` lists every key of every section with the model's default and the
flag that sets it, as the code has them. ``python -m tests.settings.test_docs`` prints the
table rows the doc must hold (key, type, default, flag), to paste when a key is added."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import typer

from fissure.cli import app
from fissure.cli.options import PARAM_KEYS
from fissure.settings.model import SECTIONS, defaults, describe, keys, toml_value
from fissure.settings.presets import PRESETS

DOC = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def flags() -> dict[str, list[str]]:
    """``section.key`` -> the flags that set it, and in which commands."""
    out: dict[str, dict[str, set[str]]] = {}
    group = typer.main.get_command(app)
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        subs = getattr(command, "commands", None) or {"": command}
        for sub_name, sub in subs.items():
            if (name, sub_name) == ("config", "show"):
                continue  # config show takes them all
            if not any(p.name == "preset" for p in sub.params):
                continue  # not a command that reads settings (eval, models …)
            for param in sub.params:
                key = PARAM_KEYS.get(param.name or "")
                if key:
                    flag = max(param.opts, key=len)
                    where = out.setdefault(key, {}).setdefault(flag, set())
                    where.add(f"{name} {sub_name}".strip())
    return {k: [f"`{f}` ({', '.join(sorted(c))})" for f, c in v.items()] for k, v in out.items()}


def rows() -> list[tuple[str, str, str, str]]:
    """(key, type, default, flags) of every key, in the doc's order."""
    given = flags()
    out = []
    for section in SECTIONS:
        hints = typing.get_type_hints(SECTIONS[section])
        for key in keys(section):
            dotted = f"{section}.{key}"
            default = f"`{toml_value(defaults(section)[key])}`"
            flag = "; ".join(given.get(dotted, [])) or "—"
            out.append((f"`{dotted}`", describe(hints[key]), default, flag))
    return out


def _doc_rows() -> dict[str, list[str]]:
    found = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and re.fullmatch(r"`[a-z_]+\.[a-z_]+`", cells[0]):
            found[cells[0]] = cells
    return found


def test_every_key_is_documented_with_its_default_and_flag() -> None:
    documented = _doc_rows()
    for key, kind, default, flag in rows():
        assert key in documented, f"docs/settings.md has no row for {key}"
        cells = documented[key]
        assert cells[1] == kind, f"{key}: type {cells[1]!r} in the doc, {kind!r} in the model"
        assert cells[2] == default, f"{key}: default {cells[2]!r} in the doc, {default!r} in code"
        assert cells[3] == flag, f"{key}: flags {cells[3]!r} in the doc, {flag!r} in the CLI"
    extra = set(documented) - {r[0] for r in rows()}
    assert not extra, f"docs/settings.md documents keys the model lacks: {sorted(extra)}"


def test_the_built_in_presets_are_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    for name, preset in PRESETS.items():
        assert f"`{name}`" in text
        for section, table in preset.items():
            for key, value in table.items():
                assert f"{section}.{key} = {toml_value(value)}" in text, (name, key)


if __name__ == "__main__":
    for row in rows():
        print("| " + " | ".join(row) + " |  |")
