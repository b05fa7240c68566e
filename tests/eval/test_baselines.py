"""The report's TokenText and Recursive splitters return exact offsets."""

from __future__ import annotations

import pytest

from fissure.errors import ConfigError
from fissure.eval.baselines import recursive_spans, token_byte_bounds, token_text_spans
from fissure.eval.strategies import find_like_upstream, parse_strategy
from fissure.size import Sizer

TEXT = (
    "Café owners feed stray cats. Naïve? Perhaps! 日本語のテキストも混ざる。\n\n"
    "A second paragraph, with several sentences. It goes on a while. And on.\n"
    "A line break here. Emoji 🙂🙃 too.\n\n\n"
    "Last paragraph: supercalifragilisticexpialidocious words and more words.\n"
) * 3
COUNT = Sizer.tiktoken("cl100k_base").count


@pytest.mark.parametrize(("size", "overlap"), [(8, 0), (10, 4), (1, 0), (7, 6)])
def test_token_windows_cover_the_text_in_order(size: int, overlap: int) -> None:
    spans = token_text_spans(TEXT, size, overlap)
    assert spans[0][0] == 0
    assert spans[-1][1] == len(TEXT)
    for (s1, e1), (s2, e2) in zip(spans, spans[1:], strict=False):
        # Windows starting inside one multi-byte character share its start.
        assert s1 <= s2 <= e1 <= e2
    for s, e in spans:
        # A split character moves to the later window: at most one extra token either side.
        assert COUNT(TEXT[s:e]) <= size + 2


def test_token_windows_without_overlap_partition_the_text() -> None:
    spans = token_text_spans(TEXT, 9, 0)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    assert "".join(TEXT[s:e] for s, e in spans) == TEXT
    bounds = token_byte_bounds(TEXT)
    assert int(bounds[-1]) == len(TEXT.encode("utf-8"))


def test_token_windows_follow_the_token_sequence() -> None:
    # Windows of n tokens start every (n - overlap) tokens: count them.
    n_tokens = len(token_byte_bounds(TEXT)) - 1
    spans = token_text_spans(TEXT, 10, 4)
    assert len(spans) == -(-(n_tokens - 10) // 6) + 1


@pytest.mark.parametrize(("size", "overlap"), [(20, 0), (25, 10), (5, 2), (60, 30)])
def test_recursive_spans_are_stripped_slices_within_budget(size: int, overlap: int) -> None:
    spans = recursive_spans(TEXT, size, overlap, count=COUNT)
    assert spans
    for s, e in spans:
        piece = TEXT[s:e]
        assert piece == piece.strip() and piece
        assert COUNT(piece) <= size + 1  # pieces are summed; a seam can merge one token
    starts = [s for s, _ in spans]
    assert starts == sorted(starts)
    covered = "".join(TEXT[s:e] for s, e in spans if overlap == 0)
    if overlap == 0:
        assert "".join(TEXT.split()) == "".join(covered.split())


def test_recursive_keeps_separators_with_the_following_piece() -> None:
    text = "aaa. bbb. ccc. ddd."
    spans = recursive_spans(text, 6, 0, count=len, separators=[".", ""])
    assert [text[s:e] for s, e in spans] == ["aaa", ". bbb", ". ccc", ". ddd."]


def test_recursive_matches_langchain_when_installed() -> None:
    splitters = pytest.importorskip("langchain_text_splitters")
    ref = splitters.RecursiveCharacterTextSplitter(
        separators=["\n\n", "\n", ".", "?", "!", " ", ""],
        chunk_size=20,
        chunk_overlap=8,
        length_function=COUNT,
        keep_separator=True,
    ).split_text(TEXT)
    assert [TEXT[s:e] for s, e in recursive_spans(TEXT, 20, 8, count=COUNT)] == ref


def test_bad_sizes_are_rejected() -> None:
    with pytest.raises(ConfigError):
        token_text_spans(TEXT, 5, 5)
    with pytest.raises(ConfigError):
        recursive_spans(TEXT, 0, 0, count=COUNT)


def test_find_like_upstream_relocates_repeats_and_drops_a_final_period() -> None:
    text = "Same words. Same words. Other."
    assert find_like_upstream(text, [(12, 23), (24, 30)]) == [(0, 10), (24, 29)]


def test_parse_strategy() -> None:
    s = parse_strategy("tokentext:8:2")
    assert (s.name, s.size, s.overlap) == ("tokentext:8:2", 8, 2)
    assert s.chunk(TEXT, "t") == token_text_spans(TEXT, 8, 2)
    assert parse_strategy("recursive:30").overlap == 0
    # 8 tokens are "a. a. a. a."; the final period is dropped before the search.
    found, text = parse_strategy("tokentext:8+find"), "a. a. a. a. a. a. a. a. a."
    assert found.chunk(text, "t")[0] == (0, 11)
    assert found.relocate is not None
    assert found.relocate(text, found.chunk(text, "t"))[0] == (0, 10)
    for bad in ("nope:5", "tokentext", "tokentext:x", "tokentext:5:1+grep"):
        with pytest.raises(ConfigError):
            parse_strategy(bad)
