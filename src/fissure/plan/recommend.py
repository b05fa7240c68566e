"""Which strategy, budget and overlap for a corpus, each with its reason and its figures.

The corpus is classified by where its bytes are (code, prose with headings, flat prose);
each kind maps to the settings that measured best on the committed benchmarks
(:mod:`fissure.plan.evidence`), and the advice is then checked on the user's own sample:
the budget is capped so chunks fit the embedding model (MiniLM word pieces per cl100k token
are counted on the sample), and the strategies are compared on how often they cut through
a function, method or table that would have fitted whole.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from typing import Any

from fissure.config import ChunkSettings
from fissure.plan import evidence as ev
from fissure.plan.measure import Measured, measure, tokens_per
from fissure.plan.survey import Survey
from fissure.size import Sizer

MODEL_LIMIT = 254  # all-MiniLM-L6-v2's word pieces besides [CLS] and [SEP]
COMPARED = ("structural", "recursive", "fixed")
# Budgets and minimums in cl100k_base tokens (the unit the benchmarks were run in).
_BUDGET = {"code": (200, 50, ev.CODE_BUDGET), "prose": (150, 60, ev.PROSE_BUDGET)}


@dataclass(frozen=True, slots=True)
class Advice:
    """One recommended setting.

    Attributes:
        setting: The ``fissure ingest`` option it sets (``strategy``, ``max-tokens`` …).
        value: What to set it to.
        reason: Why, in a sentence.
        measured: What was measured on the user's sample, if anything bears on it.
        evidence: The committed figures behind it.
    """

    setting: str
    value: str | int
    reason: str
    measured: str = ""
    evidence: tuple[ev.Evidence, ...] = ()


@dataclass
class Recommendation:
    """The advice for a corpus, and what it was read from."""

    survey: Survey
    kind: str
    shares: dict[str, float]
    advice: list[Advice] = field(default_factory=list)
    compared: dict[str, Measured] = field(default_factory=dict)

    def value(self, setting: str) -> str | int:
        """The recommended value of one setting."""
        return next(a.value for a in self.advice if a.setting == setting)

    def settings(self) -> ChunkSettings:
        """The recommended chunk settings."""
        return ChunkSettings(
            strategy=str(self.value("strategy")),
            tokenizer=str(self.value("tokenizer")),
            max_tokens=int(self.value("max-tokens")),
            min_tokens=int(self.value("min-tokens")),
            overlap_tokens=int(self.value("overlap-tokens")),
        )

    def command(self, path: str) -> str:
        """The ``fissure ingest`` line that applies it."""
        options = " ".join(f"--{a.setting} {a.value}" for a in self.advice
                           if a.setting in ("strategy", "tokenizer", "max-tokens", "min-tokens")
                           and not (a.setting == "min-tokens" and not a.value))  # fmt: skip
        return f"fissure ingest {path} {options}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping of the advice and the comparison on the sample."""
        return {
            "kind": self.kind,
            "shares": {k: round(v, 4) for k, v in self.shares.items()},
            "advice": [{"setting": a.setting, "value": a.value, "reason": a.reason,
                        "measured": a.measured or None,
                        "evidence": [{"figure": e.figure, "source": e.source}
                                     for e in a.evidence]}
                       for a in self.advice],
            "compared": {name: {"chunks": m.count, "units": m.units, "cuts": m.cuts,
                                "mean_tokens": _mean([c.n_tokens for c in m.every])}
                         for name, m in self.compared.items()},
        }  # fmt: skip


def classify(survey: Survey) -> tuple[str, dict[str, float]]:
    """The corpus kind (``code``, ``structured prose``, ``flat prose`` or ``mixed``) from
    the share of sampled bytes in code, in other documents with headings, and the rest."""
    total = sum(p.n_bytes for p in survey.profiles) or 1
    code = sum(p.n_bytes for p in survey.profiles if p.is_code) / total
    structured = sum(p.n_bytes for p in survey.profiles
                     if not p.is_code and p.headings) / total  # fmt: skip
    shares = {"code": code, "structured prose": structured,
              "flat prose": max(0.0, 1 - code - structured)}  # fmt: skip
    kind, top = max(shares.items(), key=lambda kv: kv[1])
    return (kind if top >= 0.5 else "mixed"), shares


