# Included by _mdwalk.pyx: the top-level line scanner and the segment walk.
#
# Two fifths of pulldown-cmark's events on the Node.js API docs are the inline events of
# top-level paragraphs, and more are HTML comment and code blocks: Python objects made only
# to be skipped. The scanner reads the document's lines at the top level and cuts it into
# segments: blocks it understands with certainty (a paragraph of plain lines, an ATX
# heading, a fenced code block, an HTML comment block) and, between them, *delegated* runs
# of lines that pulldown-cmark parses as before. A delegated run starts and ends at a clean
# point: a line where nothing of the lines above can still be open (no container,
# paragraph, fence or HTML block), so pulldown-cmark parsing it alone gives the events it
# gives it inside the document, but for link reference definitions, which only change
# inline parsing (see walk_segments). Wherever the scanner cannot tell — a fence or a long
# HTML block that may be open at the top level — the delegated run goes on to the end of
# the text: the scanner only ever leaves more to pulldown-cmark, it never guesses.

cdef int PARAGRAPH = 0, HEADING = 1, CODE = 2, HTML = 3, DELEGATED = 4, LIST = 5, QUOTE = 6
# a tight list's steps for the builder
cdef int OPEN_LIST = 0, OPEN_ITEM = 1, TEXT = 2, CLOSE = 3
cdef Py_ssize_t MAX_LEVELS = 5  # lists in lists (the walk hands 6+ to markdown-it)

cdef extern from "Python.h":
    Py_ssize_t PyUnicode_Find(object s, object sub, Py_ssize_t start, Py_ssize_t end,
                              int direction) except -2
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch)


cdef inline Py_UCS4 _char(str text, Py_ssize_t i, Py_ssize_t end):
    return PyUnicode_READ_CHAR(text, i) if i < end else 0


cdef inline Py_ssize_t _skip_blanks(str text, Py_ssize_t i, Py_ssize_t end):
    """First position in [i, end) that is not a space or a tab, else end."""
    cdef Py_UCS4 c
    while i < end:
        c = PyUnicode_READ_CHAR(text, i)
        if c != 32 and c != 9:
            break
        i += 1
    return i


cdef inline Py_ssize_t _columns(str text, Py_ssize_t start, Py_ssize_t stop):
    """Columns of the spaces and tabs in [start, stop) (tab stops of 4)."""
    cdef Py_ssize_t col = 0
    cdef Py_ssize_t i
    for i in range(start, stop):
        if PyUnicode_READ_CHAR(text, i) == 9:
            col += 4 - col % 4
        else:
            col += 1
    return col


cdef inline bint _digit(Py_UCS4 c):
    return 48 <= c <= 57


cdef bint _starts_paragraph(Py_UCS4 c):
    """A first character that opens nothing but a paragraph: a letter, or punctuation that
    no block starts with (a block marker, a digit, space, a control is left to pulldown)."""
    cdef unsigned int code = c
    if code >= 128:
        return Py_UNICODE_ISALNUM(c)
    if 97 <= (code | 32) <= 122:
        return True
    return c in "()\"',./;?@$%^{}!\\&:"


cdef bint _may_interrupt(str text, Py_ssize_t start, Py_ssize_t end):
    """Whether the non-blank line [start, end) might not just continue the paragraph above
    it: a block may interrupt it there, it may be a setext underline, or it holds ``|`` (a
    table row, or a delimiter row that markdown-it reads as a table)."""
    cdef Py_ssize_t p, q
    cdef Py_UCS4 c
    if PyUnicode_FindChar(text, 124, start, end, 1) >= 0:
        return True
    p = _skip_blanks(text, start, end)
    if _columns(text, start, p) >= 4:
        return False  # indented: no interruption allows more than 3 columns
    return _opens_block(text, p, end)


cdef bint _opens_block(str text, Py_ssize_t p, Py_ssize_t end):
    """Whether a block may start at ``p``, the first visible character of a line indented
    less than 4 columns past its container's content."""
    cdef Py_ssize_t q
    cdef Py_UCS4 c = PyUnicode_READ_CHAR(text, p)
    if _digit(c):
        q = p
        while q < end and _digit(PyUnicode_READ_CHAR(text, q)):
            q += 1
        c = _char(text, q, end)
        return c == 46 or c == 41  # "1." / "1)": an ordered list
    if c == 96 or c == 126:  # "``" is text; three may open a fence
        return _char(text, p + 1, end) == c and _char(text, p + 2, end) == c
    return c in "#>-+*_=<"


