import ast
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tree_checks import assert_valid_tree, walk

from fissure.parse import python
from fissure.parse.python import PythonLevel

CORPUS = Path(__file__).parent.parent / "corpus" / "python" / "pathlike.py"


def parse(source: str):
    document = python.parse(source, source="mod.py")
    assert_valid_tree(document)
    return document


def entities(document):
    return {b.metadata["entity"]: b for b in walk(document.blocks) if "entity" in b.metadata}


def test_corpus_entities_titles_and_kinds():
    source = CORPUS.read_text(encoding="utf-8")
    document = parse(source)
    found = entities(document)
    assert list(found) == [
        "Path",
        "Path.parse",
        "Path.resolve",
        "Path.resolve.step",
        "Path.__str__",
        "Path.Error",
        "exists",
        "_main",
    ]
    assert found["Path"].kind == "class" and found["Path"].level == PythonLevel.CLASS
    assert found["Path.resolve"].kind == "method" and found["Path.resolve"].title == "resolve"
    assert found["Path.resolve.step"].kind == "function"
    assert found["exists"].metadata["async"] is True
    assert [b.kind for b in document.blocks[:2]] == ["docstring", "imports"]


def test_decorators_and_leading_comments_are_attached():
    source = CORPUS.read_text(encoding="utf-8")
    found = entities(parse(source))
    path = source[found["Path"].start : found["Path"].end]
    assert path.startswith("# Paths are immutable value objects.\n# Two comment lines")
    assert "@dataclass(frozen=True)\nclass Path:" in path
    assert found["Path"].metadata["decorators"] == ["dataclass(frozen=True)"]
    resolve = source[found["Path.resolve"].start : found["Path.resolve"].end]
    assert resolve.startswith('    # Resolution collapses "." and ".."')
    parse_method = source[found["Path.parse"].start : found["Path.parse"].end]
    assert parse_method.startswith("    @classmethod\n    def parse(")


def test_comment_separated_by_a_blank_line_is_not_attached():
    source = "x = 1\n# about x\n\ndef f():\n    pass\n"
    (f,) = [b for b in parse(source).blocks if b.kind == "function"]
    assert source[f.start :].startswith("def f")


def test_docstrings_are_children_and_offsets_handle_non_ascii():
    source = 'def f():\n    """Ünïcödé doc."""\n    return "é"\n'
    (f,) = parse(source).blocks
    doc, body = f.children
    assert source[doc.start : doc.end] == '"""Ünïcödé doc."""'
    assert source[body.start : body.end] == 'return "é"'
    assert source[f.start : f.end] == source.rstrip("\n")


def test_syntax_error_falls_back_with_a_recorded_reason():
    source = "def broken(:\n    pass\n\nprint('after')\n"
    document = parse(source)
    assert document.mime == "text/x-python"
    assert "SyntaxError at line 1" in document.metadata["fallback"]
    assert document.text == source


_PY_LINES = st.sampled_from(
    ["def f():", "    pass", "class C:", "    def m(self):", "        return 1", "@d", "# c",
     "", "x = (", ")", "import os", '"""doc"""', "    # inner", "async def g(): ..."]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(_PY_LINES, max_size=25))
def test_any_python_gives_a_valid_tree(lines):
    parse("\n".join(lines))


def _tree(blocks):
    return [(b.kind, b.start, b.end, b.level, b.title, b.metadata, _tree(b.children))
            for b in blocks]  # fmt: skip


def _exact(source: str, monkeypatch) -> list:
    """The blocks with the def-line prefilter off: every compound statement walked whole."""
    with monkeypatch.context() as patch:
        patch.setattr(python._Lines, "may_define", lambda self, node: True)
        return _tree(python.parse(source, source="mod.py").blocks)


