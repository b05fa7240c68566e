"""``fissure tune``: measure a small grid of settings on your own questions, held out.

Every candidate is an evaluator spec that maps one for one to settings
(:mod:`fissure.plan.recipe`). Each half of the questions (even rows, odd rows) is scored by
:func:`fissure.eval.run.score_specs`, the code ``python -m fissure.eval --questions
even|odd`` runs, so its figures are the evaluator's by construction. The candidate with the
best mean on one half is chosen (the first in grid order on a tie) and reported on the
other, the held-out protocol of ``docs/eval.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fissure.errors import ConfigError
from fissure.eval.dataset import Dataset
from fissure.plan.recipe import canonical, preset_of, to_spec
from fissure.settings.model import EVAL_CACHE
from fissure.settings.presets import Preset

if TYPE_CHECKING:
    from rich.console import Console

METRICS = ("recall", "iou")
HALVES = ("even", "odd")
# The default grid: strategy x budget x the retrieval options that have settings, chosen
# so candidates share most of their embeddings (the cache embeds each text once).
GRIDS: dict[str, tuple[str, ...]] = {
    "small": (
        # fissure's defaults: what `fissure ingest` and `fissure query` do with no flags
        "structural:254+tok=minilm+mode=hybrid",
        # `fissure recommend`'s budget for prose, one vector per chunk, dense and hybrid
        "structural:150+min=60",
        "structural:150+min=60+mode=hybrid",
        # the built-in chroma-best preset, dense and hybrid
        "semantic:140+min=50+hctx+win=254+share=0.8+sub=0.4+subctx+subsize=30+dedup",
        "semantic:140+min=50+hctx+win=254+share=0.8+sub=0.4+subctx+subsize=30+dedup+mode=hybrid",
    ),
}
MIN_QUESTIONS = 2


@dataclass
class Candidate:
    """One grid point: its spec, its settings and its summary on each half.

    Attributes:
        spec: The canonical evaluator spec.
        preset: Its settings (:func:`fissure.plan.recipe.preset_of`).
        halves: ``even``/``odd`` → the evaluator's summary (``StrategyResult.summary``).
    """

    spec: str
    preset: Preset
    halves: dict[str, dict[str, Any]] = field(default_factory=dict)

    def score(self, half: str, key: str) -> float:
        """The mean of metric ``key`` (``k=5/recall``) on one half, ×100."""
        return float(self.halves[half]["metrics"][key][0])


@dataclass
class Tuned:
    """What a tuning run measured and chose.

    Attributes:
        candidates: Every grid point, in grid order.
        chosen: Index of the winner in ``candidates``.
        metric: The deciding metric (``recall`` or ``iou``, at ``k``).
        k: The cut-off.
        choose_on: The half the winner was chosen on; the other is reported.
        questions: Questions per half.
        embedder: The embedder's model id.
        skipped: Specs that could not run and why.
    """

    candidates: list[Candidate]
    chosen: int
    metric: str
    k: int
    choose_on: str
    questions: dict[str, int]
    embedder: str
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def report_on(self) -> str:
        """The held-out half."""
        return "odd" if self.choose_on == "even" else "even"

    @property
    def key(self) -> str:
        """The deciding metric's name in a summary (``k=5/recall``)."""
        return f"k={self.k}/{self.metric}"

    @property
    def winner(self) -> Candidate:
        """The chosen candidate."""
        return self.candidates[self.chosen]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: every candidate on both halves, the choice, held out."""

        def figures(c: Candidate, half: str) -> dict[str, float]:
            return {m: round(c.score(half, f"k={self.k}/{m}"), 2) for m in METRICS}

        return {
            "metric": self.key, "k": self.k, "choose_on": self.choose_on,
            "report_on": self.report_on, "questions": self.questions, "embedder": self.embedder,
            "chosen": self.winner.spec, "held_out": figures(self.winner, self.report_on),
            "preset": self.winner.preset, "skipped": self.skipped,
            "candidates": [{"spec": c.spec, "chunks": c.halves[self.choose_on]["chunks"],
                            **{h: figures(c, h) for h in HALVES}} for c in self.candidates],
        }  # fmt: skip


def grid(names: list[str], start: Path | None = None) -> list[str]:
    """Specs from grid names (``small``), preset names (built-in, or the settings file's
    from ``start``, default the working folder) and specs: canonical, each once, in order.

    Raises:
        ConfigError: A name that is no grid, no preset and no spec that maps to settings.
    """
    from fissure.settings import load_settings

    specs: list[str] = []
    for name in names:
        try:
            if name in GRIDS:
                found = [canonical(spec) for spec in GRIDS[name]]
            elif ":" in name:  # a spec: NAME:SIZE…
                found = [canonical(name)]
            else:
                found = [to_spec(load_settings(name, start=start))]
        except ConfigError as exc:
            raise ConfigError(f"--grid {name!r}: not a grid ({', '.join(GRIDS)}), a preset "
                              f"or a spec that maps to settings: {exc}") from exc  # fmt: skip
        specs.extend(s for s in found if s not in specs)
    if not specs:
        raise ConfigError("--grid is empty: give small, or specs such as structural:200")
    return specs


def check_options(metric: str, choose_on: str, k: int) -> None:
    """Refuse a bad metric, half or cut-off before anything costly runs.

    Raises:
        ConfigError: Which option, and what it takes.
    """
    if metric not in METRICS:
        raise ConfigError(f"--metric {metric!r}: use {' or '.join(METRICS)}")
    if choose_on not in HALVES:
        raise ConfigError(f"--choose-on {choose_on!r}: use even or odd")
    if k < 1:
        raise ConfigError(f"-k {k}: retrieve at least one chunk")


def tune(
    dataset: Dataset,
    specs: list[str],
    *,
    embedder: str = "minilm",
    k: int = 5,
    metric: str = "recall",
    choose_on: str = "even",
    cache_dir: str | Path | None = EVAL_CACHE,
    console: Console | None = None,
) -> Tuned:
    """Score every spec on both halves, choose on ``choose_on``, report the other.

    Raises:
        ConfigError: Bad metric, half, spec or embedder, or too few questions.
    """
    from fissure.eval.run import score_specs

    check_options(metric, choose_on, k)
    if len(dataset.questions) < MIN_QUESTIONS:
        raise ConfigError(
            f"{len(dataset.questions)} question: tuning needs at least "
            f"{MIN_QUESTIONS}, one per half (a few dozen give steadier figures)"
        )
    candidates = {s: Candidate(s, preset_of(s, k=k, embedder=embedder)) for s in specs}
    questions, skipped, model_id = {}, {}, embedder
    for half in HALVES:
        part = dataset.half(half)
        questions[half] = len(part.questions)
        scored = score_specs(part, specs, embedder, k, cache_dir=cache_dir, console=console)
        skipped.update(scored.skipped)
        model_id = scored.model_id
        for summary in scored.summaries:
            candidates[summary["strategy"]].halves[half] = summary
    ran = [c for c in candidates.values() if len(c.halves) == len(HALVES)]
    if not ran:
        raise ConfigError(f"no candidate could run: {'; '.join(skipped.values())}")
    key = f"k={k}/{metric}"
    best = max(range(len(ran)), key=lambda i: (ran[i].score(choose_on, key), -i))
    return Tuned(ran, best, metric, k, choose_on, questions, model_id, skipped)
