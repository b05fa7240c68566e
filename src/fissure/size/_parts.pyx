# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled twin of :func:`fissure.size.parts.measure_py`: the same lists, without the
interpreter's cost per part. Character classes are CPython's own (``str.isspace``,
``str.isalnum``), so both versions agree on every text; the tests compare them."""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport Py_UNICODE_ISALNUM, Py_UNICODE_ISSPACE

cdef extern from "Python.h":
    Py_ssize_t PyUnicode_FindChar(object s, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end,
                                  int direction) except -2

cdef long long HUGE = 1LL << 40


cdef inline bint _punct(Py_UCS4 c):
    # ASCII punctuation without the apostrophe (fissure.size.textindex.ASCII_PUNCT)
    return c < 128 and c != 39 and (33 <= c <= 47 or 58 <= c <= 64 or 91 <= c <= 96 or 123 <= c <= 126)


cdef bint _strong(str text, Py_ssize_t b, Py_ssize_t n):
    cdef Py_UCS4 prev = text[b - 1]
    cdef Py_UCS4 nxt = text[b]
    cdef Py_UCS4 c
    cdef Py_ssize_t i
    if prev == 10 or prev == 13:
        if prev == 13 and nxt == 10:
            return False
        i = b
        while i < n:
            c = text[i]
            if c == 10 or c == 13:
                return False
            if not Py_UNICODE_ISSPACE(c):
                return True
            i += 1
        return False
    if nxt == 32 or nxt == 9:
        return not Py_UNICODE_ISSPACE(prev)
    return (nxt == 10 or nxt == 13) and Py_UNICODE_ISALNUM(prev)


cdef Py_ssize_t _last_seam(str text, Py_ssize_t start, Py_ssize_t end, Py_ssize_t n, bint fine):
    cdef Py_UCS4 nxt, last
    cdef Py_ssize_t r, tries, line, lo
    if end == n:
        return end
    nxt = text[end]
    last = text[end - 1]
    if nxt == 32 or nxt == 9 or ((nxt == 10 or nxt == 13) and Py_UNICODE_ISALNUM(last)):
        return end
    if fine and _punct(last):
        r = end - 1
        while r > start and _punct(text[r - 1]):
            r -= 1
        if r > start and Py_UNICODE_ISALNUM(text[r - 1]):
            return r
    # The start of the last line (it holds text[end - 1]), or a space after a word on it.
    line = PyUnicode_FindChar(text, 10, start, end - 1, -1) + 1
    if line > 0 and PyUnicode_FindChar(text, 13, line, end, 1) >= 0:
        line = 0
    lo = start if start > line else line
    r = end
    for tries in range(4):
        r -= 1  # text.rfind(" ", lo, r)
        while r >= lo and text[r] != 32:
            r -= 1
        if r <= lo:
            break
        while r > lo and (text[r - 1] == 32 or text[r - 1] == 9):
            r -= 1
        if r > lo and not Py_UNICODE_ISSPACE(text[r - 1]):
            return r
    return line if line > start else -1


cdef Py_ssize_t _seam_after(str text, Py_ssize_t pos, Py_ssize_t end):
    """First whitespace in ``[pos, end)`` that follows a word (see _SEAM_AFTER)."""
    cdef Py_ssize_t i = pos
    cdef Py_UCS4 c, prev
    while i < end:
        c = text[i]
        if c == 10 or c == 13:
            if Py_UNICODE_ISALNUM(text[i - 1]):
                return i
        elif c == 32 or c == 9:
            if not Py_UNICODE_ISSPACE(text[i - 1]):
                return i
        i += 1
    return -1


cdef class _Count:
    """Counters.count and Counters.within, with the cache read and the tokenizer called
    from C (the same numbers; the methods handle what the raw functions refuse)."""
    cdef object count, within, raw_count, raw_within
    cdef dict cache
    cdef Py_ssize_t cached_chars, cache_limit

    def __init__(self, counters):
        (self.count, self.within, self.raw_count, self.raw_within, self.cache,
         self.cached_chars, self.cache_limit) = counters

    cdef object small(self, str t):
        # Sizer.count: cached up to cached_chars, the cache cleared when full
        cdef object n
        if len(t) > self.cached_chars or self.raw_count is None:
            return self.count(t)
        n = self.cache.get(t)
        if n is not None:
            return n
        if not t:
            return 0
        try:
            n = self.raw_count(t)
        except UnicodeEncodeError:
            return self.count(t)
        if len(self.cache) >= self.cache_limit:
            self.cache.clear()
        self.cache[t] = n
        return n

    cdef object bulk(self, str t, long long cap):
        cdef object n
        if self.raw_count is not None:
            try:
                if self.raw_within is not None and len(t) > 4 * cap:
                    return self.raw_within(t, cap)
                n = self.raw_count(t)
                return n if n <= cap else None
            except UnicodeEncodeError:
                pass
        return self.within(t, cap)


cdef long long LAZY = -1


cdef tuple _sizes(str text, Py_ssize_t g0, Py_ssize_t s, Py_ssize_t e, Py_ssize_t g1,
                  long long cap, _Count counter, bint fine, Py_ssize_t n):
    """See fissure.size.parts.sizes (the same five values)."""
    cdef Py_ssize_t z = _last_seam(text, s, e, n, fine)
    cdef Py_ssize_t y
    cdef long long bulk, h_full, h_trim, t_trim, t_full
    if z < 0:
        one = counter.bulk(text[s:e], cap)
        if one is None:
            return (HUGE, HUGE, HUGE, HUGE, -1)
        lead = counter.bulk(text[s:g1], cap)
        tail = counter.bulk(text[g0:e], cap)
        whole = counter.bulk(text[g0:g1], cap)
        return (one, HUGE if lead is None else lead, HUGE if tail is None else tail,
                HUGE if whole is None else whole, -1)
    t_trim = counter.small(text[z:e]) if z < e else 0
    t_full = counter.small(text[z:g1]) if z < g1 else 0
    if s == g0:
        found = counter.bulk(text[s:z], cap)
        if found is None:
            return (HUGE, HUGE, HUGE, HUGE, -1)
        bulk = found
        return (bulk + t_trim, bulk + t_full, bulk + t_trim, bulk + t_full, -1)
    found = counter.bulk(text[g0:z], cap)
    if found is not None:
        bulk = found
        return (LAZY, LAZY, bulk + t_trim, bulk + t_full, z)
    y = _seam_after(text, s + 1, z)
    if y < 0:
        y = z
    found = counter.bulk(text[y:z], cap)
    if found is None:
        return (HUGE, HUGE, HUGE, HUGE, -1)
    bulk = found
    h_full = counter.small(text[g0:y]) if g0 < y else 0
    h_trim = counter.small(text[s:y]) if s < y else 0
    return (h_trim + bulk + t_trim, h_trim + bulk + t_full,
            h_full + bulk + t_trim, h_full + bulk + t_full, -1)


cdef long long _head_delta(str text, Py_ssize_t g0, Py_ssize_t s, Py_ssize_t z,
                           _Count counter) except? -9:
    """See fissure.size.parts.head_delta."""
    cdef Py_ssize_t y = _seam_after(text, s + 1, z)
    cdef long long a = 0, b = 0
    if y < 0:
        y = z
    if s < y:
        a = counter.small(text[s:y])
    if g0 < y:
        b = counter.small(text[g0:y])
    return a - b


cdef void _pad(Py_ssize_t m, list one, list lead, list tail, list g0s, list zs):
    """Sizes of parts without visible text, up to part ``m``."""
    while len(one) < m:
        one.append(0)
        lead.append(0)
        tail.append(0)
        g0s.append(0)
        zs.append(-1)


def measure(str text, list bounds, long long cap, object counters, bint fine):
    """See :func:`fissure.size.parts.measure_py`."""
    cdef Py_ssize_t n = len(bounds) - 1
    cdef Py_ssize_t tn = len(text)
    cdef Py_ssize_t k, a, b, s, e, g0, owner, ngroups
    acc = 0  # a Python int: a sum of many HUGE sizes must not overflow
    cdef list starts = [], ends = [], group = [], one = [], lead = [], tail = [], whole = [0]
    cdef list g0s = [], zs = []
    cdef tuple got
    cdef _Count counter = _Count(counters)
    g0 = bounds[0]
    owner = -1
    ngroups = 0
    for k in range(n):
        a = bounds[k]
        b = bounds[k + 1]
        s = a
        while s < b and Py_UNICODE_ISSPACE(text[s]):
            s += 1
        e = -1
        if s < b:
            if owner >= 0:
                return None
            owner = k
            e = b
            while e > s and Py_UNICODE_ISSPACE(text[e - 1]):
                e -= 1
        else:
            s = -1
        starts.append(s)
        ends.append(e)
        group.append(ngroups)
        if k + 1 < n and not _strong(text, b, tn):
            continue
        if owner < 0:
            acc += counter.small(text[g0:b])
        else:
            got = _sizes(text, g0, starts[owner], ends[owner], b, cap, counter, fine, tn)
            _pad(owner, one, lead, tail, g0s, zs)  # parts without visible text before it
            one.append(got[0])
            lead.append(got[1])
            tail.append(got[2])
            g0s.append(g0)
            zs.append(got[4])
            acc += got[3]
        whole.append(acc)
        ngroups += 1
        g0 = b
        owner = -1
    _pad(n, one, lead, tail, g0s, zs)
    return starts, ends, group, one, lead, tail, whole, g0s, zs



cdef class PartTable:
    """Compiled twin of :class:`fissure.size.ruler.PartTable` (same answers, C arrays).

    A group's size over the cap is kept as a count of such groups, not summed, so no
    run of parts can overflow."""

    cdef object ruler
    cdef str text
    cdef _Count counter
    cdef Py_ssize_t n
    cdef Py_ssize_t *g0s
    cdef Py_ssize_t *zs
    cdef Py_ssize_t *starts
    cdef Py_ssize_t *ends
    cdef Py_ssize_t *nxt
    cdef Py_ssize_t *prv
    cdef Py_ssize_t *group
    cdef long long *one
    cdef long long *lead
    cdef long long *tail
    cdef long long *wsum
    cdef Py_ssize_t *wbig

    def __dealloc__(self):
        PyMem_Free(self.starts)
        PyMem_Free(self.ends)
        PyMem_Free(self.nxt)
        PyMem_Free(self.prv)
        PyMem_Free(self.group)
        PyMem_Free(self.one)
        PyMem_Free(self.lead)
        PyMem_Free(self.tail)
        PyMem_Free(self.wsum)
        PyMem_Free(self.wbig)
        PyMem_Free(self.g0s)
        PyMem_Free(self.zs)

    @staticmethod
    def build(ruler, list bounds, long long cap, counters, bint fine):
        """The table, or ``None`` where two visible parts share a group."""
        got = measure(ruler.text, bounds, cap, counters, fine)
        if got is None:
            return None
        cdef list starts = got[0], ends = got[1], group = got[2], one = got[3]
        cdef list lead = got[4], tail = got[5], whole = got[6], g0s = got[7], zs = got[8]
        cdef Py_ssize_t n = len(bounds) - 1, ngroups = len(whole) - 1, k, last
        cdef Py_ssize_t beyond = len(ruler.text) + 1
        cdef PartTable t = PartTable.__new__(PartTable)
        t.ruler = ruler
        t.text = ruler.text
        t.counter = _Count(counters)
        t.n = n
        t.g0s = <Py_ssize_t *>PyMem_Malloc((n + 1) * sizeof(Py_ssize_t))
        t.zs = <Py_ssize_t *>PyMem_Malloc((n + 1) * sizeof(Py_ssize_t))
        t.starts = <Py_ssize_t *>PyMem_Malloc((n + 1) * sizeof(Py_ssize_t))
        t.ends = <Py_ssize_t *>PyMem_Malloc((n + 1) * sizeof(Py_ssize_t))
        t.nxt = <Py_ssize_t *>PyMem_Malloc((n + 1) * sizeof(Py_ssize_t))
        t.prv = <Py_ssize_t *>PyMem_Malloc((n + 1) * sizeof(Py_ssize_t))
        t.group = <Py_ssize_t *>PyMem_Malloc((n + 1) * sizeof(Py_ssize_t))
        t.one = <long long *>PyMem_Malloc((n + 1) * sizeof(long long))
        t.lead = <long long *>PyMem_Malloc((n + 1) * sizeof(long long))
        t.tail = <long long *>PyMem_Malloc((n + 1) * sizeof(long long))
        t.wsum = <long long *>PyMem_Malloc((ngroups + 1) * sizeof(long long))
        t.wbig = <Py_ssize_t *>PyMem_Malloc((ngroups + 1) * sizeof(Py_ssize_t))
        if (not t.starts or not t.ends or not t.nxt or not t.prv or not t.group or not t.one
                or not t.lead or not t.tail or not t.wsum or not t.wbig or not t.g0s
                or not t.zs):
            raise MemoryError()
        for k in range(n):
            t.group[k] = group[k]
            t.one[k] = one[k]
            t.lead[k] = lead[k]
            t.tail[k] = tail[k]
            t.g0s[k] = g0s[k]
            t.zs[k] = zs[k]
        t.wsum[0] = 0
        t.wbig[0] = 0
        for k in range(ngroups):
            size = whole[k + 1] - whole[k]
            if size >= HUGE:
                t.wsum[k + 1] = t.wsum[k]
                t.wbig[k + 1] = t.wbig[k] + 1
            else:
                t.wsum[k + 1] = t.wsum[k] + <long long>size
                t.wbig[k + 1] = t.wbig[k]
        # Parts without visible text borrow the nearest visible part's ends (SpanTable).
        t.nxt[n] = n
        for k in range(n - 1, -1, -1):
            t.nxt[k] = k if <Py_ssize_t>starts[k] >= 0 else t.nxt[k + 1]
        last = -1
        for k in range(n):
            if <Py_ssize_t>starts[k] >= 0:
                last = k
            t.prv[k] = last
        for k in range(n):
            t.starts[k] = <Py_ssize_t>starts[t.nxt[k]] if t.nxt[k] < n else beyond
            t.ends[k] = <Py_ssize_t>ends[t.prv[k]] if t.prv[k] >= 0 else 0
        return t

    cpdef Py_ssize_t start(self, Py_ssize_t i):
        """First visible position at or after part ``i``'s start."""
        return self.starts[i]

    cpdef Py_ssize_t end(self, Py_ssize_t j):
        """End of the last visible character before part ``j``'s end."""
        return self.ends[j]

    cdef int _resolve(self, Py_ssize_t k) except -1:
        # a LAZY one/lead: the tail and whole plus what the first word changes
        cdef long long delta
        cdef Py_ssize_t g
        if self.one[k] == LAZY:
            delta = _head_delta(self.text, self.g0s[k], self.starts[k], self.zs[k],
                                self.counter)
            g = self.group[k]
            self.one[k] = self.tail[k] + delta
            self.lead[k] = self.wsum[g + 1] - self.wsum[g] + delta
        return 0

    cdef inline long long _raw(self, Py_ssize_t i, Py_ssize_t j) except? -9:
        cdef Py_ssize_t i2 = self.nxt[i], j2 = self.prv[j], gi, gj
        if i2 > j2:
            return 0
        self._resolve(i2)
        if i2 == j2:
            return self.one[i2]
        gi = self.group[i2] + 1
        gj = self.group[j2]
        if self.wbig[gj] - self.wbig[gi] > 0:
            return HUGE
        return self.lead[i2] + self.wsum[gj] - self.wsum[gi] + self.tail[j2]

    cpdef bint fits(self, Py_ssize_t i, Py_ssize_t j, long long budget) except -1:
        """Whether the trimmed run of parts ``i..j`` fits ``budget`` (at most the cap)."""
        return self._raw(i, j) <= budget

    cpdef object size(self, Py_ssize_t i, Py_ssize_t j):
        """Size of the trimmed run of parts ``i..j`` (inclusive)."""
        cdef long long got = self._raw(i, j)
        if got >= HUGE:
            return self.ruler.count(self.starts[i], self.ends[j])
        return got

    cpdef Py_ssize_t sure(self, Py_ssize_t i, long long budget) except? -9:
        """The packer's greedy extension from part ``i`` (see the Python twin)."""
        cdef Py_ssize_t n = self.n, i2 = self.nxt[i], j, k, gi, gk
        cdef long long base
        if i2 >= n:
            return n - 1
        self._resolve(i2)
        if self.one[i2] > budget:
            return i2 - 1
        gi = self.group[i2] + 1
        base = self.lead[i2] - self.wsum[gi]
        j = i2
        while j + 1 < n:
            k = self.prv[j + 1]
            if k != i2:
                gk = self.group[k]
                if self.wbig[gk] - self.wbig[gi] > 0 or base + self.wsum[gk] + self.tail[k] > budget:
                    break
            j += 1
        return j


