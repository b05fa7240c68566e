"""Correctness of a splitter's output, measured after timing and never inside it.

For every chunk: can it be found in its document exactly, did a token-window splitter
corrupt a multi-byte character (a U+FFFD the source lacks), how big is it when re-measured
independently (tiktoken or the MiniLM tokenizer for token budgets, ``len`` for character
budgets), does the size the system reported agree, and — for systems that return offsets
— does ``text[start:end]`` give the chunk back and do the chunks cover every non-space
character.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

from bench.systems import Piece

REPLACEMENT = "\ufffd"


@dataclass
class Quality:
    """Counts over all chunks of a corpus; ``None`` where a check does not apply."""

    chunks: int = 0
    max_size: int = 0
    over_budget: int = 0
    not_in_source: int = 0
    replacement_chars: int = 0
    offset_errors: int | None = None
    lost_chars: int | None = None
    size_mismatches: int | None = None

    def to_dict(self) -> dict[str, int | None]:
        """A JSON-ready mapping."""
        return asdict(self)


def measure_tokens() -> Callable[[str], int]:
    """Independent token count: tiktoken's ``encode_ordinary`` (special tokens as text)."""
    from bench.systems import encoding

    enc = encoding()
    return lambda text: len(enc.encode_ordinary(text))


def measure_minilm() -> Callable[[str], int]:
    """Independent MiniLM count: the model's ``tokenizer.json`` through ``tokenizers``."""
    from bench.systems import minilm_tokenizer

    tok = minilm_tokenizer()
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def measure(name: str) -> Callable[[str], int]:
    """The independent size a group's chunks are re-measured with (see ``Group.measure``)."""
    if name == "chars":
        return len
    return measure_minilm() if name == "minilm" else measure_tokens()


def check_document(
    quality: Quality,
    text: str,
    pieces: list[Piece],
    size: Callable[[str], int],
    budget: int,
) -> None:
    """Add one document's chunks to ``quality``."""
    has_replacement = REPLACEMENT in text
    spans = []
    for chunk, start, end, reported in pieces:
        quality.chunks += 1
        n = size(chunk)
        quality.max_size = max(quality.max_size, n)
        quality.over_budget += n > budget
        if chunk not in text:
            quality.not_in_source += 1
        if not has_replacement and REPLACEMENT in chunk:
            quality.replacement_chars += 1
        if start is not None and end is not None:
            quality.offset_errors = (quality.offset_errors or 0) + (text[start:end] != chunk)
            spans.append((start, end))
        if reported is not None:
            quality.size_mismatches = (quality.size_mismatches or 0) + (reported != n)
    if spans:
        quality.lost_chars = (quality.lost_chars or 0) + uncovered(text, spans)


def uncovered(text: str, spans: Iterable[tuple[int, int]]) -> int:
    """Non-whitespace characters of ``text`` outside every span."""
    lost, pos = 0, 0
    for start, end in sorted(spans):
        if start > pos:
            lost += _ink(text[pos:start])
        pos = max(pos, end)
    return lost + _ink(text[pos:])


def _ink(s: str) -> int:
    return sum(len(word) for word in s.split())
