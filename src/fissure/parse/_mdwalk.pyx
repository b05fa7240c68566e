# cython: language_level=3, boundscheck=False, cdivision=True
"""Compiled twin of the pulldown-cmark event walk (:mod:`fissure.parse.markdown_events`)
and of the tree builder it feeds (:class:`fissure.parse.mdtree.TreeBuilder`).

Measured on the Node.js API docs, pyromark's own iteration is about an eighth of the
Markdown parse; the rest was the interpreter deciding, event by event, that an inline
event inside a paragraph adds nothing, and building frames and spans block by block.
:class:`Walker` and :class:`TreeBuilder` here follow the Python classes step by step —
the same tight-item paragraphs, table checks, heading titles, line spans, clipping and
captions — so the Blocks are identical (``tests/parse/test_markdown_events.py`` compares
this path with markdown-it-py's on every Markdown file and on generated documents, and
``tests/parse/test_markdown_twin.py`` with the Python walk); only the cost per event is
gone. Rare steps (a fence's info string, a heading title read off its source, a table's
caption and header row) call the Python helpers themselves.
"""

import re

from cpython.dict cimport PyDict_GetItem, PyDict_Next
from cpython.object cimport PyObject, PyObject_GenericSetAttr
from cpython.unicode cimport Py_UNICODE_ISSPACE

from fissure.parse.captions import caption_title
from fissure.parse.mdtree import LEVELS, TITLE_SOURCE_LIMIT, Disagree, MarkdownLevel, plain_title
from fissure.parse.mdtree import _widen_header as widen_header
from fissure.parse.text import line_starts as _line_starts
from fissure.types import Block


cdef extern from "Python.h":
    Py_ssize_t PyUnicode_FindChar(object s, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end,
                                  int direction) except -2
    Py_ssize_t PyUnicode_GET_LENGTH(object s)
    Py_UCS4 PyUnicode_READ_CHAR(object s, Py_ssize_t i)
    char* PyBytes_AS_STRING(object b)
    Py_ssize_t PyBytes_GET_SIZE(object b)


# The same constants as markdown_events (kept in step by the twin test).
cdef Py_ssize_t _DEEP = 12
_DELIMITER_ROW = re.compile(r"^[ \t>]*[|:-][ \t|:-]*\r?$", re.MULTILINE)
_FENCE = re.compile(r"([`~])\1{2,}")
cdef dict _LEAVES = {"CodeBlock": "code", "HtmlBlock": "html"}
cdef dict _CONTAINERS = {"Paragraph": "paragraph", "BlockQuote": "blockquote", "List": "list",
                         "Item": "item", "Table": "table"}
cdef frozenset _INLINE_CONTAINERS = frozenset(
    {"Emphasis", "Strong", "Strikethrough", "Link", "Image", "TableCell"}
)
cdef frozenset _PLAIN_LINKS = frozenset({"Inline", "Autolink", "Email"})
cdef object _BLOCK = MarkdownLevel.BLOCK
cdef dict _LEVELS = dict(LEVELS)

# Block is a frozen dataclass with slots: its generated __init__ sets each slot through
# object.__setattr__, a Python call per field. The generic setattr does the same from C (as
# fissure._chunks does for Chunk), bypassing only the frozen class's refusing __setattr__;
# Block has no __post_init__ (the twin test compares the Blocks field by field).
cdef object _new = object.__new__


cdef object _block(str kind, Py_ssize_t start, Py_ssize_t end, object level, object title,
                   tuple children, dict metadata):
    cdef object block = _new(Block)
    PyObject_GenericSetAttr(block, "kind", kind)
    PyObject_GenericSetAttr(block, "start", start)
    PyObject_GenericSetAttr(block, "end", end)
    PyObject_GenericSetAttr(block, "level", level)
    PyObject_GenericSetAttr(block, "title", title)
    PyObject_GenericSetAttr(block, "children", children)
    PyObject_GenericSetAttr(block, "metadata", metadata)
    return block


