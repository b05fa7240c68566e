"""The one trim (named policies) and the one piece -> chunk join, against their definitions."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fissure.eval.multivector import blend_pieces, piece_links
from fissure.ingest.pieces import link_pieces
from fissure.size.textindex import TextIndex
from fissure.spans import (
    TRIMS,
    sharing,
    trim,
    trim_end,
    trim_lines,
    visible_end,
    visible_start,
)
from fissure.store.ranking import blend
from fissure.types import Chunk, Document

# Every kind of character the policies tell apart: ASCII and Unicode whitespace (U+001C..1F
# and U+0085 are str.isspace too), line breaks, letters, a combining mark.
ALPHABET = " \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000ab.é\u0301"
texts = st.text(alphabet=ALPHABET, max_size=60)


def _span(data: st.DataObject, text: str) -> tuple[int, int]:
    start = data.draw(st.integers(0, len(text)))
    return start, data.draw(st.integers(start, len(text)))


@settings(max_examples=400, deadline=None)
@given(texts, st.data())
def test_trim_all_is_strip(text: str, data: st.DataObject) -> None:
    start, end = _span(data, text)
    s, e = trim(text, start, end)
    piece = text[start:end]
    assert text[s:e] == piece.strip()
    if piece.strip():
        assert (s, e) == (start + len(piece) - len(piece.lstrip()), start + len(piece.rstrip()))
    else:
        assert s == e == end  # nothing visible: the empty span at the end


@settings(max_examples=400, deadline=None)
@given(texts, st.data())
def test_trim_end_is_rstrip_and_keeps_the_start(text: str, data: st.DataObject) -> None:
    start, end = _span(data, text)
    s, e = trim_end(text, start, end)
    assert s == start and text[s:e] == text[start:end].rstrip()


# The paragraph parser's former rule, for the ASCII whitespace it knew: blank lines of
# spaces, tabs, form and line feeds skipped whole, then the end stripped.
_OLD_BLANK_LINES = re.compile(r"(?:[ \t\f\v]*(?:\r\n|\r|\n))*")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=" \t\n\r\x0b\x0cab", max_size=60), st.data())
def test_trim_lines_keeps_the_first_visible_lines_indentation(
    text: str, data: st.DataObject
) -> None:
    start, end = _span(data, text)
    s, e = trim_lines(text, start, end)
    old = _OLD_BLANK_LINES.match(text, start, end).end()  # type: ignore[union-attr]
    old_end = old + len(text[old:end].rstrip())
    if old_end > old:
        assert (s, e) == (old, old_end)
        assert s == start or text[s - 1] in "\r\n"  # a line start: indentation kept
    else:
        assert s == e


@settings(max_examples=300, deadline=None)
@given(texts, st.data())
def test_every_policy_returns_a_sub_span_that_only_drops_whitespace(
    text: str, data: st.DataObject
) -> None:
    start, end = _span(data, text)
    for name, policy in TRIMS.items():
        s, e = policy(text, start, end)
        assert start <= s <= e <= end, name
        assert not text[start:s].strip() and not text[e:end].strip(), name
        assert text[s:e].strip() == text[start:end].strip(), name


def test_visible_ends_look_back_past_long_whitespace_tails() -> None:
    text = "x" + " \n" * 5000 + "y" + "\t" * 10_000
    assert visible_end(text, 0, len(text)) == 10_002
    assert visible_end(text, 1, 10_001) == 1  # only whitespace: the start
    assert visible_start(text, 1, len(text)) == 10_001
    assert visible_start(text, 10_002, len(text)) == len(text)
    assert trim(text, 1, len(text)) == (10_001, 10_002)
    assert trim(text, 5, 3) == (5, 3)  # not a span: unchanged


compiled = pytest.importorskip("fissure.split._split", reason="compiled twin not built")


@settings(max_examples=400, deadline=None)
@given(texts, st.data())
def test_the_compiled_packers_trim_is_the_same_policy(text: str, data: st.DataObject) -> None:
    start, end = _span(data, text)
    assert compiled.trim(text, start, end) == trim(text, start, end)


@settings(max_examples=300, deadline=None)
@given(texts, st.lists(st.integers(0, 60), max_size=8))
def test_the_size_tables_vectorised_trim_is_the_same_policy(text: str, cuts: list[int]) -> None:
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    starts, ends = TextIndex(text).trimmed(np.asarray(bounds, dtype=np.int64))
    for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        if text[a:b].strip():
            assert (int(starts[k]), int(ends[k])) == trim(text, a, b)
        else:  # nothing visible: an empty (inverted) span, as every table gives
            assert starts[k] >= ends[k]


# ------------------------------------------------------------------ the join

OVERLAPPING = [(0, 100), (80, 180), (160, 260)]  # the example


def test_a_piece_belongs_to_every_chunk_it_overlaps() -> None:
    pieces = [(90, 95), (95, 105), (170, 175), (100, 160), (0, 260), (50, 50), (260, 270)]
    assert sharing(OVERLAPPING, pieces) == [[0, 1], [0, 1], [1, 2], [1], [0, 1, 2], [], []]
    # Chunks in any order: indices point into the list given, in order of start.
    assert sharing(OVERLAPPING[::-1], [(90, 95)]) == [[2, 1]]
    # One long chunk first: the bisection over the furthest end so far still finds it.
    assert sharing([(0, 1000), (10, 20), (30, 40)], [(500, 510), (15, 35)]) == [[0], [0, 1, 2]]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 80), st.integers(1, 40)), max_size=12),
    st.lists(st.tuples(st.integers(0, 100), st.integers(0, 20)), max_size=12),
)
def test_sharing_equals_brute_force(
    chunks: list[tuple[int, int]], pieces: list[tuple[int, int]]
) -> None:
    chunk_spans = [(s, s + n) for s, n in chunks]
    piece_spans = [(s, s + n) for s, n in pieces]
    got = sharing(chunk_spans, piece_spans)
    for (s, e), owners in zip(piece_spans, got, strict=True):
        want = [k for k, (cs, ce) in enumerate(chunk_spans) if min(ce, e) > max(cs, s)]
        assert sorted(owners) == sorted(want)
        assert [chunk_spans[k] for k in owners] == sorted(chunk_spans[k] for k in owners)


def test_ingest_and_the_evaluator_link_overlapping_chunks_alike() -> None:
    document = Document.from_text("x" * 260, source="t.txt")
    chunks = [
        Chunk(document.text[s:e], s, e, document.id, n, e - s, (1, 1), "fixed")
        for n, (s, e) in enumerate(OVERLAPPING)
    ]
    index = {c.chunk_id: c.index for c in chunks}
    pieces = [(90, 95), (95, 105), (170, 175), (10, 20)]
    stored = {(p.start, p.end): {index[c] for c in p.chunk_ids}
              for p in link_pieces(document, pieces, chunks)}  # fmt: skip
    links = piece_links({"doc": list(OVERLAPPING)}, [("doc", s, e) for s, e in pieces])
    evaluated: dict[tuple[int, int], set[int]] = {}
    for chunk, piece in links.tolist():
        evaluated.setdefault(pieces[piece], set()).add(chunk)
    # (90, 95) lies in the overlap of chunks 0 and 1: the evaluator used to link chunk 1 only.
    assert stored == evaluated == {(90, 95): {0, 1}, (95, 105): {0, 1}, (170, 175): {1, 2},
                                   (10, 20): {0}}  # fmt: skip
    assert np.all(np.diff(links[:, 0]) >= 0)  # by chunk, as blend_pieces reads them


def test_the_evaluators_blend_is_the_stores() -> None:
    rng = np.random.default_rng(7)
    scores = rng.standard_normal((3, 4)).astype(np.float32)
    piece_scores = rng.standard_normal((3, 5)).astype(np.float32)
    links = np.array([[0, 1], [0, 4], [2, 0]])  # chunk 1 and 3 have no piece
    got = blend_pieces(scores, piece_scores, links, 0.3)
    for q in range(3):
        best = np.full(4, -np.inf, dtype=np.float32)
        for chunk, piece in links.tolist():
            best[chunk] = max(best[chunk], piece_scores[q, piece])
        assert np.array_equal(got[q], blend(scores[q], best, 0.3))
    assert np.array_equal(got[:, [1, 3]], scores[:, [1, 3]])  # its own score in both terms


@settings(max_examples=300, deadline=None)
@given(texts, st.data())
def test_trim_is_its_two_halves(text: str, data: st.DataObject) -> None:
    start, end = _span(data, text)
    s = visible_start(text, start, end)
    assert trim(text, start, end) == (s, visible_end(text, s, end))
