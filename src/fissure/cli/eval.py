"""``fissure eval``: retrieval evaluation of chunking strategies on a dataset with answer spans."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fissure.cli.options import json_option
from fissure.cli.output import fail, print_json
from fissure.errors import FissureError
from fissure.settings.model import EVAL_CACHE, EVAL_OUT


def eval_(
    dataset: Annotated[
        Path,
        typer.Argument(help="A Chroma folder (questions_df.csv, corpora/) or a .jsonl file."),
    ],
    strategies: Annotated[
        list[str],
        typer.Option(
            "--strategies",
            "--strategy",
            "-s",
            help="Repeatable; comma-separated specs NAME:SIZE[:OVERLAP][+OPTION...], e.g. "
            "'structural:200,recursive:200:0,hybrid:200+bp=90'. Names: tokentext, recursive "
            "(Chroma's baselines), structural, sentence, fixed, semantic, hybrid, "
            "fissure-recursive, and peers (langchain-*, chonkie-*, llamaindex-*, semchunk). "
            "Options: find, ctx, hctx, min=N, bp=X, breakpoint=NAME, buffer=N, atom=N, "
            "win=N, share=F, before=F, sub=F, subsize=N, subctx, dedup (docs/eval.md).",
        ),
    ],
    embedder: Annotated[
        str,
        typer.Option(help="minilm | minilm:bf16 | minilm:onnx | static | static:PATH | hashing"),
    ] = "minilm",
    k: Annotated[int, typer.Option("--k", "-k", help="Headline cut-off (5 and 10 always).")] = 5,
    budget_tokens: Annotated[
        int | None,
        typer.Option(
            "--budget-tokens",
            "--budget",
            help="Also score a reader budget of this many cl100k tokens.",
        ),
    ] = None,
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "--out",
            "-o",
            help="Folder for eval.json, eval.md and (with the eval extra) eval.png.",
        ),
    ] = EVAL_OUT,
    cache_dir: Annotated[
        Path | None,
        typer.Option("--cache-dir", "--cache", help="Embedding cache folder (SQLite)."),
    ] = EVAL_CACHE,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Embed everything anew.")] = False,
    questions: Annotated[
        str,
        typer.Option(
            help="all, or even / odd: score only the questions at even or odd rows (choose a "
            "configuration on one half, report it on the other)."
        ),
    ] = "all",
    as_json: Annotated[
        bool,
        json_option(
            "Print one JSON object: the dataset, the output folder and one summary per "
            "strategy (as in eval.json); the table and progress go to stderr."
        ),
    ] = False,
) -> None:
    """Chunk, embed, retrieve and score: recall, precision, IoU (Chroma's metrics), ranking
    metrics and code-lookup scores; prints a table and writes JSON, Markdown and (with
    matplotlib, the eval extra) a PNG.

    `python -m fissure.eval` is this command (the same options).
    """
    from rich.console import Console

    from fissure.eval.run import run_eval

    specs = [s.strip() for group in strategies for s in group.split(",") if s.strip()]
    if not specs:
        fail("no strategy given: pass --strategies, e.g. -s structural:200,recursive:200:0")
    if k < 1:
        fail(f"--k must be at least 1, got {k}")
    if budget_tokens is not None and budget_tokens < 1:
        fail(f"--budget-tokens must be at least 1, got {budget_tokens}")
    console = Console(stderr=True) if as_json else None  # None: the table on stdout
    try:
        results = run_eval(dataset, specs, embedder, k, budget_tokens, output,
                           cache_dir=None if no_cache else cache_dir, console=console,
                           questions=questions)  # fmt: skip
    except FissureError as exc:
        fail(str(exc))
    if as_json:
        print_json({"dataset": str(dataset), "output": str(output), "results": results})
