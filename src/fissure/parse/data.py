"""JSON and YAML: nested keys become blocks titled with the key, so a chunk's breadcrumb is
its key path (``services › web › ports``).

Offsets must be real character offsets into the original text, which ``json.loads`` and
``yaml.safe_load`` throw away. JSON therefore goes through a small iterative scanner here
(iterative, so 10,000 levels of nesting cannot exhaust the stack); YAML through PyYAML's
event stream with the safe loader (events carry exact marks and construct no objects).
Blocks stop at ``MAX_DEPTH`` levels: anything deeper stays inside its ancestor as one leaf.
Past :data:`fissure.limits.MAX_BLOCKS` members in one document (each block costs a few
hundred bytes), the rest gets no blocks and is split by its lines; ``metadata["fallback"]``
says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import IntEnum
from json.decoder import scanstring  # type: ignore[attr-defined]
from json.scanner import make_scanner

import yaml

from fissure import limits
from fissure.spans import trim_end
from fissure.types import Block, Document

JSON_MIME = "application/json"
YAML_MIME = "application/yaml"
MAX_DEPTH = 64
# PyYAML's pure-Python scanner manages roughly a megabyte a second (and stands in whenever
# libyaml is missing or fails); past this a YAML file is parsed as plain text (with the
# reason recorded) rather than stall a run.
MAX_YAML_CHARS = 8_000_000
# libyaml's parser, when PyYAML was built with it: the same events and marks, about ten
# times faster. Anything it refuses is parsed again by the pure-Python parser.
_FAST_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# PyYAML's scanner revisits every open flow level at each token, so deep ``[[[[`` nesting
# is quadratic (10,000 levels take about a minute); deeper YAML is parsed as plain text.
MAX_YAML_FLOW_DEPTH = 256


class DataLevel(IntEnum):
    """Boundary ranks in JSON and YAML (lower is stronger).

    A key or item at depth ``d`` (0 for the top level) ranks ``KEY + d``.
    """

    DOCUMENT = 0  # one document of a multi-document YAML stream
    KEY = 1


@dataclass
class _Node:
    """A collection with the spans of its members; scalars need no node."""

    start: int
    end: int = -1
    # (kind, title, start of the member, its value's node or None for a scalar, member end)
    members: list[tuple[str, str, int, _Node | None, int]] = field(default_factory=list)


def parse_json(text: str, *, source: str) -> Document:
    """Parse JSON into blocks: one per object member, and one per array element that is
    itself an object or array (titled ``[i]``).

    Args:
        text: The decoded document.
        source: Its path or URI.

    Returns:
        The document; members of a value nested deeper than ``MAX_DEPTH`` get no blocks.

    Raises:
        ValueError: The text is not JSON (the registry then falls back to plain text).
    """
    scanner = _JsonScanner(text)
    root = scanner.scan()
    blocks = _blocks(root, text, depth=0) if root is not None else ()
    metadata = {"fallback": _capped("JSON")} if scanner.budget.left <= 0 else {}
    return Document.from_text(text, source=source, mime=JSON_MIME, blocks=blocks, metadata=metadata)


def _capped(kind: str) -> str:
    return (
        f"{kind} with more than {limits.MAX_BLOCKS:,} keys and items: the rest has no "
        "blocks and is split by its lines"
    )


def parse_yaml(text: str, *, source: str) -> Document:
    """Parse YAML (safely: events only, nothing is constructed) into key blocks.

    Args:
        text: The decoded document.
        source: Its path or URI.

    Returns:
        The document; a stream of several YAML documents gets one ``document`` block each.

    Raises:
        ValueError: The text is too large, or not YAML (the registry then falls back).
    """
    if len(text) > MAX_YAML_CHARS:
        raise ValueError(f"YAML over {MAX_YAML_CHARS} characters is not parsed for structure")
    if _flow_depth(text) > MAX_YAML_FLOW_DEPTH:
        raise ValueError(f"YAML flow collections nest deeper than {MAX_YAML_FLOW_DEPTH} levels")
    # libyaml accepts tabs where PyYAML refuses them, and drops a byte order mark from its
    # offsets: such text goes straight to PyYAML.
    fast = _FAST_LOADER if "\t" not in text and "\ufeff" not in text else yaml.SafeLoader
    try:
        documents, capped = _yaml_documents(text, fast)
    except MemoryError:
        raise
    except Exception:  # PyYAML's own parser decides, and words the error, as it always has
        try:
            documents, capped = _yaml_documents(text, yaml.SafeLoader)
        except yaml.YAMLError as exc:
            raise ValueError(f"not valid YAML: {exc}") from None
    if len(documents) == 1:
        blocks = _blocks(documents[0], text, depth=0)
    else:
        blocks = tuple(
            Block("document", node.start, node.end, DataLevel.DOCUMENT, None,
                  _blocks(node, text, depth=1), {"document": index})
            for index, node in enumerate(documents)
            if node.end > node.start
        )  # fmt: skip
    metadata = {"fallback": _capped("YAML")} if capped else {}
    return Document.from_text(text, source=source, mime=YAML_MIME, blocks=blocks, metadata=metadata)


def _blocks(node: _Node, text: str, depth: int) -> tuple[Block, ...]:
    # Recursion is bounded by MAX_DEPTH, not by the input's nesting.
    blocks: list[Block] = []
    for kind, title, start, child, end in node.members:
        start, end = trim_end(text, start, end)
        if end <= start:
            continue
        nested = _blocks(child, text, depth + 1) if child and depth + 1 < MAX_DEPTH else ()
        blocks.append(Block(kind, start, end, DataLevel.KEY + depth, title, nested))
    return tuple(blocks)


_WHITESPACE = re.compile(r"[ \t\n\r]*")
# Strings and brackets: enough to find where a too-deep value ends without recursing.
_BRACKET_OR_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
_scan_once = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # the C scanner json.loads itself uses
_OPENED, _LEAF = object(), object()  # _value's answers besides None (a scalar)


@dataclass
class _Open:
    """A JSON collection whose members are being located."""

    closer: str
    node: _Node
    member_start: int = 0
    key: str = ""
    index: int = 0


class _JsonScanner:
    """Finds where every member of every JSON collection starts and ends.

    Iterative, so nesting depth cannot exhaust the stack. Values that need no blocks
    (scalars, arrays of scalars, anything below ``MAX_DEPTH``) are skipped by the C scanner
    that ``json.loads`` uses, so the Python loop runs once per member that becomes a block.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.budget = limits.BlockBudget()

    def scan(self) -> _Node | None:
        """The root collection's node (``None`` for a scalar document).

        Raises:
            ValueError: The text is not JSON; the message gives the offset.
        """
        stack: list[_Open] = []
        self._skip_whitespace()
        while True:
            finished = self._value(stack)
            if finished is _OPENED:
                if not self.text.startswith(stack[-1].closer, self.pos):
                    self._begin_member(stack[-1])
                    continue  # scan the new collection's first member
                finished = self._close(stack)
            while stack:  # a value ended: record it, then continue or close its parents
                self._record(stack[-1], finished)
                self._skip_whitespace()
                if self.text.startswith(",", self.pos):
                    self.pos += 1
                    self._begin_member(stack[-1])
                    break
                finished = self._close(stack)
            else:
                break  # the value that ended was the document itself
        self._skip_whitespace()
        if self.pos != len(self.text):
            self._fail("end of input", self.pos)
        return finished if isinstance(finished, _Node) else None

    def _value(self, stack: list[_Open]) -> object:
        """Open a collection that gets blocks (``_OPENED``), or skip a value to its end."""
        start, char = self.pos, self.text[self.pos : self.pos + 1]
        if char in ("{", "[") and len(stack) < MAX_DEPTH and self.budget.left > 0:
            flat_end = self._flat_array_end(start) if char == "[" else None
            if flat_end is None:
                stack.append(_Open("}" if char == "{" else "]", _Node(start)))
                self.pos = start + 1
                self._skip_whitespace()
                return _OPENED
            self.pos = flat_end
            return _LEAF
        self.pos = self._skip_value(start)
        return _LEAF if char in ("{", "[") else None

    def _flat_array_end(self, start: int) -> int | None:
        """End of the array at ``start`` if none of its elements is a collection."""
        try:
            value, end = _scan_once(self.text, start)
        except (RecursionError, ValueError, StopIteration):
            return None  # too deep for the C scanner, or malformed: walk it member by member
        if any(isinstance(item, list | dict) for item in value):
            return None
        return end

    def _skip_value(self, start: int) -> int:
        try:
            return _scan_once(self.text, start)[1]
        except StopIteration:
            self._fail("a JSON value", start)
        except json.JSONDecodeError as exc:
            self._fail(exc.msg, exc.pos)
        except RecursionError:
            return self._skip_balanced(start)
        raise AssertionError("unreachable")

    def _skip_balanced(self, start: int) -> int:
        depth = 0
        for match in _BRACKET_OR_STRING.finditer(self.text, start):
            token = match.group()
            if token in ("[", "{"):
                depth += 1
            elif token in ("]", "}"):
                depth -= 1
                if depth == 0:
                    return match.end()
        self._fail("a closing bracket", len(self.text))
        raise AssertionError("unreachable")

    def _close(self, stack: list[_Open]) -> _Node:
        top = stack.pop()
        if not self.text.startswith(top.closer, self.pos):
            self._fail(f"',' or '{top.closer}'", self.pos)
        self.pos += 1
        top.node.end = self.pos
        return top.node

    def _begin_member(self, top: _Open) -> None:
        self._skip_whitespace()
        top.member_start = self.pos
        if top.closer == "]":
            top.key, top.index = f"[{top.index}]", top.index + 1
            return
        if not self.text.startswith('"', self.pos):
            self._fail("an object key", self.pos)
        try:
            top.key, self.pos = scanstring(self.text, self.pos + 1)
        except json.JSONDecodeError as exc:
            self._fail(exc.msg, exc.pos)
        self._skip_whitespace()
        if not self.text.startswith(":", self.pos):
            self._fail("':'", self.pos)
        self.pos += 1
        self._skip_whitespace()

    def _record(self, top: _Open, finished: object) -> None:
        nested = finished if isinstance(finished, _Node) else None
        if top.closer == "]" and finished is None:
            return  # scalars in arrays get no block: a million numbers are not a million units
        if not self.budget.take():
            return
        kind = "item" if top.closer == "]" else "key"
        top.node.members.append((kind, top.key, top.member_start, nested, self.pos))

    def _skip_whitespace(self) -> None:
        self.pos = _WHITESPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def _fail(self, expected: str, offset: int) -> None:
        raise ValueError(f"not valid JSON: {expected} at offset {offset}")


