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
from functools import lru_cache

import numpy as np

# Class codes. PUNCT: ASCII punctuation except the apostrophe, which o200k's contractions
# (and BERT's punctuation rule) both treat as a word boundary after a letter or digit.
OTHER, ALNUM, SPACE, NEWLINE, ODD, PUNCT = 0, 1, 2, 3, 4, 5
_PUNCT = frozenset('!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~')

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
    if ch in _PUNCT:
        return PUNCT
    return OTHER


_ASCII_TABLE = np.array([char_class(chr(i)) for i in range(128)], dtype=np.uint8)


def classify(text: str) -> np.ndarray:
    """Class code of every character of ``text`` (uint8 array of ``len(text)``)."""
    if text.isascii():
        return _ASCII_TABLE[np.frombuffer(text.encode("ascii"), dtype=np.uint8)]
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    out = _ASCII_TABLE[np.minimum(codes, 127)]
    wide = np.flatnonzero(codes > 127)
    if wide.size:
        uniq, inverse = np.unique(codes[wide], return_inverse=True)
        table = np.fromiter(
            (char_class(chr(c)) for c in uniq.tolist()), dtype=np.uint8, count=len(uniq)
        )
        out[wide] = table[inverse]
    return out


class TextIndex:
    """Seams, visible characters and line starts of one text.

    Attributes:
        seams: Sorted seam positions, always including 0 and ``len(text)``.
        visible: Sorted positions of the characters that are not whitespace.
    """

    __slots__ = ("text", "seams", "visible", "_line_starts", "_paragraphs", "_words")

    def __init__(
        self, text: str, *, fine: bool = False, protect: re.Pattern[str] | None = None
    ) -> None:
        self.text = text
        self._paragraphs: np.ndarray | None = None
        self._words: np.ndarray | None = None
        n = len(text)
        if n == 0:
            self.seams = np.zeros(1, dtype=np.int64)
            self.visible = np.zeros(0, dtype=np.int64)
            self._line_starts = np.zeros(1, dtype=np.int64)
            return
        k = classify(text)
        prev, nxt = k[:-1], k[1:]
        visible_prev = (prev == OTHER) | (prev == PUNCT) | (prev == ALNUM)
        is_seam = ((prev == ALNUM) & (nxt == NEWLINE)) | (visible_prev & (nxt == SPACE))
        if fine:
            is_seam |= (prev == ALNUM) & (nxt == PUNCT)
        if protect is not None:
            for m in protect.finditer(text):  # no seam inside an added token
                is_seam[m.start() : max(m.start(), m.end() - 1)] = False
        inner = np.flatnonzero(is_seam) + 1
        self.seams = np.concatenate(([0], inner, [n])).astype(np.int64)
        self.visible = np.flatnonzero((k < SPACE) | (k == PUNCT)).astype(np.int64)
        newlines = np.flatnonzero(k == NEWLINE)
        # "\r\n" counts once; a lone "\r" ends a line too.
        if newlines.size:
            chars = (
                np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
                if not text.isascii()
                else np.frombuffer(text.encode("ascii"), dtype=np.uint8)
            )
            cr_before_lf = (chars[newlines] == 13) & (newlines + 1 < n)
            if cr_before_lf.any():
                follow = np.minimum(newlines + 1, n - 1)
                cr_before_lf &= chars[follow] == 10
                newlines = newlines[~cr_before_lf]
        self._line_starts = np.concatenate(([0], newlines + 1)).astype(np.int64)

    @property
    def line_starts(self) -> np.ndarray:
        """Start of every line (0 first)."""
        return self._line_starts

    @property
    def paragraph_starts(self) -> np.ndarray:
        """Start of every line that has visible text and follows a blank line."""
        if self._paragraphs is None:
            ls = self._line_starts
            bounds = np.append(ls, len(self.text))
            seen = np.searchsorted(self.visible, bounds)
            blank = seen[1:] == seen[:-1]
            follows_blank = np.zeros(ls.size, dtype=bool)
            follows_blank[1:] = blank[:-1]
            self._paragraphs = ls[follows_blank & ~blank]
        return self._paragraphs

    @property
    def word_starts(self) -> np.ndarray:
        """Every visible character that follows whitespace."""
        if self._words is None:
            vis = self.visible
            gap = np.ones(vis.size, dtype=bool)
            gap[1:] = vis[1:] != vis[:-1] + 1
            if vis.size and vis[0] == 0:
                gap[0] = False
            self._words = vis[gap]
        return self._words

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

    def lines(self, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """1-based first and last line numbers of the spans ``[starts[i], ends[i])``."""
        first = np.searchsorted(self._line_starts, starts, side="right")
        last_pos = np.maximum(ends - 1, starts)
        last = np.searchsorted(self._line_starts, last_pos, side="right")
        return first, last
