"""The invariants every strategy keeps, for every sizer, budget, overlap and ceiling.

For each chunk: ``text[start:end] == chunk.text``; starts strictly increase; no chunk
exceeds ``max_tokens`` measured by the same sizer on the chunk's own text, nor the character
ceiling (``max_chars``, given or derived from the budget); with no overlap, chunks cover
every visible character; a second run gives identical output.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fissure import Chunker, Document
from fissure.config import STRATEGIES
from fissure.embed.hashing import HashingEmbedder
from tests.chunk_checks import assert_chunk_invariants
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
    """Chunk ``text`` and assert every invariant (see ``tests/chunk_checks.py``)."""
    assert chunker.settings.overlap_tokens == overlap
    document = Document.from_text(text)
    chunks = chunker.chunk_document(document)
    assert_chunk_invariants(document, chunker, chunks)
    return chunks


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("sizer_name", SIZER_NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=TEXTS,
    budget=st.sampled_from([8, 13, 32, 100]),
    overlap_share=st.sampled_from([0, 0, 3]),
    max_chars=st.sampled_from([None, None, 1, 7, 40, 150]),
)
def test_invariants(
    strategy: str,
    sizer_name: str,
    text: str,
    budget: int,
    overlap_share: int,
    max_chars: int | None,
):
    overlap = budget * overlap_share // 10
    chunker = make(
        strategy,
        max_tokens=budget,
        overlap_tokens=overlap,
        tokenizer=sizer_name,
        max_chars=max_chars,
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
    # over 100 characters): the character ceiling cuts it all the same, as the budget
    # makes every other sizer cut it.
    ceiling = chunker.settings.char_ceiling
    assert len(chunks) > len(word) // ceiling
    if sizer_name in ("words", "minilm"):
        assert max(len(c.text) for c in chunks) == ceiling


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