@dataclass
class _YamlFrame:
    """A YAML collection (or the document itself) whose members are being located."""

    node: _Node
    kind: str  # "mapping", "sequence" or "document"
    flow: bool = False
    is_key: bool = False  # a collection used as a mapping key: consumed, not a member
    key: str | None = None  # a mapping's pending member title; None while expecting a key
    key_end: int = 0
    member_start: int = 0
    index: int = 0
    last_end: int = 0
    root: _Node | None = None  # for the document frame: its value


def _yaml_documents(text: str, loader: type) -> tuple[list[_Node], bool]:
    """One node per YAML document, built from the parser's events without recursion, and
    whether members were left out past ``MAX_BLOCKS``."""
    documents: list[_Node] = []
    stack: list[_YamlFrame] = []
    members = limits.BlockBudget()
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.CollectionStartEvent):
            parent = stack[-1]
            start = event.start_mark.index
            is_key = parent.kind == "mapping" and parent.key is None
            if not is_key and parent.kind == "sequence":
                parent.member_start = start
            kind = "mapping" if isinstance(event, yaml.MappingStartEvent) else "sequence"
            flow = bool(event.flow_style)
            stack.append(_YamlFrame(_Node(start), kind, flow=flow, is_key=is_key))
        elif isinstance(event, yaml.CollectionEndEvent):
            frame = stack.pop()
            end = event.end_mark.index if frame.flow else frame.last_end
            frame.node.end = max(end, frame.node.start)
            _yaml_value(stack[-1], text, frame.node.start, frame.node.end, frame.node, None,
                        members)  # fmt: skip
        elif isinstance(event, yaml.ScalarEvent | yaml.AliasEvent):
            title = event.value if isinstance(event, yaml.ScalarEvent) else f"*{event.anchor}"
            _yaml_value(stack[-1], text, event.start_mark.index, event.end_mark.index, None, title,
                        members)  # fmt: skip
        elif isinstance(event, yaml.DocumentStartEvent):
            stack = [_YamlFrame(_Node(event.end_mark.index), "document")]
        elif isinstance(event, yaml.DocumentEndEvent):
            documents.append(stack[0].root or _Node(0, 0))
    return documents, members.capped


