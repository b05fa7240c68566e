"""Chunking settings, validated once when built."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from fissure.errors import ConfigError

STRATEGIES = ("structural", "recursive", "sentence", "fixed", "semantic", "hybrid")
BREAKPOINTS = ("percentile", "standard_deviation", "interquartile", "gradient")

# Budgets when none is given: the default embedding model's own input limit
# (all-MiniLM-L6-v2 reads 256 word pieces, two of them [CLS] and [SEP]).
DEFAULT_MAX = {"minilm": 254, "chars": 1000, "words": 200}
DEFAULT_MAX_TOKENS = 512
# The smallest sentence-piece budget: one character can take 4 cl100k_base tokens.
SUB_VECTOR_MIN = 4
# The character ceiling per chunk when ``max_chars`` is not given: this many characters per
# token of the budget, and never under MIN_MAX_CHARS. A token budget alone can be empty of
# meaning: a run without spaces longer than 100 characters is one MiniLM word piece
# ([UNK]), so 10 KB of it "fit" one token. Ordinary text stays far below the allowance:
# over the committed corpus (every format, every strategy, budgets 8 to 512) the widest
# chunk held 7.6 characters per MiniLM or cl100k_base token, and 17 per word of the
# ``words`` sizer at budget 8 (213 characters at most below budget 32, under the floor).
CHARS_PER_TOKEN = 16
MIN_MAX_CHARS = 256


@dataclass(frozen=True, slots=True)
class ChunkSettings:
    """What a :class:`~fissure.chunker.Chunker` does.

    Attributes:
        strategy: ``structural`` (format-aware descent, the default), ``recursive``
            (separator hierarchy), ``sentence`` (sentences packed) or ``fixed`` (flat windows).
        max_tokens: Hard upper bound per chunk, in the tokenizer's unit. ``None``: the
            default for the tokenizer (254 for ``minilm``, 1000 ``chars``, 200 ``words``,
            512 otherwise).
        max_chars: Hard upper bound per chunk in characters, beside ``max_tokens``: a run
            that a tokenizer counts as almost nothing (a long line of base64, a long string
            in JSON: MiniLM reads a word over 100 characters as one ``[UNK]``) is cut to it
            all the same. ``None``: 16 characters per token of the budget, at least 256
            (4064 for ``minilm``'s 254), which ordinary prose, code, tables, CSV and URLs
            never reach (see :attr:`char_ceiling`).
        min_tokens: Chunks smaller than this are merged into a neighbour when that fits
            (the budget less the chunk's context); for every strategy a smaller chunk
            remains only where no join with a neighbour fits.
        overlap_tokens: Each chunk after the first extends backwards over whole units
            (words; sentences for ``sentence``; any position for ``fixed``) by up to this
            much, inside ``max_tokens``.
        tokenizer: ``minilm``, ``cl100k_base``, ``o200k_base``, ``chars``, ``words`` or a
            path to a ``tokenizer.json``.
        separators: For ``recursive``: the separator hierarchy, strongest first.
        language: For ``recursive``: a preset separator hierarchy (``python``, ``js`` …).
        separators_are_regex: Treat ``separators`` as regular expressions.
        embedder: For ``semantic``/``hybrid`` boundary detection: ``minilm:auto`` (the
            default: the fastest MiniLM variant on this machine, as for the stored
            vectors, see :func:`fissure.embed.load.resolve`), ``minilm``,
            ``static``, ``static:PATH`` or ``http:URL#MODEL`` (see
            :func:`fissure.embed.load_embedder`).
        breakpoint: How the semantic threshold is found: ``percentile``,
            ``standard_deviation``, ``interquartile`` or ``gradient``.
        breakpoint_amount: The method's amount (defaults 95, 3, 1.5, 95).
        buffer_size: Sentences (atoms) on each side that form the compared windows.
        target_chunks: Instead of a threshold, cut at the strongest ``target_chunks - 1``
            semantic boundaries (the budget may add more).
        atom_tokens: For ``hybrid``: the size of the structural pieces that semantic
            scores then merge or keep apart.
        prepend_context: Count each chunk's context (``file › heading › entity``) and a
            newline inside its budget, so ``chunk.embedding_text()`` (context + text)
            fits the model. A context over half the budget is not prepended.
        embed_window_tokens: Contextual embedding (``fissure ingest``): besides the chunk,
            embed its *window* — the chunk extended over whole words on both sides to at
            most this many MiniLM word pieces (254 is MiniLM's input limit; see
            :mod:`fissure.embed.window`) — and store the blend of the two vectors. The
            stored chunk text and offsets do not change. ``None``: off (the chunk alone).
        embed_window_share: The window vector's weight in that blend, 0..1 (1: the window
            alone, which ranks worse than the chunk alone; 0.6, the default, ranked best
            for a one-vector index on Chroma's benchmark with MiniLM).
        embed_window_before: Share of the window's free budget spent in front of the
            chunk, 0..1 (0.5: centred).
        embed_headings: ``fissure ingest``: embed each chunk (and its window and sentence
            pieces) after its headings breadcrumb line (``Section › Subsection``, no file
            name), which on Chroma's benchmark helped where ``prepend_context``'s
            file-name-led line did not. What is stored does not change; the line is counted
            in ``max_tokens`` (``chunk.metadata["headings_tokens"]``), so chunk and line fit
            the model together; where a unit that fills the budget leaves no room, the line
            is left out (``metadata["headings_dropped"]``). Not with ``prepend_context``.
        sub_vector_tokens: Multi-vector retrieval (``fissure ingest``): also cut each
            document into sentence pieces of at most this many ``cl100k_base`` tokens
            (strategy ``sentence``), embed them and store them linked to the chunks they
            overlap, so that ``query(..., sub_weight=w)`` can blend a chunk's own score with
            its best piece's (30 ranked best on Chroma's benchmark with MiniLM). ``None``:
            off. Chunks, their text and their vectors do not change.
        dedup: Leave out of the store every chunk whose text equals an earlier chunk's in
            the same document (the first copy is kept).
    """

    strategy: str = "structural"
    max_tokens: int | None = None
    max_chars: int | None = None
    min_tokens: int = 0
    overlap_tokens: int = 0
    tokenizer: str = "minilm"
    separators: tuple[str, ...] | None = None
    language: str | None = None
    separators_are_regex: bool = False
    embedder: str = "minilm:auto"
    breakpoint: str = "percentile"
    breakpoint_amount: float | None = None
    buffer_size: int = 1
    target_chunks: int | None = None
    atom_tokens: int = 64
    prepend_context: bool = False
    embed_window_tokens: int | None = None
    embed_window_share: float = 0.6
    embed_window_before: float = 0.5
    sub_vector_tokens: int | None = None
    dedup: bool = False
    embed_headings: bool = False

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ConfigError(
                f"unknown strategy {self.strategy!r}: use one of {', '.join(STRATEGIES)}"
            )
        budget = self.budget
        if not isinstance(budget, int) or isinstance(budget, bool) or budget <= 0:
            raise ConfigError(f"max_tokens must be a positive integer, got {budget!r}")
        self._check_chars()
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
        if self.prepend_context and self.strategy == "fixed":
            raise ConfigError("prepend_context needs structure: use a strategy other than fixed")
        if (self.separators or self.language) and self.strategy != "recursive":
            raise ConfigError("separators and language apply to strategy='recursive' only")
        self._check_semantic()
        self._check_window()
        self._check_headings()
        self._check_retrieval()
        if self.separators is not None and not self.separators:
            raise ConfigError("separators must not be empty: give at least one, e.g. ['\\n\\n']")

    def _check_chars(self) -> None:
        chars = self.max_chars
        if chars is not None and (
            not isinstance(chars, int) or isinstance(chars, bool) or chars <= 0
        ):
            raise ConfigError(
                f"max_chars must be a positive integer (characters per chunk) or None for "
                f"{CHARS_PER_TOKEN} per token of the budget, got {chars!r}"
            )

    def _check_semantic(self) -> None:
        if self.breakpoint not in BREAKPOINTS:
            raise ConfigError(
                f"unknown breakpoint {self.breakpoint!r}: use one of {', '.join(BREAKPOINTS)}"
            )
        amount = self.breakpoint_amount
        if amount is not None and self.breakpoint in ("percentile", "gradient"):
            if not 0 <= amount <= 100:
                raise ConfigError(f"a percentile must be within 0..100, got {amount}")
        elif amount is not None and amount < 0:
            raise ConfigError(f"breakpoint_amount must be >= 0, got {amount}")
        if self.buffer_size < 0:
            raise ConfigError(f"buffer_size must be >= 0, got {self.buffer_size}")
        if self.target_chunks is not None and self.target_chunks < 1:
            raise ConfigError(f"target_chunks must be >= 1, got {self.target_chunks}")
        if self.atom_tokens < 1:
            raise ConfigError(f"atom_tokens must be >= 1, got {self.atom_tokens}")

    def _check_headings(self) -> None:
        if not isinstance(self.embed_headings, bool):
            raise ConfigError(f"embed_headings must be true or false, got {self.embed_headings!r}")
        if self.embed_headings and self.prepend_context:
            raise ConfigError(
                "embed_headings and prepend_context both put a line in front of the embedded "
                "chunk: choose one (embed_headings: headings only; prepend_context: file name "
                "and headings, counted in the budget)"
            )

    def _check_window(self) -> None:
        tokens = self.embed_window_tokens
        if tokens is not None and (
            not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1
        ):
            raise ConfigError(f"embed_window_tokens must be a positive integer, got {tokens!r}")
        for name in ("embed_window_share", "embed_window_before"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ConfigError(f"{name} must be a number within 0..1, got {value!r}")

    def _check_retrieval(self) -> None:
        tokens = self.sub_vector_tokens
        if tokens is not None and (
            not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < SUB_VECTOR_MIN
        ):
            raise ConfigError(
                f"sub_vector_tokens must be an integer >= {SUB_VECTOR_MIN} (cl100k_base tokens "
                f"per sentence piece; 30 works well) or None to turn it off, got {tokens!r}"
            )
        if not isinstance(self.dedup, bool):
            raise ConfigError(f"dedup must be True or False, got {self.dedup!r}")

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON-ready data (``separators`` a list), as a manifest records them.

        >>> ChunkSettings(max_tokens=200).to_dict()["max_tokens"]
        200
        """
        data = asdict(self)
        if self.separators is not None:
            data["separators"] = list(self.separators)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChunkSettings:
        """Settings from :meth:`to_dict`'s data; fields it lacks take their defaults.

        Raises:
            ConfigError: A key that is not a field (settings written by another version of
                fissure, or a typo), or values that cannot work.

        >>> s = ChunkSettings(strategy="recursive", separators=("\\n\\n", " "))
        >>> ChunkSettings.from_dict(s.to_dict()) == s
        True
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(
                f"unknown chunk setting(s) {', '.join(unknown)}: known are "
                f"{', '.join(sorted(known))}"
            )
        values = dict(data)
        if values.get("separators") is not None:
            values["separators"] = tuple(values["separators"])
        return cls(**values)

    @property
    def semantic(self) -> bool:
        """Whether the strategy needs an embedder."""
        return self.strategy in ("semantic", "hybrid")

    @property
    def budget(self) -> int:
        """``max_tokens``, or the tokenizer's default budget."""
        if self.max_tokens is not None:
            return self.max_tokens
        return DEFAULT_MAX.get(self.tokenizer, DEFAULT_MAX_TOKENS)

    @property
    def char_ceiling(self) -> int:
        """``max_chars``, or the default derived from the budget: :data:`CHARS_PER_TOKEN`
        characters per token, at least :data:`MIN_MAX_CHARS`.

        >>> ChunkSettings().char_ceiling, ChunkSettings(max_tokens=8).char_ceiling
        (4064, 256)
        >>> ChunkSettings(max_chars=2000).char_ceiling
        2000
        """
        if self.max_chars is not None:
            return self.max_chars
        return max(CHARS_PER_TOKEN * self.budget, MIN_MAX_CHARS)
