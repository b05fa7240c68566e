"""Markdown blocks from pulldown-cmark's events (``pyromark``), about ten times faster.

The same Blocks as markdown-it-py's path (:func:`fissure.parse.markdown.markdown_it_blocks`):
both reduce each block to the lines it covers and build the tree with one
:class:`~fissure.parse.mdtree.TreeBuilder`. pulldown-cmark reports UTF-8 byte ranges, so a
range becomes lines by bisecting the lines' byte starts (the character starts themselves
when the text is ASCII). Where the event streams differ in shape, this module restores
markdown-it's: a tight list item's text, which has no paragraph event, becomes a paragraph;
a table head is its first row; front matter is found by markdown-it's own rule (pulldown's
YAML blocks differ at the edges); a heading's title is its inline text, image labels raw.
Where the two parsers genuinely disagree on CommonMark, see ``docs/markdown-parsers.md``.

``pyromark`` is a compiled twin like the Cython modules: ``FISSURE_PURE_PYTHON=1`` (or
``pyromark`` missing) runs markdown-it-py instead.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import cache
from itertools import accumulate
from types import ModuleType
from typing import Any

from fissure._compiled import pure_python, twin
from fissure.parse.mdtree import TITLE_SOURCE_LIMIT, Disagree, TreeBuilder, plain_title
from fissure.parse.text import line_end, line_starts, nest_sections, with_wiki_headings
from fissure.types import Block

# markdown-it stops nesting at 20 token levels (maxNesting) and drops what is deeper; a
# document that nests blocks this deep is left to it.
_DEEP = 12
_BLANK = frozenset((" ", "\t", "\r", "\n", 32, 9, 13, 10))  # str and bytes items
# A line a GFM table's delimiter row could be (markdown-it's table rule reads it so).
_DELIMITER_ROW = re.compile(r"^[ \t>]*[|:-][ \t|:-]*\r?$", re.MULTILINE)
_FENCE = re.compile(r"([`~])\1{2,}")
_LEAVES = {"CodeBlock": "code", "HtmlBlock": "html"}
_CONTAINERS = {"Paragraph": "paragraph", "BlockQuote": "blockquote", "List": "list",
               "Item": "item", "Table": "table"}  # fmt: skip
_INLINE_CONTAINERS = {"Emphasis", "Strong", "Strikethrough", "Link", "Image", "TableCell"}
# The walk and the tree builder, compiled (same Blocks; see _mdwalk.pyx), when built.
_walk = twin("fissure.parse._mdwalk")
# Characters that send a text to the whole walk instead of the top-level scanner: old Mac
# line breaks, and what pulldown-cmark may count as whitespace or replaces (vertical tab,
# form feed, NUL); a byte order mark in front does too. (`in` per character: a regex over
# the text costs 40 times more.)
_UNSCANNED = ("\r", "\v", "\f", "\0")


@cache
def _pyromark() -> ModuleType | None:
    if pure_python():
        return None
    try:
        import pyromark
    except ImportError:
        return None
    return pyromark


def available() -> bool:
    """Whether this path runs: ``pyromark`` imports and ``FISSURE_PURE_PYTHON`` is unset."""
    return _pyromark() is not None


def markdown_blocks(text: str, offset: int = 0) -> tuple[Block, ...] | None:
    """The Block tree of Markdown ``text`` (offsets shifted by ``offset``) via pulldown-cmark.

    Returns:
        The blocks, or ``None`` where pulldown-cmark disagrees with markdown-it-py and
        markdown-it is right (``docs/markdown-parsers.md``): the caller parses it there.

    Raises:
        RuntimeError: ``pyromark`` is not there (ask :func:`available` first).
    """
    pyromark = _pyromark()
    if pyromark is None:
        raise RuntimeError("pyromark is not importable; `pip install pyromark` or use markdown-it")
    starts = (line_starts if _walk is None else _walk.line_starts)(text)
    first = _front_matter(text, starts)
    rest = text[starts[first] :] if first < len(starts) else ""
    try:
        builder = _walked(text, starts, offset, first, rest)
    except Disagree:
        return None
    nest = nest_sections if _walk is None else _walk.nest_sections
    return nest(with_wiki_headings(text, builder.blocks(), offset))  # type: ignore[no-any-return]


def _builder(text: str, starts: list[int], offset: int, first: int) -> Any:
    builder = (TreeBuilder if _walk is None else _walk.TreeBuilder)(text, starts, offset)
    if first:
        builder.leaf("front_matter", 0, first, {"format": "yaml"})
    return builder


def _walked(text: str, starts: list[int], offset: int, first: int, rest: str) -> Any:
    """The tree builder fed with the blocks of ``rest`` (``text`` from line ``first``).

    The compiled walk first tries the segments of its top-level scanner (certain blocks
    built directly, the rest walked run by run); where it is not sure, or the text has
    characters the scanner leaves alone, the whole of ``rest`` is walked.
    """
    scan = not rest.startswith("\ufeff") and not any(c in rest for c in _UNSCANNED)
    if rest and _walk is not None and scan:
        builder = _builder(text, starts, offset, first)
        if _walk.walk_segments(builder, rest, first, _events):
            return builder
    builder = _builder(text, starts, offset, first)
    if rest:
        events = _events(rest)
        (_Walker if _walk is None else _walk.Walker)(builder, rest, first).walk(events)
    return builder


def _events(text: str, broken: Any = None) -> Any:
    """pulldown-cmark's events with their byte ranges; ``broken`` hears of every link
    reference that the text does not define."""
    pyromark = _pyromark()
    assert pyromark is not None
    options = pyromark.Options.ENABLE_TABLES
    return pyromark.events_with_range(text, options=options, broken_link_callback=broken)


def _front_matter(text: str, starts: list[int]) -> int:
    """Lines of front matter at the top (0: none), by mdit_py_plugins' front_matter rule."""
    markers = len(text) - len(text.lstrip("-"))
    if markers < 3 or "\n" not in text and "\r" not in text:
        return 0
    for line in range(1, len(starts)):
        row = text[starts[line] : line_end(text, starts, line)]
        body = row.lstrip(" \t")
        indent = len(row[: len(row) - len(body)].expandtabs(4))
        if indent == 0 and body.startswith("...") and not body[3:].strip(" \t"):
            return line + 1
        if indent < 4 and body.startswith("-"):
            dashes = len(body) - len(body.lstrip("-"))
            if dashes >= markers and not body[dashes:].strip(" \t"):
                return line + 1
    return 0


