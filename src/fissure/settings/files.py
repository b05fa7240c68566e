"""Settings files: ``fissure.toml``, or ``[tool.fissure]`` in ``pyproject.toml``.

The file is found from the working folder upward: the first folder that has a
``fissure.toml`` (or else a ``pyproject.toml`` with a ``[tool.fissure]`` table) wins. The
search stops at a repository root (a folder with ``.git`` or ``.hg``), which is still
searched, and at the filesystem root: settings of an enclosing project never leak into a
repository. Files are read with the standard library's :mod:`tomllib` and checked whole
when read: an unknown key or a value of the wrong type is a :class:`ConfigError` that names
the file, the line and the fix.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fissure.errors import ConfigError
from fissure.settings.model import SECTIONS, check_value, defaults, keys, toml_value
from fissure.settings.presets import PRESETS, Preset

FILENAME = "fissure.toml"
PYPROJECT = "pyproject.toml"
REPOSITORY_MARKERS = (".git", ".hg")
_OWN_TABLE = re.compile(r"^\s*\[\s*tool\s*\.\s*fissure\s*[.\]]", re.MULTILINE)
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(
    r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*="""
)


@dataclass(frozen=True)
class ConfigFile:
    """One settings file, checked.

    Attributes:
        path: The file.
        values: Its own settings, by section and key.
        presets: Its ``[presets.NAME]`` tables, by name.
        default_preset: Its ``preset = "NAME"``: the preset a run uses when none is named.
        lines: The line of each key (``chunk.max_tokens``, ``presets.NAME.chunk.k``,
            ``preset``), for messages and ``fissure config show``.
    """

    path: Path
    values: Preset = field(default_factory=dict)
    presets: dict[str, Preset] = field(default_factory=dict)
    default_preset: str | None = None
    lines: dict[str, int] = field(default_factory=dict)

    def where(self, dotted: str = "") -> str:
        """``FILE:LINE`` of a key (``FILE`` when the line is unknown)."""
        line = self.lines.get(dotted)
        return f"{shown(self.path)}:{line}" if line else shown(self.path)


def find_config(start: Path | None = None) -> Path | None:
    """The settings file in force for a working folder (default: the current one), or
    ``None`` (see the module docstring for where the search stops)."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / FILENAME
        if candidate.is_file():
            return candidate
        project = folder / PYPROJECT
        if project.is_file() and _has_own_table(project):
            return project
        if any((folder / marker).exists() for marker in REPOSITORY_MARKERS):
            return None
    return None


def read_config(path: str | Path) -> ConfigFile:
    """Read and check one settings file (``pyproject.toml``: its ``[tool.fissure]``).

    Raises:
        ConfigError: The file cannot be read, is not TOML, or holds an unknown key, an
            unknown preset or a value of the wrong type (the message names file and line).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read settings file {shown(path)}: {exc}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{shown(path)} is not valid TOML: {exc}") from exc
    prefix: tuple[str, ...] = ()
    if path.name == PYPROJECT:
        prefix = ("tool", "fissure")
        data = data.get("tool", {}).get("fissure")
        if not isinstance(data, dict):
            raise ConfigError(
                f"{shown(path)} has no [tool.fissure] table: add one, or name "
                f"a {FILENAME} with --config"
            )
    return _Reader(path, text, prefix).read(data)


