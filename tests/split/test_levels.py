"""Cut finders: the literal-separator fast path finds exactly what a regex search finds."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fissure.size.textindex import TextIndex
from fissure.split.levels import separator_cuts

SEPARATORS = ["\n\n", "\n", " ", ". ", "aa", "ab", "\r\n", "é"]


@settings(max_examples=400, deadline=None)
@given(
    text=st.text(alphabet="ab \n\r.é", max_size=80),
    separator=st.sampled_from(SEPARATORS),
    data=st.data(),
)
def test_literal_cuts_equal_regex_search(text: str, separator: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    pattern = re.compile(re.escape(separator))
    expected = [m.start() for m in pattern.finditer(text, start, end) if start < m.start() < end]

    literal = separator_cuts(separator).find(TextIndex(text), start, end)
    as_regex = separator_cuts(re.escape(separator), regex=True).find(TextIndex(text), start, end)

    assert literal == expected
    assert as_regex == expected
