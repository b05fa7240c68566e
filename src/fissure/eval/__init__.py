"""Retrieval evaluation: datasets with answer spans, Chroma-style metrics, runs and reports.

Start with :func:`run_eval` (what ``fissure eval`` calls), or compose the parts:
:func:`load_dataset` → :class:`Strategy` list → :func:`evaluate` with an embedder.
"""

from fissure.embed import HashingEmbedder, load_embedder
from fissure.eval.dataset import Dataset, Question, load_dataset
from fissure.eval.run import run_eval
from fissure.eval.runner import StrategyResult, evaluate
from fissure.eval.strategies import Strategy, parse_strategy

__all__ = [
    "Dataset",
    "HashingEmbedder",
    "Question",
    "Strategy",
    "StrategyResult",
    "evaluate",
    "load_dataset",
    "load_embedder",
    "parse_strategy",
    "run_eval",
]
