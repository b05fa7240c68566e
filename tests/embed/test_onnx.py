"""The ONNX Runtime embedder against the torch MiniLM (real model, exported once per module)."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from subprocess import PIPE

import numpy as np
import pytest

_INSTALL = "pip install 'fissure[onnx]'"
pytest.importorskip("onnxruntime", reason=f"onnxruntime is not installed: {_INSTALL}")
pytest.importorskip("onnx", reason=f"onnx (to export the model) is not installed: {_INSTALL}")

from fissure.embed import Embedder, LazyEmbedder, MiniLM, lazy_embedder, load_embedder  # noqa: E402
from fissure.embed import onnx as onnx_module  # noqa: E402
from fissure.embed.minilm import MINILM_ID  # noqa: E402
from fissure.embed.onnx import OnnxEmbedder, OnnxMiniLM, onnx_file  # noqa: E402
from fissure.errors import ConfigError, MissingDependencyError  # noqa: E402
from fissure.size.sizer import minilm_model_dir  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PROSE = (
    "A fault is a planar fracture in a volume of rock across which there has been "
    "significant displacement as a result of rock-mass movements. "
)
TEXTS = [
    "",
    "   \n\t  ",
    "?",
    "a",
    "OK",
    "The quick brown fox jumps over the lazy dog.",
    "The quick brown fox jumps over the lazy dog.",  # a duplicate
    "def parse(text: str) -> Document:\n    return Document(text)",
    "Ünïcödé, 日本語のテキスト, and emoji 🚀 in one line",
    "Привет, мир! Это проверка кириллицы.",
    "مرحبا بالعالم، هذا نص عربي قصير",
    "中文文本的分块与嵌入测试，包含标点符号。",
    "| level | name |\n|---|---|\n| 1 | heading |\n| 2 | paragraph |",
    '{"id": 42, "tags": ["geology", "faults"], "ok": true}',
    "https://example.com/path?query=1&other=two#fragment",
    "3.14159 2.71828 1.41421 1.73205 0.57721",
    "How do geologists measure the slip rate of a fault?",
    "SELECT name, count(*) FROM chunks GROUP BY name ORDER BY 2 DESC;",
    "# Installing\n\nRun `pip install 'fissure[onnx]'` and pick `--embedder minilm:onnx`.",
    PROSE * 3,
    PROSE * 12,  # past the 256-token window: truncated the same way
    "word " * 400,
    "x" * 3000,  # one word too long for WordPiece: a single [UNK]
    "\n".join(f"line {i}: value = {i * i}" for i in range(120)),
    "tab\tseparated\tvalues\tin\ta\trow",
    "A sentence with trailing spaces.      ",
    "ALL CAPS HEADLINE ABOUT SEISMIC ACTIVITY",
    "émigré café naïve coöperate façade",
]


def _chunks(n: int) -> list[str]:
    """Realistic chunk-sized texts: paragraphs of the repository's own docs."""
    paragraphs = []
    for path in sorted((ROOT / "docs").glob("*.md")):
        paragraphs += [p for p in path.read_text("utf-8").split("\n\n") if len(p) > 200]
    return paragraphs[:n]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One cache folder for the module, so each precision is exported once."""
    folder = tmp_path_factory.mktemp("onnx-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FISSURE_CACHE_DIR", str(folder))
        yield folder


@pytest.fixture(scope="module")
def fp32(cache: Path) -> OnnxMiniLM:
    return OnnxMiniLM(precision="fp32", batch_size=4)  # small batches: mixed widths


@pytest.fixture(scope="module")
def int8(cache: Path) -> OnnxMiniLM:
    return OnnxMiniLM(precision="int8", batch_size=4)


@pytest.fixture(scope="module")
def exact() -> MiniLM:
    return MiniLM(batch_size=4)


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1)


def test_attributes(fp32: OnnxMiniLM, int8: OnnxMiniLM, cache: Path):
    assert isinstance(fp32, Embedder) and isinstance(int8, Embedder)
    assert (fp32.dim, fp32.max_tokens) == (int8.dim, int8.max_tokens) == (384, 254)
    assert fp32.model_id == MINILM_ID + "@onnx-fp32"
    assert int8.model_id == MINILM_ID + "@onnx-int8"
    assert fp32.file.parent == int8.file.parent == cache / "onnx"
    assert fp32.file.name.startswith("53aa51172d142c89-ort")
    assert fp32.file.name.endswith("-fp32.onnx") and int8.file.name.endswith("-int8.onnx")
    assert int8.file.stat().st_size < 0.8 * fp32.file.stat().st_size  # six matrices stay fp32
    assert fp32.embed([]).shape == (0, 384)


def test_fp32_matches_torch(fp32: OnnxMiniLM, exact: MiniLM):
    ours, theirs = fp32.embed(TEXTS), exact.embed(TEXTS)
    assert ours.dtype == np.float32 and ours.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cos = _cosines(ours, theirs)
    assert cos.min() >= 0.9999, dict(zip(TEXTS, cos.round(6), strict=True))
    assert len(fp32.tokenizer.encode(PROSE * 12).ids) == 256  # truncated like the torch path
    alone = fp32.embed([TEXTS[-1]])  # batch composition does not matter in fp32
    assert float(alone[0] @ ours[-1]) >= 0.99999


def test_int8_stays_close(int8: OnnxMiniLM, exact: MiniLM):
    texts = TEXTS + _chunks(40)
    cos = _cosines(int8.embed(texts), exact.embed(texts))
    # A vector of at most three tokens is mostly [CLS] and [SEP], where int8's rounding
    # weighs most (cosine about 0.96-0.98 to fp32).
    tiny = np.array([len(e.ids) <= 5 for e in int8.tokenizer.encode_batch(texts)])
    report = (
        f"int8 vs fp32 on {len(texts)} texts: mean {cos.mean():.4f}, min {cos[~tiny].min():.4f}"
        f" ({tiny.sum()} of one to three tokens: min {cos[tiny].min():.4f})"
    )
    print(report)  # shown with -s: the figure the docs quote
    assert cos[~tiny].min() >= 0.99, report
    assert cos[tiny].min() >= 0.95, report
    assert cos.mean() >= 0.995, report


def test_an_int8_vector_does_not_depend_on_its_batch(cache: Path):
    """int8 scales each forward pass's activations as a whole; at the default batch size
    (one text a pass) a text's vector is the same whatever it is embedded with."""
    embedder = OnnxMiniLM(precision="int8")
    assert embedder.batch_size == 1
    texts = [*TEXTS, *_chunks(6)]
    together = embedder.embed(texts)
    for i, text in enumerate(texts):
        np.testing.assert_allclose(embedder.embed([text])[0], together[i], atol=1e-6)