def recommend(survey: Survey) -> Recommendation:
    """Advise strategy, tokenizer, budget, minimum and overlap for the surveyed corpus.

    Raises:
        ConfigError: The survey holds no document to reason from.
    """
    if not survey.documents:
        from fissure.errors import ConfigError

        raise ConfigError("no readable document in the sample: nothing to recommend from")
    kind, shares = classify(survey)
    result = Recommendation(survey, kind, shares)
    budget, minimum, budget_advice = _budget(survey, kind)
    if minimum:
        loose = measure(survey, ChunkSettings(tokenizer="cl100k_base", max_tokens=budget))
        small = sum(c.n_tokens < minimum for c in loose.every)
        budget_advice[1] = replace(budget_advice[1], measured=f"without it, {small} of "
                                   f"{loose.count} structural chunks are under {minimum} "
                                   "tokens")  # fmt: skip
    for name in COMPARED:
        settings = ChunkSettings(strategy=name, tokenizer="cl100k_base", max_tokens=budget,
                                 min_tokens=minimum if name != "fixed" else 0)  # fmt: skip
        result.compared[name] = measure(survey, settings)
    result.advice.append(_strategy(kind, shares, result.compared))
    result.advice.append(Advice("tokenizer", "cl100k_base",
                                "budgets below are in cl100k_base tokens, the unit the "
                                "benchmarks measured them in"))  # fmt: skip
    result.advice.extend(budget_advice)
    result.advice.append(Advice(
        "overlap-tokens", 0,
        "structure-aware cuts keep answers whole; overlap repeats text, which costs "
        "precision and storage for the recall it buys", evidence=(ev.NO_OVERLAP,)))  # fmt: skip
    if kind != "code":
        result.advice.append(Advice(
            "retrieval", "--sub-vectors 30 --dedup --embed-headings; query --sub-weight 0.4",
            "for question answering over prose, the multi-vector options of the best "
            "measured recipe (they add sentence-piece vectors to the store)",
            evidence=(ev.RETRIEVAL_RECIPE,)))  # fmt: skip
    return result


def _strategy(kind: str, shares: dict[str, float], compared: dict[str, Measured]) -> Advice:
    share = ", ".join(f"{k} {v:.0%}" for k, v in shares.items())
    units = max(m.units for m in compared.values())
    if units:
        measured = (
            f"your sample has {units} functions, methods or tables that fit whole; "
            "chunks that end inside one: "
            + ", ".join(
                f"{n} {m.cuts} of {m.count} ({m.cut_share:.1%})" for n, m in compared.items()
            )
        )
    else:
        measured = "your sample has no function, method or table to keep whole"
    if kind == "code":
        return Advice("strategy", "structural", f"mostly source code ({share}): cut between "
                      "functions and classes, not through them", measured,
                      (ev.CODE_STRUCTURE,))  # fmt: skip
    if kind == "flat prose":
        return Advice("strategy", "semantic", f"mostly prose without headings ({share}): "
                      "no structure to cut along, so cut where the topic shifts; it embeds "
                      "every sentence while chunking (see estimate)", measured,
                      (ev.PROSE_SEMANTIC, ev.SEMANTIC_COST))  # fmt: skip
    why = "prose with headings" if kind == "structured prose" else "a mix of formats"
    return Advice("strategy", "structural", f"{why} ({share}): each format's own "
                  "structure (sections, entities, tables, pages) decides the cuts", measured,
                  (ev.PROSE_STRUCTURE,))  # fmt: skip


def _budget(survey: Survey, kind: str) -> tuple[int, int, list[Advice]]:
    """The budget for the kind, capped so a chunk fits MiniLM on this sample."""
    preferred, minimum, evidence = _BUDGET["code" if kind == "code" else "prose"]
    ratios = sorted(tokens_per(survey, Sizer.minilm(), Sizer.tiktoken("cl100k_base")))
    p90 = ratios[min(len(ratios) - 1, math.ceil(0.9 * len(ratios)) - 1)] if ratios else 1.0
    cap = max(8, math.floor(MODEL_LIMIT / p90))
    budget = min(preferred, cap)
    fit = (
        f"one cl100k token is {p90:.2f} MiniLM word pieces (90th percentile of "
        f"documents), so {budget} tokens is about {round(budget * p90)} pieces"
    )
    if budget < preferred:
        fit += f": {preferred} would pass MiniLM's {MODEL_LIMIT} and be truncated"
    minimum = minimum if minimum < budget else 0
    label = "code" if kind == "code" else "prose"
    advice = [
        Advice(
            "max-tokens",
            budget,
            f"the size that measured best for {label}, within what the embedding model reads",
            fit,
            (evidence, ev.MODEL_LIMIT),
        ),
        Advice(
            "min-tokens",
            minimum,
            "merge headings and stubs into a neighbour rather "
            "than embed them alone (measured with the budget above)",
        ),
    ]
    return budget, minimum, advice


def _mean(values: list[int]) -> float:
    return round(statistics.fmean(values), 1) if values else 0.0
