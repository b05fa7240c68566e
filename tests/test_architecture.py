"""docs/architecture.md is checked against the code: its entry table, its import rule and
the exceptions to it, and its compiled-code list and budget.

The tables are parsed from the page, so the page and this test cannot disagree: a new
top-level folder, a new import direction or a new compiled file fails here until the page
says so. Imports are read from the source (no module is imported): every ``import`` counts,
at the top of a module, inside functions and under ``TYPE_CHECKING`` alike, as the page
states.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "fissure"
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")

KINDS = ("foundation", "stage", "library", "application", "entry")  # in layer order
LOW = {"foundation", "stage"}  # never import what sits on top of them
HIGH = {"application", "entry"}


def _table(header: str) -> list[list[str]]:
    """The body rows of the page's Markdown table whose header row starts with ``header``,
    each cell stripped of spaces and of one pair of backticks."""
    lines = DOC.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(header)]
    assert len(starts) == 1, f"docs/architecture.md needs one table headed {header!r}"
    rows = []
    for line in lines[starts[0] + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip().removeprefix("`").removesuffix("`")
                     for cell in line.strip().strip("|").split("|")])  # fmt: skip
    return rows


class Entry(NamedTuple):
    layer: int
    kind: str


ENTRIES = {row[0]: Entry(int(row[1]), row[2]) for row in _table("| Entry | Layer | Kind |")}
EXCEPTIONS = {(row[0], row[1]): row[2] for row in _table("| Module | Imports | Reason |")}
COMPILED = {row[0] for row in _table("| Compiled file | Lines |")}


def _on_disk() -> set[str]:
    """The top-level entries of src/fissure: folders that hold code (``name/``), and
    ``.py``/``.pyx`` modules by file name."""
    out = set()
    for path in PACKAGE.iterdir():
        if path.is_dir():
            if path.name != "__pycache__" and any(path.rglob("*.py*")):
                out.add(f"{path.name}/")
        elif path.suffix in (".py", ".pyx"):
            out.add(path.name)
    return out


def _entry_of_file(rel: Path) -> str:
    return f"{rel.parts[0]}/" if len(rel.parts) > 1 else rel.name


def _entry_of_name(dotted: str) -> str:
    """The entry a dotted name under ``fissure`` lives in (``fissure`` itself: __init__)."""
    parts = dotted.split(".")
    if len(parts) > 1:
        for candidate in (f"{parts[1]}/", f"{parts[1]}.py", f"{parts[1]}.pyx"):
            if candidate in ENTRIES:
                return candidate
    return "__init__.py"


class Import(NamedTuple):
    module: str  # file, relative to src/fissure
    line: int
    name: str  # dotted, ``from fissure.a import b`` as ``fissure.a.b``


_PYX_IMPORT = re.compile(
    r"^\s*(?:from\s+(?P<base>fissure[\w.]*)\s+c?import\s+(?P<names>[^#]*)"
    r"|c?import\s+(?P<plain>fissure[\w.]*))"
)


def _names(base: str, aliases: list[str]) -> list[str]:
    return [f"{base}.{a}" if base == "fissure" else base for a in aliases] or [base]


def _imports_py(path: Path, rel: Path) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ["fissure", *rel.parts[:-1]]
    out = []
    for node in ast.walk(tree):  # every import: in functions and TYPE_CHECKING blocks too
        if isinstance(node, ast.Import):
            out += [Import(str(rel), node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the module's own package
                up = package[: len(package) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            names = _names(base, [a.name for a in node.names])
            out += [Import(str(rel), node.lineno, n) for n in names]
    return [i for i in out if i.name.split(".")[0] == "fissure"]


def _imports_pyx(path: Path, rel: Path) -> list[Import]:
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        found = _PYX_IMPORT.match(line)
        if not found:
            continue
        if found["plain"]:
            out.append(Import(str(rel), number, found["plain"]))
            continue
        aliases = [a.split(" as ")[0].strip(" ()\\") for a in found["names"].split(",")]
        names = _names(found["base"], [a for a in aliases if a.isidentifier()])
        out += [Import(str(rel), number, n) for n in names]
    return out


def _all_imports() -> list[Import]:
    out = []
    for path in sorted(PACKAGE.rglob("*")):
        rel = path.relative_to(PACKAGE)
        if "__pycache__" in rel.parts:
            continue
        if path.suffix == ".py":
            out += _imports_py(path, rel)
        elif path.suffix in (".pyx", ".pxi"):
            out += _imports_pyx(path, rel)
    return out


IMPORTS = _all_imports()


class Edge(NamedTuple):
    source: str  # entry
    target: str  # entry
    where: str  # module:line, for the message


def _edges(*, with_exceptions: bool = False) -> list[Edge]:
    out = []
    for imp in IMPORTS:
        source, target = _entry_of_file(Path(imp.module)), _entry_of_name(imp.name)
        if source == target:
            continue
        if not with_exceptions and (imp.module, target) in EXCEPTIONS:
            continue
        out.append(Edge(source, target, f"{imp.module}:{imp.line} imports {imp.name}"))
    return out


EDGES = _edges()


def test_every_top_level_entry_has_a_row():
    on_disk, rows = _on_disk(), set(ENTRIES)
    assert not on_disk - rows, (
        f"add a row for {sorted(on_disk - rows)} to docs/architecture.md's entry table "
        "(its layer, its kind, what lives there)"
    )
    gone = sorted(rows - on_disk)
    assert not gone, f"docs/architecture.md names entries that are gone: {gone}"


def test_layers_follow_the_kinds():
    """Kinds take layers in order (foundation < stage < library < application < entry),
    so the layer rule alone keeps every stage off the applications."""
    assert {e.kind for e in ENTRIES.values()} <= set(KINDS)
    by_layer = sorted(ENTRIES.values())
    assert [KINDS.index(e.kind) for e in by_layer] == sorted(KINDS.index(e.kind) for e in by_layer)
    stages = sorted(e.layer for e in ENTRIES.values() if e.kind == "stage")
    assert len(stages) == len(set(stages)), "each stage has a layer of its own: the flow's order"


def test_no_module_imports_a_later_layer():
    wrong = [
        f"{e.where}: {e.target} (layer {ENTRIES[e.target].layer}) is above {e.source} "
        f"(layer {ENTRIES[e.source].layer})"
        for e in EDGES
        if ENTRIES[e.target].layer > ENTRIES[e.source].layer
    ]
    assert not wrong, "\n".join(wrong)


def test_no_stage_imports_an_application():
    wrong = [
        f"{e.where}: a {ENTRIES[e.source].kind} imports an {ENTRIES[e.target].kind}"
        for e in EDGES
        if ENTRIES[e.source].kind in LOW and ENTRIES[e.target].kind in HIGH
    ]
    assert not wrong, "\n".join(wrong)


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each circle's members (sorted), once: the nodes that reach each other."""
    reach: dict[str, set[str]] = {}
    for start in graph:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo += graph.get(node, ())
        reach[start] = seen
    found = {tuple(sorted(n for n in graph if n in reach[a] and a in reach[n]))
             for a in graph if a in reach[a]}  # fmt: skip
    return sorted(list(c) for c in found)


