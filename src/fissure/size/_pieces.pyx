# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Exact token counts from cached sizes of the pieces a tokenizer never merges across.

``PieceCounter`` counts cl100k_base and o200k_base (below); ``WordCounter`` counts BERT
WordPiece (MiniLM) over the runs of text between spaces, tabs and line breaks.

A BPE encoding splits text into pre-tokens with a regular expression and byte-pair merges
each pre-token on its own, so the count of a text is the sum of the counts of its
pre-tokens. Text repeats at the level of pre-tokens (` self`, `    `, `(`, ` the`): a
12 MB corpus of Python has 2.75 million of them but only 64 thousand distinct ones. This
module scans an encoding's pre-tokens in C and looks each one up in a hash table of sizes.
A pre-token not seen before is sized on its own: by the real tokenizer (bpe-openai), or,
once a counter has met enough new ones to pay for loading the merge ranks, by merging its
bytes here (:class:`Ranks`; short pre-tokens only, where that is faster).

cl100k_base's pattern, rule by rule, as the scanner follows it (leftmost alternative wins):

1. ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``
2. ``[^\\r\\n\\p{L}\\p{N}]?\\p{L}+``
3. ``\\p{N}{1,3}``
4. `` ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*``
5. ``\\s*[\\r\\n]+``
6. ``\\s+(?!\\S)``
7. ``\\s+``

