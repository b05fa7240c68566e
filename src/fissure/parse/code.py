"""Source code in many languages → a Block tree of classes, functions and imports.

tree-sitter parses the file (it is error-tolerant, so a broken file still yields the
entities it can find); :mod:`fissure.parse.code_langs` says which nodes are entities in
each grammar. ``Document.text`` is the file itself. Every entity block starts at the first
comment or decorator line directly above it, so a chunk carries its documentation, and
nested entities (methods in classes, classes in namespaces) are its children.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from enum import IntEnum
from typing import Any

import numpy as np

from fissure import limits
from fissure.errors import InputError
from fissure.parse.code_langs import (
    COMMENT_TYPES,
    MIME_LANGUAGES,
    Entity,
    LangSpec,
    Node,
    load_language,
)
from fissure.spans import trim_end
from fissure.types import Block, Document

__all__ = ["CodeLevel", "SUPPORTED_MIMES", "language_for", "parse"]


class CodeLevel(IntEnum):
    """Rank of the boundary in front of a code block; lower is stronger."""

    NAMESPACE = 1  # namespace, module, mod
    TYPE = 2  # class, struct, interface, impl, trait, enum
    FUNCTION = 3  # a free function
    IMPORTS = 4  # a run of imports
    METHOD = 5  # a function inside a type


SUPPORTED_MIMES: tuple[str, ...] = tuple(MIME_LANGUAGES)

_TYPE_KINDS = frozenset({"class", "struct", "interface", "impl", "trait", "enum", "module"})
_LEVELS = {
    "namespace": CodeLevel.NAMESPACE,
    "module": CodeLevel.NAMESPACE,
    "function": CodeLevel.FUNCTION,
    "method": CodeLevel.METHOD,
    "imports": CodeLevel.IMPORTS,
} | {kind: CodeLevel.TYPE for kind in _TYPE_KINDS - {"module"}}
_LEVEL_INTS = {kind: int(level) for kind, level in _LEVELS.items()}
_FUNCTION = int(CodeLevel.FUNCTION)
# A function directly inside one of these is a method (a Rust ``mod`` or Ruby ``module``
# only groups functions).
_METHOD_OWNERS = _TYPE_KINDS - {"module"}
# Deeper entities stay inside their ancestor's block: a tree this deep helps no splitter,
# and consumers of Block trees may recurse.
_MAX_DEPTH = 32


def language_for(mime: str) -> str:
    """The language name fissure parses ``mime`` as.

    Raises:
        InputError: The MIME type is not a supported programming language.
    """
    try:
        return MIME_LANGUAGES[mime]
    except KeyError:
        known = ", ".join(sorted(MIME_LANGUAGES))
        raise InputError(f"no code parser for MIME type {mime!r}; use one of: {known}") from None


def parse(text: str, *, source: str, mime: str) -> Document:
    """Parse source code into a Document whose blocks are its entities and imports.

    Args:
        text: The source file, decoded.
        source: Path or URI, recorded on the Document.
        mime: One of :data:`SUPPORTED_MIMES` (``text/x-rust``, ``text/x-go`` …).

    Returns:
        A Document whose ``text`` is ``text`` and whose blocks are ``class``/``struct``/
        ``interface``/``impl``/``trait``/``enum``/``module``/``namespace``, ``function``,
        ``method`` (title = name, ``metadata["entity"]`` = qualified name such as
        ``Server.handle``) and ``imports``. ``metadata`` has ``language`` and
        ``syntax_errors`` (True when tree-sitter had to recover from errors).

    Raises:
        InputError: ``mime`` is not a supported language.
        MissingDependencyError: The grammar wheel for the language is not installed.
        ValueError: The source is over :data:`fissure.limits.MAX_TREE_SITTER_BYTES` (a
            syntax tree costs up to 45 bytes per byte of source, a query over it tens of
            seconds); the registry then parses it as plain text and says why.
    """
    import tree_sitter

    from fissure.parse.code_langs import LANGUAGES

    spec = LANGUAGES[language_for(mime)]
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > limits.MAX_TREE_SITTER_BYTES:
        raise ValueError(
            f"{len(data):,} bytes of source is over the {limits.MAX_TREE_SITTER_BYTES:,}-byte "
            "limit for syntax trees"
        )
    language, query = load_language(spec)
    tree = tree_sitter.Parser(language).parse(data)
    walker = _Walker(spec, data, text)
    walker.walk(tree.root_node, query)
    metadata = {"language": spec.name, "syntax_errors": bool(tree.root_node.has_error)}
    return Document.from_text(
        text, source=source, mime=mime, blocks=walker.blocks(), metadata=metadata
    )


def _char_offsets(data: bytes, text: str) -> Callable[[int], int]:
    """A byte offset → character offset function, O(1) per call after one O(n) pass."""
    if len(data) == len(text):
        return int
    # A character starts at every byte that is not a UTF-8 continuation byte (10xxxxxx).
    starts = (np.frombuffer(data, dtype=np.uint8) & 0xC0) != 0x80
    prefix = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum(starts, out=prefix[1:])
    table = prefix.tolist() if len(data) < 1 << 16 else prefix
    return lambda b: int(table[b])


class _Frame:
    """A block under construction (Blocks are frozen, so children are gathered here)."""

    __slots__ = ("kind", "start", "end", "node_start", "title", "entity", "meta", "children")

    def __init__(
        self,
        kind: str,
        start: int,
        end: int,
        node_start: int,
        title: str | None,
        entity: str,
        meta: dict[str, Any],
    ) -> None:
        self.kind, self.start, self.end, self.node_start = kind, start, end, node_start
        self.title, self.entity, self.meta = title, entity, meta
        self.children: list[_Frame] = []


class _Walker:
    """Turns the query's captures into frames: entities nested by span, imports in runs."""

    def __init__(self, spec: LangSpec, data: bytes, text: str) -> None:
        self.spec, self.data, self.text = spec, data, text
        self.char = _char_offsets(data, text)
        self.root = _Frame("root", 0, len(text), 0, None, "", {})
        self.prefix_starts: list[int] = []
        self.prefix_ends: list[int] = []

    def walk(self, root: Node, query: Any) -> None:
        """Build the frames from one run of ``query`` over the tree under ``root``."""
        import tree_sitter

        cursor = tree_sitter.QueryCursor(query)
        # Matching deeper than this takes minutes on 80,000 nested functions, and entities
        # nest _MAX_DEPTH deep at most anyway.
        cursor.set_max_start_depth(limits.MAX_QUERY_DEPTH)
        captures = cursor.captures(root)
        prefixes = sorted((n.start_byte, n.end_byte) for n in captures.get("prefix", ()))
        self.prefix_starts = [start for start, _ in prefixes]
        self.prefix_ends = [end for _, end in prefixes]
        # Wrappers are looked up from above: Node.parent costs O(depth) in tree-sitter.
        wrapper_of = {c: w for w in captures.get("wrapper", ()) for c in w.named_children}
        items: list[tuple[int, int, Entity | None, list[Node]]] = []
        for node in captures.get("entity", ()):
            found = self.spec.entity(node)
            if found is not None and found.name:
                outer = found.outer
                while outer in wrapper_of:
                    outer = wrapper_of[outer]
                items.append((outer.start_byte, -outer.end_byte, found, [outer]))
        for run in _import_runs(captures.get("import", ())):
            items.append((run[0].start_byte, -run[-1].end_byte, None, run))
        items.sort(key=lambda item: (item[0], item[1]))
        self._nest(items)

    def _nest(self, items: list[tuple[int, int, Entity | None, list[Node]]]) -> None:
        """Hang each item under the innermost open entity whose span holds it."""
        open_: list[tuple[_Frame, int, int]] = []  # (frame, start byte, end byte)
        for start, neg_end, found, nodes in items:
            while open_ and open_[-1][2] <= start:
                open_.pop()
            parent, floor = (open_[-1][0], open_[-1][1]) if open_ else (self.root, 0)
            if found is None:
                self._add_imports(nodes, parent)
            elif len(open_) < _MAX_DEPTH:
                frame = self._entity(found, nodes[0], parent, floor)
                open_.append((frame, start, -neg_end))

    def _entity(self, found: Entity, outer: Node, parent: _Frame, floor: int) -> _Frame:
        kind = found.kind
        if kind == "function" and parent.kind in _METHOD_OWNERS:
            kind = "method"
        start_byte = self._leading(outer.start_byte, floor)
        entity = ".".join(p for p in (parent.entity, found.qualifier, found.name) if p)
        start, end = trim_end(self.text, self.char(start_byte), self.char(outer.end_byte))
        frame = _Frame(
            kind,
            start,
            end,
            self.char(outer.start_byte),
            found.name,
            entity,
            {"entity": entity, **(found.metadata or {})},
        )
        parent.children.append(frame)
        return frame

    def _leading(self, start: int, floor: int) -> int:
        """Move ``start`` up over the comments and decorators directly above it."""
        data = self.data
        i = bisect.bisect_left(self.prefix_starts, start) - 1
        while i >= 0:
            p_start, p_end = self.prefix_starts[i], self.prefix_ends[i]
            if p_start < floor or p_end > start:
                break
            gap = data[p_end:start]
            # A blank line, or code between, detaches the comment; some grammars keep
            # the newline that ends a line comment inside the comment node.
            newlines = gap.count(b"\n") + data[p_end - 1 : p_end].count(b"\n")
            if gap.strip() or newlines > 1:
                break
            line_start = data.rfind(b"\n", 0, p_start) + 1
            if data[line_start:p_start].strip():
                break  # a trailing comment belongs to the code before it
            start, i = p_start, i - 1
        return start

    def _add_imports(self, run: list[Node], parent: _Frame) -> None:
        start, end = trim_end(self.text, self.char(run[0].start_byte), self.char(run[-1].end_byte))
        frame = _Frame("imports", start, end, start, None, parent.entity, {"count": len(run)})
        parent.children.append(frame)

    def blocks(self) -> tuple[Block, ...]:
        """Freeze the frames into Blocks, children first, without recursion."""
        order: list[_Frame] = []
        stack = [self.root]
        while stack:
            frame = stack.pop()
            order.append(frame)
            if frame.children:
                frame.children = _tidy(frame)  # top-down, before any child is frozen
                stack.extend(frame.children)
        built: dict[int, Block] = {}
        pop = built.pop
        for frame in reversed(order):
            kids = tuple([pop(id(k)) for k in frame.children]) if frame.children else ()
            # Positional arguments: keywords cost a dataclass __init__ noticeably more.
            built[id(frame)] = Block(
                frame.kind, frame.start, frame.end, _LEVEL_INTS.get(frame.kind, _FUNCTION),
                frame.title, kids, frame.meta,
            )  # fmt: skip
        return built[id(self.root)].children


def _import_runs(nodes: Any) -> list[list[Node]]:
    """Group import nodes into runs of siblings with nothing but comments between them."""
    runs: list[list[Node]] = []
    for node in sorted(nodes, key=lambda n: n.start_byte):
        before = node.prev_named_sibling
        while before is not None and before.type in COMMENT_TYPES:
            before = before.prev_named_sibling
        if runs and before is not None and before == runs[-1][-1]:
            runs[-1].append(node)
        else:
            runs.append([node])
    return runs


def _tidy(parent: _Frame) -> list[_Frame]:
    """Sort children and keep them strictly inside ``parent`` and apart from each other.

    Error recovery can make odd spans; a leading comment may also reach back into the
    previous sibling (a comment at the end of one body, above the next entity). Such a
    child falls back to its own node start, or is dropped (with its children).
    """
    kept: list[_Frame] = []
    low = parent.start if parent.kind != "root" else 0
    for child in sorted(parent.children, key=lambda f: (f.start, -f.end)):
        floor = kept[-1].end if kept else low
        if child.start < floor:
            child.start = child.node_start
        if child.start < floor or child.end > parent.end or child.end <= child.start:
            continue
        kept.append(child)
    return kept