cdef class CharTable:
    """Twin of :class:`fissure.size.ruler.LazyTable` for the character sizer: the same
    answers (sizes are trimmed lengths), each end trimmed once when first asked for, in C.

    The packer asks ``fits`` and ``sure`` for every part it considers; a Python method
    call each was most of the cost of packing a Markdown tree by characters.
    """

    cdef readonly object ruler
    cdef readonly list bounds
    cdef str text
    cdef Py_ssize_t n
    cdef list _starts
    cdef list _ends

    def __init__(self, ruler, list bounds):
        self.ruler = ruler
        self.bounds = bounds
        self.text = ruler.text
        self.n = len(self.text)
        self._starts = [None] * len(bounds)
        self._ends = [None] * len(bounds)

    cdef inline void _check(self, Py_ssize_t k) except *:
        if k < 0 or k >= len(self.bounds):
            raise IndexError(f"part {k} of a table of {len(self.bounds) - 1}")

    cpdef Py_ssize_t start(self, Py_ssize_t i):
        self._check(i)
        cdef object got = self._starts[i]
        cdef Py_ssize_t p, stop
        if got is not None:
            return <Py_ssize_t>got
        p = <Py_ssize_t>self.bounds[i]
        stop = self.n
        while p < stop and Py_UNICODE_ISSPACE(self.text[p]):  # fissure.spans.visible_start
            p += 1
        if p >= stop:
            p = stop + 1
        self._starts[i] = p
        return p

    cpdef Py_ssize_t end(self, Py_ssize_t j):
        self._check(j + 1)
        cdef object got = self._ends[j + 1]
        cdef Py_ssize_t first, e
        if got is not None:
            return <Py_ssize_t>got
        first = <Py_ssize_t>self.bounds[0]
        e = <Py_ssize_t>self.bounds[j + 1]
        while e > first and Py_UNICODE_ISSPACE(self.text[e - 1]):  # visible_end
            e -= 1
        if e <= first:
            e = 0
        self._ends[j + 1] = e
        return e

    cpdef Py_ssize_t size(self, Py_ssize_t i, Py_ssize_t j):
        cdef Py_ssize_t s = self.start(i)
        cdef Py_ssize_t e = self.end(j)
        return e - s if s < e else 0

    cpdef bint fits(self, Py_ssize_t i, Py_ssize_t j, Py_ssize_t budget):
        self._check(i)
        self._check(j + 1)
        if <Py_ssize_t>self.bounds[j + 1] - <Py_ssize_t>self.bounds[i] <= budget:
            return True
        return self.size(i, j) <= budget

    cpdef Py_ssize_t sure(self, Py_ssize_t i, Py_ssize_t budget):
        # bisect_right(bounds, bounds[i] + budget, i + 1) - 2
        self._check(i)
        cdef list bounds = self.bounds
        cdef Py_ssize_t x = <Py_ssize_t>bounds[i] + budget
        cdef Py_ssize_t lo = i + 1
        cdef Py_ssize_t hi = len(bounds)
        cdef Py_ssize_t mid
        while lo < hi:
            mid = (lo + hi) >> 1
            if x < <Py_ssize_t>bounds[mid]:
                hi = mid
            else:
                lo = mid + 1
        return lo - 2
