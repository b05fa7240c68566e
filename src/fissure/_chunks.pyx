# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled twin of the plain-document loop of ``Chunker._build``: the same Chunk objects
for a document without a Block tree (the tests compare them field by field).

Chunk is a frozen dataclass with slots; its fields are stored here the way its own
``__init__`` stores them, through the slot descriptors (``object.__setattr__``), without
running the interpreter for each of fifteen fields of every chunk.
"""

from cpython.object cimport PyObject_GenericSetAttr


def build_plain(cls, tuple fields, str text, list spans, list pieces, list lines,
                str doc_id, str strategy, source, name, fallback, count):
    """Chunks of ``spans`` (``pieces[k]`` packed span ``k``; ``count(s, e)`` sizes a span
    that overlap moved); ``fields`` are Chunk's field names in order."""
    cdef Py_ssize_t i, k, n = len(spans), last = len(pieces) - 1
    cdef list out = []
    cdef dict meta
    cdef tuple span
    cdef object piece, after, obj, size, headings = ()
    new = object.__new__
    for i in range(n):
        span = spans[i]
        s, e = span
        piece = pieces[i]
        if i < last:
            after = pieces[i + 1]
            meta = {"cut": after.cut.name}
            if after.reason:
                meta["reason"] = after.reason
        else:
            meta = {"cut": "end"}
        if piece.oversize:
            meta["oversize"] = piece.oversize
        if fallback:
            meta["fallback"] = fallback
        if piece.start == s and piece.end == e:
            size = piece.size
        else:
            size = count(s, e)
        obj = new(cls)
        values = (text[s:e], s, e, doc_id, i, size, lines[i], strategy, source, headings,
                  None, None, None, name, meta)
        for k in range(15):
            PyObject_GenericSetAttr(obj, fields[k], values[k])
        out.append(obj)
    return out


def make(cls, tuple fields, tuple values):
    """One Chunk from its fifteen field values in order (``Chunk(*values)`` with a dict
    for ``metadata``), stored as ``build_plain`` stores them: for the loop over a Block
    tree's chunks, which stays in Python."""
    cdef Py_ssize_t k
    obj = object.__new__(cls)
    for k in range(15):
        PyObject_GenericSetAttr(obj, fields[k], values[k])
    return obj