cdef Py_ssize_t _fence(str text, Py_ssize_t p, Py_ssize_t end, Py_UCS4* mark):
    """Length of the fence opening at ``p`` (3+ backticks or tildes; a backtick fence's
    info string holds no backtick), else 0."""
    cdef Py_UCS4 c = _char(text, p, end)
    cdef Py_ssize_t q = p
    if c != 96 and c != 126:
        return 0
    while q < end and PyUnicode_READ_CHAR(text, q) == c:
        q += 1
    if q - p < 3:
        return 0
    if c == 96 and PyUnicode_FindChar(text, 96, q, end, 1) >= 0:
        return 0
    mark[0] = c
    return q - p


cdef bint _closes(str text, Py_ssize_t start, Py_ssize_t end, Py_UCS4 mark, Py_ssize_t size):
    """Whether the line [start, end) closes a fence of ``size`` ``mark`` characters."""
    cdef Py_ssize_t p = _skip_blanks(text, start, end)
    cdef Py_ssize_t q = p
    if _columns(text, start, p) > 3:
        return False
    while q < end and PyUnicode_READ_CHAR(text, q) == mark:
        q += 1
    return q - p >= size and _skip_blanks(text, q, end) == end


cdef bint _long_html(str text, Py_ssize_t p, Py_ssize_t end):
    """Whether an HTML block that blank lines do not end (CommonMark kinds 1-5) may open at
    ``p``: ``<!``, ``<?``, or a tag named script, pre, style, textarea (erring to "may")."""
    cdef Py_UCS4 c
    if _char(text, p, end) != 60:
        return False
    c = _char(text, p + 1, end)
    if c == 33 or c == 63:
        return True
    name = text[p + 1 : min(end, p + 10)].lower()
    for tag in ("script", "pre", "style", "textarea"):
        if name.startswith(tag):
            c = _char(name, len(tag), len(name))
            if c == 0 or c == 32 or c == 9 or c == 62:
                return True
    return False


cdef bint _atx(str text, Py_ssize_t p, Py_ssize_t end, Py_ssize_t* level):
    cdef Py_ssize_t q = p
    cdef Py_UCS4 c
    while q < end and PyUnicode_READ_CHAR(text, q) == 35:
        q += 1
    if q - p < 1 or q - p > 6:
        return False
    c = _char(text, q, end)
    if c != 0 and c != 32 and c != 9:
        return False
    level[0] = q - p
    return True


cdef inline Py_ssize_t _end_of(str text, list starts, Py_ssize_t i, Py_ssize_t n):
    """End of line ``i``'s content (texts here break lines with "\\n" only; the last
    line, empty after a final line break, runs to the end)."""
    if i + 1 < len(starts):
        return _int(starts, i + 1) - 1
    return n


cdef inline bint _blank(str text, list starts, Py_ssize_t i, Py_ssize_t n):
    cdef Py_ssize_t e = _end_of(text, starts, i, n)
    return _skip_blanks(text, _int(starts, i), e) == e


cdef Py_ssize_t _paragraph(str text, list starts, Py_ssize_t i, Py_ssize_t n):
    """The end line of the certain paragraph that line ``i`` (plain, at a clean point)
    starts, or -1 where one of its lines might be more than its continuation."""
    cdef Py_ssize_t lines = len(starts)
    cdef Py_ssize_t j = i + 1
    while j < lines and not _blank(text, starts, j, n):
        if _may_interrupt(text, _int(starts, j), _end_of(text, starts, j, n)):
            return -1
        j += 1
    return j


cdef Py_ssize_t _comment_end(str text, list starts, Py_ssize_t i, Py_ssize_t p, Py_ssize_t n):
    """The end line of the HTML comment block opening at ``p`` on line ``i``."""
    cdef Py_ssize_t lines = len(starts)
    cdef Py_ssize_t j = i
    if PyUnicode_Find(text, "-->", p + 4, _end_of(text, starts, i, n), 1) >= 0:
        return i + 1
    j = i + 1
    while j < lines:
        if PyUnicode_Find(text, "-->", _int(starts, j), _end_of(text, starts, j, n), 1) >= 0:
            return j + 1
        j += 1
    return lines


cdef bint _delimiter_like(str text, Py_ssize_t start, Py_ssize_t end):
    """Whether the line [start, end) is one that markdown_events' delimiter-row pattern
    matches (``[ \\t>]*`` then ``[|:-]`` then only ``[ \\t|:-]``)."""
    cdef Py_ssize_t p = start
    cdef Py_UCS4 c
    while p < end and PyUnicode_READ_CHAR(text, p) in " \t>":
        p += 1
    if p == end or PyUnicode_READ_CHAR(text, p) not in "|:-":
        return False
    while p < end:
        c = PyUnicode_READ_CHAR(text, p)
        if c not in " \t|:-":
            return False
        p += 1
    return True


