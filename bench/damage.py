"""Structural damage on the standard library: how often a chunk ends inside a function.

Usage::

    python -m bench.damage                 # every .py file of the stdlib; writes results/damage.md
    python -m bench.damage --limit 200     # the first 200 files (sorted by path), for a quick look

Every ``.py`` file under ``sysconfig.get_paths()["stdlib"]`` (test folders included,
``site-packages`` excluded) is routed through ``fissure.parse.parse`` (detection, decoding,
the routing table and its fallbacks) and chunked by ``structural``; the same documents'
text is also chunked by ``recursive`` (``language="python"``) and ``fixed``, all at 512
``cl100k_base`` tokens. Function and method spans come from Python's ``ast`` (first
decorator to the end of the body), independently of fissure's parser. A chunk *cuts* a
function when its end lies strictly inside that span. A cut is **marked** when the chunk
has ``metadata["oversize"]``; it is **unavoidable** when the innermost function cut is
itself over budget. The target is no unmarked cut, and no cut of a function that fits.
"""

from __future__ import annotations

import argparse
import ast
import re
import shlex
import sys
import sysconfig
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "damage.md"
_NEWLINE = re.compile(r"\r\n|\r|\n")
_COMPOUND = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)
_COMPOUND += (getattr(ast, "TryStar", ast.Try), ast.Match)


@dataclass(frozen=True, slots=True)
class Function:
    """A function or method span from ``ast`` (character offsets) and why it may be cut."""

    name: str
    start: int
    end: int
    line: int
    size: int  # tokens of the span's text
    in_compound: bool  # defined under if/try/with/for/while/match: no block of its own
    has_comment: bool  # comment lines directly above (the parser makes them part of it)


@dataclass
class Tally:
    """Damage counts of one strategy over the analysed files."""

    chunks: int = 0  # of analysed files
    unanalysed_chunks: int = 0
    cut: int = 0
    marked: int = 0  # cut, oversize marked
    marked_unavoidable: int = 0  # … and the function alone is over budget
    unmarked: int = 0
    unmarked_unavoidable: int = 0
    fits_cut: Counter[str] = field(default_factory=Counter)  # cuts of functions that fit, why
    functions_cut: int = 0
    fitting_functions_cut: int = 0
    examples: list[str] = field(default_factory=list)
    seconds: float = 0.0


