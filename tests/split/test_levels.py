"""Cut finders: the literal-separator fast path finds exactly what a regex search finds."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fissure.size.textindex import TextIndex
from fissure.split import levels
from fissure.split.levels import LINE, PARAGRAPH, separator_cuts

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


@settings(max_examples=1500, deadline=None)
@given(text=st.text(alphabet="ab. \t\r\n\x0b\xa0中", max_size=40), data=st.data())
def test_paragraph_and_line_finders_equal_the_index_arrays(text: str, data: st.DataObject) -> None:
    """The regex finders (one span of text, no whole-document arrays) find exactly the
    TextIndex's paragraph and line starts inside any ``(start, end)``, with ``\\r\\n``,
    lone ``\\r``, blank lines of odd whitespace and blank first lines."""
    index = TextIndex(text)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    paragraphs = [int(p) for p in index.paragraph_starts if start < p < end]
    assert PARAGRAPH.find(index, start, end) == paragraphs  # compiled where built
    assert levels._paragraph_cuts(index, start, end) == paragraphs  # the regex version
    assert LINE.find(index, start, end) == [int(p) for p in index.line_starts if start < p < end]
