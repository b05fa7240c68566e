"""Writing a preset into a settings file, keeping everything else in it as it was.

The file is edited with tomlkit, which keeps comments, order and formatting; only the
``[presets.NAME]`` tables are replaced. The result is read back and checked
(:func:`fissure.settings.files.read_config`) before it replaces the file, so a write never
leaves a file that fissure cannot read.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from fissure.errors import ConfigError
from fissure.settings.files import FILENAME, PYPROJECT, find_config, read_config
from fissure.settings.model import NONE
from fissure.settings.presets import Preset


def target_file(config: Path | None = None, start: Path | None = None) -> Path:
    """The file a preset goes into: ``config``, else the settings file in force from
    ``start`` (default: the working folder), else a new ``fissure.toml`` there."""
    if config is not None:
        return config
    return find_config(start) or (Path(start or Path.cwd()) / FILENAME)


def write_preset(path: Path, name: str, preset: Preset, comment: str = "") -> None:
    """Set ``[presets.NAME]`` in ``path`` (created if missing; in ``pyproject.toml`` under
    ``[tool.fissure.presets.NAME]``), every other table, key and comment kept.

    Args:
        path: The settings file.
        name: The preset's name.
        preset: Section → key → value (``None`` is written ``"none"``).
        comment: Comment lines written under ``[presets.NAME]``.

    Raises:
        ConfigError: The file is not valid TOML, or the result would not read back.
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ConfigError(f"preset name {name!r}: use letters, digits, - and _")
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        doc = tomlkit.parse(old)
    except TOMLKitError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it, or write elsewhere "
                          "with --config FILE") from exc  # fmt: skip
    root: Any = doc
    if path.name == PYPROJECT:
        root = _table(_table(doc, "tool"), "fissure")
    presets = _table(root, "presets")
    body = tomlkit.table(is_super_table=True)
    for line in comment.splitlines():
        body.add(tomlkit.comment(line))
    for section, values in preset.items():
        table = tomlkit.table()
        for key, value in values.items():
            table.add(key, _toml(value))
        body.add(section, table)
    presets[name] = body
    new = tomlkit.dumps(doc)
    if not new.endswith("\n"):
        new += "\n"
    _replace(path, new)
    try:
        read_config(path)
    except ConfigError:
        if old:
            _replace(path, old)
        else:
            path.unlink()
        raise


def _table(parent: Any, key: str) -> Any:
    import tomlkit

    if key not in parent:
        parent.add(key, tomlkit.table(is_super_table=True))
    found = parent[key]
    if not hasattr(found, "add"):
        raise ConfigError(f"{key} in the settings file is not a table: make it [{key}]")
    return found


def _toml(value: Any) -> Any:
    if value is None:
        return NONE
    if isinstance(value, tuple):
        return list(value)
    return value


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a crash leaves the old file or the new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