cdef Py_ssize_t _quote(str text, list starts, Py_ssize_t i, Py_ssize_t n):
    """The end line of the one-paragraph block quote at line ``i``, or -1 where it is not
    one this scanner is sure of: every line ``"> "`` at column 0 and then text that only
    continues a paragraph (the first line's starts one), no ``|``, and a blank line or the
    end of the text after it (a line without ``>`` could continue it lazily)."""
    cdef Py_ssize_t lines = len(starts)
    cdef Py_ssize_t j = i
    cdef Py_ssize_t s, e, p
    cdef Py_UCS4 c
    while j < lines and not _blank(text, starts, j, n):
        s = _int(starts, j)
        e = _end_of(text, starts, j, n)
        if _char(text, s, e) != 62 or _char(text, s + 1, e) != 32:
            return -1
        p = s + 2
        c = _char(text, p, e)
        if PyUnicode_FindChar(text, 124, s, e, 1) >= 0 or _delimiter_like(text, s, e):
            return -1
        if j == i:
            if not (_starts_paragraph(c) or c == 96 and _char(text, p + 1, e) != 96):
                return -1
        elif c == 0 or c == 32 or c == 9 or _opens_block(text, p, e):
            return -1
        j += 1
    return j


cdef bint _bullet(str text, Py_ssize_t p, Py_ssize_t end):
    """Whether ``p`` opens a bullet item whose content starts two columns on: ``*``, ``-``
    or ``+``, one space, then a visible character."""
    cdef Py_UCS4 c = _char(text, p, end)
    if c != 42 and c != 45 and c != 43 or _char(text, p + 1, end) != 32:
        return False
    c = _char(text, p + 2, end)
    return c != 0 and c != 32 and c != 9


cdef bint _item_line(str text, Py_ssize_t p, Py_ssize_t end):
    """Whether ``p`` opens a bullet item this scanner builds: ``*``, ``-`` or ``+``, one
    space, then a character that starts nothing but a paragraph."""
    cdef Py_UCS4 c = _char(text, p, end)
    if c != 42 and c != 45 and c != 43 or _char(text, p + 1, end) != 32:
        return False
    c = _char(text, p + 2, end)
    return _starts_paragraph(c) or c == 96 and _char(text, p + 3, end) != 96


cdef object _tight_list(str text, list starts, Py_ssize_t i, Py_ssize_t n):
    """``(steps, end line)`` of the tight bullet list at line ``i``, or None where it is
    not one this scanner is sure of.

    Sure means: no blank line inside; each line either an item (:func:`_item_line`) at
    the column of an open item's marker (a sibling, with the same bullet) or of its
    content (a nested list, at most MAX_LEVELS deep), or a line that only continues the
    innermost item's text (indented to its content at least, opening no block there, no
    delimiter row); no tabs in the indentation; and after the blank line, the end of the
    text or a line at column 0 that no list can take (no bullet, no digit)."""
    cdef Py_ssize_t lines = len(starts)
    cdef Py_ssize_t j = i
    cdef Py_ssize_t s, e, p, w, k, text_at = -1
    cdef list steps = []
    cdef list cols = []  # marker column per open level
    cdef list bullets = []
    cdef list opened = []  # per level: the indices of its list's and its item's steps
    cdef Py_UCS4 c
    while j < lines:
        s = _int(starts, j)
        e = _end_of(text, starts, j, n)
        p = _skip_blanks(text, s, e)
        if p == e:
            break
        if PyUnicode_FindChar(text, 9, s, p, 1) >= 0:
            return None
        w = p - s
        c = PyUnicode_READ_CHAR(text, p)
        if _item_line(text, p, e):
            if not cols or w == _int(cols, len(cols) - 1) + 2:
                if (w != 0 and not cols) or len(cols) >= MAX_LEVELS:
                    return None
                cols.append(w)
                bullets.append(c)
                steps.append([OPEN_LIST, j, 0])
                opened.append([len(steps) - 1, -1])
            else:
                k = len(cols) - 1
                while k >= 0 and _int(cols, k) != w:
                    k -= 1
                if k < 0 or bullets[k] != c:
                    return None
                while len(cols) > k + 1:  # the deeper lists end here
                    _close_level(steps, opened, j)
                    cols.pop()
                    bullets.pop()
                steps[opened[k][1]][2] = j  # the sibling before ends here
                steps.append([CLOSE, 0, 0])
            steps.append([OPEN_ITEM, j, 0])
            opened[len(opened) - 1][1] = len(steps) - 1
            steps.append([TEXT, j, j + 1])
            text_at = len(steps) - 1
        else:
            if w < _int(cols, len(cols) - 1) + 2 or _delimiter_like(text, s, e):
                return None  # a lazy line, or one markdown-it would read as a table
            if w - _int(cols, len(cols) - 1) - 2 < 4 and _opens_block(text, p, e):
                return None
            if steps[len(steps) - 1][0] != TEXT:
                return None  # text after a nested list: no longer the item's first paragraph
            steps[text_at][2] = j + 1
        j += 1
    while cols:
        _close_level(steps, opened, j)
        cols.pop()
    k = j
    while k < lines and _blank(text, starts, k, n):
        k += 1
    if k < lines:
        s = _int(starts, k)
        c = PyUnicode_READ_CHAR(text, s)
        if c == 32 or c == 9 or c in "-*+" or _digit(c):
            return None
    return steps, j