(o200k_base's pattern is further down.) Characters are classed as letters (``L*``; for
o200k_base by case, with marks), numbers (``N*``), ``\\r``/``\\n``, other white space
(the Unicode ``White_Space`` property) and the rest, from Python's ``unicodedata``.
A text holding a character that class may not settle (unassigned in this Python's Unicode
version, where the tokenizer's may be newer, or a lone surrogate) is handed whole to the
tokenizer, so every answer is the tokenizer's own.
"""

from cpython.unicode cimport (
    PyUnicode_AsUTF8AndSize,
    PyUnicode_DATA,
    PyUnicode_DecodeASCII,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
    PyUnicode_READ,
    PyUnicode_Substring,
)
cdef extern from "Python.h":
    Py_UCS4 PyUnicode_MAX_CHAR_VALUE(object o)

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy

import unicodedata

import numpy

cdef enum:
    UNKNOWN = 0  # not classed yet
    LETTER = 1
    NUMBER = 2
    NEWLINE = 3  # \r and \n
    SPACE = 4  # any other White_Space
    OTHER = 5
    UNSURE = 6  # unassigned or surrogate: leave the text to the tokenizer

cdef enum:  # finer classes, for o200k_base's letter cases (FINE)
    UPPER = 1  # Lu, Lt
    LOWER = 2  # Ll
    CASELESS = 3  # Lm, Lo
    MARK = 4  # Mn, Mc, Me
    F_NUMBER = 5
    F_NEWLINE = 6
    F_SPACE = 7
    F_OTHER = 8

cdef unsigned char *CLASSES = <unsigned char *>calloc(0x110000, 1)
cdef unsigned char *FINE = <unsigned char *>calloc(0x110000, 1)
if CLASSES == NULL or FINE == NULL:
    raise MemoryError()

# The White_Space property (it has not changed since Unicode 6.3).
WHITE_SPACE = frozenset(
    [0x09, 0x0B, 0x0C, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
     0x202F, 0x205F, 0x3000]
)


FINE_CLASSES = {"Lu": UPPER, "Lt": UPPER, "Ll": LOWER, "Lm": CASELESS, "Lo": CASELESS,
                "Mn": MARK, "Mc": MARK, "Me": MARK}


cdef unsigned char _classify(unsigned int c):
    """Class ``c`` in both tables; its class in CLASSES."""
    if c == 10 or c == 13:
        FINE[c] = F_NEWLINE
        return NEWLINE
    if c in WHITE_SPACE:
        FINE[c] = F_SPACE
        return SPACE
    category = unicodedata.category(chr(c))
    if category in ("Cn", "Cs"):
        return UNSURE
    if category[0] == "N":
        FINE[c] = F_NUMBER
        return NUMBER
    FINE[c] = FINE_CLASSES.get(category, F_OTHER)
    return LETTER if category[0] == "L" else OTHER


cdef inline unsigned char klass(Py_UCS4 c):
    cdef unsigned char k = CLASSES[c]
    if k == UNKNOWN:
        k = _classify(c)
        CLASSES[c] = k
    return k


cdef Py_ssize_t _i
for _i in range(256):  # every Latin-1 character is assigned: 1-byte text is always settled
    klass(<Py_UCS4>_i)


cdef int _settled(int kind, void *data, Py_ssize_t end) except -1:
    """Whether every character of the text is classed for sure, classing each new one
    (1-byte text always is: Latin-1 is classed at import)."""
    cdef Py_ssize_t i
    if kind != 1:
        for i in range(end):
            if klass(PyUnicode_READ(kind, data, i)) == UNSURE:
                return False
    return True


cdef inline bint _is(unsigned int c, unsigned int lower) noexcept:
    return c == lower or c == lower - 32


cdef inline Py_ssize_t _contraction(int kind, void *data, Py_ssize_t i,
                                    Py_ssize_t end) noexcept:
    """The end of ``(?i:'s|'t|'re|'ve|'m|'ll|'d)`` at ``i`` ('ſ' folds to 's'), or ``i``."""
    cdef Py_UCS4 c1, c2
    if i + 1 >= end or PyUnicode_READ(kind, data, i) != 39:
        return i
    c1 = PyUnicode_READ(kind, data, i + 1)
    if _is(c1, 115) or c1 == 0x17F or _is(c1, 116) or _is(c1, 109) or _is(c1, 100):
        return i + 2
    if i + 2 < end:
        c2 = PyUnicode_READ(kind, data, i + 2)
        if (_is(c1, 114) or _is(c1, 118)) and _is(c2, 101):
            return i + 3
        if _is(c1, 108) and _is(c2, 108):
            return i + 3
    return i


cdef inline Py_ssize_t _space_end(int kind, void *data, Py_ssize_t i,
                                  Py_ssize_t end) noexcept:
    """``\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`` at ``i``: up to the last newline of the white space;
    else all of it but the last character before something visible; else one character."""
    cdef Py_ssize_t j = i, last = -1
    cdef unsigned char k
    while j < end:
        k = CLASSES[PyUnicode_READ(kind, data, j)]
        if k == NEWLINE:
            last = j
        elif k != SPACE:
            break
        j += 1
    if last >= 0:
        return last + 1
    if j == end:
        return j
    if j - i >= 2:
        return j - 1
    return i + 1


cdef inline Py_ssize_t _numbers_end(int kind, void *data, Py_ssize_t i,
                                    Py_ssize_t end) noexcept:
    """``\\p{N}{1,3}`` at ``i``, where a number is."""
    cdef Py_ssize_t j = i + 1
    while j < end and j < i + 3 and CLASSES[PyUnicode_READ(kind, data, j)] == NUMBER:
        j += 1
    return j


cdef inline Py_ssize_t _symbols_end(int kind, void *data, Py_ssize_t i, Py_ssize_t end,
                                    bint slashes) noexcept:
    """`` ?[^\\s\\p{L}\\p{N}]+`` (punctuation, symbols, controls, marks) at ``i``, then any
    ``\\r``/``\\n`` (and ``/`` with ``slashes``); or -1."""
    cdef Py_ssize_t j = i
    cdef Py_UCS4 c
    if (PyUnicode_READ(kind, data, i) == 32 and i + 1 < end
            and CLASSES[PyUnicode_READ(kind, data, i + 1)] == OTHER):
        j = i + 1
    if CLASSES[PyUnicode_READ(kind, data, j)] != OTHER:
        return -1
    j += 1
    while j < end and CLASSES[PyUnicode_READ(kind, data, j)] == OTHER:
        j += 1
    while j < end:
        c = PyUnicode_READ(kind, data, j)
        if c != 10 and c != 13 and not (slashes and c == 47):
            break
        j += 1
    return j


cdef inline Py_ssize_t _rest_end(int kind, void *data, Py_ssize_t i, Py_ssize_t end,
                                 bint slashes) noexcept:
    """Rules 3 to 7, the same in both patterns but for the slashes after punctuation: one
    to three numbers; punctuation and symbols after at most one space, then newlines (and
    slashes); white space."""
    cdef Py_ssize_t j
    if CLASSES[PyUnicode_READ(kind, data, i)] == NUMBER:
        return _numbers_end(kind, data, i, end)
    j = _symbols_end(kind, data, i, end, slashes)
    if j >= 0:
        return j
    return _space_end(kind, data, i, end)


cdef Py_ssize_t piece_end(int kind, void *data, Py_ssize_t i, Py_ssize_t end) noexcept:
    """Where the pre-token starting at ``i`` ends (``end`` acting as the end of text)."""
    cdef Py_UCS4 c = PyUnicode_READ(kind, data, i)
    cdef unsigned char k = CLASSES[c]
    cdef Py_ssize_t j
    # 1. contractions, case-insensitive
    j = _contraction(kind, data, i, end)
    if j > i:
        return j
    # 2. letters, after at most one character that is not a newline, letter or number
    if k == LETTER or ((k == SPACE or k == OTHER) and i + 1 < end
                       and CLASSES[PyUnicode_READ(kind, data, i + 1)] == LETTER):
        j = i + 1
        while j < end and CLASSES[PyUnicode_READ(kind, data, j)] == LETTER:
            j += 1
        return j
    return _rest_end(kind, data, i, end, False)


# o200k_base's pattern (leftmost alternative wins):
#
# 1. [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
# 2. [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
# 3. \p{N}{1,3}
# 4.  ?[^\s\p{L}\p{N}]+[\r\n/]*
# 5.-7. as cl100k_base
#
# "Upper" below is the first letter class (Lu Lt Lm Lo M), "lower" the second (Ll Lm Lo M);
# caseless letters and marks are both. Rules 3 to 7 read CLASSES, as cl100k_base's do
# (there NUMBER is FINE's F_NUMBER and OTHER is F_OTHER with MARK).

cdef inline bint _upper(unsigned char f) noexcept:
    return f == UPPER or f == CASELESS or f == MARK


cdef inline bint _lower(unsigned char f) noexcept:
    return f == LOWER or f == CASELESS or f == MARK


cdef Py_ssize_t _upper_then_lower(int kind, void *data, Py_ssize_t s,
                                  Py_ssize_t end) noexcept:
    """Rule 1 after its prefix: upper* then lower+ (the upper run given back one character
    at a time until a lower one follows, as a backtracking matcher does), or -1."""
    cdef Py_ssize_t k = s, u, j
    while k < end and _upper(FINE[PyUnicode_READ(kind, data, k)]):
        k += 1
    u = k
    while u >= s:
        if u < end and _lower(FINE[PyUnicode_READ(kind, data, u)]):
            j = u + 1
            while j < end and _lower(FINE[PyUnicode_READ(kind, data, j)]):
                j += 1
            return _contraction(kind, data, j, end)
        u -= 1
    return -1


cdef Py_ssize_t _upper_and_lower(int kind, void *data, Py_ssize_t s,
                                 Py_ssize_t end) noexcept:
    """Rule 2 after its prefix: upper+ then lower*, or -1."""
    cdef Py_ssize_t k = s, j
    while k < end and _upper(FINE[PyUnicode_READ(kind, data, k)]):
        k += 1
    if k == s:
        return -1
    j = k
    while j < end and _lower(FINE[PyUnicode_READ(kind, data, j)]):
        j += 1
    return _contraction(kind, data, j, end)


ctypedef Py_ssize_t (*Rule)(int, void *, Py_ssize_t, Py_ssize_t) noexcept


cdef inline Py_ssize_t _letters(Rule rule, int kind, void *data, Py_ssize_t i, Py_ssize_t end,
                                bint prefix) noexcept:
    """A letter rule with its optional first character taken where it can be, else
    without it (a backtracking matcher's order), or -1."""
    cdef Py_ssize_t j
    if prefix:
        j = rule(kind, data, i + 1, end)
        if j >= 0:
            return j
    return rule(kind, data, i, end)


cdef Py_ssize_t o200k_end(int kind, void *data, Py_ssize_t i, Py_ssize_t end) noexcept:
    """Where o200k_base's pre-token starting at ``i`` ends (``end`` acting as the end of
    text)."""
    cdef Py_UCS4 c = PyUnicode_READ(kind, data, i)
    cdef unsigned char f = FINE[c]
    # the optional first character: not a newline, letter or number
    cdef bint prefix = (f == F_SPACE or f == F_OTHER or f == MARK) and i + 1 < end
    cdef Py_ssize_t j = _letters(_upper_then_lower, kind, data, i, end, prefix)  # 1.
    if j >= 0:
        return j
    j = _letters(_upper_and_lower, kind, data, i, end, prefix)  # 2.
    if j >= 0:
        return j
    return _rest_end(kind, data, i, end, True)


cdef enum:
    NARROW = 64  # pre-tokens up to this long are keyed as 1-byte text when they can be
    # Pre-tokens up to this many UTF-8 bytes are merged here; the tokenizer is faster on
    # longer ones (measured on the prose corpus: 0.4 against 0.8 us at 4-7 bytes, even at
    # 12-15, 2.3 against 1.3 us at 20-23).
    MERGED = 12
    KEPT = 256  # longest key a map keeps, in bytes: longer pre-tokens are counted each time

cdef long long NONE = -1  # not in a map; no merge
MERGED_BYTES = MERGED


cdef struct Entry:
    uint64_t hash  # 0: empty slot
    uint64_t key  # a key of up to 8 bytes itself (zero-padded), else its offset in the arena
    int32_t value
    uint16_t size  # key bytes (at most KEPT)
    uint8_t kind  # bytes per character of the key (0: raw bytes)


cdef inline uint64_t _word(const unsigned char *p, Py_ssize_t n) noexcept:
    """Up to 8 bytes as one zero-padded word."""
    cdef uint64_t w = 0
    memcpy(&w, p, n)
    return w


cdef inline uint64_t _mix(uint64_t h) noexcept:
    h ^= h >> 33
    h *= 0xFF51AFD7ED558CCDULL
    h ^= h >> 33
    h *= 0xC4CEB9FE1A85EC53ULL
    return h ^ (h >> 33)


cdef inline uint64_t _hash(const unsigned char *p, Py_ssize_t n, int kind) noexcept:
    cdef uint64_t h = (<uint64_t>n << 8 | <uint64_t>kind) * 0x9E3779B97F4A7C15ULL
    while n > 8:
        h = _mix(h ^ _word(p, 8))
        p += 8
        n -= 8
    return _mix(h ^ _word(p, n)) | 1


cdef class _Map:
    """A hash map from byte strings of at most ``KEPT`` bytes (tagged with a kind) to
    non-negative numbers, in C."""

    cdef Entry *table
    cdef Py_ssize_t slots, used, first_slots
    cdef unsigned char *arena
    cdef Py_ssize_t arena_used, arena_size

    def __cinit__(self, Py_ssize_t slots=1 << 12):
        self.first_slots = slots
        self.clear()

    def __dealloc__(self):
        free(self.table)
        free(self.arena)

    cdef void clear(self) except *:
        free(self.table)
        free(self.arena)
        self.slots = self.first_slots
        self.used = 0
        self.table = <Entry *>calloc(self.slots, sizeof(Entry))
        self.arena_size = 1 << 16
        self.arena_used = 0
        self.arena = <unsigned char *>malloc(self.arena_size)
        if self.table == NULL or self.arena == NULL:
            raise MemoryError()

    cdef inline Entry *slot(self, const unsigned char *key, Py_ssize_t size, int kind,
                            uint64_t h) noexcept:
        """The entry holding the key, or the empty slot where it would go."""
        cdef Py_ssize_t s = h & (self.slots - 1)
        cdef Entry *e
        cdef uint64_t short = _word(key, size) if size <= 8 else 0
        while True:
            e = &self.table[s]
            if e.hash == 0:
                return e
            if e.hash == h and e.size == size and e.kind == kind:
                if size <= 8:
                    if e.key == short:
                        return e
                elif memcmp(self.arena + e.key, key, size) == 0:
                    return e
            s = (s + 1) & (self.slots - 1)

    cdef inline long long get(self, const unsigned char *key, Py_ssize_t size,
                              int kind) noexcept:
        cdef Entry *e = self.slot(key, size, kind, _hash(key, size, kind))
        return e.value if e.hash else NONE

    cdef void put(self, const unsigned char *key, Py_ssize_t size, int kind,
                  long long value) except *:
        cdef uint64_t h = _hash(key, size, kind)
        cdef Entry *e
        cdef unsigned char *grown
        if 2 * (self.used + 1) > self.slots:
            self._grow()
        e = self.slot(key, size, kind, h)
        if e.hash:
            e.value = value
            return
        if size <= 8:
            e.key = _word(key, size)
        else:
            if self.arena_used + size > self.arena_size:
                while self.arena_used + size > self.arena_size:
                    self.arena_size *= 2
                grown = <unsigned char *>realloc(self.arena, self.arena_size)
                if grown == NULL:
                    raise MemoryError()
                self.arena = grown
            memcpy(self.arena + self.arena_used, key, size)
            e.key = self.arena_used
            self.arena_used += size
        e.hash = h
        e.size = size
        e.kind = kind
        e.value = value
        self.used += 1

    cdef void _grow(self) except *:
        cdef Py_ssize_t old_slots = self.slots, t, s
        cdef Entry *old = self.table
        cdef Entry *new = <Entry *>calloc(old_slots * 2, sizeof(Entry))
        if new == NULL:
            raise MemoryError()
        self.slots = old_slots * 2
        for t in range(old_slots):
            if old[t].hash:
                s = old[t].hash & (self.slots - 1)
                while new[s].hash:
                    s = (s + 1) & (self.slots - 1)
                new[s] = old[t]
        self.table = new
        free(old)


cdef class Ranks:
    """A BPE encoding's merge ranks, for counting the tokens of one pre-token in C.

    Args:
        tokens: The bytes of every mergeable token, its rank being its index (as
            ``Encoding.token_byte_values()`` lists them); empty entries are skipped.
        skip: Ranks that are not mergeable (special tokens).
    """

    cdef _Map map
    cdef int32_t pairs[65536]  # rank of every 2-byte token, by its bytes; NONE if none
    cdef bint every_byte  # whether every single byte is a token (BPE's starting point)

    def __cinit__(self, list tokens, skip=()):
        cdef bytes b
        cdef Py_ssize_t rank, t
        cdef const unsigned char *p
        cdef unsigned char one
        self.map = _Map(1 << 18)
        for t in range(65536):
            self.pairs[t] = NONE
        skipped = frozenset(skip)
        for rank in range(len(tokens)):
            b = tokens[rank]
            if b and len(b) <= KEPT and rank not in skipped:  # cl100k's longest is 128 bytes
                p = <const unsigned char *>b
                self.map.put(p, len(b), 0, rank)
                if len(b) == 2:
                    self.pairs[p[0] << 8 | p[1]] = rank
        self.every_byte = True
        for t in range(256):
            one = <unsigned char>t
            self.every_byte = self.every_byte and self.map.get(&one, 1, 0) != NONE

    cdef long long count(self, const unsigned char *b, Py_ssize_t n) noexcept:
        """Tokens of the pre-token ``b[:n]`` (``n <= MERGED``): lowest-ranked adjacent pair
        merged first, leftmost on ties, until no adjacent pair is a token; -1 when a single
        byte is not a token (then the tokenizer decides)."""
        cdef Py_ssize_t starts[MERGED + 1]  # part t is b[starts[t]:starts[t + 1]]
        cdef long long rank[MERGED]  # rank of part t joined with part t + 1, or NONE
        cdef Py_ssize_t parts = n, t, best
        cdef long long low
        if n == 0:
            return 0
        if not self.every_byte:
            return NONE
        if n == 1 or self.map.get(b, n, 0) != NONE:
            return 1
        for t in range(n - 1):
            starts[t] = t
            rank[t] = self.pairs[b[t] << 8 | b[t + 1]]
        starts[n - 1] = n - 1
        starts[n] = n
        while True:
            best = -1
            low = NONE
            for t in range(parts - 1):
                if rank[t] != NONE and (low == NONE or rank[t] < low):
                    low = rank[t]
                    best = t
            if best < 0:
                return parts
            # join parts best and best + 1
            for t in range(best + 1, parts):
                starts[t] = starts[t + 1]
            for t in range(best + 1, parts - 1):
                rank[t] = rank[t + 1]
            parts -= 1
            rank[best] = self._joined(b, starts, best, parts)
            if best > 0:
                rank[best - 1] = self._joined(b, starts, best - 1, parts)

    cdef inline long long _joined(self, const unsigned char *b, Py_ssize_t *starts,
                                  Py_ssize_t t, Py_ssize_t parts) noexcept:
        """Rank of part ``t`` joined with part ``t + 1``, or NONE."""
        cdef Py_ssize_t size
        if t + 1 >= parts:
            return NONE
        size = starts[t + 2] - starts[t]
        if size == 2:
            return self.pairs[b[starts[t]] << 8 | b[starts[t] + 1]]
        return self.map.get(b + starts[t], size, 0)

    def count_bytes(self, bytes b):
        """Tokens of one pre-token's UTF-8 bytes (for tests); ``None`` where this cannot
        say (too long, or a byte that is not a token)."""
        if len(b) > MERGED:
            return None
        cdef long long n = self.count(<const unsigned char *>b, len(b))
        return None if n == NONE else n


cdef class _Cached:
    """Sizes of pieces of text, cached by their characters in a C hash map; a piece not
    seen before is sized by ``_new``."""

    cdef object _count
    cdef _Map sizes
    cdef Py_ssize_t max_entries

    def __cinit__(self, *args, **kwargs):
        self.sizes = _Map(1 << 15)
        self.max_entries = 1 << 18

    cdef long long _new(self, str piece) except -1:
        return self._count(piece)

    cdef long long _piece(self, str text, int kind, void *data, Py_ssize_t i,
                          Py_ssize_t j) except -1:
        cdef const unsigned char *key = <const unsigned char *>data + i * kind
        cdef Py_ssize_t size = (j - i) * kind, t
        cdef unsigned char narrow[NARROW]
        cdef Py_UCS4 c
        cdef long long n
        if kind != 1 and j - i <= NARROW:
            # the same piece in a 1-byte text: one entry for both
            for t in range(j - i):
                c = PyUnicode_READ(kind, data, i + t)
                if c > 255:
                    break
                narrow[t] = <unsigned char>c
            else:
                key = narrow
                size = j - i
                kind = 1
        n = self.sizes.get(key, size, kind)
        if n != NONE:
            return n
        n = self._new(PyUnicode_Substring(text, i, j))
        if size <= KEPT:
            if self.sizes.used >= self.max_entries:
                self.sizes.clear()
            self.sizes.put(key, size, kind, n)
        return n

    @property
    def size(self):
        """Distinct pieces cached."""
        return self.sizes.used


cdef inline bint _breaks(Py_UCS4 c) noexcept:
    return c == 32 or c == 9 or c == 10 or c == 13


cdef class WordCounter(_Cached):
    """BERT WordPiece counts, summed over the runs of text between spaces, tabs and line
    breaks (BERT turns these into spaces and splits there; every other rule acts within a
    run), each distinct run counted once.

    A new run of ASCII text is split here as BERT does (control characters dropped,
    letters lowercased, letters and digits kept together, each punctuation mark alone) and
    its pieces' counts cached; any other run is counted by ``count``.

    Args:
        count: The WordPiece count of one run.
        wordpiece: The WordPiece count of one lowercased ASCII piece (a word or a mark).
        max_entries: Distinct runs (and pieces) kept; each cache starts over when full.
    """

    cdef object _wordpiece
    cdef _Map pieces

    def __cinit__(self, count, wordpiece, Py_ssize_t max_entries=1 << 18):
        self._count = count
        self._wordpiece = wordpiece
        self.max_entries = max_entries
        self.pieces = _Map(1 << 14)

    def count(self, str text):
        """WordPiece tokens of ``text``."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t i = 0, j, end = PyUnicode_GET_LENGTH(text)
        cdef long long total = 0
        while i < end:
            if _breaks(PyUnicode_READ(kind, data, i)):
                i += 1
                continue
            j = i + 1
            while j < end and not _breaks(PyUnicode_READ(kind, data, j)):
                j += 1
            total += self._piece(text, kind, data, i, j)
            i = j
        return total

    cdef long long _new(self, str run) except -1:
        cdef Py_ssize_t t, m = 0, n = PyUnicode_GET_LENGTH(run)
        cdef unsigned char c
        cdef unsigned char word[KEPT]
        cdef const unsigned char *data
        cdef long long total = 0
        if PyUnicode_KIND(run) != 1 or PyUnicode_MAX_CHAR_VALUE(run) > 127:
            return self._count(run)
        data = <const unsigned char *>PyUnicode_DATA(run)
        for t in range(n):
            c = data[t]
            if (48 <= c <= 57) or (97 <= c <= 122) or (65 <= c <= 90):
                if m == KEPT:  # a word too long to keep: let ``count`` do the run
                    return self._count(run)
                word[m] = c + 32 if c <= 90 and c >= 65 else c
                m += 1
            elif c < 32 or c == 127:
                continue  # control characters are dropped, joining their neighbours
            else:
                if m:
                    total += self._sized(word, m)
                    m = 0
                total += self._sized(&c, 1)
        if m:
            total += self._sized(word, m)
        return total

    cdef long long _sized(self, const unsigned char *piece, Py_ssize_t m) except -1:
        cdef long long n = self.pieces.get(piece, m, 1)
        if n == NONE:
            n = self._wordpiece(PyUnicode_DecodeASCII(<const char *>piece, m, NULL))
            if self.pieces.used >= self.max_entries:
                self.pieces.clear()
            self.pieces.put(piece, m, 1, n)
        return n


cdef class PieceCounter(_Cached):
    """``count`` and ``count_till_limit`` of bpe-openai's cl100k_base or o200k_base
    tokenizer, the same numbers, from cached pre-token sizes.

    Args:
        count: The tokenizer's count of one text.
        count_till_limit: The tokenizer's count of one text if at most a limit, else ``None``.
        ranks: Builds the encoding's :class:`Ranks` when called. ``None``: the tokenizer
            sizes every new pre-token.
        ranks_after: New pre-tokens sized by the tokenizer before ``ranks`` is called (the
            table costs a fraction of a second to build; a short job never needs it). After
            that new pre-tokens of up to ``MERGED_BYTES`` bytes are merged here, longer ones
            still by the tokenizer.
        max_entries: Distinct pre-tokens kept; the cache starts over when it is full.
        encoding: Whose pre-token pattern to follow: ``cl100k_base`` or ``o200k_base``.
    """

    cdef object _till, _load_ranks
    cdef Ranks ranks
    cdef Py_ssize_t new, ranks_after
    cdef bint o200k

    def __cinit__(self, count, count_till_limit, ranks=None, Py_ssize_t ranks_after=1024,
                  Py_ssize_t max_entries=1 << 18, str encoding="cl100k_base"):
        if encoding not in ("cl100k_base", "o200k_base"):
            raise ValueError(f"no pre-token pattern for {encoding!r}")
        self.o200k = encoding == "o200k_base"
        self._count = count
        self._till = count_till_limit
        self._load_ranks = ranks
        self.ranks_after = ranks_after
        self.ranks = None
        self.new = 0
        self.max_entries = max_entries

    cdef long long _new(self, str piece) except -1:
        cdef Py_ssize_t n_utf8
        cdef const char *utf8
        cdef long long n = NONE
        if self.ranks is None and self._load_ranks is not None:
            self.new += 1
            if self.new > self.ranks_after:
                self.ranks = self._load_ranks()
        if self.ranks is not None:
            utf8 = PyUnicode_AsUTF8AndSize(piece, &n_utf8)
            if n_utf8 <= MERGED:
                n = self.ranks.count(<const unsigned char *>utf8, n_utf8)
        return self._count(piece) if n == NONE else n

    cdef inline Py_ssize_t _end(self, int kind, void *data, Py_ssize_t i,
                                Py_ssize_t end) noexcept:
        """Where the pre-token starting at ``i`` ends, by this encoding's pattern."""
        return o200k_end(kind, data, i, end) if self.o200k else piece_end(kind, data, i, end)

    cdef long long span(self, str text, long long limit) except -3:
        """Tokens of ``text``; -1 once over ``limit`` (when ``limit >= 0``), -2 when a
        character's class is not settled (ask the tokenizer)."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t i = 0, j, end = PyUnicode_GET_LENGTH(text)
        cdef long long total = 0
        if not _settled(kind, data, end):
            return -2
        while i < end:
            j = self._end(kind, data, i, end)
            total += self._piece(text, kind, data, i, j)
            if 0 <= limit < total:
                return -1
            i = j
        return total

    def count(self, str text):
        """Tokens of ``text``."""
        cdef long long n = self.span(text, -1)
        return self._count(text) if n == -2 else n

    def count_till_limit(self, str text, long long limit):
        """Tokens of ``text`` if at most ``limit``, else ``None``."""
        cdef long long n = self.span(text, limit)
        if n == -2:
            return self._till(text, limit)
        return None if n == -1 else n

    def prefix(self, str text, const int64_t[::1] seams):
        """Tokens of ``text[:s]`` for every seam ``s`` (sorted character offsets, each
        where a pre-token starts), from one pass over the text: an int64 array, or ``None``
        where a seam falls inside a pre-token or a character's class is not settled."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t i = 0, j, end = PyUnicode_GET_LENGTH(text), n = seams.shape[0], s = 0
        cdef long long total = 0
        out = numpy.empty(n, dtype=numpy.int64)
        cdef int64_t[::1] counts = out
        if not _settled(kind, data, end):
            return None
        while s < n and seams[s] <= 0:
            counts[s] = 0
            s += 1
        while i < end and s < n:
            j = self._end(kind, data, i, end)
            total += self._piece(text, kind, data, i, j)
            while s < n and seams[s] <= j:
                if seams[s] < j:
                    return None
                counts[s] = total
                s += 1
            i = j
        return out if s == n else None

    def pieces(self, str text):
        """The pre-tokens' end offsets (for tests), or ``None`` if a class is not settled."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t i = 0, end = PyUnicode_GET_LENGTH(text)
        out = []
        if not _settled(kind, data, end):
            return None
        while i < end:
            i = self._end(kind, data, i, end)
            out.append(i)
        return out
