from pathlib import Path

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