def nest_sections(list blocks):
    """:func:`fissure.parse.text.nest_sections` with its default ``heading_rank`` (a
    ``heading`` block opens a section of its level and title), the same Blocks."""
    cdef list root = []
    cdef list stack = []  # [level, title, children] per open section
    for block in blocks:
        if block.kind == "heading":
            level = block.level
            while stack and stack[len(stack) - 1][0] >= level:
                _close_section(stack, root)
            stack.append([level, block.title, [block]])
        elif stack:
            stack[len(stack) - 1][2].append(block)
        else:
            root.append(block)
    while stack:
        _close_section(stack, root)
    return tuple(root)


cdef void _close_section(list stack, list root) except *:
    level, title, children = stack.pop()
    section = _block("section", children[0].start, children[len(children) - 1].end, level,
                     title, tuple(children), {})
    if stack:
        stack[len(stack) - 1][2].append(section)
    else:
        root.append(section)


cdef inline Py_ssize_t _int(list values, Py_ssize_t i):
    return <Py_ssize_t>values[i]


cdef Py_ssize_t _bisect_right(list values, Py_ssize_t x):
    cdef Py_ssize_t lo = 0
    cdef Py_ssize_t hi = len(values)
    cdef Py_ssize_t mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if x < _int(values, mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


cpdef list line_starts(str text):
    """:func:`fissure.parse.text.line_starts`, by a search for each line break instead of
    a string per line (same list; a text with ``"\\r"`` goes to the Python one)."""
    cdef list out = [0]
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef Py_ssize_t at = PyUnicode_FindChar(text, 10, 0, n, 1)
    if PyUnicode_FindChar(text, 13, 0, n, 1) >= 0:
        return _line_starts(text)
    while at >= 0:
        out.append(at + 1)
        at = PyUnicode_FindChar(text, 10, at + 1, n, 1)
    return out


cdef Py_ssize_t _line_end(str text, list starts, Py_ssize_t line):
    """fissure.parse.text.line_end."""
    cdef Py_ssize_t end
    if line + 1 >= len(starts):
        return PyUnicode_GET_LENGTH(text)
    end = _int(starts, line + 1)
    if PyUnicode_READ_CHAR(text, end - 1) == 10:
        end -= 1
        if end > _int(starts, line) and PyUnicode_READ_CHAR(text, end - 1) == 13:
            end -= 1
    elif PyUnicode_READ_CHAR(text, end - 1) == 13:
        end -= 1
    return end


cdef class Frame:
    """mdtree._Frame."""

    cdef public object kind
    cdef public Py_ssize_t first_line
    cdef public Py_ssize_t last_line
    cdef public list children
    cdef public object level
    cdef public object title
    cdef public dict metadata

    def __init__(self, kind, Py_ssize_t first_line, Py_ssize_t last_line, level=_BLOCK):
        _init_frame(self, kind, first_line, last_line, level)


cdef inline Frame _frame(kind, Py_ssize_t first_line, Py_ssize_t last_line, level):
    """A Frame without the Python call into __init__ (the builder makes one per block)."""
    cdef Frame frame = Frame.__new__(Frame)
    _init_frame(frame, kind, first_line, last_line, level)
    return frame


cdef inline void _init_frame(Frame frame, kind, Py_ssize_t first_line, Py_ssize_t last_line,
                             level):
    frame.kind = kind
    frame.first_line = first_line
    frame.last_line = last_line
    frame.children = []
    frame.level = level
    frame.title = None
    frame.metadata = {}


cdef class TreeBuilder:
    """Twin of :class:`fissure.parse.mdtree.TreeBuilder` (same methods, same Blocks)."""

    cdef public str text
    cdef public list starts
    cdef public Py_ssize_t offset
    cdef public Frame root
    cdef public list stack

    def __init__(self, str text, list starts, Py_ssize_t offset):
        self.text, self.starts, self.offset = text, starts, offset
        self.root = _frame("root", 0, len(starts), _BLOCK)
        self.stack = [self.root]

    cpdef open(self, kind, Py_ssize_t first, Py_ssize_t last, level=None):
        if level is None:
            level = _LEVELS.get(kind or "", _BLOCK)
        self.stack.append(_frame(kind, first, last, level))

    cpdef open_row(self, Py_ssize_t first, Py_ssize_t last):
        cdef Frame frame
        cdef Py_ssize_t k
        self.open("row", first, last)
        for k in range(len(self.stack) - 1, -1, -1):
            frame = self.stack[k]
            if frame.kind == "table":
                (<Frame>self.stack[-1]).metadata["header"] = not frame.children
                return
        raise StopIteration  # as next() on no table frame in the Python builder

    cpdef set_title(self, title):
        (<Frame>self.stack[-1]).title = title

    cpdef close(self):
        cdef Frame frame = self.stack.pop()
        if frame.kind is None:
            (<Frame>self.stack[-1]).children.extend(frame.children)
        else:
            self._add(self._close(frame))

    cpdef leaf(self, str kind, Py_ssize_t first, Py_ssize_t last, dict metadata):
        cdef Py_ssize_t start, end
        start, end = self._span(first, last)
        level = _LEVELS.get(kind, _BLOCK)
        self._add(_block(kind, start, end, level, None, (), metadata))

    def blocks(self):
        return self.root.children

    cdef (Py_ssize_t, Py_ssize_t) _span(self, Py_ssize_t first, Py_ssize_t last):
        cdef str text = self.text
        cdef Py_ssize_t start = _int(self.starts, first)
        cdef Py_ssize_t end = _line_end(text, self.starts, max(first, last - 1))
        while end > start and Py_UNICODE_ISSPACE(PyUnicode_READ_CHAR(text, end - 1)):
            end -= 1  # fissure.spans.trim_end
        return start + self.offset, end + self.offset

    cdef object _close(self, Frame frame):
        cdef Py_ssize_t start, end, cursor
        cdef list children = []
        start, end = self._span(frame.first_line, frame.last_line)
        cursor = start
        for child in frame.children:  # mdtree._fit
            if child.start >= cursor and child.end <= end:
                children.append(child)
                cursor = child.end
        if frame.kind == "table":
            if children and children[0].metadata.get("header"):
                children = widen_header(self.text, self.offset, children, end)
            frame.title = self._caption()
        if len(children) == 1 and children[0].start == start and children[0].end == end:
            children = list(children[0].children)
        return _block(frame.kind or "block", start, end, frame.level, frame.title,
                      tuple(children), frame.metadata)

    cdef object _caption(self):
        cdef list siblings = (<Frame>self.stack[-1]).children
        before = siblings[-1] if siblings else None
        if before is None or before.kind != "paragraph":
            return None
        text = self.text[before.start - self.offset : before.end - self.offset]
        return caption_title(text, markdown=True)

    cdef inline void _add(self, block):
        if block.end > block.start:
            (<Frame>self.stack[-1]).children.append(block)


cdef inline str _name(tag):
    """A tag's name: the tag itself, or its dict's one key."""
    cdef Py_ssize_t pos = 0
    cdef PyObject* key
    cdef PyObject* value
    if type(tag) is str:
        return <str>tag
    PyDict_Next(tag, &pos, &key, &value)
    return <str>key


cdef inline Py_ssize_t _get(dict span, str key):
    return <Py_ssize_t><object>PyDict_GetItem(span, key)


cdef class Walker:
    """Twin of ``markdown_events._Walker``: feeds the events to a compiled TreeBuilder."""

    cdef TreeBuilder builder
    cdef str text
    cdef Py_ssize_t first_line
    cdef object data  # the UTF-8 bytes of a non-ASCII text, else None
    cdef list byte_starts
    cdef list kinds
    cdef bint has_loose
    cdef Py_ssize_t loose_start, loose_end
    cdef list title
    cdef list title_span
    cdef bint by_source
    cdef bint has_image
    cdef Py_ssize_t image
    cdef Py_ssize_t item_end
    cdef bint skip
    cdef public list heading_spans  # (start, end) of each heading met

    def __init__(self, TreeBuilder builder, str text, Py_ssize_t first_line, list starts=None):
        # starts: line_starts(text) where the caller has them (a run of the scanner's)
        self.builder, self.text, self.first_line = builder, text, first_line
        if starts is None:  # the builder's lines are the text's own without front matter
            starts = builder.starts if first_line == 0 and text is builder.text else line_starts(text)
        self.data = None if text.isascii() else text.encode()
        self.byte_starts = starts if self.data is None else _byte_starts(text, starts)
        self.kinds = []
        self.has_loose = False
        self.title = None
        self.title_span = []
        self.by_source = False
        self.has_image = False
        self.item_end = 0
        self.skip = False
        self.heading_spans = []

    cdef inline bint _blank_at(self, Py_ssize_t i):
        cdef Py_UCS4 c
        if self.data is None:
            c = PyUnicode_READ_CHAR(self.text, i)
        else:
            c = <unsigned char>PyBytes_AS_STRING(self.data)[i]
        return c == 32 or c == 9 or c == 13 or c == 10

    cdef (Py_ssize_t, Py_ssize_t) lines(self, Py_ssize_t start, Py_ssize_t end):
        cdef Py_ssize_t first, last
        while end > start + 1 and self._blank_at(end - 1):
            end -= 1
        first = _bisect_right(self.byte_starts, start) - 1
        last = _bisect_right(self.byte_starts, max(start, end - 1))
        return first + self.first_line, last + self.first_line

    def walk(self, events):
        cdef object event, tag
        cdef PyObject* found
        for event, span in events:
            if type(event) is dict:
                found = PyDict_GetItem(event, "Start")
                if found is not NULL:
                    self.start(<object>found, span)
                    continue
                found = PyDict_GetItem(event, "End")
                if found is not NULL:
                    self.end(<object>found, span)
                elif not self.skip:
                    self.text_event(event, span)
            elif event == "Rule":
                self.flush()
                first, last = self.lines(_get(span, "start"), _get(span, "end"))
                self.builder.leaf("thematic_break", first, last, {})
            elif not self.skip:
                self.text_event(event, span)
        self.flush()

    cdef start(self, tag, dict span):
        cdef str name = _name(tag)
        cdef Py_ssize_t first, last
        if name in _INLINE_CONTAINERS:
            if self.title is not None and (name == "Link" or name == "Image"):
                self.by_source |= tag[name]["link_type"] not in _PLAIN_LINKS
            if self.title is not None and name == "Image":
                self.has_image, self.image = True, _get(span, "start") + 2
            elif not self.skip:
                self.text_event(None, span)
            return
        self.flush()
        if len(self.kinds) >= _DEEP:
            raise Disagree
        first, last = self.lines(_get(span, "start"), _get(span, "end"))
        if name in _LEAVES:
            self.builder.leaf(_LEAVES[name], first, last, self.leaf_metadata(tag, first))
            self.skip = True
        elif name == "Heading":
            self.heading_spans.append((_get(span, "start"), _get(span, "end")))
            self.builder.open("heading", first, last, int(tag["Heading"]["level"][1]))
            self.title, self.title_span = [], []
        elif name == "TableHead" or name == "TableRow":
            self.check_row(first)
            self.builder.open_row(first, last)
        else:
            self.builder.open(_CONTAINERS.get(name), first, last)
        self.kinds.append(name)

    cdef end(self, tag, dict span):
        cdef str name = _name(tag)
        cdef Frame frame
        if name in _INLINE_CONTAINERS:
            if self.has_image and name == "Image":
                self.image_label(span)
            return
        if name in _LEAVES:
            self.skip = False
            self.kinds.pop()
            return
        self.flush()
        if name == "Paragraph":
            self.check_table(_get(span, "start"), _get(span, "end"))
        elif name == "Item":
            self.item_end = _get(span, "end")
        elif name == "List":
            frame = self.builder.stack[-1]
            frame.last_line = self.lines(_get(span, "start"), self.item_end)[1]
        if name == "Heading":
            self.check_table(_get(span, "start"), _get(span, "end"))
            self.builder.set_title(self.heading_title())
            self.title, self.by_source = None, False
        self.kinds.pop()
        self.builder.close()

    cdef text_event(self, event, dict span):
        cdef Py_ssize_t start, end
        if self.title is not None:
            if not self.has_image:
                self.title_span.append(_get(span, "start"))
                self.title_span.append(_get(span, "end"))
                self.title.append(_plain(event))
            return
        if self.kinds and self.kinds[-1] == "Item":
            end = _get(span, "end")
            if not self.has_loose:
                self.has_loose, self.loose_start = True, _get(span, "start")
            self.loose_end = end

    cdef flush(self):
        cdef Py_ssize_t first, last
        if self.has_loose:
            self.check_table(self.loose_start, self.loose_end)
            first, last = self.lines(self.loose_start, self.loose_end)
            self.builder.open("paragraph", first, last)
            self.builder.close()
            self.has_loose = False

    cdef check_table(self, Py_ssize_t start, Py_ssize_t end):
        # the same test as markdown_events, on the source only when both "|" and "-" are in
        if self.data is None:
            if PyUnicode_FindChar(self.text, 124, start, end, 1) < 0:
                return
            if PyUnicode_FindChar(self.text, 45, start, end, 1) < 0:
                return
        elif self.data.find(b"|", start, end) < 0 or self.data.find(b"-", start, end) < 0:
            return
        source = self.source(start, end)
        second = source.find("\n") + 1
        if second and _DELIMITER_ROW.search(source, second):
            raise Disagree

    cdef check_row(self, Py_ssize_t line):
        text, starts = self.builder.text, self.builder.starts
        row = text[starts[line] : starts[line] + 8]
        if len(row[: len(row) - len(row.lstrip(" \t"))].expandtabs(4)) >= 4:
            raise Disagree

    cdef image_label(self, dict span):
        cdef Py_ssize_t start = self.image
        self.has_image = False
        source = self.source(start, _get(span, "end"))
        close = source.rfind("](") if "](" in source else source.rfind("][")
        label = source[:close] if close >= 0 else source.rstrip("]")
        self.title_span += [_get(span, "start"), _get(span, "end")]
        self.title.append(label)

    cdef str heading_title(self):
        pieces, span = self.title or [], self.title_span
        if span and (self.by_source or max(span) - min(span) > TITLE_SOURCE_LIMIT):
            return plain_title(self.source(min(span), max(span)))
        return " ".join("".join(pieces).split()).replace("\0", "\ufffd")

    cdef str source(self, Py_ssize_t start, Py_ssize_t end):
        if self.data is None:
            return self.text[start:end]
        return self.data[start:end].decode(errors="replace")

    cdef dict leaf_metadata(self, tag, Py_ssize_t line):
        if tag == "HtmlBlock":
            return {}
        block = tag["CodeBlock"]
        if block == "Indented":
            return {"lang": None, "fenced": False}
        return _fenced(self.builder.text, self.builder.starts, line, block["Fenced"])


cdef dict _fenced(str text, list starts, Py_ssize_t line, info):
    """A fenced code block's metadata: its info string read off its opening line raw, as
    markdown-it keeps it (``info``, pulldown's unescaped one, only if no fence is there)."""
    row = text[starts[line] : _line_end(text, starts, line)]
    fence = _FENCE.search(row)
    info = row[fence.end() :].strip() if fence else info.strip()
    info = info.replace("\0", "\ufffd")  # markdown-it reads NUL so
    return {"lang": info.split()[0] if info else None, "fenced": True}


cdef list _byte_starts(str text, list starts):
    """UTF-8 byte offsets of the line starts of a non-ASCII text (markdown_events'
    _byte_starts, by each character's encoded length)."""
    cdef list out = []
    cdef Py_ssize_t i = 0
    cdef Py_ssize_t b = 0
    cdef Py_ssize_t k, stop
    cdef Py_UCS4 c
    for k in range(len(starts)):
        stop = _int(starts, k)
        while i < stop:
            c = PyUnicode_READ_CHAR(text, i)
            b += 1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4
            i += 1
        out.append(b)
    return out


cdef str _plain(event):
    if event == "SoftBreak" or event == "HardBreak":
        return " "
    if type(event) is dict:
        text = event.get("Text")
        if text is None:
            text = event.get("Code")
        return text if text is not None else ""
    return ""


include "_mdscan.pxi"
