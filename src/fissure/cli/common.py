"""What every command does the same way: read the settings in force, open an existing store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from fissure.cli.options import OFF_AT_ZERO, PARAM_KEYS
from fissure.cli.output import fail
from fissure.errors import FissureError

if TYPE_CHECKING:
    from fissure.settings import Resolved, Settings
    from fissure.store.manifest import ManifestProtocol
    from fissure.store.protocol import Store


def settings_for(ctx: typer.Context) -> Settings:
    """The settings a command runs with: defaults, presets, the settings file and the flags
    given (``--preset``, ``--config``, ``--no-config`` choose which); one line and exit 2 when
    they cannot work."""
    return resolved_for(ctx).settings


def resolved_for(ctx: typer.Context) -> Resolved:
    """:func:`settings_for`, with where each value came from."""
    from fissure.settings import resolve

    flags, names = {}, {}
    for param in ctx.command.params:
        key = PARAM_KEYS.get(param.name or "")
        value = ctx.params.get(param.name or "")
        if key is None or value is None:
            continue
        flags[key] = None if key in OFF_AT_ZERO and value == 0 else value
        names[key] = _spelled(param, value)
    try:
        return resolve(
            ctx.params.get("preset"),
            config=ctx.params.get("config_file"),
            use_files=not ctx.params.get("no_config"),
            flags=flags,
            flag_names=names,
        )
    except FissureError as exc:
        fail(str(exc))


def open_existing(store: str) -> tuple[Store, ManifestProtocol]:
    """The store and the manifest that ``--store`` names; fails (one line) when there is none."""
    from fissure.store.open import open_store

    try:
        return open_store(store, create=False)
    except FissureError as exc:
        fail(str(exc))


def _spelled(param: Any, value: object) -> str:
    """How the user wrote the flag: ``--max-tokens``, or ``--no-dedup`` for a false switch."""
    opts = list(getattr(param, "opts", ()))
    secondary = list(getattr(param, "secondary_opts", ()))
    if value is False and secondary:
        return secondary[0]
    return max(opts, key=len) if opts else str(param.name)
