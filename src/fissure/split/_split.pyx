# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled helpers of fissure.split.

:class:`CharPacker` is the twin of :class:`fissure.split.pack.Packer` for one common case:
plain text, a budget in characters and literal separators (the ``recursive`` strategy's
defaults).

It follows the Python packer step by step — the greedy run of parts, the small group
carried into an oversized part, the descent through the separators, the grapheme-safe
character cuts — so the pieces are identical (the tests compare them on generated text);
only the interpreter's cost per part and per character scan is gone.

Its trimming is :func:`fissure.spans.trim` (policy ``all``) written in C over the same
character class (``Py_UNICODE_ISSPACE`` is ``str.isspace``): :func:`trim` here is that
policy, and the tests check it against the Python definition on generated text.
"""

import unicodedata

from cpython.unicode cimport Py_UNICODE_ISSPACE


cdef extern from "Python.h":
    Py_ssize_t PyUnicode_Find(object s, object sub, Py_ssize_t start, Py_ssize_t end,
                              int direction) except -2
    Py_ssize_t PyUnicode_FindChar(object s, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end,
                                  int direction) except -2


cdef inline Py_ssize_t _visible_start(str text, Py_ssize_t pos, Py_ssize_t stop):
    """First non-space position in [pos, stop), or stop (fissure.spans.visible_start)."""
    while pos < stop and Py_UNICODE_ISSPACE(text[pos]):
        pos += 1
    return pos


cdef inline Py_ssize_t _visible_end(str text, Py_ssize_t lo, Py_ssize_t hi):
    """End of the last non-space character in [lo, hi), or lo (fissure.spans.visible_end)."""
    while hi > lo and Py_UNICODE_ISSPACE(text[hi - 1]):
        hi -= 1
    return hi


def trim(str text, Py_ssize_t start, Py_ssize_t end):
    """:func:`fissure.spans.trim` as the packer below computes it (for the tests)."""
    if start < 0 or end > len(text):
        raise IndexError(f"span ({start}, {end}) is outside a text of {len(text)}")
    if start < end:
        start = _visible_start(text, start, end)
        end = _visible_end(text, start, end)
    return start, end


cdef class CharPacker:
    cdef str text
    cdef Py_ssize_t n
    cdef Py_ssize_t budget
    cdef list seps
    cdef list cuts
    cdef object start_cut
    cdef object char_cut
    cdef list out
    cdef object piece

    def __init__(self, str text, list seps, list cuts, object start, object char,
                 Py_ssize_t budget, object piece):
        # cuts: the boundary (fissure.ranks.Boundary) of each separator level; start and
        # char: the boundaries in front of the text and of a cut by characters.
        self.text = text
        self.n = len(text)
        self.seps = seps
        self.cuts = cuts
        self.start_cut = start
        self.char_cut = char
        self.budget = budget
        self.piece = piece
        self.out = []

    def run(self):
        """The pieces of the whole text (``Packer.run(Run([0, n], START, START))``)."""
        self.out = []
        if self.n > 0:
            self.pack([0, self.n], self.start_cut, self.start_cut, 0)
        return self.out

    # ------------------------------------------------------------------ text scans

    cdef inline Py_ssize_t visible_from(self, Py_ssize_t pos, Py_ssize_t stop):
        """First non-space position in [pos, stop), or stop."""
        return _visible_start(self.text, pos, stop)

    cdef inline Py_ssize_t visible_end(self, Py_ssize_t lo, Py_ssize_t hi):
        """End of the last non-space character in [lo, hi), or lo."""
        return _visible_end(self.text, lo, hi)

    # ------------------------------------------------------------------ the table

    cdef inline Py_ssize_t t_start(self, list bounds, Py_ssize_t i):
        # LazyTable.start: first visible at or after the part's start, anywhere after it
        cdef Py_ssize_t p = self.visible_from(<Py_ssize_t>bounds[i], self.n)
        return p if p < self.n else self.n + 1

    cdef inline Py_ssize_t t_end(self, list bounds, Py_ssize_t j):
        # LazyTable.end: end of the last visible character of parts 0..j
        cdef Py_ssize_t lo = bounds[0]
        cdef Py_ssize_t e = self.visible_end(lo, <Py_ssize_t>bounds[j + 1])
        return e if e > lo else 0

    cdef inline Py_ssize_t t_size(self, list bounds, Py_ssize_t i, Py_ssize_t j):
        cdef Py_ssize_t s = self.t_start(bounds, i)
        cdef Py_ssize_t e = self.t_end(bounds, j)
        return e - s if s < e else 0

    cdef inline bint t_fits(self, list bounds, Py_ssize_t i, Py_ssize_t j):
        if <Py_ssize_t>bounds[j + 1] - <Py_ssize_t>bounds[i] <= self.budget:
            return True
        return self.t_size(bounds, i, j) <= self.budget

    cdef Py_ssize_t t_sure(self, list bounds, Py_ssize_t i):
        # bisect_right(bounds, bounds[i] + budget, i + 1) - 2
        cdef Py_ssize_t x = <Py_ssize_t>bounds[i] + self.budget
        cdef Py_ssize_t lo = i + 1, hi = len(bounds), mid
        while lo < hi:
            mid = (lo + hi) // 2
            if x < <Py_ssize_t>bounds[mid]:
                hi = mid
            else:
                lo = mid + 1
        return lo - 2

    cdef inline bint span_fits(self, Py_ssize_t a, Py_ssize_t b):
        # Packer.fits: the trimmed span within the budget
        cdef Py_ssize_t s = self.visible_from(a, b)
        cdef Py_ssize_t e = self.visible_end(s, b)
        return e - s <= self.budget

    # ------------------------------------------------------------------ packing

    cdef void emit(self, Py_ssize_t s, Py_ssize_t e, object cut, Py_ssize_t size):
        self.out.append(self.piece(s, e, cut, size))

    cdef void pack(self, list bounds, object lead, object cuts, int depth):
        cdef Py_ssize_t n = len(bounds) - 1
        cdef Py_ssize_t carry = -1, i = 0, j, size, s, e
        while i < n:
            if not self.t_fits(bounds, i, i):
                self.split_part(bounds, lead, cuts, depth, i, carry)
                carry = -1
                i += 1
                continue
            j = self.t_sure(bounds, i)
            if j < i:
                j = i
            while j + 1 < n and self.t_fits(bounds, i, j + 1):
                j += 1
            size = self.t_size(bounds, i, j)
            if j + 1 < n and 0 < 2 * size < self.budget and not self.t_fits(bounds, j + 1, j + 1):
                carry = i
                i = j + 1
                continue
            s = self.t_start(bounds, i)
            e = self.t_end(bounds, j)
            if s < e:
                self.emit(s, e, lead if i == 0 else cuts, size)
            i = j + 1

    cdef void split_part(self, list bounds, object lead, object cuts, int depth,
                         Py_ssize_t k, Py_ssize_t carry):
        cdef Py_ssize_t start = bounds[k], end = bounds[k + 1], first_end, s, e
        cdef object cut = lead if k == 0 else cuts
        cdef object carried
        cdef list child = None
        cdef int d, child_depth = 0
        cdef object child_cuts = None, child_lead = cut
        for d in range(depth, len(self.seps)):
            found = self.find(<str>self.seps[d], start, end)
            if found:
                child = [start]
                child.extend(found)
                child.append(end)
                child_cuts = self.cuts[d]
                child_depth = d + 1
                break
        if carry >= 0:
            carried = lead if carry == 0 else cuts
            first_end = child[1] if child is not None else start
            if child is not None and self.span_fits(<Py_ssize_t>bounds[carry], first_end):
                child[0] = bounds[carry]
                child_lead = carried
            else:
                s = self.visible_from(<Py_ssize_t>bounds[carry], start)
                e = self.visible_end(s, start)
                if s < e:
                    self.emit(s, e, carried, e - s)
        if child is not None:
            self.pack(child, child_lead, child_cuts, child_depth)
        else:
            self.cut_chars(start, end, cut)

    cdef list find(self, str sep, Py_ssize_t start, Py_ssize_t end):
        """Starts of the non-overlapping occurrences of ``sep`` in [start, end), left to
        right (as str.split finds them), without the one at ``start``."""
        cdef list found = []
        cdef Py_ssize_t step = len(sep), p = start
        while True:
            p = PyUnicode_Find(self.text, sep, p, end, 1)
            if p < 0:
                break
            if p > start:
                found.append(p)
            p += step
        return found

    cdef void cut_chars(self, Py_ssize_t start, Py_ssize_t end, object cut):
        cdef Py_ssize_t stop, s, e
        start = self.visible_from(start, end)
        end = self.visible_end(start, end)
        while start < end:
            stop = self.largest_fit(start, end)
            s = self.visible_from(start, stop)
            e = self.visible_end(s, stop)
            if s < e:
                self.emit(s, e, cut, e - s)
            cut = self.char_cut
            start = self.visible_from(stop, end)

    cdef Py_ssize_t largest_fit(self, Py_ssize_t start, Py_ssize_t limit):
        cdef Py_ssize_t lo = start + self.budget, hi, step, mid, e
        if lo > limit:
            lo = limit
        if lo < start:
            lo = start
        hi = lo
        step = lo - start
        if step < 16:
            step = 16
        while hi < limit:
            hi = hi + step
            if hi > limit:
                hi = limit
            if not self.span_fits(start, hi):
                break
            lo = hi
            step *= 2
        else:
            return limit
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.span_fits(start, mid):
                lo = mid
            else:
                hi = mid
        e = lo
        while e > start and not self.grapheme_break(e):
            e -= 1
        return e if e > start else start + 1

    cdef bint grapheme_break(self, Py_ssize_t i):
        # fissure.split.levels.is_grapheme_break
        cdef Py_UCS4 ch, prev
        if i <= 0 or i >= self.n:
            return True
        ch = self.text[i]
        prev = self.text[i - 1]
        if ch == 0x200D or ch == 0xFE0E or ch == 0xFE0F or prev == 0x200D:
            return False
        if prev == 13 and ch == 10:
            return False
        if 0x1F3FB <= ch <= 0x1F3FF:
            return False
        if ch < 0x300:  # no combining mark below U+0300
            return True
        return not unicodedata.category(chr(ch)).startswith("M")


def paragraph_cuts(str text, Py_ssize_t start, Py_ssize_t end):
    """Paragraph starts inside ``(start, end)``: lines with visible text after a blank
    line (``fissure.split.levels._paragraph_cuts``, TextIndex.paragraph_starts)."""
    cdef Py_ssize_t n = len(text), pos = start, p, i, nl
    cdef bint visible, blank_prev = False, crlf
    cdef Py_UCS4 c = 0
    cdef list out = []
    if end > n:
        end = n
    if 0 < pos < n and text[pos - 1] == 13 and text[pos] == 10:
        pos -= 1  # inside a \r\n: back to the line it ends
    while pos > 0 and text[pos - 1] != 10 and text[pos - 1] != 13:
        pos -= 1
    crlf = PyUnicode_FindChar(text, 13, pos, n, 1) >= 0
    p = pos
    while p < end:
        # Is the line at p blank? Usually its first character answers.
        i = p
        visible = False
        while i < n:
            c = text[i]
            if c == 10 or c == 13:
                break
            if not Py_UNICODE_ISSPACE(c):
                visible = True
                break
            i += 1
        if p > start and visible and blank_prev:
            out.append(p)
        if i >= n:
            break
        blank_prev = not visible
        if not crlf:  # jump to the next \n (memchr speed)
            nl = i if c == 10 else PyUnicode_FindChar(text, 10, i, n, 1)
            if nl < 0:
                break
            p = nl + 1
            continue
        while i < n and text[i] != 10 and text[i] != 13:
            i += 1
        if i >= n:
            break
        if text[i] == 13 and i + 1 < n and text[i + 1] == 10:
            i += 2
        else:
            i += 1
        p = i
    return out
