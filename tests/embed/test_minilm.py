"""The MiniLM embedder against sentence-transformers itself (real model, loaded once)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fissure.embed import (
    Embedder,
    MiniLM,
    SentenceTransformerEmbedder,
    lazy_embedder,
    load_embedder,
)
from fissure.embed.load import AUTO, resolve, spec_of_model
from fissure.embed.minilm import MINILM_SHA256
from fissure.errors import ConfigError

TEXTS = [
    "def parse(text: str) -> Document:\n    return Document(text)",
    "The quick brown fox jumps over the lazy dog.",
    "",
    "Ünïcödé, 日本語のテキスト, and emoji 🚀 in one line",
    "The quick brown fox jumps over the lazy dog.",  # a duplicate
    "word " * 400,  # past the 256-token window: truncated the same way
    "   \n\t  ",
    "Short.",
]


@pytest.fixture(scope="module")
def minilm() -> MiniLM:
    return MiniLM(batch_size=3)  # small batches: several batches, mixed widths


def test_attributes(minilm: MiniLM):
    assert isinstance(minilm, Embedder)
    assert (minilm.dim, minilm.max_tokens) == (384, 254)
    assert minilm.model_id == "sentence-transformers/all-MiniLM-L6-v2"


def test_matches_sentence_transformers_in_order(minilm: MiniLM):
    ours = minilm.embed(TEXTS)
    theirs = minilm.model.encode(TEXTS, normalize_embeddings=True)
    assert ours.dtype == np.float32 and ours.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert (ours * theirs).sum(axis=1).min() >= 0.9999
    np.testing.assert_array_equal(ours[1], ours[4])
    single = minilm.embed([TEXTS[0]])
    assert float(single[0] @ ours[0]) >= 0.9999  # batch composition does not matter


def test_no_texts(minilm: MiniLM):
    assert minilm.embed([]).shape == (0, 384)


def test_bf16_stays_close(minilm: MiniLM):
    fast = SentenceTransformerEmbedder(
        Path(minilm.model[0].auto_model.name_or_path), precision="bf16"
    )
    assert fast.model_id.endswith("@bf16")
    assert (fast.embed(TEXTS) * minilm.embed(TEXTS)).sum(axis=1).min() >= 0.999


def test_wrong_weights_are_refused_before_loading(tmp_path: Path):
    (tmp_path / "modules.json").write_text("[]")
    (tmp_path / "model.safetensors").write_bytes(b"not the model")
    with pytest.raises(ConfigError, match="expected 53aa5117"):
        SentenceTransformerEmbedder(tmp_path, sha256=MINILM_SHA256)


def test_settings_are_validated(tmp_path: Path):
    with pytest.raises(ConfigError, match="not a sentence-transformers model folder"):
        SentenceTransformerEmbedder(tmp_path)
    (tmp_path / "modules.json").write_text("[]")
    with pytest.raises(ConfigError, match="precision"):
        SentenceTransformerEmbedder(tmp_path, precision="fp8")  # type: ignore[arg-type]


def test_load_embedder_exact_minilm(minilm: MiniLM):
    loaded = load_embedder("minilm")
    assert isinstance(loaded, MiniLM)
    np.testing.assert_allclose(loaded.embed(TEXTS[:2]), minilm.embed(TEXTS[:2]), atol=1e-5)


def test_the_default_is_this_machines_variant_and_keeps_the_vectors(minilm: MiniLM):
    """minilm:auto loads the variant resolve() names here (what the store records), lazily
    and at once alike, and its vectors stay close to the exact ones."""
    loaded = load_embedder()
    assert spec_of_model(loaded.model_id) == resolve(AUTO) != AUTO
    assert lazy_embedder().model_id == loaded.model_id
    cosine = (loaded.embed(TEXTS[:2]) * minilm.embed(TEXTS[:2])).sum(axis=1)
    assert cosine.min() > 0.98
