"""The stdlib code-lookup builder and the structural-damage count (no model)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from fissure.eval.codelookup import build, gold_span, strip_docstrings, summary
from fissure.eval.damage import damaged, markdown_units, python_units
from fissure.eval.dataset import load_jsonl

SOURCE = '''"""Module doc."""

import os


@decorator
def only_doc():
    """Only a docstring."""


class Box:
    """A box.

    More text.
    """

    def size(self):
        """Return the size of the box in litres."""
        return 1  # keep
'''


def test_strip_docstrings_keeps_code_valid() -> None:
    out = strip_docstrings(SOURCE)
    ast.parse(out)
    assert '"""' not in out
    assert "    pass\n" in out and "return 1  # keep" in out and "import os" in out


def test_summary_is_the_first_sentence() -> None:
    assert summary("Return the size. More words here.\n\nOther.") == "Return the size."
    assert summary("Spread\n   over lines") == "Spread over lines"


def test_gold_span_covers_whole_lines_without_indent() -> None:
    text = "a\n    def f():\n        pass\nb\n"
    starts = [0, 2, 15, 28, 30]
    assert text[slice(*gold_span(text, starts, 2, 3))] == "def f():\n        pass"


def test_build_is_deterministic_and_loadable(tmp_path: Path) -> None:
    modules = ("textwrap.py", "shlex.py")
    first = build(tmp_path / "a", limit=20, modules=modules)
    build(tmp_path / "b", limit=20, modules=modules)
    a = (tmp_path / "a" / "queries.jsonl").read_bytes()
    assert a == (tmp_path / "b" / "queries.jsonl").read_bytes()
    assert first["queries"] == len(a.splitlines()) > 5
    data = load_jsonl(tmp_path / "a" / "queries.jsonl")
    for question, line in zip(data.questions, a.decode().splitlines(), strict=True):
        record = json.loads(line)
        text = data.corpora[question.corpus_id]
        start, end = question.gold[0]
        assert question.query not in text  # the answer is not findable by string matching
        assert text[start:end].lstrip().startswith(("def ", "class ", "async def ", "@"))
        g = record["gold"][0]
        assert text[:start].count("\n") + 1 == g["start_line"]
        assert text[:end].count("\n") + 1 == g["end_line"]


def test_damage_counts_cuts_inside_units_that_fit() -> None:
    code = "def f():\n    return 1\n\n\ndef g():\n    x = 1\n    return x\n"
    units = python_units(code)
    assert [code[s:e] for s, e in units][0] == "def f():\n    return 1"
    whole = [(0, 21), (24, len(code))]
    cut = [(0, 30), (30, len(code))]  # 30 is inside g
    assert damaged(whole, units, lambda u: True) == 0
    assert damaged(cut, units, lambda u: True) == 2
    assert damaged(cut, units, lambda u: False) == 0  # g does not fit: cutting it is forced


def test_markdown_units_are_fences_and_tables() -> None:
    text = "# T\n\ntext\n\n```py\nx=1\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    kinds = [text[s:e].split("\n")[0] for s, e in markdown_units(text)]
    assert kinds == ["```py", "| a | b |"]
