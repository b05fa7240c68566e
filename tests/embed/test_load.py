"""Which MiniLM variant the default names on a CPU, and which one a store is read with."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from fissure.embed import load as load_module
from fissure.embed.load import AUTO, resolve, spec_of_model, stored_embedder
from fissure.embed.minilm import MINILM_ID

X86_VNNI = "fpu sse2 avx2 avx512f avx512_vnni"
X86_BF16_VNNI = "fpu avx2 avx512f avx512_bf16 avx512_vnni amx_bf16 amx_int8"
X86_OLD = "fpu sse2 avx avx2 fma"
ARM_DOT = "fp asimd evtstrm aes crc32 asimddp"


def _on(monkeypatch: pytest.MonkeyPatch, flags: str, onnx: bool) -> None:
    monkeypatch.setattr(load_module, "_cpu_flags", lambda: frozenset(flags.split()))
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        if name in ("onnxruntime", "onnx") and not onnx:
            return None
        return real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


@pytest.mark.parametrize(
    ("flags", "onnx", "expected"),
    [
        (X86_VNNI, True, "minilm:onnx-int8"),
        (X86_BF16_VNNI, True, "minilm:onnx-int8"),
        (ARM_DOT, True, "minilm:onnx-int8"),
        (X86_BF16_VNNI, False, "minilm:bf16"),  # no ONNX Runtime: torch's fastest
        (X86_OLD, True, "minilm:onnx-fp32"),  # no int8 units: the exact vectors, faster
        (X86_OLD, False, "minilm"),
        ("", False, "minilm"),  # /proc/cpuinfo unreadable
    ],
)
def test_auto_resolves_by_cpu_and_runtime(
    monkeypatch: pytest.MonkeyPatch, flags: str, onnx: bool, expected: str
) -> None:
    _on(monkeypatch, flags, onnx)
    assert resolve(AUTO) == resolve(f"  {AUTO} ") == expected
    assert resolve("minilm") == "minilm"  # a named variant is itself
    assert resolve("minilm:onnx-fp32") == "minilm:onnx-fp32"


@pytest.mark.parametrize(
    ("model", "spec"),
    [
        (MINILM_ID, "minilm"),
        (f"{MINILM_ID}@bf16", "minilm:bf16"),
        (f"{MINILM_ID}@onnx-int8", "minilm:onnx-int8"),
        (f"{MINILM_ID}@onnx-fp32", "minilm:onnx-fp32"),
        (f"{MINILM_ID}@fp8", None),
        ("/models/other", None),
    ],
)
def test_the_spec_of_a_recorded_model(model: str, spec: str | None) -> None:
    assert spec_of_model(model) == spec


class _Manifest:
    def __init__(self, meta: dict[str, str], runs: list[dict[str, Any]] | None = None) -> None:
        self.meta, self._runs = meta, runs or []

    def get_meta(self, key: str) -> str | None:
        return self.meta.get(key)

    def runs(self) -> dict[str, tuple[str, dict[str, Any], str]]:
        return {str(k): ("spec", config, "when") for k, config in enumerate(self._runs)}


def test_a_store_is_read_with_the_variant_it_was_built_with() -> None:
    assert stored_embedder(_Manifest({})) is None  # nothing stored yet
    recorded = _Manifest({"embedder": "minilm:onnx-int8", "model": f"{MINILM_ID}@onnx-int8"})
    assert stored_embedder(recorded) == "minilm:onnx-int8"
    # A store of an older version that recorded "auto" is read as its model says, not as
    # this machine would resolve auto.
    old_auto = _Manifest({"embedder": AUTO, "model": f"{MINILM_ID}@bf16"})
    assert stored_embedder(old_auto) == "minilm:bf16"
    by_runs = _Manifest({"model": MINILM_ID}, [{"embedder": "minilm"}, {"embedder": "minilm"}])
    assert stored_embedder(by_runs) == "minilm"
    by_model = _Manifest({"model": "hashing-256"}, [{"embedder": "a"}, {"embedder": "b"}])
    assert stored_embedder(by_model) == "hashing"
    assert stored_embedder(_Manifest({"model": MINILM_ID})) == "minilm"