def test_rows_follow_the_input_order(fp32: OnnxMiniLM, int8: OnnxMiniLM):
    texts = ["gamma ray", "alpha", PROSE, "alpha", "beta " * 50, "gamma ray", ""]
    for embedder in (fp32, int8):
        out = embedder.embed(texts)
        np.testing.assert_array_equal(out[1], out[3])
        np.testing.assert_array_equal(out[0], out[5])
        reordered = embedder.embed(texts[::-1])
        np.testing.assert_allclose(reordered[::-1], out, atol=1e-5)
        singles = np.vstack([embedder.embed([t]) for t in texts])
        assert _cosines(singles, out).min() >= (0.9999 if embedder is fp32 else 0.98)


def test_the_cached_file_is_reused(fp32: OnnxMiniLM, monkeypatch: pytest.MonkeyPatch):
    before = fp32.file.stat()

    def no_export(*args: object) -> None:
        raise AssertionError("the cached file was exported again")

    monkeypatch.setattr(onnx_module, "_build", no_export)
    again = OnnxMiniLM(precision="fp32")
    after = again.file.stat()
    assert again.file == fp32.file
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert oct(after.st_mode & 0o777) == oct(0o644)
    np.testing.assert_allclose(again.embed(TEXTS[:8]), fp32.embed(TEXTS[:8]), atol=1e-6)


