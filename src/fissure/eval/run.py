"""One call for the CLI: load a dataset, run named strategies, print and write the report."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from fissure.embed import CachedEmbedder, load_embedder
from fissure.embed.protocol import Embedder
from fissure.errors import ConfigError, MissingDependencyError
from fissure.eval.dataset import Dataset, load_dataset
from fissure.eval.report import print_table, write_reports
from fissure.eval.runner import evaluate
from fissure.eval.strategies import Strategy, parse_strategy
from fissure.settings.model import EVAL_CACHE as DEFAULT_CACHE
from fissure.settings.model import EVAL_OUT as DEFAULT_OUT


def run_eval(
    dataset_path: str | Path,
    strategies: list[str],
    embedder: str = "minilm",
    k: int = 5,
    budget_tokens: int | None = None,
    out_dir: str | Path = DEFAULT_OUT,
    *,
    cache_dir: str | Path | None = DEFAULT_CACHE,
    console: Console | None = None,
    questions: str = "all",
) -> list[dict[str, Any]]:
    """Evaluate named strategies on a dataset and write ``eval.json``/``.md``/``.png``.

    Args:
        dataset_path: A Chroma folder (``questions_df.csv`` + ``corpora/``) or a ``.jsonl``.
        strategies: Specs such as ``tokentext:200:0`` or ``fissure-structural:200``
            (see :mod:`fissure.eval.strategies`).
        embedder: An embedder spec for :func:`fissure.embed.load_embedder` (``minilm``,
            ``minilm:bf16``, ``static``, ``hashing`` …); semantic strategies cut with it too.
        k: The headline cut-off; ``k=5``, ``k=10`` and "Min" are always scored too.
        budget_tokens: Also score a reader budget of this many cl100k tokens.
        out_dir: Where the reports go.
        cache_dir: Where embeddings persist (``None``: no cache); the SQLite cache of
            :class:`fissure.embed.CachedEmbedder`, keyed by model id and text hash.
        console: Rich console for the table and progress (default: stdout).
        questions: ``all``, or ``even``/``odd`` to score only the questions at even or odd
            row positions (tune on one half, report the other: :meth:`Dataset.half`).

    Returns:
        One JSON-ready summary per strategy (see ``StrategyResult.summary``).

    Raises:
        FissureError: Bad dataset, strategy or embedder name (the message says which).
    """
    console = console or Console()
    dataset = load_dataset(dataset_path).half(questions)
    started = time.perf_counter()
    scored = score_specs(dataset, strategies, embedder, k, budget_tokens,
                         cache_dir=cache_dir, console=console)  # fmt: skip
    summaries = scored.summaries
    meta = {
        "dataset": str(dataset_path),
        "questions": len(dataset.questions)
        if questions == "all"
        else f"{len(dataset.questions)} ({questions} rows)",
        "corpora": len(dataset.corpora),
        "embedder": scored.model_id,
        "retrieval": "exact cosine over the chunks of all corpora pooled",
        "sizes": "cl100k_base tokens",
        "date": dt.date.today().isoformat(),
        "seconds": round(time.perf_counter() - started, 1),
        "skipped": scored.skipped,
    }
    setting = f"k={k}"
    print_table(summaries, setting, console)
    written = write_reports(summaries, meta, Path(out_dir), setting)
    for path in written:
        console.print(f"wrote {path}")
    if summaries and not any(path.suffix == ".png" for path in written):
        lack = MissingDependencyError("matplotlib", "eval", purpose="the plot")
        console.print(f"skipped eval.png: {lack}", markup=False)
    return summaries


@dataclass(frozen=True)
class Scored:
    """What :func:`score_specs` measured.

    Attributes:
        summaries: One JSON-ready summary per strategy that ran (``StrategyResult.summary``).
        skipped: Spec → why it could not run (a peer whose package is missing).
        model_id: The embedder's model id.
    """

    summaries: list[dict[str, Any]]
    skipped: dict[str, str]
    model_id: str


def score_specs(
    dataset: Dataset,
    strategies: list[str],
    embedder: str = "minilm",
    k: int = 5,
    budget_tokens: int | None = None,
    *,
    cache_dir: str | Path | None = DEFAULT_CACHE,
    console: Console | None = None,
) -> Scored:
    """Score strategy specs on a loaded dataset: what :func:`run_eval` (and so
    ``fissure eval``) measures, without the reports; ``fissure tune`` calls it too, so the
    two give the same figures by construction.

    Raises:
        FissureError: Bad strategy or embedder name (the message says which).
    """
    console = console or Console()
    inner = load_embedder(embedder)
    # CachedEmbedder exposes the protocol's attributes as read-only properties.
    model = cast(Embedder, CachedEmbedder(inner, cache_dir)) if cache_dir else inner
    parsed, skipped = _parse_all(strategies, model, console)
    ks = sorted({5, 10, k})
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeRemainingColumn())  # fmt: skip
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            results = evaluate(dataset, parsed, model, ks=ks, budget_tokens=budget_tokens,
                               progress=progress)  # fmt: skip
    finally:
        if isinstance(model, CachedEmbedder):
            model.close()
    return Scored([r.summary() for r in results], skipped, model.model_id)


def _parse_all(
    specs: list[str], embedder: Embedder, console: Console
) -> tuple[list[Strategy], dict[str, str]]:
    """Build every strategy; a peer whose package is missing is skipped with a note."""
    parsed: list[Strategy] = []
    skipped: dict[str, str] = {}
    for spec in specs:
        try:
            parsed.append(parse_strategy(spec, embedder))
        except MissingDependencyError as exc:
            skipped[spec] = str(exc)
            console.print(f"skipped {spec}: {exc}", markup=False)
    if not parsed:
        raise ConfigError(f"no strategy can run: {'; '.join(skipped.values())}")
    return parsed, skipped
