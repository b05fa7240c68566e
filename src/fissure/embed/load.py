"""Embedders by name: the one table from a spec string to a constructor."""

from __future__ import annotations

from typing import Literal

from fissure.embed.protocol import Embedder
from fissure.errors import ConfigError

SPECS = (
    "minilm",
    "minilm:bf16",
    "minilm:auto",
    "minilm:onnx",
    "minilm:onnx-fp32",
    "minilm:onnx-int8",
    "static",
    "static:PATH",
    "http:URL#MODEL",
    "hashing",
)
# ONNX Runtime specs -> precision (fissure.embed.onnx); plain "onnx" is the fast one.
_ONNX: dict[str, Literal["fp32", "int8"]] = {
    "minilm:onnx": "int8",
    "minilm:onnx-int8": "int8",
    "minilm:onnx-fp32": "fp32",
}


def load_embedder(spec: str = "minilm") -> Embedder:
    """An embedder from a spec.

    Args:
        spec: ``minilm`` (the default: all-MiniLM-L6-v2, exact), ``minilm:bf16``,
            ``minilm:auto`` (bf16 where the CPU has native bf16 matrix units, else exact),
            ``minilm:onnx`` (= ``minilm:onnx-int8``: on ONNX Runtime with int8 weights,
            cosine to the exact vectors about 0.99), ``minilm:onnx-fp32`` (ONNX Runtime,
            the exact vectors; both export the model once into the cache folder),
            ``static`` (the static MiniLM made by ``fissure models distill``),
            ``static:PATH`` (any model2vec folder) or ``http:URL#MODEL`` (an
            OpenAI-compatible server, e.g. ``http:http://localhost:8080/v1#bge-m3``; the
            key comes from ``OPENAI_API_KEY``), or ``hashing`` (a deterministic
            bag-of-words embedder for tests; no model).

    Raises:
        ConfigError: The spec is unknown or names a model that is not there.
    """
    spec = spec.strip()
    if spec == "hashing":
        from fissure.embed.hashing import HashingEmbedder

        return HashingEmbedder()
    if spec in ("minilm", "minilm:fp32", "minilm:bf16", "minilm:auto"):
        from fissure.embed.minilm import MiniLM

        bf16 = spec.endswith("bf16") or (spec.endswith("auto") and bf16_is_fast())
        return MiniLM(precision="bf16" if bf16 else "fp32")
    if spec in _ONNX:
        from fissure.embed.onnx import OnnxMiniLM

        return OnnxMiniLM(precision=_ONNX[spec])
    if spec == "static" or spec.startswith("static:"):
        return _static(spec.partition(":")[2])
    if spec.startswith(("http:", "https:")):
        return _http(spec)
    raise ConfigError(f"unknown embedder {spec!r}: use one of {', '.join(SPECS)}")


def lazy_embedder(spec: str = "minilm") -> Embedder:
    """Like :func:`load_embedder`, but a MiniLM model loads only when it first embeds a text.

    Its ``model_id``, ``dim`` and ``max_tokens`` come from the model's config files, so a
    run that embeds nothing (``fissure ingest`` with nothing changed) never imports torch.
    Other specs are built at once, as by :func:`load_embedder`.

    Raises:
        ConfigError: The spec is unknown or names a model that is not there.
    """
    spec = spec.strip()
    if spec not in ("minilm", "minilm:fp32", "minilm:bf16", "minilm:auto", *_ONNX):
        return load_embedder(spec)
    from fissure.embed.lazy import LazyEmbedder, sentence_transformer_shape
    from fissure.embed.minilm import MINILM_ID
    from fissure.size.sizer import minilm_model_dir

    if spec in _ONNX:
        exact, suffix = spec, f"@onnx-{_ONNX[spec]}"
    else:
        bf16 = spec.endswith("bf16") or (spec.endswith("auto") and bf16_is_fast())
        exact, suffix = ("minilm:bf16", "@bf16") if bf16 else ("minilm", "")
    dim, max_tokens = sentence_transformer_shape(minilm_model_dir())
    return LazyEmbedder(lambda: load_embedder(exact), model_id=MINILM_ID + suffix, dim=dim,
                        max_tokens=max_tokens)  # fmt: skip


def bf16_is_fast() -> bool:
    """Whether this CPU multiplies bf16 matrices natively (AMX or AVX-512 BF16)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            flags = next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return False
    return " amx_bf16" in flags or " avx512_bf16" in flags


def _static(path: str) -> Embedder:
    from fissure.embed.static import StaticEmbedder, default_static_dir

    if path:
        return StaticEmbedder(path)
    folder = default_static_dir()
    if not (folder / "config.json").is_file():
        raise ConfigError(
            f"no static model in {folder}: run `fissure models distill` once to build it "
            "from the local MiniLM (offline, about a minute)"
        )
    return StaticEmbedder(folder)


def _http(spec: str) -> Embedder:
    from fissure.embed.remote import HttpEmbedder

    # "http:https://host/v1#m" and the shorthand "https://host/v1#m" both name https://host/v1.
    rest = spec[len("http:") :] if spec.startswith("http:") else spec
    url = rest if rest.startswith(("http://", "https://")) else f"http:{rest}"
    url, _, model = url.partition("#")
    if not model:
        raise ConfigError(f"no model in {spec!r}: write http:URL#MODEL")
    return HttpEmbedder(url, model)