cdef void _close_level(list steps, list opened, Py_ssize_t end):
    """Close the innermost level's item and list at line ``end``."""
    cdef list level = opened.pop()
    steps[level[1]][2] = end
    steps.append([CLOSE, 0, 0])
    steps[level[0]][2] = end
    steps.append([CLOSE, 0, 0])


cdef list _segments(str text, list starts):
    """``(kind, first, last, level)`` for each segment of ``text``, in order, covering
    its lines: ``[first, last)``; ``level`` a heading's number of ``#``."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef Py_ssize_t lines = len(starts)
    cdef list out = []
    cdef Py_ssize_t i = 0
    cdef Py_ssize_t region = -1  # first line of the open delegated run
    cdef bint blank_before = True
    # In a delegated run: whether the line is surely inside a top-level bullet item whose
    # content starts at column 2 (every line since its marker indented 2+, or blank), where
    # a fence or long HTML block indented 2-3 is the item's and ends with it.
    cdef bint in_item = False
    cdef Py_ssize_t s, e, p, j, size, w
    cdef Py_ssize_t level = 0
    cdef Py_UCS4 c, mark
    while i < lines:
        s = _int(starts, i)
        e = _end_of(text, starts, i, n)
        p = _skip_blanks(text, s, e)
        if p == e:
            blank_before = True
            i += 1
            continue
        c = PyUnicode_READ_CHAR(text, p)
        if region >= 0:
            if not (blank_before and p == s and c not in "-*+" and not _digit(c)):
                w = _columns(text, s, p)
                if w < 2:  # a top-level item's content is no longer surely open, unless
                    # a new item opens (an HTML block's line above could take a bullet in)
                    in_item = (blank_before or in_item) and p == s and _bullet(text, p, e)
                if w <= 3 and not (w >= 2 and in_item) and (
                    _fence(text, p, e, &mark) or _long_html(text, p, e)
                ):
                    break  # may be open at the top level: the run goes on to the end
                blank_before = False
                i += 1
                continue
            out.append((DELEGATED, region, i, 0))
            region = -1
        blank_before = False  # a clean point: nothing above is open
        if _columns(text, s, p) <= 3:
            size = _fence(text, p, e, &mark)
            if size:
                j = i + 1
                while j < lines and not _closes(text, _int(starts, j), _end_of(text, starts, j, n), mark, size):
                    j += 1
                j = min(j + 1, lines)
                out.append((CODE, i, j, 0))
                i = j
                continue
            if p == s and c == 35 and _atx(text, p, e, &level):
                out.append((HEADING, i, i + 1, level))
                i += 1
                continue
            if p == s and PyUnicode_Find(text, "<!--", p, e, 1) == p:
                if PyUnicode_Find(text, "<!-->", p, e, 1) == p or PyUnicode_Find(text, "<!--->", p, e, 1) == p:
                    region = i
                    break
                j = _comment_end(text, starts, i, p, n)
                out.append((HTML, i, j, 0))
                i = j
                continue
            if _long_html(text, p, e):
                region = i
                break
        if p == s and c == 62:
            j = _quote(text, starts, i, n)
            if j >= 0:
                out.append((QUOTE, i, j, 0))
                i = j
                continue
        if p == s and _item_line(text, p, e):
            found = _tight_list(text, starts, i, n)
            if found is not None:
                out.append((LIST, i, found[1], found[0]))
                i = found[1]
                continue
        if (
            p == s
            and (_starts_paragraph(c) or c == 96 and _char(text, p + 1, e) != 96)
            and PyUnicode_FindChar(text, 124, s, e, 1) < 0
        ):
            j = _paragraph(text, starts, i, n)
            if j >= 0:
                out.append((PARAGRAPH, i, j, 0))
                i = j
                continue
        region = i
        in_item = p == s and _bullet(text, p, e)
        i += 1
    if region >= 0:
        out.append((DELEGATED, region, lines, 0))
    return out


def segments(str text, list starts):
    """The scanner's segments of ``text`` (lines by ``starts``): for the tests."""
    return _segments(text, starts)