def _graph(edges: list[Edge]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        graph[e.source].add(e.target)
        graph.setdefault(e.target, set())
    return graph


def test_no_circle_between_entries():
    circles = _circles(_graph(EDGES))
    assert not circles, "entry circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_nothing_imports_a_main_module():
    wrong = [f"{i.module}:{i.line} imports {i.name}" for i in IMPORTS
             if "__main__" in i.name.split(".")]  # fmt: skip
    assert not wrong, "a __main__ module is run, never imported:\n" + "\n".join(wrong)


def test_every_exception_still_occurs():
    """The exceptions can only shrink: one that no longer happens must leave the page."""
    seen = {(e.where.split(":")[0], e.target) for e in _edges(with_exceptions=True)}
    for (module, target), reason in EXCEPTIONS.items():
        assert (PACKAGE / module).is_file(), f"exception for a module that is gone: {module}"
        assert target in ENTRIES, f"exception names an unknown entry: {target}"
        assert reason, f"the exception {module} -> {target} needs its one-line reason"
        assert (module, target) in seen, (
            f"{module} no longer imports {target}: remove the exception from docs/architecture.md"
        )


def _compiled_files() -> list[Path]:
    return sorted([*PACKAGE.rglob("_*.pyx"), *PACKAGE.rglob("_*.pxi")])


def test_compiled_files_are_listed():
    on_disk = {str(p.relative_to(PACKAGE)) for p in _compiled_files()}
    assert on_disk == COMPILED, (
        f"docs/architecture.md's compiled table: add {sorted(on_disk - COMPILED)}, "
        f"remove {sorted(COMPILED - on_disk)}"
    )


def test_compiled_code_stays_within_its_budget():
    found = re.search(r"Compiled budget: (\d+) lines", DOC)
    assert found, "docs/architecture.md states 'Compiled budget: N lines'"
    total = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in _compiled_files())
    assert total <= int(found[1]), (
        f"{total} compiled lines, over the budget of {found[1]} in docs/architecture.md"
    )


_PATH = re.compile(r"`([\w./-]+(?:\.py|\.pyx|\.pxi|\.md|/))`")


def test_every_path_the_page_names_exists():
    missing = [p for p in sorted(set(_PATH.findall(DOC)))
               if not ((PACKAGE / p).exists() or (ROOT / p).exists())]  # fmt: skip
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_the_checker_sees_what_it_must():
    """The checks above can fail: the reader finds real imports of every kind, and the
    circle finder finds a made-up circle."""
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []
    pairs = {(e.source, e.target) for e in EDGES}
    assert ("chunker.py", "split/") in pairs  # a top-level import
    assert ("parse/", "types.py") in pairs  # read from parse/_mdwalk.pyx among others
    assert any(e.where.startswith("parse/_mdwalk.pyx") for e in EDGES)
    assert ("__init__.py", "settings/") in pairs  # an import inside a function
    assert _entry_of_name("fissure") == "__init__.py"
    assert _entry_of_name("fissure.limits") == "limits.py"
    assert _entry_of_name("fissure.eval.spec") == "eval/"
