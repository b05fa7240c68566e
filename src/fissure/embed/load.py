"""Embedders by name: the one table from a spec string to a constructor.

``minilm:auto``, the default, is all-MiniLM-L6-v2 in the fastest variant that keeps
retrieval on this machine (:func:`resolve`): ONNX Runtime with int8 weights where the CPU
has int8 dot-product units (x86 VNNI or AMX, Arm dot product), else torch bf16 where it
has bf16 matrix units, else ONNX Runtime fp32 (the exact vectors, about twice torch's
speed), else torch fp32. A store records the variant it was built with, never ``auto``
(``fissure ingest`` and the service resolve it first), so that it is queried with the same
vectors on any machine.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Literal

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
AUTO = "minilm:auto"  # the default wherever fissure embeds
# ONNX Runtime specs -> precision (fissure.embed.onnx); plain "onnx" is the fast one.
_ONNX: dict[str, Literal["fp32", "int8"]] = {
    "minilm:onnx": "int8",
    "minilm:onnx-int8": "int8",
    "minilm:onnx-fp32": "fp32",
}
# MiniLM specs -> what their embedders append to MINILM_ID in ``model_id`` (MiniLM: the
# torch precision, OnnxEmbedder: the ONNX one): how a store's model names its spec.
_MODEL_SUFFIX = {"minilm": "", "minilm:fp32": "", "minilm:bf16": "@bf16",
                 **{spec: f"@onnx-{precision}" for spec, precision in _ONNX.items()}}  # fmt: skip
_ALIASES = ("minilm:fp32", "minilm:onnx")  # other names of minilm and minilm:onnx-int8


def load_embedder(spec: str = AUTO) -> Embedder:
    """An embedder from a spec.

    Args:
        spec: ``minilm:auto`` (the default: all-MiniLM-L6-v2 in the fastest variant
            here, see :func:`resolve`), ``minilm`` (torch, exact), ``minilm:bf16``,
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
    spec = resolve(spec)
    if spec == "hashing":
        from fissure.embed.hashing import HashingEmbedder

        return HashingEmbedder()
    if spec in ("minilm", "minilm:fp32", "minilm:bf16"):
        from fissure.embed.minilm import MiniLM

        return MiniLM(precision="bf16" if spec == "minilm:bf16" else "fp32")
    if spec in _ONNX:
        from fissure.embed.onnx import OnnxMiniLM

        return OnnxMiniLM(precision=_ONNX[spec])
    if spec == "static" or spec.startswith("static:"):
        return _static(spec.partition(":")[2])
    if spec.startswith(("http:", "https:")):
        return _http(spec)
    raise ConfigError(f"unknown embedder {spec!r}: use one of {', '.join(SPECS)}")


def lazy_embedder(spec: str = AUTO) -> Embedder:
    """Like :func:`load_embedder`, but a MiniLM model loads only when it first embeds a text.

    Its ``model_id``, ``dim`` and ``max_tokens`` come from the model's config files, so a
    run that embeds nothing (``fissure ingest`` with nothing changed) never imports torch.
    Other specs are built at once, as by :func:`load_embedder`.

    Raises:
        ConfigError: The spec is unknown or names a model that is not there.
    """
    spec = resolve(spec)
    if spec not in _MODEL_SUFFIX:
        return load_embedder(spec)
    from fissure.embed.lazy import LazyEmbedder, sentence_transformer_shape
    from fissure.embed.minilm import MINILM_ID
    from fissure.size.sizer import minilm_model_dir

    dim, max_tokens = sentence_transformer_shape(minilm_model_dir())
    return LazyEmbedder(lambda: load_embedder(spec), model_id=MINILM_ID + _MODEL_SUFFIX[spec],
                        dim=dim,
                        max_tokens=max_tokens)  # fmt: skip


def resolve(spec: str) -> str:
    """The spec ``spec`` stands for on this machine: ``minilm:auto`` becomes
    ``minilm:onnx-int8`` where the CPU has int8 dot-product units and ONNX Runtime is
    installed, else ``minilm:bf16`` where it has bf16 matrix units, else
    ``minilm:onnx-fp32`` with ONNX Runtime, else ``minilm``; any other spec is itself.

    int8 weights move a 220-token chunk's vector by about 0.003 of cosine (0.006 at most
    on 400 chunks); recall and IoU on Chroma's benchmark stay within 0.5 points of fp32,
    recall on the code lookup within 0.8 (``bench/results/embed.md``).
    """
    spec = spec.strip()
    if spec != AUTO:
        return spec
    onnx = all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))
    flags = _cpu_flags()
    if onnx and flags & _INT8_UNITS:
        return "minilm:onnx-int8"
    if flags & _BF16_UNITS:
        return "minilm:bf16"
    return "minilm:onnx-fp32" if onnx else "minilm"


def spec_of_model(model_id: str) -> str | None:
    """The MiniLM spec that makes vectors of ``model_id`` (a store's recorded model)."""
    from fissure.embed.minilm import MINILM_ID

    named = (s for s, suffix in _MODEL_SUFFIX.items() if MINILM_ID + suffix == model_id)
    return next((s for s in named if s not in _ALIASES), None)


def stored_embedder(manifest: Any) -> str | None:
    """The embedder a store was built with: the spec it records (written before a run's
    first document, so a store whose first run was killed has it too), else the one its
    runs agree on, else the built-in that makes its recorded model; ``None`` for a store
    that records none. A recorded ``minilm:auto`` (stores of older versions) is read as
    the variant its model names."""
    model = manifest.get_meta("model") or ""
    recorded = manifest.get_meta("embedder")
    if not recorded:
        specs = {config.get("embedder") for _, config, _ in manifest.runs().values()}
        specs.discard("")
        specs.discard(None)
        recorded = specs.pop() if len(specs) == 1 else None
    if recorded and str(recorded).strip() != AUTO:
        return str(recorded)
    if model.startswith("hashing-"):
        return "hashing"
    return spec_of_model(model) or (None if not model else "minilm")


# /proc/cpuinfo flags of int8 dot-product units (x86 VNNI, AMX; Arm's "asimddp") and of
# native bf16 matrix units.
_INT8_UNITS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8", "asimddp"})
_BF16_UNITS = frozenset({"amx_bf16", "avx512_bf16"})


def _cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (x86 ``flags``, Arm ``Features``); none where unknown."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            line = next((ln for ln in f if ln.startswith(("flags", "Features"))), "")
    except OSError:
        return frozenset()
    return frozenset(line.partition(":")[2].split())


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
