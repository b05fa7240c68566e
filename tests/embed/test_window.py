"""Embedding windows: inside the model's limit, around the chunk, slices of the text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fissure import Chunker
from fissure.config import ChunkSettings
from fissure.embed.window import Windows, blend, check_window, window_spans, window_texts
from fissure.errors import ConfigError
from fissure.parse.markdown import parse
from fissure.size import Sizer
from fissure.size.sizer import minilm_model_dir

CORPUS = Path(__file__).parents[1] / "corpus" / "markdown"


@pytest.fixture(scope="module")
def sizer() -> Sizer:
    return Sizer.minilm()


@pytest.fixture(scope="module")
def model_count():
    """Word pieces as the model's own tokenizer.json counts them (no special tokens)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(minilm_model_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def corpus_text() -> str:
    return "\n\n".join(p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.md")))


def test_windows_fit_the_model_contain_the_chunk_and_are_slices(sizer, model_count) -> None:
    text = corpus_text()
    spans = [(s, min(len(text), s + 300)) for s in range(0, len(text) - 1, 257)]
    for limit in (20, 128, 254):
        got = window_spans(text, spans, sizer, limit)
        for (s, e), (a, b) in zip(spans, got, strict=True):
            assert 0 <= a <= s <= e <= b <= len(text)
            if model_count(text[s:e]) < limit:
                assert model_count(text[a:b]) <= limit
            else:
                assert (a, b) == (s, e)
        assert got == window_spans(text, spans, sizer, limit)  # deterministic


def test_a_small_chunk_gets_a_window_close_to_the_limit(sizer, model_count) -> None:
    text = " ".join(f"word{i} is here." for i in range(400))
    s = text.index("word200")
    e = s + len("word200 is here.")
    a, b = Windows(text, sizer, 100).span(s, e)
    assert 95 <= model_count(text[a:b]) <= 100
    before, after = model_count(text[a:s]), model_count(text[e:b])
    assert abs(before - after) <= 8  # centred, to whole words


def test_before_shares_the_budget_and_the_edges_give_the_rest_away(sizer) -> None:
    text = " ".join(f"w{i}" for i in range(300))
    s = text.index("w150")
    e = s + 4
    a, b = Windows(text, sizer, 60, before=0.0).span(s, e)
    assert a == s and b > e
    a, b = Windows(text, sizer, 60, before=1.0).span(s, e)
    assert a < s and b == e
    # At the document's start the left side has no room: the right side takes it all.
    a, b = Windows(text, sizer, 60, before=1.0).span(0, 2)
    assert a == 0 and sizer.count(text[a:b]) > 50


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab cé,.\n=#1"), min_size=1, max_size=400),
    st.data(),
)
def test_any_text_any_chunk(text: str, data) -> None:
    sizer = Sizer.minilm()
    s = data.draw(st.integers(0, len(text) - 1))
    e = data.draw(st.integers(s + 1, len(text)))
    limit = data.draw(st.integers(1, 60))
    before = data.draw(st.floats(0, 1))
    a, b = Windows(text, sizer, limit, before=before).span(s, e)
    assert 0 <= a <= s < e <= b <= len(text)
    if (a, b) != (s, e):
        assert sizer.count(text[a:b]) <= limit


def test_window_texts_put_the_counted_context_in_front(sizer, model_count) -> None:
    doc = parse(sorted(CORPUS.glob("*.md"))[0].read_text(encoding="utf-8"), source="x.md")
    chunker = Chunker(ChunkSettings(max_tokens=64, prepend_context=True))
    chunks = chunker.chunk_document(doc)
    texts = window_texts(doc.text, chunks, sizer, 128)
    assert len(texts) == len(chunks)
    for chunk, text in zip(chunks, texts, strict=True):
        full = chunk.embedding_text()
        prefix = full[: len(full) - len(chunk.text)]
        assert text.startswith(prefix)
        assert chunk.text in text[len(prefix) :]
        assert text[len(prefix) :] in doc.text
        assert model_count(text) <= 128


def test_blend_is_unit_and_weighted() -> None:
    rng = np.random.default_rng(0)
    c = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((4, 8)).astype(np.float32)
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    assert np.allclose(np.linalg.norm(blend(c, w, 0.6), axis=1), 1.0)
    assert np.allclose(blend(c, w, 0.0), c, atol=1e-6)
    assert np.allclose(blend(c, w, 1.0), w, atol=1e-6)
    with pytest.raises(ValueError):
        blend(c, w[:2], 0.5)


@pytest.mark.parametrize(("tokens", "before"), [(0, 0.5), (True, 0.5), (10, -0.1), (10, 1.5)])
def test_bad_settings_are_refused(tokens, before) -> None:
    with pytest.raises(ConfigError):
        check_window(tokens, before)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"embed_window_tokens": 0},
        {"embed_window_share": 1.5},
        {"embed_window_before": -1},
        {"embed_window_tokens": "254"},
    ],  # fmt: skip
)
def test_chunk_settings_validate_the_window(kwargs) -> None:
    with pytest.raises(ConfigError):
        ChunkSettings(**kwargs)


def test_window_texts_with_headings_put_the_breadcrumb_in_front(sizer, model_count) -> None:
    from fissure.embed.window import heading_line

    doc = parse(sorted(CORPUS.glob("*.md"))[0].read_text(encoding="utf-8"), source="x.md")
    chunks = Chunker(ChunkSettings(max_tokens=64)).chunk_document(doc)
    texts = window_texts(doc.text, chunks, sizer, 128, headings=True)
    assert any(c.headings for c in chunks)
    for chunk, text in zip(chunks, texts, strict=True):
        line = heading_line(chunk.headings)
        assert text.startswith(line)
        assert chunk.text in text[len(line) :] and text[len(line) :] in doc.text
        assert model_count(text) <= 128
    assert heading_line(()) == "" and heading_line(("A", "B")) == "A › B\n"
