"""HTML → readable text with sections by heading, paragraphs, code, tables and lists.

``Document.text`` is text fissure writes from the page: paragraphs apart by a blank line,
``<pre>`` verbatim, list items one per line (``- `` or ``1. ``), table rows one per line
with cells joined by `` | ``. Scripts, styles, navigation, headers, footers, asides and
forms are dropped. Sections nest by h1…h6 whatever the DOM nesting, and every block
records its element path (``html>body>main>p``) in ``metadata["path"]``.

The DOM is walked with an explicit stack, so 10,000 nested elements are no problem; tags
nested past :data:`fissure.limits.MAX_HTML_DEPTH` are dropped before the tree is built (the
tree builder's work grows with the square of the depth), their text kept, and
``metadata["fallback"]`` says so.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from fissure import limits
from fissure.errors import InputError
from fissure.parse import text as plain
from fissure.parse.htmldepth import cap_depth, text_of
from fissure.parse.outline import BLOCK_GAP, LINE_GAP, Outline
from fissure.types import Document

__all__ = ["HtmlLevel", "parse"]


class HtmlLevel(IntEnum):
    """Rank of the boundary in front of an HTML block; lower is stronger."""

    H1 = 1
    H2 = 2
    H3 = 3
    H4 = 4
    H5 = 5
    H6 = 6
    BLOCK = 7  # paragraph, code, table, list
    LINE = 8  # table row, list item


# Chrome and machinery, not content.
_DROPPED = [
    "head",
    "script",
    "style",
    "noscript",
    "template",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "button",
    "select",
    "textarea",
    "iframe",
    "object",
    "embed",
    "svg",
    "canvas",
    "map",
    "dialog",
]
# Elements whose text flows into the surrounding paragraph.
_INLINE = frozenset(
    {
        "a",
        "abbr",
        "b",
        "bdi",
        "bdo",
        "cite",
        "code",
        "data",
        "del",
        "dfn",
        "em",
        "font",
        "i",
        "img",
        "ins",
        "kbd",
        "label",
        "mark",
        "q",
        "rp",
        "rt",
        "ruby",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "time",
        "tt",
        "u",
        "var",
        "wbr",
        "big",
        "strike",
        "acronym",
    }
)
_PARAGRAPHS = frozenset({"p", "dt", "dd", "figcaption", "caption", "address", "summary"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BREAK = "\x00"  # stands for <br> until whitespace is collapsed; HTML text has no NULs
_MAX_DEPTH = 24  # list nesting kept as blocks; deeper lists flow into their item's line
_PATH_HEAD, _PATH_TAIL = 3, 24  # element paths keep this many tags at each end


def parse(html: str, *, source: str, mime: str = "text/html") -> Document:
    """Parse HTML into a Document of its readable text and a Block tree.

    Args:
        html: The page, decoded.
        source: Path or URI, recorded on the Document.
        mime: Recorded on the Document.

    Returns:
        A Document whose blocks are ``section`` (title = heading text; first child is the
        ``heading``), ``paragraph``, ``code``, ``table`` (``row`` children) and ``list``
        (``item`` children, which may hold nested lists). ``metadata["title"]`` is the
        page ``<title>`` when there is one.

    Raises:
        InputError: ``html`` is not a string.
    """
    if not isinstance(html, str):
        raise InputError(f"HTML must be decoded text, not {type(html).__name__}; decode it first")
    from selectolax.lexbor import LexborHTMLParser

    if html.count("<") > limits.MAX_HTML_TAGS:  # a tree costs a few hundred bytes per element
        return _as_text(html, source, mime)
    html, depth = cap_depth(html, limits.MAX_HTML_DEPTH)
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("head > title")
    title = _collapse(title_node.text()) if title_node is not None else ""
    tree.strip_tags(_DROPPED)
    for br in tree.css("br"):
        br.replace_with(_BREAK)
    walker = _Walker()
    if tree.root is not None:
        walker.walk(tree.root)
    text, blocks = walker.out.finish()
    metadata: dict[str, Any] = {"title": title} if title else {}
    if walker.out.capped:
        metadata["fallback"] = f"over {limits.MAX_BLOCKS:,} blocks: the rest has none"
    if depth > limits.MAX_HTML_DEPTH:
        metadata["fallback"] = (
            f"HTML nests {depth} elements deep: tags past {limits.MAX_HTML_DEPTH} levels were "
            "dropped before parsing (their text is kept)"
        )
    return Document.from_text(text, source=source, mime=mime, blocks=blocks, metadata=metadata)


def _as_text(html: str, source: str, mime: str) -> Document:
    """A page too big for a tree: its text without markup, parsed as plain text."""
    document = plain.parse(text_of(html), source=source)
    why = (
        f"over {limits.MAX_HTML_TAGS:,} tags: the markup was dropped and the text parsed as "
        "plain text"
    )
    metadata = {**document.metadata, "fallback": why}
    return Document.from_text(
        document.text, source=source, mime=mime, blocks=document.blocks, metadata=metadata
    )


def _collapse(text: str, *, breaks: str = "\n") -> str:
    """HTML whitespace rules: runs of whitespace are one space; ``<br>`` is ``breaks``."""
    lines = (" ".join(line.split()) for line in text.split(_BREAK))
    return breaks.join(line for line in lines if line)


def _path(tags: list[str]) -> str:
    if len(tags) > _PATH_HEAD + _PATH_TAIL:
        tags = [*tags[:_PATH_HEAD], "…", *tags[-_PATH_TAIL:]]
    return ">".join(tags)


class _Walker:
    """Depth-first over the DOM with an explicit stack; writes into an :class:`Outline`."""

    def __init__(self) -> None:
        self.out = Outline()
        self.tags: list[str] = []
        self.inline: list[str] = []
        self.lists = 0  # open lists
        self.ordinals: list[int] = []  # next number of each open list, 0 when unordered
        self.opened: list[bool] = []  # whether each open list made a block

    def walk(self, root: Any) -> None:
        """Visit ``root`` and everything under it."""
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            node, leaving = stack.pop()
            if leaving:
                self._leave(node.tag)
                continue
            if node.is_text_node:
                self.inline.append(node.text_content or "")
                continue
            tag = node.tag
            if not node.is_element_node or tag in _INLINE:
                if node.is_element_node:
                    self.inline.append(node.text(deep=True))
                continue
            self._flush()
            self.tags.append(tag)
            if self._leaf(node, tag):
                self.tags.pop()
                continue
            children = self._enter(node, tag)
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(children))

    def _meta(self) -> dict[str, Any]:
        return {"path": _path(self.tags)}

    def _flush(self) -> None:
        """Loose text between blocks becomes a paragraph of its own."""
        if self.inline:
            text = _collapse("".join(self.inline))
            self.inline.clear()
            self.out.leaf("paragraph", text, level=HtmlLevel.BLOCK, metadata=self._meta())

    def _leaf(self, node: Any, tag: str) -> bool:
        """Write an element that is one block; False when ``node`` has children to visit."""
        out = self.out
        if tag in _HEADINGS:
            depth = _HEADINGS[tag]
            out.heading(
                depth, _collapse(node.text(), breaks=" "), level=depth, metadata=self._meta()
            )
        elif tag in _PARAGRAPHS:
            out.leaf(
                "paragraph", _collapse(node.text()), level=HtmlLevel.BLOCK, metadata=self._meta()
            )
        elif tag == "pre":
            out.leaf(
                "code",
                _verbatim(node.text()),
                level=HtmlLevel.BLOCK,
                metadata=self._meta() | _code_language(node),
            )
        elif tag == "table":
            self._table(node)
        elif tag == "hr":
            pass
        else:
            return False
        return True

    def _enter(self, node: Any, tag: str) -> list[Any]:
        """Open the block ``node`` starts, if any; the children to visit."""
        children = list(node.iter(include_text=True))
        if tag in ("ul", "ol"):
            # Past _MAX_DEPTH (lists nested without items) a list is no block of its own.
            opened = self.lists < _MAX_DEPTH
            if opened:
                gap = LINE_GAP if self.lists else BLOCK_GAP  # a nested list follows its item
                self.out.open("list", level=HtmlLevel.BLOCK, metadata=self._meta(), gap=gap)
            self.lists += 1
            self.ordinals.append(1 if tag == "ol" else 0)
            self.opened.append(opened)
        elif tag == "li":
            return self._item(node, children)
        return children

    def _leave(self, tag: str) -> None:
        self._flush()
        if tag in ("ul", "ol"):
            if self.opened.pop():
                self.out.close()
            self.lists -= 1
            self.ordinals.pop()
        elif tag == "li":
            self.out.close()
        self.tags.pop()

    def _item(self, node: Any, children: list[Any]) -> list[Any]:
        """Write a list item's own line; its nested lists are visited as children."""
        nested = [c for c in children if c.tag in ("ul", "ol") and self.lists < _MAX_DEPTH]
        own = [c for c in children if c.tag not in ("ul", "ol") or self.lists >= _MAX_DEPTH]
        line = _collapse("".join(_node_text(c) for c in own), breaks=" ")
        ordinal = self.ordinals[-1] if self.ordinals else 0
        bullet = f"{ordinal}." if ordinal else "-"
        if ordinal:
            self.ordinals[-1] += 1
        self.out.open("item", level=HtmlLevel.LINE, metadata=self._meta(), gap=LINE_GAP)
        indent = "  " * max(self.lists - 1, 0)
        self.out.write(f"{indent}{bullet} {line}".rstrip() if line or nested else "")
        return nested

    def _table(self, table: Any) -> None:
        """A ``table`` block: its caption (a ``caption`` child, and the table's title), then
        one ``row`` per row; rows of ``<thead>``, or a first row of ``<th>`` cells, are
        header rows (``metadata["header"]``)."""
        caption = next((c for c in table.iter() if c.tag == "caption"), None)
        title = _collapse(caption.text(), breaks=" ") if caption is not None else None
        self.out.open("table", level=HtmlLevel.BLOCK, title=title, metadata=self._meta())
        if title:
            self.out.leaf("caption", title, level=HtmlLevel.BLOCK, metadata=self._meta())
        rows = _rows(table)
        in_head = any(section == ["thead"] for section, _ in rows)
        for n, (section, row) in enumerate(rows):
            tags = [cell.tag for cell in row.iter() if cell.tag in ("td", "th")]
            cells = [
                _collapse(cell.text(), breaks=" ")
                for cell in row.iter()
                if cell.tag in ("td", "th")
            ]
            if any(cells):
                meta: dict[str, Any] = {"path": _path([*self.tags, *section, "tr"])}
                if section == ["thead"] or (not in_head and n == 0 and set(tags) == {"th"}):
                    meta["header"] = True
                self.out.leaf(
                    "row", " | ".join(cells), level=HtmlLevel.LINE, metadata=meta, gap=LINE_GAP
                )
        self.out.close()


def _node_text(node: Any) -> str:
    if node.is_text_node:
        return node.text_content or ""
    return node.text(deep=True) if node.is_element_node else ""


def _verbatim(text: str) -> str:
    """``<pre>`` text as written, minus the blank lines around it."""
    return text.replace(_BREAK, "\n").strip("\n").rstrip()


def _code_language(pre: Any) -> dict[str, Any]:
    code = pre.css_first("code")
    classes = (code.attributes.get("class") or "") if code is not None else ""
    for name in classes.split():
        if name.startswith(("language-", "lang-")):
            return {"language": name.split("-", 1)[1]}
    return {}


def _rows(table: Any) -> list[tuple[list[str], Any]]:
    """The table's own rows (not those of tables nested in its cells), in order."""
    rows: list[tuple[list[str], Any]] = []
    for child in table.iter():
        if child.tag == "tr":
            rows.append(([], child))
        elif child.tag in ("thead", "tbody", "tfoot"):
            rows.extend(([child.tag], tr) for tr in child.iter() if tr.tag == "tr")
    return rows
