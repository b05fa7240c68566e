from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fissure.embed import (
    Embedder,
    StaticEmbedder,
    default_static_dir,
    distill_minilm,
    load_embedder,
)
from fissure.errors import ConfigError
from fissure.size.sizer import minilm_model_dir


@pytest.fixture(scope="module")
def tiny_static(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model2vec folder with random vectors over the MiniLM vocabulary (saved in < 1 s)."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(minilm_model_dir() / "tokenizer.json"))
    vectors = np.random.default_rng(0).standard_normal((tokenizer.get_vocab_size(), 16))
    folder = tmp_path_factory.mktemp("tiny-static")
    model = StaticModel(vectors=vectors.astype(np.float32), tokenizer=tokenizer, normalize=True)
    model.save_pretrained(folder)
    return folder


def test_static_embedder(tiny_static: Path):
    emb = load_embedder(f"static:{tiny_static}")
    assert isinstance(emb, StaticEmbedder) and isinstance(emb, Embedder)
    assert emb.dim == 16 and emb.max_tokens > 0 and emb.model_id.startswith("static:")
    out = emb.embed(["split documents", "along fault lines", "split documents"])
    assert out.dtype == np.float32 and out.shape == (3, 16)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(out[0], out[2])
    assert emb.embed([]).shape == (0, 16)


def test_missing_models_say_how_to_fix(tmp_path: Path):
    assert not default_static_dir().exists()  # the tests' own cache folder
    with pytest.raises(ConfigError, match="fissure models distill"):
        load_embedder("static")
    with pytest.raises(ConfigError, match="no model2vec model"):
        StaticEmbedder(tmp_path)
    with pytest.raises(ConfigError, match="unknown embedder"):
        load_embedder("word2vec")


@pytest.mark.slow
def test_distill_minilm_offline(tmp_path: Path):
    out = distill_minilm(tmp_path / "minilm-static", pca_dims=64)
    emb = StaticEmbedder(out)
    assert emb.dim == 64
    near, far = emb.embed(["parse a json file", "read json data from disk", "the cat sat"])[[1, 2]]
    query = emb.embed(["parse a json file"])[0]
    assert query @ near > query @ far
    with pytest.raises(ConfigError, match="overwrite"):
        distill_minilm(out)
