"""A fast, exact WordPiece counter for BERT-style tokenizers (all-MiniLM-L6-v2).

The ``tokenizers`` library builds full encodings with offsets for every call, which
made counting the default model's tokens run at about 1 MB/s here. Counting needs much
less: BERT's normaliser and pre-tokeniser cut text into words and punctuation marks, and
each distinct word's WordPiece count never changes, so it is computed once and cached.
This module reproduces the tokenizer's rules exactly (checked against ``tokenizers``
in the tests): clean control characters, space out CJK ideographs, strip accents (NFD
without marks), lowercase, split on whitespace and punctuation, then greedy
longest-match-first WordPiece with ``[UNK]`` for words over the length limit.

Space, tab and line breaks always split, so text is counted run by run (the text between
them), each distinct run once; in the compiled helper (``WordCounter`` in ``_pieces.pyx``)
that loop, and the split of new ASCII runs into cached pieces, run in C.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fissure._compiled import twin

_pieces = twin("fissure.size._pieces")  # the loop over raw words in C (see _pieces.pyx)
WordCounter: Any = None if _pieces is None else _pieces.WordCounter

_ASCII_PIECES = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BREAKS = re.compile(r"[ \t\n\r]+")
_CACHE_LIMIT = 1 << 20


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def _is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _clean(ch: str) -> str:
    """What BERT's ``clean_text`` and ``handle_chinese_chars`` make of one character."""
    cp = ord(ch)
    if ch in "\t\n\r":
        return " "
    if cp == 0 or cp == 0xFFFD or unicodedata.category(ch).startswith("C"):
        return ""
    if ch.isspace():
        return " "
    if _is_cjk(cp):
        return f" {ch} "
    return ch


class _Table(dict[int, str | None]):
    """A ``str.translate`` table that works out each character's entry on first use."""

    def __init__(self, rule: Callable[[str], str | None]) -> None:
        super().__init__()
        self.rule = rule

    def __missing__(self, code: int) -> str | None:
        value = self[code] = self.rule(chr(code))
        return value


def _spaced_punct(ch: str) -> str:
    return f" {ch} " if _is_punct(ch) else ch


_CLEAN = _Table(_clean)
_NO_MARKS = _Table(lambda ch: None if unicodedata.category(ch) == "Mn" else ch)
_SPACED_PUNCT = _Table(_spaced_punct)


class WordPieceCounter:
    """Counts WordPiece tokens (no special tokens, no truncation).

    Args:
        vocab: Token → id.
        prefix: Continuation prefix (``##``).
        max_chars: Words longer than this count as one ``[UNK]``.
    """

    def __init__(
        self,
        vocab: dict[str, int],
        prefix: str = "##",
        max_chars: int = 100,
        added: tuple[str, ...] = (),
    ) -> None:
        self.vocab = vocab
        self.prefix = prefix
        self.max_chars = max_chars
        self._cache: dict[str, int] = {}  # word piece -> tokens
        self._words: dict[str, int] = {}  # text between breaks -> tokens
        self._runs = (
            WordCounter(self._count_word, self._wordpiece) if WordCounter is not None else None
        )
        self._longest = max(map(len, vocab))
        # Added tokens ([CLS], [SEP] …) are matched in the raw text before anything else,
        # even without special tokens added: "[CLS]" in a text is one token.
        self.added = (
            re.compile("|".join(map(re.escape, sorted(added, key=len, reverse=True))))
            if added
            else None
        )

    @classmethod
    def from_tokenizer_json(cls, path: str | Path) -> WordPieceCounter:
        """Read the vocabulary and settings of a BERT ``tokenizer.json``."""
        config = json.loads(Path(path).read_text("utf-8"))
        model = config["model"]
        added = tuple(
            t["content"]
            for t in config.get("added_tokens", ())
            if not t.get("normalized")
            and not t.get("lstrip")
            and not t.get("rstrip")
            and not t.get("single_word")
        )
        return cls(
            model["vocab"],
            prefix=model.get("continuing_subword_prefix", "##"),
            max_chars=model.get("max_input_chars_per_word", 100),
            added=added,
        )

    def count(self, text: str) -> int:
        """Number of word pieces in ``text``."""
        if self.added is not None and self.added.search(text):
            parts = self.added.split(text)
            return len(parts) - 1 + sum(self._count(part) for part in parts)
        return self._count(text)

    def _count(self, text: str) -> int:
        # Space, tab and the line breaks always separate words (BERT turns them into
        # spaces and splits there); every other rule acts within such a raw word, so each
        # distinct one is counted once.
        if self._runs is not None:
            return int(self._runs.count(text))
        words = self._words
        total = 0
        for word in _BREAKS.split(text):
            n = words.get(word)
            if n is None:
                n = self._count_word(word)
                if len(words) >= _CACHE_LIMIT:
                    words.clear()
                words[word] = n
            total += n
        return total

    def _count_word(self, text: str) -> int:
        if text.isascii():
            text = _ASCII_CONTROL.sub("", text).lower()
            pieces = _ASCII_PIECES.findall(text)
        else:
            pieces = self._unicode_pieces(text)
        cache = self._cache
        total = 0
        for piece in pieces:
            n = cache.get(piece)
            if n is None:
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                n = cache[piece] = self._wordpiece(piece)
            total += n
        return total

    def _unicode_pieces(self, text: str) -> list[str]:
        # clean and space out CJK, NFD without marks, lowercase, then every punctuation
        # mark alone: each per-character step is a str.translate through a growing table
        text = unicodedata.normalize("NFD", text.translate(_CLEAN)).translate(_NO_MARKS)
        return text.lower().translate(_SPACED_PUNCT).split()

    def _wordpiece(self, word: str) -> int:
        if len(word) > self.max_chars:
            return 1
        vocab, n, start, count = self.vocab, len(word), 0, 0
        while start < n:
            end = min(n, start + self._longest)
            while end > start:
                sub = word[start:end] if start == 0 else self.prefix + word[start:end]
                if sub in vocab:
                    break
                end -= 1
            if end == start:
                return 1  # the whole word becomes [UNK]
            count += 1
            start = end
        return count
