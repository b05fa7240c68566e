"""Packing a long run window by window makes exactly the cuts one table over it makes.

:class:`fissure.split.windowed.WindowedTable` keeps the size table of a window of parts;
every table answers exactly, so the packer must not change a single chunk. With the window
patched down to four parts, every run of more than four parts is packed through windows.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fissure import Chunker
from fissure.parse import registry
from fissure.split import pack
from tests.conftest import SIZER_NAMES, get_sizer
from tests.split.test_invariants import TEXTS

_WORDS = st.sampled_from(["fault", "slip", "a.", "Dr. X.", "\n", "\n\n", " ", "  ", "日本",
                          "e\u0301", "- item\n", "# Head\n", "| a | b |\n", "```\ncode\n```\n",
                          "x" * 30])  # fmt: skip
MARKDOWN = st.lists(_WORDS, max_size=200).map("".join)


def _all(chunker: Chunker, make: object) -> list[tuple[object, ...]]:
    chunks = make()  # type: ignore[operator]
    return [(c.start, c.end, c.n_tokens, c.headings, c.metadata) for c in chunks]


def _same(chunker: Chunker, make: object, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patched:
        whole = _all(chunker, make)
        patched.setattr(pack, "WINDOW", 4)
        windowed = _all(chunker, make)
    assert windowed == whole


@pytest.mark.parametrize("tokenizer", SIZER_NAMES)
@pytest.mark.parametrize("strategy", ["structural", "recursive", "sentence"])
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=TEXTS, budget=st.integers(4, 40))
def test_windows_cut_plain_text_as_one_table(
    tokenizer: str, strategy: str, text: str, budget: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizer = get_sizer(tokenizer)
    chunker = Chunker(strategy=strategy, max_tokens=max(budget, sizer.min_budget), sizer=sizer)
    _same(chunker, lambda: chunker.chunk(text), monkeypatch)


@pytest.mark.parametrize("tokenizer", ["minilm", "cl100k_base"])
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=MARKDOWN, budget=st.integers(6, 40))
def test_windows_cut_block_trees_as_one_table(
    tokenizer: str, text: str, budget: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunker = Chunker(max_tokens=budget, sizer=get_sizer(tokenizer))
    document = registry.parse(text.encode(), "doc.md")
    _same(chunker, lambda: chunker.chunk_document(document), monkeypatch)
