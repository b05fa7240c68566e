"""Per-document character facts computed once with numpy: classes, line starts, seams.

A *seam* is a position where every tokenizer fissure supports starts a new pre-token, whatever
text precedes it: a letter or digit followed by whitespace, or any other visible character
followed by a space or tab. (``".\\n"`` is one pre-token in OpenAI's encodings, so punctuation
followed by a newline is not a seam; ``"\\x0b"`` is deleted by BERT's normalizer and whitespace
to tiktoken, so it belongs to neither side.) Token counts add up across seams, which lets a
document be counted once and any span be measured by lookup.

*Fine* seams add a letter or digit followed by ASCII punctuation other than the apostrophe:
a pre-token boundary for OpenAI's encodings and BERT alike, but not for counting words.
"""

from __future__ import annotations

import re
from functools import cached_property, lru_cache

import numpy as np

# Class codes. PUNCT: ASCII punctuation except the apostrophe, which o200k's contractions
# (and BERT's punctuation rule) both treat as a word boundary after a letter or digit.
OTHER, ALNUM, SPACE, NEWLINE, ODD, PUNCT = 0, 1, 2, 3, 4, 5
ASCII_PUNCT = frozenset('!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~')

# Whitespace that BERT, tiktoken and str.split all treat as whitespace.
_SPACES = (
    " \t\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


@lru_cache(maxsize=1 << 16)
def char_class(ch: str) -> int:
    """The seam class of one character."""
    if ch in "\r\n":
        return NEWLINE
    if ch in _SPACES:
        return SPACE
    if ch.isspace():
        return ODD
    if ch.isalnum():
        return ALNUM
    if ch in ASCII_PUNCT:
        return PUNCT
    return OTHER


_ASCII_TABLE = np.array([char_class(chr(i)) for i in range(128)], dtype=np.uint8)


def code_points(text: str) -> np.ndarray:
    """The characters of ``text`` as integers (uint8 for ASCII text, else uint32)."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


@lru_cache(maxsize=1)
def _bmp_table() -> np.ndarray:
    """Class of every character of the Basic Multilingual Plane, built once."""
    return np.fromiter((char_class(chr(c)) for c in range(0x10000)), dtype=np.uint8, count=0x10000)


def classify(text: str, codes: np.ndarray | None = None) -> np.ndarray:
    """Class code of every character of ``text`` (uint8 array of ``len(text)``)."""
    if codes is None:
        codes = code_points(text)
    if codes.dtype == np.uint8:
        return _ASCII_TABLE[codes]
    out = _bmp_table()[np.minimum(codes, 0xFFFF)]
    astral = np.flatnonzero(codes > 0xFFFF)
    if astral.size:
        uniq, inverse = np.unique(codes[astral], return_inverse=True)
        table = np.fromiter(
            (char_class(chr(c)) for c in uniq.tolist()), dtype=np.uint8, count=len(uniq)
        )
        out[astral] = table[inverse]
    return out


class TextIndex:
    """Seams, visible characters and line starts of one text, each computed on first use.

    Attributes:
        seams: Sorted seam positions, always including 0 and ``len(text)``.
        visible: Sorted positions of the characters that are not whitespace.
    """

    def __init__(
        self, text: str, *, fine: bool = False, protect: re.Pattern[str] | None = None
    ) -> None:
        self.text = text
        self._fine = fine
        self._protect = protect

    @cached_property
    def codes(self) -> np.ndarray:
        """The characters as integers (see :func:`code_points`)."""
        return code_points(self.text)

    @cached_property
    def classes(self) -> np.ndarray:
        """Class code of every character."""
        return classify(self.text, self.codes) if self.text else np.zeros(0, dtype=np.uint8)

    @cached_property
    def seam_bytes(self) -> np.ndarray:
        """The seams as offsets into the text's UTF-8 encoding."""
        codes = self.codes
        if codes.dtype == np.uint8:
            return self.seams
        widths = 1 + (codes >= 0x80).astype(np.int64) + (codes >= 0x800) + (codes >= 0x10000)
        offsets = np.zeros(len(codes) + 1, dtype=np.int64)
        np.cumsum(widths, out=offsets[1:])
        return offsets[self.seams]

    @cached_property
    def seams(self) -> np.ndarray:
        n = len(self.text)
        if n == 0:
            return np.zeros(1, dtype=np.int64)
        k = self.classes
        prev, nxt = k[:-1], k[1:]
        visible_prev = (prev == OTHER) | (prev == PUNCT) | (prev == ALNUM)
        is_seam = ((prev == ALNUM) & (nxt == NEWLINE)) | (visible_prev & (nxt == SPACE))
        if self._fine:
            is_seam |= (prev == ALNUM) & (nxt == PUNCT)
        if self._protect is not None:
            for m in self._protect.finditer(self.text):  # no seam inside an added token
                is_seam[m.start() : max(m.start(), m.end() - 1)] = False
        inner = np.flatnonzero(is_seam) + 1
        return np.concatenate(([0], inner, [n])).astype(np.int64)

    @cached_property
    def visible(self) -> np.ndarray:
        k = self.classes
        return np.flatnonzero((k < SPACE) | (k == PUNCT)).astype(np.int64)

    @cached_property
    def line_starts(self) -> np.ndarray:
        """Start of every line (0 first); ``\r\n`` and a lone ``\r`` end lines too."""
        text, n = self.text, len(self.text)
        newlines = np.flatnonzero(self.classes == NEWLINE)
        if newlines.size and "\r" in text:
            chars = self.codes
            cr_before_lf = (chars[newlines] == 13) & (newlines + 1 < n)
            follow = np.minimum(newlines + 1, n - 1)
            cr_before_lf &= chars[follow] == 10
            newlines = newlines[~cr_before_lf]
        return np.concatenate(([0], newlines + 1)).astype(np.int64)

    @cached_property
    def paragraph_starts(self) -> np.ndarray:
        """Start of every line that has visible text and follows a blank line."""
        ls = self.line_starts
        bounds = np.append(ls, len(self.text))
        seen = np.searchsorted(self.visible, bounds)
        blank = seen[1:] == seen[:-1]
        follows_blank = np.zeros(ls.size, dtype=bool)
        follows_blank[1:] = blank[:-1]
        return ls[follows_blank & ~blank]

    @cached_property
    def word_starts(self) -> np.ndarray:
        """Every visible character that follows whitespace."""
        vis = self.visible
        gap = np.ones(vis.size, dtype=bool)
        gap[1:] = vis[1:] != vis[:-1] + 1
        if vis.size and vis[0] == 0:
            gap[0] = False
        return vis[gap]

    def trimmed(self, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For the parts ``[bounds[k], bounds[k+1])``: the first visible position at or
        after each start and the end of the last visible character before each end.
        A part with nothing visible gets a start greater than its end."""
        vis, n = self.visible, len(self.text)
        if vis.size == 0:
            return bounds[:-1].copy() + n + 1, bounds[1:].copy() * 0
        i = np.searchsorted(vis, bounds[:-1], side="left")
        starts = np.where(i < vis.size, vis[np.minimum(i, vis.size - 1)], n + 1)
        j = np.searchsorted(vis, bounds[1:], side="left") - 1
        ends = np.where(j >= 0, vis[np.maximum(j, 0)] + 1, 0)
        return starts, ends


def line_numbers(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """1-based first and last line of each span (spans sorted by start); ``\n``, ``\r\n``
    and a lone ``\r`` end lines."""
    out = []
    pos, line = 0, 1
    if "\r" not in text:
        # One pass over the text: walk from each span's last character to the next start.
        count = text.count
        for s, e in spans:
            line += count("\n", pos, s) if s >= pos else -count("\n", s, pos)
            first = line
            pos = max(s, e - 1)
            line += count("\n", s, pos)
            out.append((first, line))
        return out

    def breaks(a: int, b: int) -> int:
        return text.count("\n", a, b) + text.count("\r", a, b) - text.count("\r\n", a, b)

    for s, e in spans:
        line += breaks(pos, s)
        pos = s
        out.append((line, line + breaks(s, max(s, e - 1))))
    return out
