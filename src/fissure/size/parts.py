"""Part sizes for :class:`~fissure.size.ruler.PartTable`, counted once per part.

:func:`measure` is the one entry point. It runs the compiled twin in ``_parts.pyx`` when
that extension was built at install time (it needs a C compiler) and ``FISSURE_PURE_PYTHON``
is not set (see :mod:`fissure._compiled`), and this module's pure Python otherwise; both
give the same lists for the same input (tests compare them).

Definitions (see :class:`~fissure.size.ruler.PartTable` for how the lists are used):
parts ``[bounds[k], bounds[k+1])`` are grouped between *strong* bounds, positions where
the size of the text on either side adds up: the start of a line with visible text (a
pre-token always starts after the last break of a whitespace run), or a seam after a word
(see :mod:`fissure.size.textindex`). Each group may hold one part with visible text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fissure._compiled import twin
from fissure.size.sizer import Counters
from fissure.size.textindex import ASCII_PUNCT
from fissure.spans import visible_end, visible_start

HUGE = 1 << 40  # the size of a run holding a part over the cap: never fits

Counter = Callable[[str], int]
Within = Callable[[str, int], "int | None"]
Measured = tuple[
    list[int],
    list[int],
    list[int],
    list[int],
    list[int],
    list[int],
    list[int],
    list[int],
    list[int],
]

# A visible line from here on (for a line start to be a seam, its line must not be blank).
_VISIBLE_LINE = re.compile(r"[^\S\r\n]*\S")
# The whitespace right after a word: a seam at its start.
_SEAM_AFTER = re.compile(r"(?<=[^\W_])[\r\n]|(?<=\S)[ \t]")


def strong(text: str, b: int) -> bool:
    """Whether the sizes of ``text[:b]`` and ``text[b:]`` add up (``0 < b < len(text)``)."""
    prev, nxt = text[b - 1], text[b]
    if prev == "\n" or prev == "\r":
        return not (prev == "\r" and nxt == "\n") and _VISIBLE_LINE.match(text, b) is not None
    if nxt == " " or nxt == "\t":
        return not prev.isspace()
    return (nxt == "\n" or nxt == "\r") and prev.isalnum()


def last_seam(text: str, start: int, end: int, fine: bool) -> int:
    """A seam in ``(start, end]`` near ``end`` (``-1`` if none is found), where
    ``text[start:end]`` is trimmed visible text followed by whitespace or the text's end.
    With ``fine`` seams, a word followed by punctuation (``foo):``) gives the seam before
    the punctuation, so the separately counted tail is short and repeats."""
    if end == len(text):
        return end
    nxt, last = text[end], text[end - 1]
    if nxt == " " or nxt == "\t" or ((nxt == "\n" or nxt == "\r") and last.isalnum()):
        return end
    if fine and last in ASCII_PUNCT:
        r = end - 1
        while r > start and text[r - 1] in ASCII_PUNCT:
            r -= 1
        if r > start and text[r - 1].isalnum():
            return r
    # The start of the last line (it holds text[end - 1], so it is visible), or a space
    # after a word on that line, whichever is nearer the end.
    line = text.rfind("\n", start, end - 1) + 1
    if line and text.find("\r", line, end) >= 0:
        line = 0  # a lone \r ends a line too: keep it simple
    lo = max(start, line)
    r = end
    for _ in range(4):
        r = text.rfind(" ", lo, r)
        if r <= lo:
            break
        while r > lo and text[r - 1] in " \t":
            r -= 1
        if r > lo and not text[r - 1].isspace():
            return r
    return line if line > start else -1


LAZY = -1  # a size left to resolve on first use (see head_delta)


def sizes(
    text: str,
    g0: int,
    s: int,
    e: int,
    g1: int,
    cap: int,
    count: Counter,
    within: Within,
    fine: bool,
) -> tuple[int, int, int, int, int]:
    """``one`` (``s..e``), ``lead`` (``s..g1``), ``tail`` (``g0..e``) and whole
    (``g0..g1``) size of the visible text ``s..e`` of group ``g0..g1``, and ``z``.

    The bulk up to a seam ``z`` near the end is counted once, up to ``cap``, and short
    tails by ``count``. A size over the cap is HUGE. When the visible text starts after
    indentation (``s > g0``), ``one`` and ``lead`` are LAZY and ``z`` is returned: they
    differ from ``tail`` and whole by :func:`head_delta`, which only a part that starts a
    chunk needs (counting the first word twice for every indented line costs more)."""
    z = last_seam(text, s, e, fine)
    if z < 0:
        found = [within(text[x0:x1], cap) for x0, x1 in ((s, e), (s, g1), (g0, e), (g0, g1))]
        if found[0] is None:  # over the cap alone: no run holding it fits
            return HUGE, HUGE, HUGE, HUGE, -1
        one, lead, tail, whole = (HUGE if x is None else x for x in found)
        return one, lead, tail, whole, -1
    t_trim = count(text[z:e]) if z < e else 0
    t_full = count(text[z:g1]) if z < g1 else 0
    if s == g0:
        bulk = within(text[s:z], cap)
        if bulk is None:
            return HUGE, HUGE, HUGE, HUGE, -1
        return bulk + t_trim, bulk + t_full, bulk + t_trim, bulk + t_full, -1
    bulk = within(text[g0:z], cap)
    if bulk is not None:
        return LAZY, LAZY, bulk + t_trim, bulk + t_full, z
    # Over the cap with its indentation, perhaps not without: measure both exactly.
    m = _SEAM_AFTER.search(text, s + 1, z)
    y = m.start() if m else z
    bulk = within(text[y:z], cap)
    if bulk is None:
        return HUGE, HUGE, HUGE, HUGE, -1
    h_full = count(text[g0:y]) if g0 < y else 0
    h_trim = count(text[s:y]) if s < y else 0
    return (
        h_trim + bulk + t_trim,
        h_trim + bulk + t_full,
        h_full + bulk + t_trim,
        h_full + bulk + t_full,
        -1,
    )


def head_delta(text: str, g0: int, s: int, z: int, count: Counter) -> int:
    """``one - tail`` (= ``lead - whole``) of a part whose visible text starts at ``s``
    after indentation from ``g0``: the difference the first word makes, measured up to the
    seam after it (or ``z``)."""
    m = _SEAM_AFTER.search(text, s + 1, z)
    y = m.start() if m else z
    return (count(text[s:y]) if s < y else 0) - (count(text[g0:y]) if g0 < y else 0)


def measure_py(
    text: str, bounds: list[int], cap: int, counters: Counters, fine: bool
) -> Measured | None:
    """``starts``, ``ends`` (``-1`` for a part without visible text), ``group`` of each
    part, ``one``, ``lead``, ``tail`` (0 for parts without visible text; ``one`` and
    ``lead`` may be LAZY), ``whole``, the prefix sums of group sizes, and per part its
    group's start and the ``z`` that resolves LAZY sizes (see :func:`sizes`); ``None``
    when two visible parts share a group.
    Sizes come from ``counters.count`` (short heads and tails) and ``counters.within``."""
    count, within = counters.count, counters.within
    n = len(bounds) - 1
    starts: list[int] = []
    ends: list[int] = []
    group: list[int] = []
    one: list[int] = []
    lead: list[int] = []
    tail: list[int] = []
    whole = [0]
    g0s: list[int] = []  # where the group of each part starts
    zs: list[int] = []  # for a part whose one/lead are LAZY: its seam z, else -1

    def pad_to(m: int) -> None:  # sizes of parts without visible text, up to part m
        pad = m - len(one)
        one.extend([0] * pad)
        lead.extend([0] * pad)
        tail.extend([0] * pad)
        g0s.extend([0] * pad)
        zs.extend([-1] * pad)

    g0 = bounds[0]
    owner = -1  # the visible part of the current group
    for k in range(n):
        a, b = bounds[k], bounds[k + 1]
        s = visible_start(text, a, b)  # the part trimmed (spans.trim), -1: nothing visible
        e = -1
        if s < b:
            if owner >= 0:
                return None
            owner = k
            e = visible_end(text, s, b)
        else:
            s = -1
        starts.append(s)
        ends.append(e)
        group.append(len(whole) - 1)
        if k + 1 < n and not ((text[b - 1] == "\n" and not text[b].isspace()) or strong(text, b)):
            continue
        if owner < 0:
            whole.append(whole[-1] + count(text[g0:b]))
        else:
            s, e = starts[owner], ends[owner]
            c1, c2, c3, c4, z = sizes(text, g0, s, e, b, cap, count, within, fine)
            pad_to(owner)  # parts without visible text before it in the group
            one.append(c1)
            lead.append(c2)
            tail.append(c3)
            g0s.append(g0)
            zs.append(z)
            whole.append(whole[-1] + c4)
        g0, owner = b, -1
    pad_to(n)
    return starts, ends, group, one, lead, tail, whole, g0s, zs


Measure = Callable[[str, list[int], int, Counters, bool], "Measured | None"]
_parts = twin("fissure.size._parts")  # None: the pure Python above
measure_c: Measure | None = None if _parts is None else _parts.measure

measure: Measure = measure_c if measure_c is not None else measure_py
