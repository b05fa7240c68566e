"""An embedder that loads its model on the first text it has to embed.

A no-change ``fissure ingest`` re-run (a cron job, a git hook) needs the model's name and
width — the settings fingerprint and the store's width check use them — but never a
vector. Importing torch and loading MiniLM costs seconds of CPU, so the model's identity is
read from its sentence-transformers config files and the weights load only when a chunk
needs a vector.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fissure.embed.protocol import Embedder, empty
from fissure.errors import ConfigError


class LazyEmbedder:
    """Stands in for the embedder ``build()`` returns, building it on the first ``embed``.

    Args:
        build: Makes the real embedder.
        model_id: Its ``model_id``, known without building it.
        dim: Its vector width.
        max_tokens: Its input limit in its own tokens, special tokens excluded.

    The real embedder must agree with the three figures; if it does not, the first
    ``embed`` raises :class:`ConfigError` rather than store vectors under a wrong name.
    """

    def __init__(
        self, build: Callable[[], Embedder], *, model_id: str, dim: int, max_tokens: int
    ) -> None:
        self._build = build
        self._inner: Embedder | None = None
        self.model_id = model_id
        self.dim = dim
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        state = "loaded" if self._inner is not None else "not loaded"
        return f"LazyEmbedder({self.model_id!r}, {state})"

    @property
    def loaded(self) -> bool:
        """Whether the model has been built."""
        return self._inner is not None

    @property
    def inner(self) -> Embedder:
        """The real embedder, built now if it was not yet."""
        if self._inner is None:
            inner = self._build()
            if (inner.model_id, inner.dim) != (self.model_id, self.dim):
                raise ConfigError(
                    f"the model loaded as {inner.model_id} (dim {inner.dim}) but its config "
                    f"files say {self.model_id} (dim {self.dim}): reinstall the model package"
                )
            self._inner = inner
        return self._inner

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``, loading the model first if this is the first call with any."""
        if not texts:
            return empty(self.dim)
        return self.inner.embed(texts)


def sentence_transformer_shape(path: str | Path) -> tuple[int, int]:
    """``(dim, max_tokens)`` of a sentence-transformers folder, from its config files.

    ``dim`` is the last Dense layer's ``out_features`` if the pipeline has one, else the
    Pooling layer's ``word_embedding_dimension``; ``max_tokens`` is ``max_seq_length``
    minus the two special tokens a BERT-style tokenizer adds.

    Raises:
        ConfigError: The folder lacks the files or they do not say.
    """
    folder = Path(path)
    try:
        modules = _json(folder / "modules.json")
        dim: int | None = None
        for module in modules:
            kind = str(module.get("type", ""))
            config = folder / str(module.get("path", "")) / "config.json"
            if kind.endswith(".Pooling"):
                dim = int(_json(config)["word_embedding_dimension"])
            elif kind.endswith(".Dense"):
                dim = int(_json(config)["out_features"])
        max_seq = int(_json(folder / "sentence_bert_config.json")["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"cannot read the model's config files in {folder}: {exc}") from exc
    if dim is None:
        raise ConfigError(f"{folder}/modules.json names no Pooling layer: cannot tell its width")
    return dim, max_seq - 2


def _json(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))
