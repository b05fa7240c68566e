"""Structural damage: the share of chunks that cut through a unit they could have kept whole.

A *unit* is a Markdown code fence or table (from fissure's Markdown parser), or a Python
function, method or class (from :mod:`ast`, decorators included, first non-blank character to
the end of its last line). A chunk is *damaged* when its start or its end falls strictly inside
a unit that is no larger than the strategy's chunk size (a unit larger than the budget has to
be cut somewhere, so cutting it is not counted). Positions in the unit's leading indentation
or exactly at its ends are not inside it.
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from collections.abc import Callable, Sequence

from fissure.eval.spans import Span

MARKDOWN_UNITS = frozenset({"code", "table"})


def python_units(text: str) -> list[Span]:
    """Spans of every def and class; none when the text does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            last = node.end_lineno or node.lineno
            start = starts[first - 1]
            while start < len(text) and text[start] in " \t":
                start += 1
            end = starts[last] - 1 if last < len(starts) else len(text)
            out.append((start, end))
    return sorted(out)


def markdown_units(text: str) -> list[Span]:
    """Spans of code fences and tables."""
    from fissure.parse.markdown import parse

    out: list[Span] = []
    stack = list(parse(text, source="corpus.md").blocks)
    while stack:
        block = stack.pop()
        if block.kind in MARKDOWN_UNITS:
            out.append((block.start, block.end))
        else:
            stack.extend(block.children)
    return sorted(out)


def units(text: str, source: str) -> list[Span]:
    """The units of a corpus, by the suffix of its id (``.py``: Python; else Markdown)."""
    return python_units(text) if source.endswith(".py") else markdown_units(text)


def damaged(spans: Sequence[Span], unit_spans: Sequence[Span], fits: Callable[[Span], bool]) -> int:
    """How many chunks start or end strictly inside a unit for which ``fits`` is true."""
    kept = sorted(u for u in unit_spans if fits(u))
    starts = [u[0] for u in kept]

    def inside(pos: int) -> bool:
        # Units nest (methods in classes), so look at every unit starting before pos.
        return any(s < pos < e for s, e in kept[: bisect_left(starts, pos)])

    return sum(inside(s) or inside(e) for s, e in spans)
