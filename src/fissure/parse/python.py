"""Python through the standard ``ast``: docstrings, imports, classes, functions, methods.

An entity block starts at its first decorator, or at the comment lines directly above it
(same indentation, no blank line between), so a chunk of a function carries the comment that
explains it. ``ast`` positions are (line, UTF-8 byte column); they are converted to character
offsets through the line table, never by searching the text.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import importlib
import re
import threading
from collections.abc import Iterator
from enum import IntEnum
from typing import Any, cast

from fissure import limits
from fissure.parse import text as plain
from fissure.parse.text import line_starts
from fissure.types import Block, Document

MIME = "text/x-python"

_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_IMPORTS = (ast.Import, ast.ImportFrom)
_SIMPLE = (
    ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Import, ast.ImportFrom, ast.Pass,
    ast.Return, ast.Raise, ast.Assert, ast.Delete, ast.Global, ast.Nonlocal, ast.Break,
    ast.Continue,
)  # fmt: skip
# The same as sets of exact types, for the loop that sees every statement.
_DEF_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_IMPORT_TYPES = frozenset(_IMPORTS)
_SIMPLE_TYPES = frozenset(_SIMPLE)


# The line a ``def``/``class`` statement starts on: a compound statement begins a logical
# line, so its keyword is the first thing on its physical line (after indentation and
# ``async``). Matches inside strings are harmless: they only send a statement to the exact
# ``ast.walk`` check.
_DEF_LINE = re.compile(
    r"^[ \t\f]*(?:async(?:[ \t\f]|\\(?:\r\n|\r|\n))+)?(?:def|class)[ \t\f\\]", re.M
)
# The same where a lone "\r" may end a line (``^`` knows only "\n"); twice as slow.
_DEF_LINE_CR = re.compile(
    r"(?:^|(?<=[\r\n]))[ \t\f]*(?:async(?:[ \t\f]|\\(?:\r\n|\r|\n))+)?(?:def|class)[ \t\f\\]"
)


class PythonLevel(IntEnum):
    """Boundary ranks in Python source (lower is stronger)."""

    CLASS = 1
    FUNCTION = 2
    METHOD = 3
    IMPORTS = 4
    STATEMENTS = 5
    DOCSTRING = 6


# The levels as plain module constants: the block loop reads them for every block.
_CLASS, _FUNCTION, _METHOD = PythonLevel.CLASS, PythonLevel.FUNCTION, PythonLevel.METHOD
_IMPORTS_LEVEL, _STATEMENTS = PythonLevel.IMPORTS, PythonLevel.STATEMENTS
_DOCSTRING = PythonLevel.DOCSTRING


def parse(text: str, *, source: str) -> Document:
    """Parse Python source into its entities.

    Args:
        text: The decoded source file.
        source: Its path or URI.

    Returns:
        A document whose blocks are the module docstring, import groups, runs of other
        statements (kind ``code``) and ``class``/``function`` blocks with ``method`` and
        nested entities as children; ``metadata["entity"]`` is the qualified name. Source
        that does not parse, or that is over :data:`fissure.limits.MAX_AST_CHARS` (an
        ``ast`` tree takes 60 to 140 bytes per character), falls back to the tree-sitter
        code parser, or to plain text, with ``metadata["fallback"]`` saying why.
    """
    if len(text) > limits.MAX_AST_CHARS:
        over = f"{len(text):,} characters is over the {limits.MAX_AST_CHARS:,}-character ast limit"
        return _fallback(text, source, over)
    why: str | None = None
    with _collector_paused():
        try:
            tree = ast.parse(text, filename=source)
        except (SyntaxError, ValueError, RecursionError) as exc:
            where = f" at line {exc.lineno}" if isinstance(exc, SyntaxError) and exc.lineno else ""
            why = f"Python did not parse ({type(exc).__name__}{where}: {exc})"
        else:
            blocks = _body_blocks(tree.body, _Lines(text), None, False, 0)
            del tree  # freed before the collector resumes, which would scan it whole
    if why is not None:
        return _fallback(text, source, why)
    return Document.from_text(text, source=source, mime=MIME, blocks=blocks)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while the ``ast`` tree is built and read.

    The tree has no reference cycles (reference counting frees it), but it is some
    hundred thousand new objects per megabyte: each 700 of them start a collection, and
    the survivors a full one, which traverses every object of the process. In a process
    that has loaded a few libraries that was over half the parse time. The collector is
    switched back on (if it was on) once the tree is read and freed: resumed with the tree
    still alive, its next young collection would traverse the whole tree.

    Threads parsing at once share one pause: the collector resumes when the last of them
    is done, and stays off if it was off before the first began.
    """
    global _PAUSES
    with _PAUSE_LOCK:
        if _PAUSES == 0 and not gc.isenabled():  # off already, by someone else
            owned = False
        else:
            owned = True
            _PAUSES += 1
            gc.disable()
    try:
        yield
    finally:
        if owned:
            with _PAUSE_LOCK:
                _PAUSES -= 1
                if _PAUSES == 0:
                    gc.enable()


