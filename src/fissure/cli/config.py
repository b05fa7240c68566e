"""``fissure config show``: the settings in force here, and where each came from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from fissure.cli.common import Command, Group, resolved_for
from fissure.cli.options import (
    Address,
    Breakpoint,
    BreakpointAmount,
    ConfigFile,
    Dedup,
    EmbedHeadings,
    EmbedWindow,
    EmbedWindowShare,
    Engine,
    FollowOutsideLinks,
    K,
    Language,
    MaxBytes,
    MaxChars,
    MaxTokens,
    MemoryMb,
    MinTokens,
    NoConfig,
    OverlapTokens,
    PrependContext,
    Preset,
    Progress,
    Store,
    Strategy,
    SubVectors,
    SubWeight,
    TargetChunks,
    Timeout,
    Tokenizer,
    Workers,
    json_option,
)
from fissure.cli.output import print_json

if TYPE_CHECKING:
    from fissure.settings import Resolved

app = typer.Typer(help="Settings files and presets (docs/settings.md).", no_args_is_help=True,
                  cls=Group)  # fmt: skip


@app.command("show", cls=Command)
def show(
    ctx: typer.Context,
    as_json: Annotated[
        bool, json_option("Print one JSON object: settings, origins, file, preset.")
    ] = False,
    preset: Preset = None,
    config_file: ConfigFile = None,
    no_config: NoConfig = False,
    strategy: Strategy = None,
    max_tokens: MaxTokens = None,
    max_chars: MaxChars = None,
    min_tokens: MinTokens = None,
    overlap_tokens: OverlapTokens = None,
    tokenizer: Tokenizer = None,
    language: Language = None,
    prepend_context: PrependContext = None,
    breakpoint: Breakpoint = None,
    breakpoint_amount: BreakpointAmount = None,
    target_chunks: TargetChunks = None,
    embed_window: EmbedWindow = None,
    embed_window_share: EmbedWindowShare = None,
    sub_vectors: SubVectors = None,
    dedup: Dedup = None,
    embed_headings: EmbedHeadings = None,
    max_bytes: MaxBytes = None,
    follow_outside_links: FollowOutsideLinks = None,
    store: Store = None,
    workers: Workers = None,
    timeout: Timeout = None,
    memory_mb: MemoryMb = None,
    engine: Engine = None,
    address: Address = None,
    progress: Progress = None,
    k: K = None,
    sub_weight: SubWeight = None,
) -> None:
    """Print the settings in force here, each with where it came from: default, preset P
    (built-in, or in FILE:LINE), FILE:LINE, or flag.

    It reads what every command reads: the settings file found from the working folder up
    (or --config FILE; --no-config: none), the preset named (--preset) or else the file's
    default one, and any setting flag given here. The text output is valid TOML: paste it
    into fissure.toml. Embedders are set in the file: chunk.embedder, ingest.embedder and
    query.embedder.

    Exit status: 0 shown, 2 a bad settings file, key, value or preset (one line).
    """
    resolved = resolved_for(ctx)
    why = _why(ctx, resolved)
    if as_json:
        print_json(_json(resolved, why))
    else:
        typer.echo(_text(resolved, why))


def _why(ctx: typer.Context, resolved: Resolved) -> str | None:
    """Why the preset in force applies, or ``None`` when none does."""
    if resolved.preset is None:
        return None
    if ctx.params.get("preset") is not None:
        return "named with --preset"
    if resolved.file is not None and resolved.file.default_preset:
        return f"the file's default ({resolved.file.where('preset')})"
    return "the built-in default"


def _json(resolved: Resolved, why: str | None) -> dict[str, Any]:
    from dataclasses import asdict

    settings = asdict(resolved.settings)
    origins: dict[str, dict[str, str]] = {}
    for dotted, origin in resolved.origins.items():
        section, _, key = dotted.partition(".")
        origins.setdefault(section, {})[key] = origin
    return {
        "file": str(resolved.file.path) if resolved.file else None,
        "preset": {"name": resolved.preset, "why": why} if resolved.preset else None,
        "presets": resolved.presets,
        "settings": settings,
        "origins": origins,
    }


def _text(resolved: Resolved, why: str | None) -> str:
    from fissure.settings.files import shown
    from fissure.settings.model import SECTIONS, keys, toml_value

    file = shown(resolved.file.path) if resolved.file else "none found (docs/settings.md)"
    preset = f"{resolved.preset}, {why}" if resolved.preset else "none"
    lines = [
        "# The settings in force; precedence: flag > --preset > file > the file's default "
        "preset > built-in defaults.",
        f"# file: {file}",
        f"# preset: {preset}",
        "# presets: " + ", ".join(f"{n} ({w})" for n, w in sorted(resolved.presets.items())),
    ]
    for section in SECTIONS:
        lines += ["", f"[{section}]"]
        built = getattr(resolved.settings, section)
        rows = [
            (f"{k} = {toml_value(getattr(built, k))}", resolved.origins[f"{section}.{k}"])
            for k in keys(section)
        ]
        width = max(len(r) for r, _ in rows)
        lines += [f"{row.ljust(width)}  # {origin}" for row, origin in rows]
    return "\n".join(lines)
