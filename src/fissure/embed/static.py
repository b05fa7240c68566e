"""Static (model2vec) embedders: a token-vector lookup and a mean, for fast boundary detection.

:func:`distill_minilm` builds one from the local all-MiniLM-L6-v2, offline: with
``model2vec.distill`` when its ``distill`` extra is installed, otherwise with a built-in
copy of the same recipe (one forward pass per vocabulary token, mean pooling, PCA, Zipf/SIF
weights), written in model2vec's own folder format.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fissure.embed.files import cache_dir, file_sha256
from fissure.embed.protocol import empty, normalize_rows
from fissure.errors import ConfigError, MissingDependencyError

NO_LIMIT = 1_000_000
_SIF = 1e-4


def default_static_dir() -> Path:
    """Where ``fissure models distill`` puts the static MiniLM: ``<cache>/models/minilm-static``."""
    return cache_dir() / "models" / "minilm-static"


class StaticEmbedder:
    """A model2vec model loaded from a local folder (never from the hub).

    Args:
        path: A model2vec folder (``config.json``, ``model.safetensors``, ``tokenizer.json``).
        model_id: Name used by caches; defaults to the folder name and the weights' hash.

    Raises:
        ConfigError: The folder is missing or not a model2vec model.
        MissingDependencyError: model2vec is not installed.
    """

    def __init__(self, path: str | Path, *, model_id: str | None = None) -> None:
        path = Path(path).expanduser()
        if not (path / "config.json").is_file():
            raise ConfigError(f"no model2vec model in {path} (expected config.json there)")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        StaticModel = _model2vec().StaticModel  # noqa: N806 - a class
        try:
            self.model = StaticModel.from_pretrained(path.resolve(), force_download=False)
        except Exception as exc:
            raise ConfigError(f"cannot load the model2vec model in {path}: {exc}") from exc
        self.dim = int(self.model.dim)
        self.max_tokens = int(self.model.max_length or NO_LIMIT)
        # The weights' hash, so a rebuilt model never reads its predecessor's cached vectors.
        weights = path / "model.safetensors"
        tag = file_sha256(weights)[:16] if weights.is_file() else str(path.resolve())
        self.model_id = model_id or f"static:{path.name}@{tag}"

    def __repr__(self) -> str:
        return f"StaticEmbedder({self.model_id!r})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (see :class:`~fissure.embed.protocol.Embedder`).

        A text with no known token (the empty string) gets a zero row.
        """
        if not texts:
            return empty(self.dim)
        vectors = self.model.encode(list(texts), normalize=True, use_multiprocessing=False)
        return normalize_rows(vectors)


def distill_minilm(
    out_dir: str | Path | None = None, *, pca_dims: int = 256, overwrite: bool = False
) -> Path:
    """Distill a static model from the local all-MiniLM-L6-v2 into ``out_dir``, offline.

    This is what ``fissure models distill`` runs. The folder is written whole or not at all.

    Args:
        out_dir: Target folder; defaults to :func:`default_static_dir`.
        pca_dims: Width of the static vectors (PCA components).
        overwrite: Replace an existing model in ``out_dir``.

    Returns:
        The folder holding the model.

    Raises:
        ConfigError: ``out_dir`` already holds a model and ``overwrite`` is false.
    """
    out = Path(out_dir).expanduser() if out_dir else default_static_dir()
    if (out / "config.json").exists() and not overwrite:
        raise ConfigError(f"{out} already holds a model: pass overwrite=True to rebuild it")
    from fissure.embed.minilm import MiniLM

    _model2vec()  # before a minute of work, not after it
    teacher = MiniLM()  # verifies the weights before anything is derived from them
    model = _distill_with_model2vec(teacher, pca_dims) or _distill_builtin(teacher, pca_dims)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        model.save_pretrained(tmp)
        tmp.chmod(0o755)  # mkdtemp makes it private; the model is not a secret
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _model2vec() -> Any:
    try:
        import model2vec
    except ImportError as exc:
        raise MissingDependencyError("model2vec", "embed", purpose="static embeddings") from exc
    return model2vec


def _distill_with_model2vec(teacher: Any, pca_dims: int) -> Any | None:
    """model2vec's own distillation from the local folder, or None without its extra."""
    try:
        from model2vec.distill import distill
    except ImportError:  # model2vec[distill] needs skeletoken
        return None
    return distill(str(teacher.model[0].auto_model.name_or_path), pca_dims=pca_dims, device="cpu")


def _distill_builtin(teacher: Any, pca_dims: int) -> Any:
    """model2vec's recipe without its distill extra: token vectors, PCA, SIF weights."""
    import torch
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    from fissure.embed.minilm import MINILM_ID
    from fissure.size.sizer import minilm_model_dir

    tokenizer = Tokenizer.from_file(str(minilm_model_dir() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    if cls_id is None or sep_id is None:
        raise ConfigError("the teacher's tokenizer has no [CLS]/[SEP]: distil a BERT-style model")
    module = teacher.model[0].auto_model
    ids = torch.arange(tokenizer.get_vocab_size(), dtype=torch.long)
    rows = []
    with torch.inference_mode():
        for batch in ids.split(1024):
            inputs = torch.stack(
                [torch.full_like(batch, cls_id), batch, torch.full_like(batch, sep_id)], dim=1
            )
            rows.append(module(input_ids=inputs).last_hidden_state.float().mean(1).numpy())
    vectors = np.nan_to_num(np.concatenate(rows).astype(np.float64))
    vectors = _pca(vectors, pca_dims) * _sif_weights(len(vectors))[:, None]
    config = {
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "tokenizer_name": MINILM_ID,
        "apply_pca": pca_dims,
        "sif_coefficient": _SIF,
        "hidden_dim": int(vectors.shape[1]),
        "seq_length": NO_LIMIT,
        "normalize": True,
        "pooling": "mean",
    }
    return StaticModel(
        vectors=vectors.astype(np.float16),
        tokenizer=tokenizer,
        config=config,
        normalize=True,
        base_model_name=MINILM_ID,
    )


def _sif_weights(n: int) -> np.ndarray:
    """Smooth inverse frequency weights, with token frequency estimated by Zipf's law."""
    inv_rank = 1 / np.arange(2, n + 2)
    proba = inv_rank / inv_rank.sum()
    return _SIF / (_SIF + proba)


def _pca(x: np.ndarray, k: int) -> np.ndarray:
    """Project onto the top ``k`` principal components, signs fixed as model2vec fixes them."""
    k = min(k, x.shape[1])
    centred = x - x.mean(axis=0)
    _, vecs = np.linalg.eigh(centred.T @ centred / (len(x) - 1))
    scores = centred @ vecs[:, ::-1][:, :k]
    peaks = np.argmax(np.abs(scores), axis=0)
    return scores * np.sign(scores[peaks, np.arange(k)])
