"""The two heuristic splitters of Chroma's report, written here, returning exact offsets.

* :func:`token_text_spans`: fixed windows of ``size`` cl100k tokens, each starting
  ``size - overlap`` tokens after the previous one (LangChain's ``TokenTextSplitter``
  behaviour). Token boundaries are byte offsets; one that falls inside a multi-byte character
  is moved back to that character's start, so the character goes to the later window.
* :func:`recursive_spans`: LangChain-style recursive character splitting with the report's
  separators ``["\\n\\n", "\\n", ".", "?", "!", " ", ""]``, separators kept at the start of the
  following piece, pieces measured one by one with a token counter, merged greedily up to
  ``size`` with up to ``overlap`` tokens of trailing pieces carried into the next chunk, and
  every chunk stripped of surrounding whitespace (the stripped span is returned).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from fissure.errors import ConfigError, MissingDependencyError
from fissure.eval.spans import Span
from fissure.spans import trim

REPORT_SEPARATORS = ("\n\n", "\n", ".", "?", "!", " ", "")
Count = Callable[[str], int]


def _check_sizes(size: int, overlap: int) -> None:
    if size <= 0 or overlap < 0 or overlap >= size:
        raise ConfigError(f"need size > overlap >= 0, got size={size}, overlap={overlap}")


@lru_cache(maxsize=4)
def _encoding(name: str) -> tuple[object, object]:
    try:
        import bpe_openai
        from bpe_openai import _bindings
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise MissingDependencyError("bpe-openai", purpose=f"{name} windows") from exc
    return _bindings.tokenizer_for_encoding(name), bpe_openai.get_encoding(name)


def token_byte_bounds(text: str, encoding: str = "cl100k_base") -> np.ndarray:
    """Byte offset of every token boundary of ``text`` (``n_tokens + 1`` values from 0)."""
    backend, enc = _encoding(encoding)
    ids = backend.encode(text)  # type: ignore[attr-defined]
    lengths = [len(b) for b in enc.decode_tokens_bytes(ids)]  # type: ignore[attr-defined]
    bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    return bounds


def _byte_to_char(text: str) -> tuple[np.ndarray, int]:
    raw = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    starts = (raw & 0xC0) != 0x80
    return np.cumsum(starts) - 1, raw.size


def token_text_spans(
    text: str, size: int, overlap: int = 0, *, encoding: str = "cl100k_base"
) -> list[Span]:
    """Windows of ``size`` tokens advancing by ``size - overlap`` tokens.

    Args:
        text: The text to split.
        size: Tokens per window.
        overlap: Tokens shared by consecutive windows.
        encoding: ``cl100k_base`` (the report's) or ``o200k_base``.

    Returns:
        Character spans, in order; the last window ends at the last token.
    """
    _check_sizes(size, overlap)
    if not text:
        return []
    bounds = token_byte_bounds(text, encoding)
    char_of, n_bytes = _byte_to_char(text)
    if int(bounds[-1]) != n_bytes:
        raise ConfigError(f"{encoding} tokens do not cover the text's bytes")

    def at(byte: int) -> int:
        return len(text) if byte >= n_bytes else int(char_of[byte])

    n = len(bounds) - 1
    spans: list[Span] = []
    first = 0
    while True:
        last = min(first + size, n)
        span = (at(int(bounds[first])), at(int(bounds[last])))
        if span[1] > span[0]:
            spans.append(span)
        if last == n:
            return spans
        first += size - overlap


def _pieces(text: str, start: int, end: int, sep: str) -> list[Span]:
    """Cut ``text[start:end]`` before every occurrence of ``sep`` (kept with what follows)."""
    if not sep:
        return [(i, i + 1) for i in range(start, end)]
    cuts = [start]
    at = text.find(sep, start, end)
    while at != -1:
        cuts.append(at)
        at = text.find(sep, at + len(sep), end)
    cuts.append(end)
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def _merge(text: str, pieces: list[Span], size: int, overlap: int, count: Count) -> list[Span]:
    """Greedy packing of consecutive pieces, carrying up to ``overlap`` tokens forward."""
    out: list[Span] = []
    window: deque[tuple[int, int, int]] = deque()
    total = 0
    for a, b in pieces:
        n = count(text[a:b])
        if total + n > size and window:
            s, e = trim(text, window[0][0], window[-1][1])
            if s < e:
                out.append((s, e))
            while total > overlap or (total + n > size and total > 0):
                total -= window.popleft()[2]
        window.append((a, b, n))
        total += n
    if window:
        s, e = trim(text, window[0][0], window[-1][1])
        if s < e:
            out.append((s, e))
    return out


def _split(
    text: str, start: int, end: int, seps: Sequence[str], limits: tuple[int, int], count: Count
) -> list[Span]:
    size, overlap = limits
    sep = seps[-1]
    rest: tuple[str, ...] = ()
    for i, candidate in enumerate(seps):
        if not candidate:
            sep = candidate
            break
        if text.find(candidate, start, end) != -1:
            sep, rest = candidate, tuple(seps[i + 1 :])
            break
    out: list[Span] = []
    good: list[Span] = []
    for a, b in _pieces(text, start, end, sep):
        if count(text[a:b]) < size:
            good.append((a, b))
            continue
        if good:
            out.extend(_merge(text, good, size, overlap, count))
            good = []
        out.extend(_split(text, a, b, rest, limits, count) if rest else [(a, b)])
    if good:
        out.extend(_merge(text, good, size, overlap, count))
    return out


def recursive_spans(
    text: str,
    size: int,
    overlap: int = 0,
    *,
    count: Count,
    separators: Sequence[str] = REPORT_SEPARATORS,
) -> list[Span]:
    """Recursive separator splitting, measured by ``count`` (see the module docstring).

    Args:
        text: The text to split.
        size: Largest chunk, in ``count`` units (pieces are summed, as LangChain does).
        overlap: Units of trailing pieces repeated at the start of the next chunk.
        count: Size of a piece, e.g. ``Sizer.tiktoken("cl100k_base").count``.
        separators: Plain-string separators, strongest first; end with ``""``.

    Returns:
        Whitespace-stripped character spans in order (overlapping when ``overlap > 0``).
    """
    _check_sizes(size, overlap)
    return _split(text, 0, len(text), tuple(separators), (size, overlap), count)
