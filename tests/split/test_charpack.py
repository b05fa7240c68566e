"""The compiled character packer makes exactly the Python packer's pieces."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fissure
from fissure.ranks import CHAR, START
from fissure.size import Ruler, Sizer
from fissure.split import levels as lv
from fissure.split import recursive
from fissure.split.pack import Packer, Piece, Run
from fissure.split.separators import DEFAULT
from fissure.split.structural import LEAF_LEVELS

pytestmark = pytest.mark.skipif(
    recursive.CharPacker is None, reason="the compiled helper was not built here"
)

SEPARATORS = [list(DEFAULT), ["\n\n", "\n", " "], [". ", " "], ["ab", "a"], ["\n"], ["é", " "]]


@settings(max_examples=600, deadline=None)
@given(
    text=st.text(alphabet="ab \n\t\r.é\u0301\u200d\U0001f600\x0b", max_size=300),
    seps=st.sampled_from(SEPARATORS),
    budget=st.integers(1, 60),
)
def test_compiled_char_packer_equals_the_python_packer(
    text: str, seps: list[str], budget: int
) -> None:
    seps = [s for s in seps if s]
    levels = [lv.separator_cuts(s) for s in seps]
    packer = Packer(Ruler(text, Sizer.chars()), budget, levels, LEAF_LEVELS)
    expected = packer.run(Run([0, len(text)], START, START)) if text else []
    cuts = [c.boundary for c in levels]
    got = recursive.CharPacker(text, seps, cuts, START, CHAR, budget, Piece).run()
    assert got == expected


def test_recursive_chunks_are_the_same_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (Path(fissure.__file__).parent / "chunker.py").read_text() * 2
    for kwargs in ({}, {"min_tokens": 200}, {"overlap_tokens": 50}):
        chunker = fissure.Chunker(strategy="recursive", max_tokens=400, tokenizer="chars", **kwargs)
        compiled = [(c.start, c.end, c.n_tokens, c.metadata) for c in chunker.chunk(text)]
        with monkeypatch.context() as m:
            m.setattr(recursive, "CharPacker", None)
            plain = [(c.start, c.end, c.n_tokens, c.metadata) for c in chunker.chunk(text)]
        assert compiled == plain and len(compiled) > 10