_PAUSE_LOCK = threading.Lock()
_PAUSES = 0  # parses holding the collector's pause


class _Lines:
    """Line table of the source: (1-based line, UTF-8 byte column) → character offset."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = line_starts(text)
        self.ascii = text.isascii()  # then a byte column is a character column
        self._defs = _DEF_LINE_CR if "\r" in text else _DEF_LINE

    def may_define(self, node: ast.stmt) -> bool:
        """Whether a ``def`` or ``class`` line lies within ``node``'s lines (never a false
        no; a yes may come from a string)."""
        first = self.starts[node.lineno - 1]
        last = node.end_lineno or node.lineno
        text = self.text
        stop = self.starts[last] if last < len(self.starts) else len(text)
        if text.find("def", first, stop) < 0 and text.find("class", first, stop) < 0:
            return False  # the keywords' letters are not there: no need for the pattern
        return self._defs.search(text, first, stop) is not None

    def offset(self, line: int, byte_col: int) -> int:
        start = self.starts[line - 1]
        if self.ascii:
            return start + byte_col
        stop = self.starts[line] if line < len(self.starts) else len(self.text)
        row = self.text[start:stop]
        if row.isascii():
            return start + byte_col
        return start + len(row.encode("utf-8")[:byte_col].decode("utf-8", "ignore"))

    def end(self, node: ast.AST) -> int:
        if self.ascii:  # offset's first case, inlined: this is asked for every block
            return self.starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
        return self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def _body_blocks(
    body: list[ast.stmt], lines: _Lines, qual: str | None, in_class: bool, prev_end_line: int
) -> tuple[Block, ...]:
    """Blocks for one statement list: docstring, entities, and runs of other statements.

    ``qual`` is the qualified name of the enclosing entity (``None`` at module level) and
    ``in_class`` whether that entity is a class. A run of simple statements ends at a blank
    or comment line or at a compound statement, so a long function body still offers the
    splitter the cuts a reader would make. This loop sees every statement of the file, so
    it tests exact node types (``ast.parse`` makes no subclasses) and keeps only the open
    run's first and last statement.
    """
    blocks: list[Block] = []
    if not body:  # a module of comments and blank lines
        return ()
    append = blocks.append
    head = body[0]
    first: ast.stmt | None = None  # the open run's first and last statement
    last = head
    single = last_simple = last_import = False
    nodes = iter(body)
    if (
        type(head) is ast.Expr
        and type(head.value) is ast.Constant
        and type(head.value.value) is str
    ):
        next(nodes)
        start = lines.offset(head.lineno, head.col_offset)
        append(Block("docstring", start, lines.end(head), _DOCSTRING))
        prev_end_line = head.end_lineno or head.lineno
    for node in nodes:
        cls = type(node)
        if cls in _DEF_TYPES:
            if first is not None:
                append(_run_block(first, last, single, lines, qual, in_class))
                first = None
            append(_entity(cast(_Def, node), lines, qual, in_class, prev_end_line))
        else:
            simple = cls in _SIMPLE_TYPES
            imports = cls in _IMPORT_TYPES
            if first is not None and (
                node.lineno > prev_end_line + 1
                or imports is not last_import
                or not simple
                or not last_simple
            ):
                append(_run_block(first, last, single, lines, qual, in_class))
                first = None
            if first is None:
                first, single = node, True
            else:
                single = False
            last, last_simple, last_import = node, simple, imports
        prev_end_line = node.end_lineno or node.lineno
    if first is not None:
        append(_run_block(first, last, single, lines, qual, in_class))
    return tuple(blocks)


def _run_block(
    first: ast.stmt, last: ast.stmt, single: bool, lines: _Lines, qual: str | None, in_class: bool
) -> Block:
    """The block of a run of statements: ``imports`` at module level, else ``code``; a
    compound statement alone holds the entities defined inside it."""
    if qual is None and type(first) in _IMPORT_TYPES:
        kind, level = "imports", _IMPORTS_LEVEL
    else:
        kind, level = "code", _STATEMENTS
    if lines.ascii:  # byte columns are character columns (Lines.offset, inlined)
        starts = lines.starts
        start = starts[first.lineno - 1] + first.col_offset
        end = starts[last.end_lineno - 1] + last.end_col_offset  # type: ignore[operator]
    else:
        start, end = lines.offset(first.lineno, first.col_offset), lines.end(last)
    inner = _nested(first, lines, qual, in_class) if single else ()
    return Block(kind, start, end, level, None, inner)


def _nested(node: ast.stmt, lines: _Lines, qual: str | None, in_class: bool) -> tuple[Block, ...]:
    """Entities defined inside a compound statement (``if``, ``try``, ``with``, ``for`` …),
    so that the splitter can cut between them instead of through them."""
    if type(node) in _SIMPLE_TYPES or not lines.may_define(node):
        return ()
    if not any(type(n) in _DEF_TYPES for n in ast.walk(node)):
        return ()
    bodies: list[list[ast.stmt]] = [
        getattr(node, name) for name in ("body", "orelse", "finalbody") if getattr(node, name, None)
    ]
    bodies += [h.body for h in getattr(node, "handlers", ()) if h.body]
    bodies += [c.body for c in getattr(node, "cases", ()) if c.body]
    found: list[Block] = []
    for body in bodies:
        found.extend(_body_blocks(body, lines, qual, in_class, body[0].lineno - 1))
    return tuple(sorted(found, key=lambda b: b.start))


def _entity(
    node: _Def, lines: _Lines, qual: str | None, in_class: bool, prev_end_line: int
) -> Block:
    qualname = f"{qual}.{node.name}" if qual else node.name
    decorators = node.decorator_list
    header_line = min([node.lineno, *(d.lineno for d in decorators)]) if decorators else node.lineno
    first_line = _comment_lines_above(lines, header_line, node.col_offset, prev_end_line)
    cls = type(node)
    if cls is ast.ClassDef:
        kind, level = "class", _CLASS
    elif in_class:
        kind, level = "method", _METHOD
    else:
        kind, level = "function", _FUNCTION
    # Comments between the header and the body may attach to the body's first entity.
    children = _body_blocks(node.body, lines, qualname, kind == "class", node.lineno)
    if first_line < header_line:  # leading comments: a unit of their own inside the entity
        comment = Block(
            "comment",
            lines.starts[first_line - 1],
            lines.starts[header_line - 1] - 1,
            _DOCSTRING,
        )
        children = (comment, *children)
    metadata: dict[str, Any] = {"entity": qualname}
    if decorators:
        metadata["decorators"] = [_source_of(d) for d in decorators]
    if cls is ast.AsyncFunctionDef:
        metadata["async"] = True
    start = lines.starts[first_line - 1]
    return Block(kind, start, lines.end(node), level, node.name, children, metadata)


def _source_of(expr: ast.expr) -> str:
    """``ast.unparse(expr)``, spelled out without the unparser for the common decorator
    (``name`` or ``a.b.name``), which is what ``ast.unparse`` writes for those."""
    parts: list[str] = []
    x = expr
    while type(x) is ast.Attribute:
        parts.append(x.attr)
        x = x.value
    if type(x) is ast.Name:
        parts.append(x.id)
        return ".".join(reversed(parts))
    return ast.unparse(expr)


def _comment_lines_above(lines: _Lines, first_line: int, indent: int, floor: int) -> int:
    """First line of the comment lines directly above ``first_line`` at the same indentation.

    ``floor`` is the last line of the previous statement (or of the enclosing header), so a
    comment is never taken from inside a string or from a sibling.
    """
    text, starts = lines.text, lines.starts
    line = first_line
    while line - 1 > floor:
        # The line above is a comment at this indentation: ``indent`` spaces, then "#"
        # (which is no space, so the spaces before it are all its indentation).
        pos = starts[line - 2]
        mark = pos + indent
        if mark >= starts[line - 1] or text[mark] != "#":
            break
        if indent and not text[pos:mark].isspace():
            break
        line -= 1
    return line


def _fallback(text: str, source: str, why: str) -> Document:
    try:
        code = importlib.import_module("fissure.parse.code")
        document = code.parse(text, source=source, mime=MIME)
        how = "parsed with the tree-sitter code parser"
    except MemoryError:
        raise
    except Exception as error:  # a missing module or a failing grammar: go coarser still
        document = plain.parse(text, source=source)
        reason = f"{type(error).__name__}: {error}".splitlines()[0][:200]
        how = f"parsed as plain text (the code parser could not: {reason})"
    metadata = {**document.metadata, "fallback": f"{why}; {how}"}
    return Document.from_text(
        text, source=source, mime=MIME, blocks=document.blocks, metadata=metadata
    )
