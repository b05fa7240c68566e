"""A missing dependency, through the real command line: one line naming the right command.

Each test runs ``fissure`` in a fresh interpreter whose ``sitecustomize`` blocks some
modules (``sys.modules[name] = None``, Python's own way to make an import fail), then
checks the printed ``pip install`` line against ``pyproject.toml``: the extra it names
exists and lists the package, or, with no extra, the package is a base dependency.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.eval.conftest import chroma_dir  # noqa: F401 - a fixture

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
_COMMAND = re.compile(r"(\S+) is needed[^:]*: (pip install (?:'fissure\[([\w-]+)\]'|(\S+)))$")


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()


def assert_right_command(line: str) -> str:
    """The command in a 'PKG is needed …: pip install …' line, checked against pyproject."""
    match = _COMMAND.search(line.strip())
    assert match, f"no pip line in {line!r}"
    package, command, extra, plain = match.groups()
    # A base dependency, an extra's, or (plain pip install) one that no extra lists.
    if extra:
        extras = PROJECT["optional-dependencies"]
        assert extra in extras, f"{command}: pyproject has no extra {extra!r}"
        assert package.lower() in {_name(r) for r in extras[extra]}, f"{extra} lacks {package}"
    else:
        assert plain == package
        listing = [x for x, reqs in PROJECT["optional-dependencies"].items()
                   if package.lower() in {_name(r) for r in reqs}]  # fmt: skip
        base = package.lower() in {_name(r) for r in PROJECT["dependencies"]}
        assert base or not listing, f"{command}: name the extra that lists it ({listing})"
    return command


def run_blocked(tmp_path: Path, blocked: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    """``fissure ARGS`` with the ``blocked`` modules unimportable."""
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in blocked)
    )
    env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{ROOT / 'src'}", "HF_HUB_OFFLINE": "1",
           "COLUMNS": "300"}  # fmt: skip
    code = "import sys; from fissure.cli import main; sys.argv[0] = 'fissure'; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, timeout=240, cwd=tmp_path)  # fmt: skip


def one_error_line(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, out.stderr
    return lines[0]


def test_ingest_without_chromadb(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/a.md").write_text("# A\n\nSome text.\n")
    out = run_blocked(tmp_path, ["chromadb"], "ingest", "docs", "--store", "S",
                      "--embedder", "hashing", "--no-progress")  # fmt: skip
    line = one_error_line(out)
    assert assert_right_command(line) == "pip install chromadb"
    assert not (tmp_path / "S/manifest.sqlite3").exists() or "dead letters" not in out.stderr


def test_query_without_chromadb(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/a.md").write_text("# A\n\nSome text.\n")
    made = run_blocked(tmp_path, [], "ingest", "docs", "--store", "S", "--embedder", "hashing",
                       "--no-progress", "--workers", "1")  # fmt: skip
    assert made.returncode == 0, made.stderr
    out = run_blocked(tmp_path, ["chromadb"], "query", "text", "--store", "S")
    assert assert_right_command(one_error_line(out)) == "pip install chromadb"


def test_distill_without_model2vec_names_the_embed_extra(tmp_path: Path) -> None:
    out = run_blocked(tmp_path, ["model2vec"], "models", "distill", "--out", "m")
    line = one_error_line(out)
    assert assert_right_command(line) == "pip install 'fissure[embed]'"  # brackets intact
    assert not (tmp_path / "m").exists()


def test_eval_skips_a_missing_peer_naming_the_bench_extra(
    tmp_path: Path,
    chroma_dir: Path,  # noqa: F811 - the fixture
) -> None:
    out = run_blocked(tmp_path, ["semchunk"], "eval", str(chroma_dir), "-s",
                      "semchunk:12,tokentext:12", "--embedder", "hashing", "--no-cache",
                      "-o", "out")  # fmt: skip
    assert out.returncode == 0, out.stderr
    skipped = [line for line in out.stdout.splitlines() if line.startswith("skipped semchunk")]
    assert len(skipped) == 1, out.stdout
    assert assert_right_command(skipped[0]) == "pip install 'fissure[bench]'"


@pytest.mark.parametrize(
    ("module", "blocked", "command"),
    [
        ("fissure.integrations.langchain", "langchain_core", "pip install 'fissure[langchain]'"),
        ("fissure.integrations.llama_index", "llama_index", "pip install 'fissure[llama-index]'"),
    ],
)
def test_integrations_without_their_library(
    tmp_path: Path, module: str, blocked: str, command: str
) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(f"import sys\nsys.modules[{blocked!r}] = None\n")
    env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{ROOT / 'src'}"}
    code = f"try:\n    import {module}\nexcept ImportError as exc:\n    print(exc)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert assert_right_command(out.stdout.strip()) == command


def _calls(tree: ast.AST, name: str, defaults: list[object], extra_at: int) -> list[list[object]]:
    """The arguments of every call to ``name`` (``None`` where one is not a literal);
    ``extra_at`` is the position of the ``extra`` parameter."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == name:
            args = list(defaults) + [None] * max(0, len(node.args) - len(defaults))
            for i, a in enumerate(node.args):
                args[i] = a.value if isinstance(a, ast.Constant) else None
            for kw in node.keywords:
                if kw.arg == "extra":
                    args[extra_at] = kw.value.value if isinstance(kw.value, ast.Constant) else None
            found.append(args)
    return found


def test_every_missing_dependency_in_the_source_names_a_real_command() -> None:
    """Every ``MissingDependencyError(package, extra)`` with literal arguments, and every
    peer's ``_need(module, package, extra="bench")``, names a command that installs it."""
    from fissure.errors import MissingDependencyError

    checked = 0
    for path in sorted((ROOT / "src/fissure").rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        calls = [(a[0], a[1]) for a in _calls(tree, "MissingDependencyError", [None, None], 1)]
        calls += [(a[1], a[2]) for a in _calls(tree, "_need", [None, None, "bench"], 2)]
        for package, extra in calls:
            if isinstance(package, str) and (extra is None or isinstance(extra, str)):
                assert_right_command(str(MissingDependencyError(package, extra)))
                checked += 1
    assert checked >= 10
