"""One switch for the compiled twins: ``FISSURE_PURE_PYTHON=1`` imports none of them.

Each check runs in a fresh interpreter, since the switch is read when fissure is imported.
The child imports fissure, chunks the samples with the sizers and strategies that reach
every twin (characters through the compiled packer and character table, cl100k and MiniLM
through the compiled counters, plain text through the compiled chunk loop; and again with a
character ceiling that binds, over the same tables and counters; a PDF through the compiled
word loop) and reports which twins are loaded and the chunks it made. With the switch set,
none is loaded and the chunks are the same.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fissure import _compiled
from fissure._compiled import PURE_ENV, TWINS, pure_python, twin

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, sys
from pathlib import Path
import fissure
from fissure import Chunker, _compiled
from fissure.size import sizer, wordpiece, parts, ruler
from fissure.split import recursive, levels

chunks = []
for path in sorted(Path("samples").iterdir()):
    for sizer_name, strategy, budget, ceiling in (
        ("chars", "recursive", 300, None), ("chars", "structural", 300, None),
        ("cl100k_base", "structural", 64, None), ("minilm", "fixed", 48, None),
        # The character ceiling binding, over the compiled tables and counters:
        ("chars", "recursive", 300, 120), ("minilm", "structural", 64, 90),
        ("cl100k_base", "recursive", 64, 70),
    ):
        found = Chunker(strategy=strategy, tokenizer=sizer_name, max_tokens=budget,
                        max_chars=ceiling).chunk_file(path)
        chunks += [[path.name, sizer_name, c.start, c.end, c.n_tokens] for c in found]
# A PDF's words through the compiled word loop:
found = Chunker(tokenizer="chars", max_tokens=300).chunk_file(Path("tests/corpus/pdf/handbook.pdf"))
chunks += [["handbook.pdf", "chars", c.start, c.end, c.n_tokens] for c in found]
uses = {
    "CharPacker": recursive.CharPacker, "measure_c": parts.measure_c,
    "compiled_table": ruler.compiled_table,
    "compiled_chars": ruler.compiled_chars, "PieceCounter": sizer.PieceCounter,
    "WordCounter": wordpiece.WordCounter, "build_plain": fissure.chunker._build_plain,
    "paragraphs": levels._paragraphs is not levels._paragraph_cuts or None,
    "page_lines": sys.modules["fissure.parse.pdf_layout"]._words,
}
print(json.dumps({
    "loaded": sorted(m for m in sys.modules if m in _compiled.TWINS),
    "reasons": _compiled.reasons(),
    "uses": sorted(name for name, value in uses.items() if value is not None),
    "chunks": chunks,
}))
"""


def _run(pure: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    if pure is not None:
        env[PURE_ENV] = pure
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def compiled() -> dict:
    return _run(None)


def test_the_switch_imports_no_compiled_module_and_gives_the_same_chunks(compiled: dict):
    pure = _run("1")
    assert pure["loaded"] == []
    assert pure["uses"] == []
    assert pure["reasons"] == {name: f"{PURE_ENV} is set" for name in TWINS}
    assert pure["chunks"] == compiled["chunks"] and len(pure["chunks"]) > 30


def test_without_the_switch_every_built_twin_is_used(compiled: dict):
    built = [name for name in TWINS if compiled["reasons"][name] == "compiled"]
    if not built:
        pytest.skip(f"no compiled twin was built here: {compiled['reasons']}")
    assert compiled["loaded"] == sorted(built)
    if built == list(TWINS):
        assert len(compiled["uses"]) == 9, compiled["uses"]


@pytest.mark.parametrize("value", ["0", "", "false", "No", "off"])
def test_off_values_keep_the_compiled_twins(monkeypatch: pytest.MonkeyPatch, value: str):
    monkeypatch.setenv(PURE_ENV, value)
    assert not pure_python()


@pytest.mark.parametrize("value", ["1", "true", "yes", "on"])
def test_on_values_choose_pure_python(monkeypatch: pytest.MonkeyPatch, value: str):
    monkeypatch.setenv(PURE_ENV, value)
    monkeypatch.setattr(_compiled, "_reasons", {})  # keep this process's record as it was
    assert pure_python()
    assert twin("fissure.split._split") is None
    assert _compiled.reasons()["fissure.split._split"] == f"{PURE_ENV} is set"


def test_a_name_that_is_no_twin_is_refused():
    with pytest.raises(ValueError, match="not one of fissure's compiled twins"):
        twin("fissure.split.levels")


def test_the_twins_are_setup_pys_extensions_and_the_pyx_files():
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    built = [
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Extension"
    ]
    pyx = sorted(
        ".".join(p.relative_to(ROOT / "src").with_suffix("").parts)
        for p in (ROOT / "src" / "fissure").rglob("*.pyx")
    )
    assert tuple(built) == TWINS
    assert pyx == sorted(TWINS)
