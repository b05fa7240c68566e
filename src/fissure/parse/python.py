"""Python through the standard ``ast``: docstrings, imports, classes, functions, methods.

An entity block starts at its first decorator, or at the comment lines directly above it
(same indentation, no blank line between), so a chunk of a function carries the comment that
explains it. ``ast`` positions are (line, UTF-8 byte column); they are converted to character
offsets through the line table, never by searching the text.
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

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
        why = f"{len(text):,} characters is over the {limits.MAX_AST_CHARS:,}-character ast limit"
        return _fallback(text, source, why)
    try:
        tree = ast.parse(text, filename=source)
    except (SyntaxError, ValueError, RecursionError) as exc:
        where = f" at line {exc.lineno}" if isinstance(exc, SyntaxError) and exc.lineno else ""
        return _fallback(text, source, f"Python did not parse ({type(exc).__name__}{where}: {exc})")
    lines = _Lines(text)
    blocks = _body_blocks(tree.body, lines, scope=_Scope(None), prev_end_line=0)
    return Document.from_text(text, source=source, mime=MIME, blocks=blocks)


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
        stop = self.starts[last] if last < len(self.starts) else len(self.text)
        return self._defs.search(self.text, first, stop) is not None

    def offset(self, line: int, byte_col: int) -> int:
        start = self.starts[line - 1]
        if self.ascii:
            return start + byte_col
        stop = self.starts[line] if line < len(self.starts) else len(self.text)
        row = self.text[start:stop]
        if row.isascii():
            return start + byte_col
        return start + len(row.encode("utf-8")[:byte_col].decode("utf-8", "ignore"))

    def line(self, line: int) -> str:
        start = self.starts[line - 1]
        stop = self.starts[line] if line < len(self.starts) else len(self.text)
        return self.text[start:stop].rstrip("\r\n")

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def _body_blocks(
    body: list[ast.stmt], lines: _Lines, *, scope: _Scope, prev_end_line: int
) -> tuple[Block, ...]:
    """Blocks for one statement list: docstring, entities, and runs of other statements.

    A run of simple statements ends at a blank or comment line or at a compound statement,
    so a long function body still offers the splitter the cuts a reader would make.
    """
    blocks: list[Block] = []
    run: list[ast.stmt] = []

    def flush() -> None:
        if run:
            imports = scope.name is None and isinstance(run[0], _IMPORTS)
            kind = "imports" if imports else "code"
            level = PythonLevel.IMPORTS if imports else PythonLevel.STATEMENTS
            start = lines.offset(run[0].lineno, run[0].col_offset)
            inner = _nested(run[0], lines, scope) if len(run) == 1 else ()
            blocks.append(Block(kind, start, lines.end(run[-1]), level, None, inner))
            run.clear()

    for index, node in enumerate(body):
        if index == 0 and _is_docstring(node):
            start = lines.offset(node.lineno, node.col_offset)
            blocks.append(Block("docstring", start, lines.end(node), PythonLevel.DOCSTRING))
        elif isinstance(node, _Def):
            flush()
            blocks.append(_entity(node, lines, scope=scope, prev_end_line=prev_end_line))
        else:
            if run and _starts_new_run(run[-1], node, prev_end_line):
                flush()
            run.append(node)
        prev_end_line = node.end_lineno or node.lineno
    flush()
    return tuple(blocks)


def _nested(node: ast.stmt, lines: _Lines, scope: _Scope) -> tuple[Block, ...]:
    """Entities defined inside a compound statement (``if``, ``try``, ``with``, ``for`` …),
    so that the splitter can cut between them instead of through them."""
    if isinstance(node, _SIMPLE) or not lines.may_define(node):
        return ()
    if not any(isinstance(n, _Def) for n in ast.walk(node)):
        return ()
    bodies: list[list[ast.stmt]] = [
        getattr(node, name) for name in ("body", "orelse", "finalbody") if getattr(node, name, None)
    ]
    bodies += [h.body for h in getattr(node, "handlers", ()) if h.body]
    bodies += [c.body for c in getattr(node, "cases", ()) if c.body]
    found: list[Block] = []
    for body in bodies:
        found.extend(_body_blocks(body, lines, scope=scope, prev_end_line=body[0].lineno - 1))
    return tuple(sorted(found, key=lambda b: b.start))


def _starts_new_run(last: ast.stmt, node: ast.stmt, last_end_line: int) -> bool:
    return (
        node.lineno > last_end_line + 1
        or isinstance(last, _IMPORTS) != isinstance(node, _IMPORTS)
        or not isinstance(last, _SIMPLE)
        or not isinstance(node, _SIMPLE)
    )


@dataclass(frozen=True)
class _Scope:
    name: str | None  # qualified name of the enclosing entity; None at module level
    in_class: bool = False


def _entity(node: _Def, lines: _Lines, *, scope: _Scope, prev_end_line: int) -> Block:
    qualname = f"{scope.name}.{node.name}" if scope.name else node.name
    first_line = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    first_line = _comment_lines_above(lines, first_line, node.col_offset, prev_end_line)
    if isinstance(node, ast.ClassDef):
        kind, level = "class", PythonLevel.CLASS
    elif scope.in_class:
        kind, level = "method", PythonLevel.METHOD
    else:
        kind, level = "function", PythonLevel.FUNCTION
    children = _body_blocks(
        node.body,
        lines,
        scope=_Scope(qualname, in_class=kind == "class"),
        prev_end_line=node.lineno,  # comments between the header and the body may attach
    )
    header_line = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    if first_line < header_line:  # leading comments: a unit of their own inside the entity
        comment = Block(
            "comment",
            lines.starts[first_line - 1],
            lines.starts[header_line - 1] - 1,
            PythonLevel.DOCSTRING,
        )
        children = (comment, *children)
    metadata: dict[str, Any] = {"entity": qualname}
    if node.decorator_list:
        metadata["decorators"] = [ast.unparse(d) for d in node.decorator_list]
    if isinstance(node, ast.AsyncFunctionDef):
        metadata["async"] = True
    start = lines.starts[first_line - 1]
    return Block(kind, start, lines.end(node), level, node.name, children, metadata)


def _comment_lines_above(lines: _Lines, first_line: int, indent: int, floor: int) -> int:
    """First line of the comment lines directly above ``first_line`` at the same indentation.

    ``floor`` is the last line of the previous statement (or of the enclosing header), so a
    comment is never taken from inside a string or from a sibling.
    """
    line = first_line
    while line - 1 > floor:
        above = lines.line(line - 1)
        stripped = above.lstrip()
        if not stripped.startswith("#") or len(above) - len(stripped) != indent:
            break
        line -= 1
    return line


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


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