cdef list _shifted(list starts, Py_ssize_t a, Py_ssize_t b, Py_ssize_t base):
    cdef list out = []
    cdef Py_ssize_t k
    for k in range(a, b):
        out.append(_int(starts, k) - base)
    return out


cdef class _Broken:
    """pyromark's broken-link callback: records where a reference is not defined."""

    cdef public list spans

    def __init__(self):
        self.spans = []

    def __call__(self, link):
        self.spans.append(link["span"]["start"])
        return None


cdef bint _in_heading(list spans, list headings):
    """Whether a broken reference at one of ``spans`` lies in one of ``headings`` (ranges
    in document order, which do not overlap): a bisection each, so a run with many of both
    costs no product of the two."""
    cdef list starts = [start for start, _ in headings]
    cdef Py_ssize_t k
    for at in spans:
        k = _bisect_right(starts, at) - 1
        if k >= 0 and at < headings[k][1]:
            return True
    return False


cdef list _titles(list heads, events):
    """The titles of these ATX heading lines, as the walk gives them in the document; None
    where a title might read a link reference definition (the heads are parsed alone)."""
    if not heads:
        return []
    text = "\n\n".join(heads) + "\n"
    builder = TreeBuilder(text, line_starts(text), 0)
    broken = _Broken()
    try:
        Walker(builder, text, 0).walk(events(text, broken))
    except Disagree:
        return None
    found = builder.root.children
    if broken.spans or len(found) != len(heads):
        return None
    for block in found:
        if block.kind != "heading":
            return None
    return [block.title for block in found]


def walk_segments(TreeBuilder builder, str rest, Py_ssize_t first, events):
    """Feed ``builder`` the blocks of ``rest`` (the text from line ``first`` on) segment by
    segment: the scanner's certain blocks directly, each delegated run by walking
    ``events(run, broken_link_callback)``, pulldown-cmark's events of that run alone.

    Returns:
        ``False`` where a heading holds a link reference (its title would read the
        definitions, which a run parsed alone does not see): the builder is then half fed
        and the caller walks the whole text afresh. ``True`` when every block is in.

    Raises:
        Disagree: As the whole walk would (the runs parse as they do in the document).
    """
    cdef list starts = builder.starts if first == 0 and rest is builder.text else line_starts(rest)
    cdef list segs = _segments(rest, starts)
    cdef Py_ssize_t n_lines = len(starts)
    cdef Py_ssize_t k = 0
    cdef Walker walker
    heads = [rest[_int(starts, seg[1]) : _end_of(rest, starts, seg[1], len(rest))]
             for seg in segs if seg[0] == HEADING]
    titles = _titles(heads, events)
    if titles is None:
        return False
    for kind, a, b, level in segs:
        if kind == PARAGRAPH:
            builder.open("paragraph", a + first, b + first)
            builder.close()
        elif kind == HEADING:
            builder.open("heading", a + first, b + first, level)
            builder.set_title(titles[k])
            k += 1
            builder.close()
        elif kind == CODE:
            builder.leaf("code", a + first, b + first,
                         _fenced(builder.text, builder.starts, a + first, ""))
        elif kind == HTML:
            builder.leaf("html", a + first, b + first, {})
        elif kind == QUOTE:  # the walk's blockquote and paragraph over the same lines
            builder.open("blockquote", a + first, b + first)
            builder.open("paragraph", a + first, b + first)
            builder.close()
            builder.close()
        elif kind == LIST:
            for step, a, b in level:
                if step == OPEN_LIST:
                    builder.open("list", a + first, b + first)
                elif step == OPEN_ITEM:
                    builder.open("item", a + first, b + first)
                elif step == TEXT:  # a tight item's text: the paragraph the walk makes
                    builder.open("paragraph", a + first, b + first)
                    builder.close()
                else:
                    builder.close()
        else:
            base = _int(starts, a)
            run = rest[base : _int(starts, b)] if b < n_lines else rest[base:]
            # the run's line starts are the text's, shifted (line_starts(run) would add
            # the empty line after its final line break as well: so does starts[b])
            walker = Walker(builder, run, first + a, _shifted(starts, a, min(b + 1, n_lines), base))
            broken = _Broken()
            walker.walk(events(run, broken))
            if broken.spans and _in_heading(broken.spans, walker.heading_spans):
                return False
    return True
