"""The settings in force: built-in defaults, presets, the settings file and flags, layered.

Precedence, highest first:

1. flags (``--max-tokens 200``);
2. the preset named on the command line (``--preset NAME``, ``$FISSURE_PRESET``);
3. the settings file's own values (``[chunk]``, ``[ingest]`` …);
4. the default preset: the file's ``preset = "NAME"``, else the built-in
   :data:`~fissure.settings.presets.DEFAULT_PRESET` (none today) — used only when no preset
   is named, so a named preset is never mixed with another;
5. the built-in defaults (:mod:`fissure.settings.model`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fissure.errors import ConfigError
from fissure.settings import presets as built_in
from fissure.settings.files import ConfigFile, find_config, read_config
from fissure.settings.model import SECTIONS, Settings, defaults, toml_value
from fissure.settings.presets import Preset

DEFAULT = "default"


@dataclass(frozen=True)
class Resolved:
    """The settings in force and where each came from.

    Attributes:
        settings: The settings.
        origins: Per ``section.key``: ``default``, ``preset NAME (built-in)``,
            ``preset NAME in FILE:LINE``, ``FILE:LINE`` or ``flag --NAME``.
        file: The settings file read, if any.
        preset: The preset applied (named, or the default one), if any.
        presets: Every preset available, with where it is defined.
    """

    settings: Settings
    origins: dict[str, str]
    file: ConfigFile | None = None
    preset: str | None = None
    presets: dict[str, str] = field(default_factory=dict)


def load_settings(
    preset: str | None = None,
    *,
    config: str | Path | None = None,
    use_files: bool = True,
    start: str | Path | None = None,
) -> Settings:
    """The settings the command line would use here, for the Python API.

    Args:
        preset: A preset to apply (built-in: ``fast``, ``chroma-best``; or the file's own).
        config: A settings file to read instead of searching for one.
        use_files: Read no settings file (built-in defaults and presets only).
        start: The folder the search for ``fissure.toml`` starts in (default: the
            current one).

    Raises:
        ConfigError: A bad file, key, value or preset name (the message says where).

    >>> s = load_settings("chroma-best", use_files=False)
    >>> s.chunk.strategy, s.chunk.max_tokens, s.query.sub_weight
    ('semantic', 140, 0.4)
    >>> import fissure
    >>> fissure.Chunker(load_settings("fast", use_files=False).chunk).settings.strategy
    'structural'
    """
    return resolve(preset, config=config, use_files=use_files, start=start).settings


def resolve(
    preset: str | None = None,
    *,
    config: str | Path | None = None,
    use_files: bool = True,
    start: str | Path | None = None,
    flags: Mapping[str, Any] | None = None,
    flag_names: Mapping[str, str] | None = None,
) -> Resolved:
    """Layer defaults, presets, the settings file and ``flags`` (see the module docstring).

    Args:
        preset, config, use_files, start: As for :func:`load_settings`.
        flags: Values given on the command line, by ``section.key``.
        flag_names: How each of those was spelled (``--max-tokens``), for ``origins``.

    Raises:
        ConfigError: As :func:`load_settings`; a value that cannot work names the layer
            (file and line, preset or flag) it came from.
    """
    if config is not None and not use_files:
        raise ConfigError("--config and --no-config contradict each other: pass one")
    found = Path(config) if config is not None else find_config(Path(start) if start else None)
    file = read_config(found) if found is not None and use_files else None
    available = _available(file)
    layers: list[tuple[Preset, Any]] = []
    if preset is None:
        chosen = file.default_preset if file and file.default_preset else built_in.DEFAULT_PRESET
        if chosen:
            layers.append((available[chosen][0], _preset_label(chosen, available[chosen][1])))
        if file:
            layers.append((file.values, file))
    else:
        if preset not in available:
            raise ConfigError(
                f"no preset {preset!r}: use one of {', '.join(sorted(available))}"
                " (built-in, or [presets.NAME] in fissure.toml)"
            )
        chosen = preset
        if file:
            layers.append((file.values, file))
        layers.append((available[preset][0], _preset_label(preset, available[preset][1])))
    layers.append((_nest(flags or {}), _flag_label(flag_names or {})))
    values, origins = _merge(layers)
    settings = _build(values, origins)
    where = {
        name: "built-in" if place is None else place[0].where(f"presets.{name}")
        for name, (_, place) in available.items()
    }
    return Resolved(settings, origins, file, chosen, where)


def _available(file: ConfigFile | None) -> dict[str, tuple[Preset, Any]]:
    """Every preset by name: the built-in ones, and the file's (which win on a clash)."""
    out: dict[str, tuple[Preset, Any]] = {
        name: (body, None) for name, body in built_in.PRESETS.items()
    }
    if file:
        out.update({name: (body, (file, name)) for name, body in file.presets.items()})
    return out


def _preset_label(name: str, place: Any) -> Any:
    if place is None:
        return lambda section, key: f"preset {name} (built-in)"
    file, _ = place
    return lambda section, key: f"preset {name} in {file.where(f'presets.{name}.{section}.{key}')}"


def _flag_label(names: Mapping[str, str]) -> Any:
    return lambda section, key: f"flag {names.get(f'{section}.{key}', f'{section}.{key}')}"


def _nest(flat: Mapping[str, Any]) -> Preset:
    out: Preset = {}
    for dotted, value in flat.items():
        section, _, key = dotted.partition(".")
        if section not in SECTIONS or key not in defaults(section):
            raise ConfigError(f"unknown setting {dotted!r}")
        out.setdefault(section, {})[key] = value
    return out


def _merge(layers: list[tuple[Preset, Any]]) -> tuple[Preset, dict[str, str]]:
    values = {section: defaults(section) for section in SECTIONS}
    origins = {f"{s}.{k}": DEFAULT for s, table in values.items() for k in table}
    for layer, label in layers:
        for section, table in layer.items():
            for key, value in table.items():
                values[section][key] = value
                origins[f"{section}.{key}"] = (
                    label.where(f"{section}.{key}")
                    if isinstance(label, ConfigFile)
                    else label(section, key)
                )
    return values, origins


def _build(values: Preset, origins: dict[str, str]) -> Settings:
    """Build every section; a value that cannot work is blamed on where it came from."""
    built = {}
    for section, cls in SECTIONS.items():
        try:
            built[section] = cls(**values[section])
        except ConfigError as exc:
            raise ConfigError(
                f"{exc} ({_culprits(section, values[section], origins, exc)})"
            ) from exc
    return Settings(**built)


def _culprits(section: str, table: dict[str, Any], origins: dict[str, str], exc: Exception) -> str:
    """The keys an error names (else every key set in the section), with their origins."""
    message = str(exc)
    named = [k for k in table if re.search(rf"\b{re.escape(k)}\b", message)]
    if not named:
        named = [k for k in table if re.search(re.escape(repr(table[k])), message)]
    keys_ = [k for k in named if origins[f"{section}.{k}"] != DEFAULT] or named
    if not keys_:
        keys_ = [k for k in table if origins[f"{section}.{k}"] != DEFAULT]
    parts = [
        f"{section}.{k} = {toml_value(table[k])} from {origins[f'{section}.{k}']}" for k in keys_
    ]
    return "; ".join(parts) or f"[{section}]"
