"""The invariants every strategy keeps, for every sizer, budget and overlap.

For each chunk: ``text[start:end] == chunk.text``; starts strictly increase; no chunk
exceeds ``max_tokens`` measured by the same sizer on the chunk's own text; with no
overlap, chunks cover every visible character; a second run gives identical output.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fissure import Chunker
from fissure.config import STRATEGIES
from fissure.embed.hashing import HashingEmbedder
from fissure.size import Sizer
from tests.conftest import SIZER_NAMES, get_sizer

# Words, CJK, emoji (with joiners and skin tones), combining marks, punctuation, digits,
# every kind of line break and odd whitespace.
_ALPHABET = st.sampled_from(
    list("abcdefghij XYZ.,;:!?'\"()[]{}_-=+#0123456789")
    + ["\n", "\n\n", "\r\n", "\r", "\t", "  ", "\x0b", "\x0c", "\xa0", "\u3000", "\u2028"]
    + list("日本語のテキスト中文한국어")
    + ["😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "e\u0301", "\u200b", "ﬁ", "İ", "ß"]
    + ["supercalifragilistic", "def f(x):\n    return x\n", "Dr. Smith arrived. ", "\x00"]
    + ["[CLS]", "[SEP]x", "<|endoftext|>", "[MASK]"]
)
TEXTS = st.lists(_ALPHABET, max_size=300).map("".join)


EMBEDDER = HashingEmbedder(dim=64)


def make(strategy: str, **settings) -> Chunker:
    """A chunker; semantic strategies get the deterministic test embedder."""
    return Chunker(strategy=strategy, embedder=EMBEDDER, **settings)


def check_invariants(text: str, chunker: Chunker, overlap: int) -> list:
    chunks = chunker.chunk(text)
    sizer: Sizer = chunker.sizer
    budget = chunker.settings.budget
    for c in chunks:
        assert text[c.start : c.end] == c.text
        assert c.text and c.text == c.text.strip()
        measured = sizer._fn(c.text)  # the raw tokenizer, bypassing every cache
        assert measured <= budget, (c.text, measured, budget)
        assert c.n_tokens == measured
    assert all(a.start < b.start for a, b in zip(chunks, chunks[1:], strict=False))
    assert all(a.end <= b.end for a, b in zip(chunks, chunks[1:], strict=False))
    if overlap == 0:
        covered = bytearray(len(text))
        for c in chunks:
            covered[c.start : c.end] = b"\x01" * (c.end - c.start)
        missed = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
        assert not missed, [text[i] for i in missed[:10]]
        assert all(a.end <= b.start for a, b in zip(chunks, chunks[1:], strict=False))
    assert [c.index for c in chunks] == list(range(len(chunks)))
    again = chunker.chunk(text)
    assert [(c.start, c.end, c.chunk_id) for c in again] == [
        (c.start, c.end, c.chunk_id) for c in chunks
    ]
    return chunks


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("sizer_name", SIZER_NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=TEXTS,
    budget=st.sampled_from([8, 13, 32, 100]),
    overlap_share=st.sampled_from([0, 0, 3]),
)
def test_invariants(strategy: str, sizer_name: str, text: str, budget: int, overlap_share: int):
    overlap = budget * overlap_share // 10
    chunker = make(strategy, max_tokens=budget, overlap_tokens=overlap, tokenizer=sizer_name
    )
    chunker.sizer = get_sizer(sizer_name)
    check_invariants(text, chunker, overlap)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("sizer_name", SIZER_NAMES)
def test_single_huge_word(strategy: str, sizer_name: str):
    word = "".join("abcdefghijklmnopqrstuvwxyz"[(i * 7) % 26] for i in range(50_000))
    text = f"start {word} end"
    chunker = make(strategy, max_tokens=64, tokenizer=sizer_name)
    chunker.sizer = get_sizer(sizer_name)
    chunks = check_invariants(text, chunker, 0)
    # One word is one unit for the words sizer, and one [UNK] piece for WordPiece (words
    # over 100 characters); every other sizer must cut it.
    assert len(chunks) == 1 if sizer_name in ("words", "minilm") else len(chunks) > 1


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_cjk_emoji_mixed_newlines(strategy: str):
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    text = (
        "日本語の文章です。" * 40 + "\r\n" + f"{family} family 🇫🇷\r" * 30 + "\n\n" + "e\u0301" * 200
    ) * 3
    for name in SIZER_NAMES:
        chunker = make(strategy, max_tokens=20, overlap_tokens=4, tokenizer=name)
        chunker.sizer = get_sizer(name)
        chunks = check_invariants(text, chunker, 4)
        # Grapheme clusters stay whole where the budget allows: no chunk starts with a joiner
        # or combining mark.
        assert not any(c.text[0] in "\u200d\u0301\ufe0f" for c in chunks)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_empty_and_whitespace_give_no_chunks(strategy: str):
    for text in ("", "   ", "\n\n\t\r\n"):
        assert make(strategy, tokenizer="chars").chunk(text) == []