class _Reader:
    """Checks a file's tables, keeping each key's line."""

    def __init__(self, path: Path, text: str, prefix: tuple[str, ...]) -> None:
        self.path, self.prefix = path, prefix
        self.table = _line_table(text)
        self.lines: dict[str, int] = {}

    def read(self, data: dict[str, Any]) -> ConfigFile:
        values: Preset = {}
        presets: dict[str, Preset] = {}
        default = None
        for name, value in data.items():
            if name == "preset":
                default = self._preset_name(value)
            elif name == "presets":
                presets = self._presets(value)
            elif name in SECTIONS:
                values[name] = self._section(name, value, ())
            else:
                self._fail((name,), f"unknown key {name!r}: {_where_key_goes(name)}")
        if default is not None and default not in presets and default not in PRESETS:
            known = ", ".join(sorted({*PRESETS, *presets}))
            self._fail(("preset",), f"preset = {default!r} names no preset: use one of {known}")
        return ConfigFile(self.path, values, presets, default, self.lines)

    def _preset_name(self, value: Any) -> str:
        self._line(("preset",))
        if not isinstance(value, str):
            self._fail(("preset",), 'preset must be a preset\'s name, e.g. preset = "fast"')
        return value

    def _presets(self, value: Any) -> dict[str, Preset]:
        if not isinstance(value, dict):
            self._fail(("presets",), "presets must be tables: [presets.NAME.chunk] …")
        out: dict[str, Preset] = {}
        for name, body in value.items():
            if not isinstance(body, dict):
                self._fail(("presets", name), f"preset {name!r} must be a table: [presets.{name}]")
            self._line(("presets", name))
            out[name] = {}
            for section, table in body.items():
                if section not in SECTIONS:
                    self._fail(
                        ("presets", name, section),
                        f"unknown section {section!r} in "
                        f"preset {name!r}: {_where_key_goes(section)}",
                    )
                out[name][section] = self._section(section, table, ("presets", name))
        return out

    def _section(self, section: str, table: Any, above: tuple[str, ...]) -> dict[str, Any]:
        at = (*above, section)
        if not isinstance(table, dict):
            self._fail(at, f"{section} must be a table: [{'.'.join(at)}]")
        out = {}
        for key, value in table.items():
            where = (*at, key)
            self._line(where)
            if key not in keys(section):
                self._fail(
                    where, f"unknown key {key!r} in [{'.'.join(at)}]: {_suggest(section, key)}"
                )
            try:
                out[key] = check_value(section, key, value)
            except ConfigError as exc:
                example = _example(section, key)
                self._fail(where, f"[{'.'.join(at)}] {key}: {exc}; write e.g. {example}")
        return out

    def _line(self, path: tuple[str, ...]) -> int | None:
        line = _find_line(self.table, (*self.prefix, *path))
        if line:
            self.lines[".".join(path)] = line
        return line

    def _fail(self, path: tuple[str, ...], message: str) -> Any:
        line = self._line(path)
        place = f"{shown(self.path)}:{line}" if line else shown(self.path)
        raise ConfigError(f"{place}: {message}")


def shown(path: Path) -> str:
    """A path as the user would write it: relative when inside the working folder."""
    try:
        here = Path.cwd()
        return os.path.relpath(path, here) if path.resolve().is_relative_to(here) else str(path)
    except (OSError, ValueError):
        return str(path)


def _has_own_table(project: Path) -> bool:
    try:
        return bool(_OWN_TABLE.search(project.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError):
        return False


def _suggest(section: str, key: str) -> str:
    known = keys(section)
    for other in SECTIONS:
        if other != section and key in keys(other):
            return f"{key} belongs in [{other}]"
    if key.replace("-", "_") in known:
        return f"write {key.replace('-', '_')} (keys use underscores, flags use dashes)"
    close = difflib.get_close_matches(key.replace("-", "_"), known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? " if close else ""
    return f"{hint}known keys: {', '.join(known)} (docs/settings.md)"


def _where_key_goes(name: str) -> str:
    for section in SECTIONS:
        if name in keys(section):
            return f"put it in a [{section}] table"
    close = difflib.get_close_matches(name, [*SECTIONS, "preset", "presets"], n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    return f"{hint}a settings file holds preset, [presets.NAME] and the sections " + ", ".join(
        f"[{s}]" for s in SECTIONS
    )


# Examples for keys whose default is "none", for the fix an error message suggests.
EXAMPLES = {"max_tokens": 200, "workers": 2, "target_chunks": 10, "embed_window_tokens": 254,
            "sub_vector_tokens": 30, "breakpoint_amount": 95.0, "sub_weight": 0.4,
            "language": "python", "address": "head:6379", "embedder": "minilm",
            "separators": ("\n\n", "\n")}  # fmt: skip


def _example(section: str, key: str) -> str:
    value = defaults(section)[key]
    return f"{key} = {toml_value(EXAMPLES.get(key, value) if value is None else value)}"


def _line_table(text: str) -> list[tuple[tuple[str, ...], int]]:
    """Every key line of a TOML text: its full dotted path and line number."""
    out: list[tuple[tuple[str, ...], int]] = []
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            table = _parts(header.group(1))
            out.append((table, number))
            continue
        key = _KEY.match(line)
        if key:
            out.append(((*table, *_parts(key.group(1))), number))
    return out


def _find_line(table: list[tuple[tuple[str, ...], int]], path: tuple[str, ...]) -> int | None:
    """The line of ``path``, else of its nearest enclosing key or table."""
    for depth in range(len(path), 0, -1):
        for where, number in table:
            if where[:depth] == path[:depth]:
                return number
    return None


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(p.strip().strip("\"'") for p in re.findall(r'"[^"]*"|\'[^\']*\'|[^.]+', dotted))