class _Walker:
    """Feeds pulldown-cmark's events to the tree builder as markdown-it's line spans."""

    def __init__(self, builder: TreeBuilder, text: str, first_line: int) -> None:
        self.builder, self.text, self.first_line = builder, text, first_line
        starts = line_starts(text)
        self.data = None if text.isascii() else text.encode()
        self.byte_starts = starts if self.data is None else _byte_starts(text, starts)
        self.kinds: list[str | None] = []  # per open block event: the builder frame it opened
        self.loose: tuple[int, int] | None = None  # a tight item's text: (first byte, end byte)
        self.title: list[str] | None = None  # inside a heading: its title's pieces
        self.title_span: list[int] = []
        self.by_source = False  # the heading's title is markdown-it's reading of its source
        self.image: int | None = None  # inside a heading's image: where its label starts
        self.item_end = 0  # where the last list item ended (byte)
        self.skip = False  # inside a leaf (code, html): its inner events add nothing

    def lines(self, start: int, end: int) -> tuple[int, int]:
        """Byte range -> ``[first, last)`` lines of the whole document."""
        # A range may end past a line break, on the next line's indentation (a nested
        # list before an indented paragraph): whitespace there must not claim that line.
        source = self.text if self.data is None else self.data
        while end > start + 1 and source[end - 1] in _BLANK:
            end -= 1
        first = bisect_right(self.byte_starts, start) - 1
        last = bisect_right(self.byte_starts, max(start, end - 1))
        return first + self.first_line, last + self.first_line

    def walk(self, events: Any) -> None:
        for event, span in events:
            if type(event) is dict:
                if (tag := event.get("Start")) is not None:
                    self.start(tag, span)
                elif (tag := event.get("End")) is not None:
                    self.end(tag, span)
                elif not self.skip:
                    self.inline(event, span)
            elif event == "Rule":
                self.flush()
                self.builder.leaf("thematic_break", *self.lines(span["start"], span["end"]), {})
            elif not self.skip:
                self.inline(event, span)
        self.flush()

    def start(self, tag: Any, span: dict[str, int]) -> None:
        name = tag if type(tag) is str else next(iter(tag))
        if name in _INLINE_CONTAINERS:
            if self.title is not None and name in ("Link", "Image"):
                # markdown-it titles a heading without the document's definitions: a
                # reference link stays its source text, so let it title this one
                self.by_source |= tag[name]["link_type"] not in ("Inline", "Autolink", "Email")
            if self.title is not None and name == "Image":
                self.image = span["start"] + 2
            elif not self.skip:
                self.inline(None, span)
            return
        self.flush()
        if len(self.kinds) >= _DEEP:
            raise Disagree
        lines = self.lines(span["start"], span["end"])
        if name in _LEAVES:
            self.builder.leaf(_LEAVES[name], *lines, self.leaf_metadata(tag, lines))
            self.skip = True
        elif name == "Heading":
            self.builder.open("heading", *lines, int(tag["Heading"]["level"][1]))
            self.title, self.title_span = [], []
        elif name in ("TableHead", "TableRow"):
            self.check_row(lines[0])
            self.builder.open_row(*lines)
        else:
            self.builder.open(_CONTAINERS.get(name), *lines)
        self.kinds.append(name)

    def end(self, tag: Any, span: dict[str, int]) -> None:
        name = tag if type(tag) is str else next(iter(tag))
        if name in _INLINE_CONTAINERS:
            if self.image is not None and name == "Image":
                self.image_label(span)
            return
        if name in _LEAVES:
            self.skip = False
            self.kinds.pop()
            return
        self.flush()
        if name == "Paragraph":
            self.check_table(span["start"], span["end"])
        elif name == "Item":
            self.item_end = span["end"]
        elif name == "List":  # pulldown's list range runs on over link reference definitions
            frame = self.builder.stack[-1]  # and the next line's "> ": end at its last item
            frame.last_line = self.lines(span["start"], self.item_end)[1]
        if name == "Heading":
            self.check_table(span["start"], span["end"])  # a setext heading's lines
            self.builder.set_title(self.heading_title())
            self.title, self.by_source = None, False
        self.kinds.pop()
        self.builder.close()

    def inline(self, event: Any, span: dict[str, int]) -> None:
        if self.title is not None:
            if self.image is None:
                self.title_span.append(span["start"])
                self.title_span.append(span["end"])
                self.title.append(_plain(event))
            return
        if self.kinds and self.kinds[-1] == "Item":  # a tight list item's text: a paragraph
            if self.loose is None:
                self.loose = (span["start"], span["end"])
            else:
                self.loose = (self.loose[0], span["end"])

    def flush(self) -> None:
        """Close the pending tight-item paragraph before the next block event."""
        if self.loose is not None:
            self.check_table(*self.loose)
            self.builder.open("paragraph", *self.lines(*self.loose))
            self.builder.close()
            self.loose = None

    def check_table(self, start: int, end: int) -> None:
        """A paragraph line then a delimiter row is a GFM table that pulldown-cmark does not
        let interrupt a paragraph (cmark-gfm and markdown-it do): markdown-it parses it."""
        source = self.source(start, end)
        if "|" in source and "-" in source:
            second = source.find("\n") + 1
            if second and _DELIMITER_ROW.search(source, second):
                raise Disagree

    def check_row(self, line: int) -> None:
        """A row indented as code ends markdown-it's table (the GFM spec does not say)."""
        text, starts = self.builder.text, self.builder.starts
        row = text[starts[line] : starts[line] + 8]
        if len(row[: len(row) - len(row.lstrip(" \t"))].expandtabs(4)) >= 4:
            raise Disagree

    def image_label(self, span: dict[str, int]) -> None:
        """An image in a heading titles it by its raw label, as markdown-it's image token."""
        start, self.image = self.image, None
        assert start is not None
        source = self.source(start, span["end"])
        close = source.rfind("](") if "](" in source else source.rfind("][")
        label = source[:close] if close >= 0 else source.rstrip("]")
        self.title_span += [span["start"], span["end"]]
        self.title.append(label)  # type: ignore[union-attr]

    def heading_title(self) -> str:
        pieces, span = self.title or [], self.title_span
        if span and (self.by_source or max(span) - min(span) > TITLE_SOURCE_LIMIT):
            return plain_title(self.source(min(span), max(span)))
        return " ".join("".join(pieces).split()).replace("\0", "\ufffd")  # as markdown-it

    def source(self, start: int, end: int) -> str:
        if self.data is None:
            return self.text[start:end]
        return self.data[start:end].decode(errors="replace")

    def leaf_metadata(self, tag: Any, lines: tuple[int, int]) -> dict[str, Any]:
        if tag == "HtmlBlock":
            return {}
        block = tag["CodeBlock"]
        if block == "Indented":
            return {"lang": None, "fenced": False}
        # markdown-it keeps the info string raw (pulldown unescapes it): read it off the line
        first = self.builder.starts[lines[0]]
        row = self.builder.text[first : line_end(self.builder.text, self.builder.starts, lines[0])]
        fence = _FENCE.search(row)
        info = row[fence.end() :].strip() if fence else block["Fenced"].strip()
        info = info.replace("\0", "\ufffd")  # markdown-it reads NUL so
        return {"lang": info.split()[0] if info else None, "fenced": True}


def _byte_starts(text: str, starts: list[int]) -> list[int]:
    """UTF-8 byte offsets of the line starts of a non-ASCII text."""
    ends = [*starts[1:], len(text)]
    lengths = (len(text[a:b].encode()) for a, b in zip(starts, ends, strict=True))
    return list(accumulate(lengths, initial=0))[:-1]


def _plain(event: Any) -> str:
    """The plain text an inline event adds to a heading title (markdown-it's choice)."""
    if event in ("SoftBreak", "HardBreak"):
        return " "
    if type(event) is dict:
        text = event.get("Text")
        if text is None:
            text = event.get("Code")
        return text if text is not None else ""
    return ""
