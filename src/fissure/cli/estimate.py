"""``fissure estimate``: chunks, tokens, storage, time and money per strategy, side by side."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fissure.cli.common import settings_for
from fissure.cli.options import (
    ConfigFile,
    EmbedHeadings,
    MaxChars,
    MaxTokens,
    MinTokens,
    NoConfig,
    OverlapTokens,
    PrependContext,
    Preset,
    Sample,
    Seed,
    Tokenizer,
    json_option,
)
from fissure.cli.output import fail, print_json
from fissure.cli.output import human_bytes as _size
from fissure.config import STRATEGIES
from fissure.errors import FissureError

if TYPE_CHECKING:
    from fissure.plan import Estimate, Survey
    from fissure.plan.estimate import Model, Timing


def estimate(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (walked recursively).")],
    strategies: Annotated[
        str,
        typer.Option(
            "--strategy", "-s", help=f"Comma-separated, side by side: {', '.join(STRATEGIES)}."
        ),
    ] = "structural,recursive,sentence,fixed",
    max_tokens: MaxTokens = None,
    max_chars: MaxChars = None,
    min_tokens: MinTokens = None,
    overlap_tokens: OverlapTokens = None,
    tokenizer: Tokenizer = None,
    prepend_context: PrependContext = None,
    embed_headings: EmbedHeadings = None,
    model: Annotated[
        str,
        typer.Option(
            help="minilm (local: time measured here) | text-embedding-3-small | "
            "text-embedding-3-large | text-embedding-ada-002 | any API model with "
            "--dim"
        ),
    ] = "minilm",
    dim: Annotated[int | None, typer.Option(help="Vector width (for a model not listed).")] = None,
    count_tokenizer: Annotated[
        str, typer.Option(help="Counts an unlisted model's tokens.")
    ] = "cl100k_base",
    price_per_million: Annotated[
        float | None, typer.Option(help="Price per million embedded tokens, for the cost.")
    ] = None,
    sample: Sample = 200,
    seed: Seed = 0,
    time_sample: Annotated[
        int, typer.Option(help="Chunks embedded to measure the speed here (0: skip).")
    ] = 64,
    as_json: Annotated[
        bool,
        json_option(
            "Print one JSON object: files, bytes, sampled, exact, model, timing and per "
            "strategy its chunks, tokens, storage, time and cost."
        ),
    ] = False,
    preset: Preset = None,
    config_file: ConfigFile = None,
    no_config: NoConfig = False,
) -> None:
    """Chunks, tokens, storage, embedding time and cost per strategy, side by side.

    Per strategy: chunks, tokens embedded (by the model's tokenizer, overlap and context
    included), vector and text storage, embedding time on this machine (measured on a
    sample of chunks) and money for a priced model. A sample of files is chunked for real;
    with --sample at least the number of files the figures are exact, else scaled by bytes.

    Exit status: 0 estimated, 2 an error (bad option, no such path).
    """
    from fissure.plan import estimate as run
    from fissure.plan import survey
    from fissure.plan.estimate import model_named

    names = [s.strip() for s in strategies.split(",") if s.strip()]
    if not names:
        fail("no strategy given: e.g. --strategy structural,recursive,fixed")
    base = settings_for(ctx).chunk
    try:
        for name in names:
            replace(base, strategy=name)  # each must work with the other settings
        chosen = model_named(model, dim, count_tokenizer)
        found = survey(paths, sample=sample, seed=seed)
        rows, timing = run(found, names, base, chosen, price_per_million=price_per_million,
                           time_sample=time_sample,
                           embed_headings=base.embed_headings)  # fmt: skip
    except FissureError as exc:
        fail(str(exc))
    if as_json:
        print_json(_json(found, chosen, rows, timing))
    else:
        _print(found, chosen, rows, timing, price_per_million)


def _json(found: Survey, model: Model, rows: list[Estimate], timing: Timing | None) -> dict:
    return {
        "files": found.files, "bytes": found.total_bytes, "sampled": len(found.profiles),
        "exact": found.complete, "model": asdict(model),
        "timing": None if timing is None else {**asdict(timing),
                                               "tokens_per_second": timing.tokens_per_second},
        "strategies": [{k: v for k, v in asdict(r).items() if k != "settings"}
                       | {"max_tokens": r.settings.budget, "tokenizer": r.settings.tokenizer}
                       for r in rows],
    }  # fmt: skip


def _print(
    found: Survey, model: Model, rows: list[Estimate], timing: Timing | None, price: float | None
) -> None:
    from rich.console import Console
    from rich.table import Table

    how = "exact: every file chunked" if found.complete else (
        f"scaled ×{found.scale:.1f} from {len(found.profiles)} sampled files")  # fmt: skip
    typer.echo(f"{found.files} files, {_size(found.total_bytes)} ({how}); model {model.name}, "
               f"{model.dim} dimensions, tokens counted by {model.tokenizer}")  # fmt: skip
    approx = "" if found.complete else "~"  # a scaled figure
    table = Table(show_edge=False, pad_edge=False)
    for name in ("strategy", "chunks", "mean tokens", "tokens embedded", "over limit",
                 "vectors", "text", "embed time", "cost"):  # fmt: skip
        table.add_column(name, justify="left" if name == "strategy" else "right")
    for r in rows:
        extra = f" (+{r.boundary_tokens:,} for cuts)" if r.boundary_tokens else ""
        table.add_row(
            f"{r.strategy} ≤{r.settings.budget} {r.settings.tokenizer}",
            f"{approx}{r.chunks:,}", f"{r.mean_tokens}", f"{approx}{r.tokens:,}{extra}",
            f"{approx}{r.truncated:,}", approx + _size(r.vector_bytes),
            approx + _size(r.text_bytes), _duration(r.embed_seconds, r.boundary_seconds, approx),
            "—" if r.cost is None else approx + _money(r.cost),
        )  # fmt: skip
    Console(highlight=False, width=160).print(table)
    if timing is not None:
        typer.echo(f"embedding speed here: {timing.tokens_per_second:,.0f} tokens/s "
                   f"({timing.texts} chunks, {timing.tokens:,} tokens in {timing.seconds:.2f} s "
                   f"wall, {timing.cpu_seconds:.2f} s CPU)")  # fmt: skip
    elif not model.local:
        typer.echo(f"embedding time: not measured ({model.name} runs elsewhere)")
    if price is None:
        typer.echo("cost: pass --price-per-million X (your provider's price) to price it")


def _money(amount: float) -> str:
    return f"{amount:,.2f}" if amount >= 1 else f"{amount:.3g}"


def _duration(seconds: float | None, boundary: float, approx: str) -> str:
    if seconds is None:
        return "—"
    total = seconds + boundary
    return approx + (f"{total / 3600:.1f} h" if total >= 3600 else (
        f"{total / 60:.1f} min" if total >= 60 else f"{total:.1f} s"))  # fmt: skip
