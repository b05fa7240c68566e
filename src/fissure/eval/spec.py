"""A strategy spec ``NAME:SIZE[:OVERLAP][+OPTION...]`` parsed, and the callable shapes the
evaluator's strategies (:mod:`fissure.eval.strategies`) and peers (:mod:`fissure.eval.peers`)
share; both import it, neither imports the other back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fissure.errors import ConfigError
from fissure.eval.spans import Span

ChunkFn = Callable[[str, str], list[Span]]
ViewFn = Callable[[str, list[Span]], list[str]]
# The `+` options a spec may carry (see fissure.eval.strategies).
OPTIONS = ("find", "ctx", "hctx", "win", "share", "before", "sub", "subsize", "subctx", "dedup",
           "min", "bp", "breakpoint", "buffer", "atom",
           "mode", "rrf", "lexw", "lexer", "tok")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Spec:
    """A parsed strategy spec: name, sizes and ``+`` options."""

    text: str
    name: str
    size: int
    overlap: int
    options: dict[str, str]

    def number(self, key: str, kind: Callable[[str], Any] = int) -> Any:
        """Option ``key`` converted by ``kind``, or ``None`` when absent."""
        if key not in self.options:
            return None
        try:
            return kind(self.options[key])
        except ValueError as exc:
            raise ConfigError(f"strategy {self.text!r}: {key}= needs a number") from exc


def parse_spec(text: str) -> Spec:
    """Split ``NAME:SIZE[:OVERLAP][+OPTION...]`` into its parts.

    Raises:
        ConfigError: Malformed sizes or an unknown option.
    """
    body, *flags = text.split("+")
    name, *numbers = body.split(":")
    try:
        sizes = [int(n) for n in numbers]
    except ValueError as exc:
        raise ConfigError(f"strategy {text!r}: sizes must be integers, as in NAME:250:125") from exc
    if len(sizes) not in (1, 2):
        raise ConfigError(f"strategy {text!r}: give NAME:SIZE or NAME:SIZE:OVERLAP")
    options = {}
    for flag in flags:
        key, _, value = flag.partition("=")
        if key not in OPTIONS:
            raise ConfigError(f"strategy {text!r}: unknown option {key!r}; use {OPTIONS}")
        options[key] = value
    return Spec(text, name, sizes[0], sizes[1] if len(sizes) == 2 else 0, options)