def stdlib_files(limit: int | None) -> tuple[Path, list[Path]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(
        p
        for p in root.rglob("*.py")
        if not any(part in ("site-packages", "dist-packages") for part in p.parts)
    )
    return root, files[:limit] if limit else files


def line_starts(text: str) -> list[int]:
    """Offsets of each line's first character, with Python's line breaks."""
    return [0, *(m.end() for m in _NEWLINE.finditer(text))]


def functions_of(text: str, count: Any) -> list[Function] | None:
    """Every function and method of ``text``, or ``None`` when ``ast`` cannot parse it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    starts = line_starts(text)
    rows = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]

    def offset(line: int, col: int) -> int:
        row = rows[line - 1]
        return starts[line - 1] + (col if row.isascii() else len(_prefix(row, col)))

    found: list[Function] = []
    stack: list[tuple[ast.AST, str, bool]] = [(tree, "", False)]
    while stack:
        node, prefix, compound = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    start = offset(first, child.col_offset)
                    end = offset(child.end_lineno or first, child.end_col_offset or 0)
                    above = rows[first - 2].lstrip() if first > 1 else ""
                    found.append(
                        Function(
                            name, start, end, first, count(text[start:end]), compound,
                            above.startswith("#"),
                        )
                    )  # fmt: skip
                stack.append((child, name + ".", compound))  # no block below either
            else:
                stack.append((child, prefix, compound or isinstance(child, _COMPOUND)))
    return found


def _prefix(row: str, byte_col: int) -> str:
    return row.encode("utf-8", "surrogatepass")[:byte_col].decode("utf-8", "ignore")


def owners(length: int, functions: list[Function]) -> np.ndarray:
    """For each position, the innermost function strictly containing it (-1: none)."""
    owner = np.full(length + 1, -1, dtype=np.int32)
    # Outer functions start first; an inner one, assigned later, overwrites its range.
    for i in sorted(range(len(functions)), key=lambda k: functions[k].start):
        f = functions[i]
        owner[f.start + 1 : f.end] = i
    return owner


def tally(
    result: Tally, source: str, chunks: list[Any], functions: list[Function], budget: int
) -> None:
    """Add one document's chunks to ``result``."""
    owner = owners(max((c.end for c in chunks), default=0), functions)
    cut_functions: set[int] = set()
    result.chunks += len(chunks)
    for c in chunks:
        k = int(owner[c.end])
        if k < 0:
            continue
        f = functions[k]
        unavoidable = f.size > budget
        result.cut += 1
        cut_functions.add(k)
        if c.metadata.get("oversize"):
            result.marked += 1
            result.marked_unavoidable += unavoidable
        else:
            result.unmarked += 1
            result.unmarked_unavoidable += unavoidable
        if not unavoidable:
            if len(result.examples) < 10:
                mark = c.metadata.get("oversize") or "unmarked"
                result.examples.append(f"{source}:{f.line} {f.name} ({f.size} tokens; {mark})")
            why = "in if/try/with/for" if f.in_compound else "other"
            why = "comment above" if f.has_comment and not f.in_compound else why
            result.fits_cut[why] += 1
    result.functions_cut += len(cut_functions)
    result.fitting_functions_cut += sum(functions[k].size <= budget for k in cut_functions)


@dataclass
class Routing:
    """What the routing table did with the files."""

    files: int = 0
    chars: int = 0
    by_mime: Counter[str] = field(default_factory=Counter)
    fallbacks: list[tuple[str, str]] = field(default_factory=list)
    encodings: Counter[str] = field(default_factory=Counter)
    errors: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0  # reading, detecting and parsing
    not_analysed: int = 0  # ast could not parse the decoded text
    functions: int = 0
    fitting: int = 0


def run(files: list[Path], root: Path, budget: int, tokenizer: str) -> tuple[Routing, dict]:
    from fissure import Chunker, InputError, Sizer
    from fissure.parse import parse

    sizer = Sizer.named(tokenizer)
    chunkers = {
        "structural": Chunker(strategy="structural", max_tokens=budget, sizer=sizer),
        "recursive (python)": Chunker(
            strategy="recursive", language="python", max_tokens=budget, sizer=sizer
        ),
        "fixed": Chunker(strategy="fixed", max_tokens=budget, sizer=sizer),
    }
    routing, tallies = Routing(), {name: Tally() for name in chunkers}
    for n, path in enumerate(files, 1):
        source = path.relative_to(root).as_posix()
        started = time.perf_counter()
        try:
            document = parse(path.read_bytes(), source)
        except InputError as exc:
            routing.errors.append((source, str(exc).splitlines()[0][:160]))
            continue
        finally:
            routing.seconds += time.perf_counter() - started
        routing.files += 1
        routing.chars += len(document.text)
        routing.by_mime[document.mime] += 1
        routing.encodings[document.metadata.get("encoding", "?")] += 1
        if "fallback" in document.metadata:
            routing.fallbacks.append((source, document.metadata["fallback"]))
        functions = functions_of(document.text, sizer._fn)
        if functions is None:
            routing.not_analysed += 1
        else:
            routing.functions += len(functions)
            routing.fitting += sum(f.size <= budget for f in functions)
        for name, chunker in chunkers.items():
            started = time.perf_counter()
            chunks = chunker.chunk_document(document)
            tallies[name].seconds += time.perf_counter() - started
            if functions is not None:
                tally(tallies[name], source, chunks, functions, budget)
            else:
                tallies[name].unanalysed_chunks += len(chunks)
        if n % 200 == 0:
            print(f"  {n}/{len(files)} files", file=sys.stderr, flush=True)
    return routing, tallies


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.2f} %" if whole else "—"


