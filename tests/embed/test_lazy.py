"""The lazy embedder: the model's identity without its weights, the weights on first use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fissure.embed import HashingEmbedder, LazyEmbedder, MiniLM, lazy_embedder
from fissure.embed.lazy import sentence_transformer_shape
from fissure.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def test_minilm_identity_comes_from_its_config_files() -> None:
    lazy = lazy_embedder("minilm")
    assert isinstance(lazy, LazyEmbedder) and not lazy.loaded
    assert lazy.embed([]).shape == (0, 384) and not lazy.loaded
    minilm = MiniLM()
    assert (lazy.model_id, lazy.dim, lazy.max_tokens) == (
        minilm.model_id,
        minilm.dim,
        minilm.max_tokens,
    )
    texts = ["a fault line", "a seismograph records tremors"]
    got = lazy.embed(texts)
    assert lazy.loaded
    np.testing.assert_allclose(got, minilm.embed(texts), atol=1e-6)
    assert lazy_embedder("minilm:bf16").model_id == minilm.model_id + "@bf16"


def test_a_model_that_disagrees_with_its_config_is_refused() -> None:
    lazy = LazyEmbedder(lambda: HashingEmbedder(), model_id="not-hashing", dim=256,
                        max_tokens=10)  # fmt: skip
    with pytest.raises(ConfigError, match="reinstall"):
        lazy.embed(["x"])


def test_shape_reads_a_dense_layer_last(tmp_path: Path) -> None:
    st = "sentence_transformers.models."
    modules = [{"idx": 0, "path": "", "type": st + "Transformer"},
               {"idx": 1, "path": "1_Pooling", "type": st + "Pooling"},
               {"idx": 2, "path": "2_Dense", "type": st + "Dense"}]  # fmt: skip
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    (tmp_path / "sentence_bert_config.json").write_text('{"max_seq_length": 512}')
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling/config.json").write_text('{"word_embedding_dimension": 768}')
    (tmp_path / "2_Dense").mkdir()
    (tmp_path / "2_Dense/config.json").write_text('{"in_features": 768, "out_features": 256}')
    assert sentence_transformer_shape(tmp_path) == (256, 510)
    (tmp_path / "2_Dense/config.json").unlink()
    with pytest.raises(ConfigError, match="config files"):
        sentence_transformer_shape(tmp_path)


_RERUN = """
import sys
from fissure.cli import app
for _ in range(2):
    try:
        app(["ingest", sys.argv[1], "--store", sys.argv[2], "--workers", "1",
             "--no-progress"], prog_name="fissure")
    except SystemExit as exc:
        assert not exc.code, exc.code
    if _ == 0:
        for name in [m for m in sys.modules if m.split(".")[0] in ("torch", "chromadb")]:
            del sys.modules[name]
print("torch" in sys.modules, "chromadb" in sys.modules)
"""


@pytest.mark.slow
def test_a_no_change_rerun_imports_neither_torch_nor_chroma(tmp_path: Path) -> None:
    """The second run of the same ingest finds nothing to do and must not load the model."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("# Faults\n\nA fault is a crack in the crust.\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", _RERUN, str(corpus), str(tmp_path / "s")],
                         capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "0 chunked, 1 unchanged" in out.stderr
    assert out.stdout.split() == ["False", "False"], out.stdout
