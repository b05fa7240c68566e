"""The compiled character table (``fissure.size._parts.CharTable``) answers as ``LazyTable``.

``Ruler.table`` hands the packer a CharTable for the character sizer when the twin is
built; every question the packer asks (start, end, size, fits, sure) must get the Python
table's answer, on texts with runs of whitespace at the ends of parts and parts that are
whitespace only.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fissure.size import Ruler, Sizer
from fissure.size import ruler as ruler_module
from fissure.size.ruler import LazyTable

pytestmark = pytest.mark.skipif(ruler_module.char_table is None, reason="not built here")


@st.composite
def tables(draw: st.DrawFn) -> tuple[str, list[int]]:
    text = draw(st.text(alphabet="ab \n\t\u00a0\u2028é", max_size=60))
    cuts = draw(st.lists(st.integers(0, len(text)), max_size=8))
    return text, sorted({0, len(text), *cuts})


@given(tables(), st.integers(0, 70))
def test_char_table_answers_as_lazy_table(case: tuple[str, list[int]], budget: int) -> None:
    text, bounds = case
    ruler = Ruler(text, Sizer.chars())
    ours, theirs = ruler.table(bounds), LazyTable(ruler, bounds)
    assert type(ours) is ruler_module.char_table
    parts = len(bounds) - 1
    for i in range(parts):
        assert ours.start(i) == theirs.start(i)
        assert ours.sure(i, budget) == theirs.sure(i, budget)
        for j in range(i, parts):
            assert ours.end(j) == theirs.end(j)
            assert ours.size(i, j) == theirs.size(i, j)
            assert ours.fits(i, j, budget) == theirs.fits(i, j, budget)


def test_out_of_range_parts_raise() -> None:
    ruler = Ruler("a b", Sizer.chars())
    table = ruler.table([0, 1, 3])
    with pytest.raises(IndexError):
        table.start(5)
    with pytest.raises(IndexError):
        table.fits(0, 2, 10)