def render(meta: dict[str, Any], routing: Routing, tallies: dict[str, Tally]) -> str:
    budget = meta["budget"]
    out = [
        "# Structural damage on the standard library",
        "",
        f"Generated by `{meta['command']}` on {meta['date']}. See the docstring of "
        "`bench/damage.py` for the definitions.",
        "",
        f"- Python {meta['python']}; stdlib `{meta['root']}`; fissure at {meta['git']}",
        f"- Files: {routing.files:,} `.py` files routed ({routing.chars / 1e6:.1f} M characters)"
        f" in {routing.seconds:.1f} s, {len(routing.errors)} refused with InputError; "
        f"budget {budget} "
        f"{meta['tokenizer']} tokens, no overlap",
        f"- Functions and methods found by `ast`: {routing.functions:,}, of which "
        f"{routing.fitting:,} fit the budget alone; {routing.not_analysed} files "
        "not analysed (`ast` cannot parse them: left out of the damage figures)",
        "",
        "## Routing",
        "",
        "| detected MIME | files |",
        "|---|---:|",
        *(f"| `{m}` | {n:,} |" for m, n in routing.by_mime.most_common()),
        "",
        "Encodings: " + ", ".join(f"{e} {n:,}" for e, n in routing.encodings.most_common()),
        "",
        f"Fallbacks ({len(routing.fallbacks)}):",
        "",
        *_fallback_lines(routing),
        *(f"- refused: `{s}`: {why}" for s, why in routing.errors),
        "",
        "## Damage",
        "",
        "A cut = a chunk whose end lies strictly inside a function or method. *Unavoidable*: "
        "that function alone is over budget. Shares are of all chunks of analysed files "
        f"(the {routing.not_analysed} other files gave "
        + ", ".join(f"{t.unanalysed_chunks:,}" for t in tallies.values())
        + " chunks).",
        "",
        "| strategy | chunks | cuts | with oversize marked (unavoidable) | without oversize "
        "(unavoidable) | functions cut | functions that fit, cut | seconds |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *(_damage_row(name, t) for name, t in tallies.items()),
        "",
        "Cuts of a function that fits, by where the function is:",
        "",
        *(
            f"- {name}: "
            + (", ".join(f"{why} {n:,}" for why, n in t.fits_cut.most_common()) or "none")
            for name, t in tallies.items()
        ),  # fmt: skip
        "",
        "Examples of cuts of a function that fits (structural; file:line of the function, "
        "its size, the chunk's `oversize`):",
        "",
        *(f"- `{e}`" for e in tallies["structural"].examples or ["none"]),
        "",
    ]
    return "\n".join(out)


def _fallback_lines(routing: Routing) -> list[str]:
    reasons = Counter(re.sub(r"\(.*", "", why).strip() for _, why in routing.fallbacks)
    lines = [f"- {n:,} × {why}" for why, n in reasons.most_common()]
    lines += [f"  - `{s}`: {why[:140]}" for s, why in routing.fallbacks[:12]]
    if len(routing.fallbacks) > 12:
        lines.append(f"  - … and {len(routing.fallbacks) - 12} more")
    return lines or ["- none"]


def _damage_row(name: str, t: Tally) -> str:
    return (
        f"| {name} | {t.chunks:,} | {t.cut:,} ({pct(t.cut, t.chunks)}) "
        f"| {t.marked:,} ({pct(t.marked, t.chunks)}) ({t.marked_unavoidable:,}) "
        f"| {t.unmarked:,} ({pct(t.unmarked, t.chunks)}) ({t.unmarked_unavoidable:,}) "
        f"| {t.functions_cut:,} | {t.fitting_functions_cut:,} | {t.seconds:.1f} |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, help="only the first N files (sorted by path)")
    parser.add_argument("--budget", type=int, default=512)
    parser.add_argument("--tokenizer", default="cl100k_base")
    parser.add_argument("--out", type=Path, default=RESULTS, help="markdown file to write")
    args = parser.parse_args(argv)

    from bench import environment
    from bench.report import git_revision

    environment.prepare()
    root, files = stdlib_files(args.limit)
    routing, tallies = run(files, root, args.budget, args.tokenizer)
    meta = {
        "command": shlex.join(["python", "-m", "bench.damage", *(argv or sys.argv[1:])]),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": sys.version.split()[0],
        "root": root,
        "git": git_revision(),
        "budget": args.budget,
        "tokenizer": args.tokenizer,
    }
    text = render(meta, routing, tallies)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