def _stdlib_sample(count: int) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(root.glob("*.py")) + sorted(root.glob("[a-m]*/*.py"))
    return files[:: max(1, len(files) // count)][:count]


def test_def_prefilter_changes_no_block_on_real_files(monkeypatch):
    files = [CORPUS, *Path(__file__).parents[2].glob("samples/*.py"), *_stdlib_sample(40)]
    for path in files:
        source = path.read_text(encoding="utf-8", errors="replace")
        assert _tree(parse(source).blocks) == _exact(source, monkeypatch), path


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize(
    ("inner", "defines"),
    [("def f(): pass", True), ("async def f(): pass", True), ("async \\\n  def f(): pass", True),
     ("class C: pass", True), ("@d\n    class C: pass", True), ("\f    def f(): pass", True),
     ("x = 1  # def f\n    y = 'class C'", False), ('s = """\ndef f(): pass\n"""', False)],
)  # fmt: skip
def test_entities_inside_compound_statements_are_found(inner, defines, newline, monkeypatch):
    source = f"if X:\n    {inner}\nelse:\n    pass\n".replace("\n", newline)
    found = _tree(parse(source).blocks)
    assert found == _exact(source, monkeypatch)
    assert bool(found[0][-1]) == defines  # the entities nested in the ``if``


@settings(max_examples=150, deadline=None)
@given(st.lists(_PY_LINES | st.sampled_from(["if x:", "    if y:", "        def h(): ..."]),
                max_size=25))  # fmt: skip
def test_def_prefilter_agrees_with_the_exact_walk(lines):
    source = "\n".join(lines)
    with pytest.MonkeyPatch.context() as patch:
        fast = _tree(python.parse(source, source="mod.py").blocks)
        patch.setattr(python._Lines, "may_define", lambda self, node: True)
        assert fast == _tree(python.parse(source, source="mod.py").blocks)


def _comments_above_by_lines(lines, first_line, indent, floor):
    """The leading-comment rule stated plainly (the parser finds the same lines by offset)."""
    line = first_line
    while line - 1 > floor:
        start = lines.starts[line - 2]
        above = lines.text[start : lines.starts[line - 1]].rstrip("\r\n")
        stripped = above.lstrip()
        if not stripped.startswith("#") or len(above) - len(stripped) != indent:
            break
        line -= 1
    return line


# A module of definitions, each with candidate comment lines above it (some at its
# indentation, some not, some separated by a blank line) and maybe a decorator.
_ABOVE = st.sampled_from(["# c", "\f# c", "#", " # c", "\t# c", "x = 1  # c", "", "# é", "    "])
_INNER = st.sampled_from(
    ["    # c", "    #", "  # c", "    \f# c", "\t# c", "", "    x = 1", "    @d"]
)
_ITEM = st.tuples(
    st.lists(_ABOVE, max_size=3),
    st.booleans(),
    st.lists(st.tuples(st.lists(_INNER, max_size=3), st.booleans()), max_size=3),
).map(
    lambda t: [*t[0], *(["@d"] if t[1] else []), "class C:" if t[2] else "def f():",
               *[line for inner, dec in t[2]
                 for line in (*inner, *(["    @d"] if dec else []), "    def m(self):",
                              "        pass")],
               *([] if t[2] else ["    pass"])]
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(_ITEM, max_size=5), st.sampled_from(["\n", "\r\n", "\r"]))
def test_leading_comments_are_the_lines_the_plain_rule_finds(items, newline):
    source = newline.join(line for item in items for line in item)
    try:
        compile(source, "mod.py", "exec", ast.PyCF_ONLY_AST)
    except (SyntaxError, ValueError):
        return  # the fallback parser attaches no comments
    found = _tree(python.parse(source, source="mod.py").blocks)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(python, "_comment_lines_above", _comments_above_by_lines)
        assert found == _tree(python.parse(source, source="mod.py").blocks)


def test_the_collector_pause_is_shared_by_threads_and_respects_an_earlier_off() -> None:
    import gc
    import threading

    from fissure.parse import python as python_parser

    source = "def f():\n    return 1\n" * 5_000
    seen: list[bool] = []

    def work() -> None:
        for _ in range(3):
            document = python_parser.parse(source, source="x.py")
            seen.append(len(document.blocks) == 5_000)

    assert gc.isenabled()
    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [True] * 12
    assert gc.isenabled() and python_parser._PAUSES == 0  # back on once the last is done
    gc.disable()
    try:
        python_parser.parse(source, source="x.py")
        assert not gc.isenabled()  # off before: left off
    finally:
        gc.enable()
