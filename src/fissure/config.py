"""Chunking settings, validated once when built."""

from __future__ import annotations

from dataclasses import dataclass

from fissure.errors import ConfigError

STRATEGIES = ("structural", "recursive", "sentence", "fixed")

# Budgets when none is given: the default embedding model's own input limit
# (all-MiniLM-L6-v2 reads 256 word pieces, two of them [CLS] and [SEP]).
DEFAULT_MAX = {"minilm": 254, "chars": 1000, "words": 200}
DEFAULT_MAX_TOKENS = 512


@dataclass(frozen=True, slots=True)
class ChunkSettings:
    """What a :class:`~fissure.chunker.Chunker` does.

    Attributes:
        strategy: ``structural`` (format-aware descent, the default), ``recursive``
            (separator hierarchy), ``sentence`` (sentences packed) or ``fixed`` (flat windows).
        max_tokens: Hard upper bound per chunk, in the tokenizer's unit. ``None``: the
            default for the tokenizer (254 for ``minilm``, 1000 ``chars``, 200 ``words``,
            512 otherwise).
        min_tokens: Chunks smaller than this are merged into a neighbour when that fits.
        overlap_tokens: Each chunk after the first extends backwards over whole units
            (words; sentences for ``sentence``; any position for ``fixed``) by up to this
            much, inside ``max_tokens``.
        tokenizer: ``minilm``, ``cl100k_base``, ``o200k_base``, ``chars``, ``words`` or a
            path to a ``tokenizer.json``.
        separators: For ``recursive``: the separator hierarchy, strongest first.
        language: For ``recursive``: a preset separator hierarchy (``python``, ``js`` …).
        separators_are_regex: Treat ``separators`` as regular expressions.
    """

    strategy: str = "structural"
    max_tokens: int | None = None
    min_tokens: int = 0
    overlap_tokens: int = 0
    tokenizer: str = "minilm"
    separators: tuple[str, ...] | None = None
    language: str | None = None
    separators_are_regex: bool = False

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ConfigError(
                f"unknown strategy {self.strategy!r}: use one of {', '.join(STRATEGIES)}"
            )
        budget = self.budget
        if not isinstance(budget, int) or isinstance(budget, bool) or budget <= 0:
            raise ConfigError(f"max_tokens must be a positive integer, got {budget!r}")
        for name in ("min_tokens", "overlap_tokens"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"{name} must be an integer >= 0, got {value!r}")
        if self.overlap_tokens >= budget:
            raise ConfigError(
                f"overlap_tokens ({self.overlap_tokens}) must be smaller than max_tokens "
                f"({budget}): lower the overlap or raise the budget"
            )
        if self.min_tokens >= budget:
            raise ConfigError(
                f"min_tokens ({self.min_tokens}) must be smaller than max_tokens ({budget})"
            )
        if (self.separators or self.language) and self.strategy != "recursive":
            raise ConfigError("separators and language apply to strategy='recursive' only")
        if self.separators is not None and not self.separators:
            raise ConfigError("separators must not be empty: give at least one, e.g. ['\\n\\n']")

    @property
    def budget(self) -> int:
        """``max_tokens``, or the tokenizer's default budget."""
        if self.max_tokens is not None:
            return self.max_tokens
        return DEFAULT_MAX.get(self.tokenizer, DEFAULT_MAX_TOKENS)
