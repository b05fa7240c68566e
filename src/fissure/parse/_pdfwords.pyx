# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled twin of the word loop of :func:`fissure.parse.pdf_layout.page_lines`
(``_page_lines_py`` there).

That loop runs for every word of every page: it splits pdfium's text at whitespace and
hyphen marks (the ``_TOKEN`` pattern), asks pdfium for the boxes of a word's first and last
characters and groups the words into lines. Here the same steps run in C: the text is
scanned character by character (``\\s`` is ``Py_UNICODE_ISSPACE``, as in ``re``), and pdfium's
``FPDFText_GetLooseCharBox`` and ``FPDFText_GetCharIndexFromTextIndex`` are called through
their addresses instead of ctypes. The box's floats are widened to double and subtracted as
Python does, so the coordinates are the same numbers. Lines are still made (and their fonts
asked for) by the Python ``_line``, and a turned page's boxes by ``Frame.box``
(``tests/parse/test_pdf_words_twin.py`` compares this path with the Python loop, page by
page, on every test PDF and the PDFs of the machine's documentation).
"""

import ctypes

from cpython.object cimport PyObject_GenericSetAttr
from cpython.unicode cimport Py_UNICODE_ISSPACE

from fissure.parse.pdf_layout import _CLEAN, HYPHEN, Word


cdef extern from "Python.h":
    int PyUnicode_KIND(object s)
    void* PyUnicode_DATA(object s)
    Py_UCS4 PyUnicode_READ(int kind, void* data, Py_ssize_t i)
    Py_ssize_t PyUnicode_GET_LENGTH(object s)
    object PyUnicode_Substring(object s, Py_ssize_t start, Py_ssize_t end)


ctypedef struct FS_RECTF:
    float left
    float top
    float right
    float bottom

ctypedef int (*BoxFn)(void* text_page, int index, FS_RECTF* rect) noexcept nogil
ctypedef int (*IndexFn)(void* text_page, int text_index) noexcept nogil

# The hyphen marks of _TOKEN and _MARK_CHARS (the twin test checks both are still these).
cdef Py_UCS4 _FFFE = 0xFFFE, _STX = 0x02, _SHY = 0xAD
cdef Py_UCS4 _HYPHEN = HYPHEN[0]
cdef str _hyphen = HYPHEN
cdef dict _clean = _CLEAN
cdef object _new = object.__new__

# The characters _CLEAN changes: a word without any is already clean (translate would
# give the same string), which spares the call for almost every word.
cdef unsigned char _ascii_clean[128]
cdef Py_UCS4 _wide_clean[64]
cdef int _n_wide = 0
for _key in _CLEAN:
    if _key < 128:
        _ascii_clean[_key] = 1
    elif _n_wide < 64:
        _wide_clean[_n_wide] = <Py_UCS4><long>_key
        _n_wide += 1
    else:
        _n_wide = -1  # too many to list: every word with a non-ASCII character is cleaned
        break


cdef inline bint _is_mark(Py_UCS4 ch) noexcept:
    return ch == _FFFE or ch == _STX or ch == _SHY


cdef inline bint _to_clean(Py_UCS4 ch) noexcept:
    cdef int k
    if ch < 128:
        return _ascii_clean[ch]
    if _n_wide < 0:
        return True
    for k in range(_n_wide):
        if _wide_clean[k] == ch:
            return True
    return False


cdef inline bint _ends_hyphen(str s) noexcept:
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s)
    return n > 0 and PyUnicode_READ(PyUnicode_KIND(s), PyUnicode_DATA(s), n - 1) == _HYPHEN


cdef object _word(str text, double x0, double x1, double top, double bottom):
    # Word is a mutable dataclass with slots and no __post_init__: setting its slots is what
    # its __init__ does (the twin test compares every field).
    cdef object w = _new(Word)
    PyObject_GenericSetAttr(w, "text", text)
    PyObject_GenericSetAttr(w, "x0", x0)
    PyObject_GenericSetAttr(w, "x1", x1)
    PyObject_GenericSetAttr(w, "top", top)
    PyObject_GenericSetAttr(w, "bottom", bottom)
    return w


cdef size_t _address(object pointer) except? 0:
    value = ctypes.cast(pointer, ctypes.c_void_p).value
    return 0 if value is None else <size_t>value


def page_lines(str text not None, object boxes, object number, object line):
    """The lines of one page, as ``_page_lines_py(text, boxes, number)`` makes them;
    ``line`` is ``pdf_layout._line``."""
    frame = boxes.frame
    cdef double left = frame.left, top = frame.top
    turned = frame.box if frame.turn else None
    c = boxes.c
    cdef BoxFn get = <BoxFn>_address(c.FPDFText_GetLooseCharBox)
    cdef IndexFn index = <IndexFn>_address(c.FPDFText_GetCharIndexFromTextIndex)
    cdef void* raw = <void*>_address(boxes.raw)
    cdef bint mapped = boxes.mapped
    if get == NULL or (mapped and index == NULL):
        raise RuntimeError("pdfium's text functions have no address")

    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t p = 0, a, b, q, cut
    cdef int i, j
    cdef Py_UCS4 ch
    cdef bint marked, dirty, ok
    cdef FS_RECTF r
    cdef double x0, x1, w_top, w_bottom, middle
    cdef list out = [], words = [], fonts = []
    cdef str token
    # The last word of ``words`` and its fields, kept here as they change.
    cdef object last = None
    cdef str last_text = None
    cdef double last_x1 = 0, last_top = 0, last_bottom = 0
    cdef bint last_hyphen = False

    while p < n:
        ch = PyUnicode_READ(kind, data, p)
        if ch == 0x0D or ch == 0x0A:  # one of pdfium's line breaks (\r\n is one)
            p += 1
            if ch == 0x0D and p < n and PyUnicode_READ(kind, data, p) == 0x0A:
                p += 1
            if words:
                out.append(line(words, fonts, boxes, number))
                words, fonts = [], []
            continue
        a = p
        if _is_mark(ch):  # a mark on its own: it belongs to the word before
            p += 1
            if words and not last_hyphen:
                last_text = last_text + _hyphen
                PyObject_GenericSetAttr(last, "text", last_text)
                last_hyphen = True
            continue
        if Py_UNICODE_ISSPACE(ch):
            p += 1
            continue
        # A run of other characters, and the mark that ends it if one does.
        dirty = False
        q = p
        while q < n:
            ch = PyUnicode_READ(kind, data, q)
            if Py_UNICODE_ISSPACE(ch) or _is_mark(ch):
                break
            if not dirty and _to_clean(ch):
                dirty = True
            q += 1
        marked = q < n and _is_mark(ch)
        b = q + 1 if marked else q
        p = b

        i, j = <int>a, <int>(b - 2 if marked else b - 1)
        if mapped:
            i, j = index(raw, i), index(raw, j)
        ok = i >= 0 and get(raw, i, &r) != 0
        if not ok:
            if not words:
                continue
            x0 = x1 = last_x1  # no box: where the word before ends
            w_top, w_bottom = last_top, last_bottom
        elif turned is None:
            x0 = <double>r.left - left
            w_top = top - <double>r.top
            w_bottom = top - <double>r.bottom
            x1 = <double>r.right - left
            if j != i and j >= 0 and get(raw, j, &r) != 0:
                x1 = <double>r.right - left
        else:
            x0, x1, w_top, w_bottom = turned(<double>r.left, <double>r.bottom,
                                             <double>r.right, <double>r.top)
            if j != i and j >= 0 and get(raw, j, &r) != 0:
                x1 = turned(<double>r.left, <double>r.bottom, <double>r.right,
                            <double>r.top)[1]
        token = PyUnicode_Substring(text, a, q)
        if dirty:
            token = token.translate(_clean)
            if PyUnicode_GET_LENGTH(token) == 0:
                continue
        if marked:
            token = token + _hyphen
        if x0 > x1:  # max(x1, x0)
            x1 = x0
        if words:
            middle = (w_top + w_bottom) / 2
            if not (last_top - 1 <= middle <= last_bottom + 1):  # another baseline
                out.append(line(words, fonts, boxes, number))
                words, fonts = [], []
            elif last_hyphen:
                # A mark inside a line (a soft hyphen that was not used): one word.
                cut = PyUnicode_GET_LENGTH(last_text) - 1  # last.text[:-1] + w.text
                last_text = PyUnicode_Substring(last_text, 0, cut) + token
                PyObject_GenericSetAttr(last, "text", last_text)
                PyObject_GenericSetAttr(last, "x1", x1)
                last_x1 = x1
                last_hyphen = _ends_hyphen(last_text)
                continue
        last = _word(token, x0, x1, w_top, w_bottom)
        last_text, last_x1, last_top, last_bottom = token, x1, w_top, w_bottom
        last_hyphen = _ends_hyphen(token)
        words.append(last)
        fonts.append(a)
    if words:
        out.append(line(words, fonts, boxes, number))
    return out
