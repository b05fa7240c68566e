"""The import graph is the data flow: no module imports a later stage, and nothing circles.

Read from the source with :mod:`ast` (no module is imported): every ``import`` counts,
those inside functions and under ``TYPE_CHECKING`` too, because each is a dependency of the
design whether or not it runs at import time.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "fissure"

# The data flow, first to last. A module may import modules of its own rank or below; the
# rank of a module is that of its top-level name under fissure/. Entry points (__main__
# modules) sit above everything, since nothing imports them.
LAYERS = [
    # nouns, errors, settings, span trims, boundary ranks
    ("types", "errors", "config", "limits", "spans", "ranks"),
    ("_compiled",),  # the one switch for the compiled twins, which live in their stages
    ("source",),
    ("detect",),
    ("parse",),
    ("size",),
    ("split",),
    ("embed",),
    ("store",),
    ("chunker", "_chunks", "viz"),  # the library's entry points over the stages
    ("settings",),  # defaults, presets, settings files
    ("__init__",),  # fissure's public names
    ("ingest",),
    ("plan", "eval", "integrations"),
    ("serve",),
    ("cli",),
    ("__main__",),
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def _modules() -> dict[str, Path]:
    """Dotted name -> file, compiled twins (``.pyx``) included so that imports resolve."""
    out = {}
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix not in (".py", ".pyx") or "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.setdefault(".".join(parts), path)
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The fissure modules ``name`` imports (``from pkg import sub`` names ``pkg.sub``)."""
    if path.suffix != ".py":
        return set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "fissure")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            if base.split(".")[0] != "fissure":
                continue
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in MODULES else base)
    return {_owner(m) for m in found} - {name}


def _owner(dotted: str) -> str:
    while dotted not in MODULES and "." in dotted:
        dotted = dotted.rpartition(".")[0]
    return dotted


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _top(name: str) -> str:
    parts = name.split(".")
    if parts[-1] == "__main__":
        return "__main__"
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_module_has_a_layer():
    unplaced = sorted({_top(m) for m in MODULES} - set(RANK))
    assert not unplaced, f"add {unplaced} to LAYERS in {__file__} (where in the data flow?)"


def test_no_module_imports_a_later_stage():
    wrong = [
        f"{a} imports {b} ({_top(b)} comes after {_top(a)})"
        for a, targets in GRAPH.items()
        for b in sorted(targets)
        if RANK.get(_top(b), 0) > RANK.get(_top(a), 0)
    ]
    assert not wrong, "\n".join(wrong)


def test_no_stage_imports_ingest_eval_or_cli():
    top = {"ingest", "eval", "cli", "serve", "plan", "integrations", "settings"}
    stages = [m for m in MODULES if RANK[_top(m)] <= RANK["store"]]
    wrong = [f"{m} imports {b}" for m in stages for b in GRAPH[m] if _top(b) in top]
    assert not wrong, "\n".join(wrong)


def test_no_import_circles():
    circles = _cycles(GRAPH)
    assert not circles, "import circles:\n" + "\n".join(" -> ".join(c) for c in circles)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_the_checker_sees_a_circle_and_a_late_import():
    """The checks above can fail: a made-up graph with both faults is caught."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert "fissure.cli" in GRAPH["fissure.__main__"]
    assert any(_top(b) == "size" for b in GRAPH["fissure.chunker"])


@pytest.mark.parametrize("name", ["fissure.eval.__main__", "fissure.__main__"])
def test_entry_points_import_the_cli(name):
    # python -m fissure.eval is fissure eval: one entry point, one set of options.
    assert "fissure.cli" in GRAPH[name]


def _reverse() -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for a, targets in GRAPH.items():
        for b in targets:
            out[b].add(a)
    return out


def test_no_command_imports_another_command():
    commands = [m for m in MODULES if m.startswith("fissure.cli.")]
    shared = {"fissure.cli.output", "fissure.cli.options", "fissure.cli.common"}
    wrong = [
        f"{a} imports {b}: move what they share to cli/output.py, cli/options.py or the library"
        for a in commands
        for b in GRAPH[a]
        if b.startswith("fissure.cli.") and b not in shared
    ]
    assert not wrong, "\n".join(wrong)
    assert _reverse()["fissure.cli.options"], "the shared options are used"