def _yaml_value(
    parent: _YamlFrame,
    text: str,
    start: int,
    end: int,
    node: _Node | None,
    title: str | None,
    members: limits.BlockBudget,
) -> None:
    """Record a value (or a key) that just ended inside ``parent``."""
    if parent.kind == "document":
        parent.root = node or _Node(start, end)
        return
    if parent.kind == "mapping" and parent.key is None:
        # A key. A collection used as a key gets its source text as the title.
        parent.key = title if title is not None else " ".join(text[start:end].split())[:80]
        parent.member_start, parent.key_end = start, end
        parent.last_end = max(parent.last_end, end)
        return
    if parent.kind == "sequence":
        if node is None:
            parent.member_start = start
        title, parent.index = f"[{parent.index}]", parent.index + 1
    else:
        title, parent.key = parent.key, None
    end = max(end, parent.key_end if parent.kind == "mapping" else end)
    parent.last_end = max(parent.last_end, end)
    if (node is not None or parent.kind == "mapping") and members.take():
        kind = "item" if parent.kind == "sequence" else "key"
        parent.node.members.append((kind, title or "", parent.member_start, node, end))


_FLOW_TOKEN = re.compile(r"""[\[\]{}]|"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|#[^\n]*""")


def _flow_depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` outside quotes and comments (a cheap upper bound)."""
    depth = deepest = 0
    for match in _FLOW_TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)
    return deepest