def test_a_damaged_file_is_rebuilt(
    fp32: OnnxMiniLM, exact: MiniLM, caplog: pytest.LogCaptureFixture
):
    size = fp32.file.stat().st_size
    stale = fp32.file.parent / f".{fp32.file.stem}.dead1234.tmp"  # a killed build's leftover
    stale.write_bytes(b"half a model")
    with open(fp32.file, "r+b") as fh:
        fh.truncate(size // 3)
    with caplog.at_level(logging.WARNING, logger="fissure.embed"):
        rebuilt = OnnxMiniLM(precision="fp32")
    assert any("does not load" in r.getMessage() for r in caplog.records)
    assert rebuilt.file.stat().st_size == size
    assert list(rebuilt.file.parent.glob("*.tmp")) == []
    assert _cosines(rebuilt.embed(TEXTS), exact.embed(TEXTS)).min() >= 0.9999


_BUILD = textwrap.dedent(
    """
    import logging, sys
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    print("ready", flush=True)
    from fissure.embed.onnx import OnnxMiniLM
    embedder = OnnxMiniLM(precision="int8")
    print("shape", embedder.embed(["a fault", "a fold"]).shape, flush=True)
    """
)


def test_two_processes_build_one_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cache = tmp_path / "cache"
    env = {**os.environ, "FISSURE_CACHE_DIR": str(cache)}
    name = f"53aa51172d142c89-ort{onnx_module._onnxruntime().__version__}-"
    target = cache / "onnx" / f"{name}{onnx_module.RECIPE}-int8.onnx"
    lock = target.with_name(target.name + ".lock")
    lock.parent.mkdir(parents=True)
    logs = [tmp_path / f"{i}.log" for i in range(2)]
    with open(lock, "a+b") as held:
        # Hold the lock until both processes wait on it, so that they really race.
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        procs = []
        for log in logs:
            with open(log, "w") as err:
                command = [sys.executable, "-c", _BUILD]
                procs.append(subprocess.Popen(command, env=env, text=True, stdout=PIPE, stderr=err))
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        time.sleep(8)  # their imports and the weights' hash check, then the lock
        assert [proc.poll() for proc in procs] == [None, None] and not target.exists()
        fcntl.flock(held.fileno(), fcntl.LOCK_UN)
    outputs = [proc.communicate(timeout=240)[0] for proc in procs]
    errors = "".join(log.read_text() for log in logs)
    assert [proc.returncode for proc in procs] == [0, 0], errors
    assert all("shape (2, 384)" in out for out in outputs), outputs
    assert errors.count("fissure.embed: exported") == 1, errors
    assert "pre-processing" not in errors  # onnxruntime.quantization's notes stay quiet
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name, lock.name]
    monkeypatch.setenv("FISSURE_CACHE_DIR", str(cache))
    assert OnnxMiniLM(precision="int8").embed(["a fault"]).shape == (1, 384)


def test_specs(fp32: OnnxMiniLM, int8: OnnxMiniLM):
    for spec, built in (("minilm:onnx", int8), ("minilm:onnx-int8", int8),
                        ("minilm:onnx-fp32", fp32)):  # fmt: skip
        loaded = load_embedder(spec)
        lazy = lazy_embedder(spec)
        assert isinstance(loaded, OnnxMiniLM) and isinstance(lazy, LazyEmbedder)
        assert not lazy.loaded
        figures = (built.model_id, built.dim, built.max_tokens)
        assert (loaded.model_id, loaded.dim, loaded.max_tokens) == figures
        assert (lazy.model_id, lazy.dim, lazy.max_tokens) == figures
        np.testing.assert_allclose(lazy.embed(TEXTS[5:9]), loaded.embed(TEXTS[5:9]), atol=1e-6)
        assert lazy.loaded


def test_settings_are_validated(tmp_path: Path):
    with pytest.raises(ConfigError, match="not a sentence-transformers model folder"):
        OnnxEmbedder(tmp_path)
    model = minilm_model_dir()
    with pytest.raises(ConfigError, match="precision"):
        OnnxEmbedder(model, precision="fp16")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="batch_size must be at least 1"):
        OnnxEmbedder(model, batch_size=0)
    with pytest.raises(ConfigError, match="threads must be at least 1"):
        OnnxMiniLM(threads=0)
    with pytest.raises(ConfigError, match="precision"):
        onnx_file(model, "0" * 64, "bf16")  # type: ignore[arg-type]


def test_other_pipelines_are_refused(tmp_path: Path):
    st = "sentence_transformers.models."
    (tmp_path / "modules.json").write_text(json.dumps(
        [{"path": "", "type": st + "Transformer"}, {"path": "1_Pooling", "type": st + "Pooling"}]
    ))  # fmt: skip
    (tmp_path / "sentence_bert_config.json").write_text('{"max_seq_length": 256}')
    (tmp_path / "1_Pooling").mkdir()
    cls = {"word_embedding_dimension": 384, "pooling_mode_cls_token": True}
    (tmp_path / "1_Pooling/config.json").write_text(json.dumps(cls))
    with pytest.raises(ConfigError, match="mean Pooling"):
        OnnxEmbedder(tmp_path)
    (tmp_path / "1_Pooling/config.json").write_text('{"embedding_dimension": 384}')
    with pytest.raises(ConfigError, match="model weights not found"):
        OnnxEmbedder(tmp_path)
    (tmp_path / "1_Pooling/config.json").unlink()
    with pytest.raises(ConfigError, match="config files"):
        OnnxEmbedder(tmp_path)


def test_a_missing_runtime_names_the_extra(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime fails
    with pytest.raises(MissingDependencyError, match=r"pip install 'fissure\[onnx\]'"):
        OnnxMiniLM()


def test_an_unwritable_cache_says_how_to_fix_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("FISSURE_CACHE_DIR", str(blocker))
    with pytest.raises(ConfigError, match="FISSURE_CACHE_DIR"):
        onnx_file(minilm_model_dir(), "f" * 64, "fp32")
