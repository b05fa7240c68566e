"""The one mapping between evaluator specs and settings: what ``fissure tune`` measures is
what ``fissure ingest`` and ``fissure query`` then run.

An evaluator spec (:mod:`fissure.eval.strategies`) such as
``semantic:140+min=50+hctx+win=254+share=0.8+sub=0.4+subctx+subsize=30+dedup`` names a fissure
strategy, its budget and the retrieval options; each part has one setting:

==================================  =========================================
spec                                setting
==================================  =========================================
``NAME`` (``fissure-recursive``)    ``chunk.strategy``
``:SIZE`` / ``:OVERLAP``            ``chunk.max_tokens`` / ``chunk.overlap_tokens``
``+tok=NAME`` (none: cl100k_base)   ``chunk.tokenizer``
``+min=N``                          ``chunk.min_tokens``
``+breakpoint=`` ``+bp=``           ``chunk.breakpoint`` / ``chunk.breakpoint_amount``
``+buffer=`` ``+atom=``             ``chunk.buffer_size`` / ``chunk.atom_tokens``
``+hctx`` (``+subctx`` with sub)    ``chunk.embed_headings``
``+win=N`` ``+share=`` ``+before=``  ``chunk.embed_window_tokens`` / ``_share`` / ``_before``
``+sub=F`` ``+subsize=N``           ``query.sub_weight`` / ``chunk.sub_vector_tokens``
``+dedup``                          ``chunk.dedup``
``+mode=`` (none: dense)            ``query.mode`` (unset: hybrid, the folder store's)
==================================  =========================================

A spec part without a setting (``+find``, ``+ctx``, ``+rrf=``, peers …) and a setting without
a spec part (``separators``, ``prepend_context`` …) cannot cross; both directions raise
:class:`~fissure.errors.ConfigError` rather than drop it. :func:`to_spec` writes the
canonical spec (options in the table's order, defaults left out), so
``to_spec(settings_of(preset_of(spec))) == spec`` for a canonical spec.
"""

from __future__ import annotations

from typing import Any

from fissure.config import STRATEGIES, ChunkSettings
from fissure.errors import ConfigError
from fissure.eval.spec import parse_spec
from fissure.settings.model import QuerySettings, Settings
from fissure.settings.presets import Preset
from fissure.store.fusion import DEFAULT_MODE

EVAL_TOKENIZER = "cl100k_base"  # what a spec's sizes count without +tok=
EVAL_SUB_TOKENS = 40  # the evaluator's piece size without +subsize=
# (spec option, chunk key, type) for options that copy one value; in canonical order.
_NUMBERS = (("tok", "tokenizer", str), ("min", "min_tokens", int),
            ("breakpoint", "breakpoint", str), ("bp", "breakpoint_amount", float),
            ("buffer", "buffer_size", int), ("atom", "atom_tokens", int))  # fmt: skip
_WINDOW = (("win", "embed_window_tokens", int), ("share", "embed_window_share", float),
           ("before", "embed_window_before", float))  # fmt: skip
CHUNK_KEYS = (
    "strategy",
    "max_tokens",
    "overlap_tokens",
    *(k for _, k, _ in _NUMBERS),
    "embed_headings",
    *(k for _, k, _ in _WINDOW),
    "sub_vector_tokens",
    "dedup",
)
QUERY_KEYS = ("k", "sub_weight", "mode")
# Chunk settings that no spec option expresses, and must stay at their defaults.
_NO_SPEC = ("separators", "language", "separators_are_regex", "target_chunks", "prepend_context")


def preset_of(spec: str, *, k: int = 5, embedder: str | None = None) -> Preset:
    """The settings of an evaluator spec, as a preset: every key the mapping covers, set.

    Args:
        spec: A fissure strategy spec (see the module docstring).
        k: ``query.k``, the cut-off it was measured at.
        embedder: The embedder it was measured with: ``ingest.embedder``, and
            ``chunk.embedder`` (semantic cuts) too; ``None``: left out.

    Raises:
        ConfigError: The spec names a peer or baseline, or an option without a setting.
    """
    parsed = parse_spec(spec)
    name = parsed.name.removeprefix("fissure-")
    if name not in STRATEGIES or parsed.name == "recursive":
        hint = " (fissure's own recursive is fissure-recursive)" if name == "recursive" else ""
        raise ConfigError(f"strategy {spec!r}: only fissure's strategies map to settings, not "
                          f"{parsed.name!r}{hint}")  # fmt: skip
    options = dict(parsed.options)
    chunk: dict[str, Any] = {"strategy": name, "max_tokens": parsed.size,
                             "overlap_tokens": parsed.overlap}  # fmt: skip
    defaults = ChunkSettings()
    for option, key, kind in (*_NUMBERS, *_WINDOW):
        chunk[key] = _take(options, option, kind, spec)
        if chunk[key] is None and key != "embed_window_tokens":
            chunk[key] = EVAL_TOKENIZER if key == "tokenizer" else getattr(defaults, key)
    if chunk["embed_window_tokens"] is None and (parsed.options.keys() & {"share", "before"}):
        raise ConfigError(f"strategy {spec!r}: share= and before= need win=N")
    chunk["embed_headings"] = _flag(options, "hctx")
    chunk["dedup"] = _flag(options, "dedup")
    weight = _take(options, "sub", float, spec)
    size = _take(options, "subsize", int, spec)
    headed_pieces = _flag(options, "subctx")
    if weight is None and (size is not None or headed_pieces):
        raise ConfigError(f"strategy {spec!r}: subsize= and subctx go with sub=F")
    if weight is not None and chunk["embed_headings"] != headed_pieces:
        raise ConfigError(f"strategy {spec!r}: ingest embeds sentence pieces after their "
                          "headings exactly when it embeds chunks so: write +hctx and +subctx "
                          "together (or neither)")  # fmt: skip
    chunk["sub_vector_tokens"] = None if weight is None else (size or EVAL_SUB_TOKENS)
    mode = options.pop("mode", "dense")
    if options:
        raise ConfigError(f"strategy {spec!r}: {', '.join('+' + o for o in options)} has no "
                          "setting, so a preset cannot hold it")  # fmt: skip
    chunk = {key: chunk[key] for key in CHUNK_KEYS}
    preset: Preset = {"chunk": chunk, "query": {"k": k, "sub_weight": weight, "mode": mode}}
    if embedder is not None:
        chunk["embedder"] = embedder
        preset["ingest"] = {"embedder": embedder}
    Settings(chunk=ChunkSettings(**chunk), query=QuerySettings(k=k, sub_weight=weight, mode=mode))
    return preset


def settings_of(preset: Preset) -> Settings:
    """A preset's settings over the built-in defaults (no file is read)."""
    from fissure.settings.model import SECTIONS

    return Settings(**{s: SECTIONS[s](**preset.get(s, {})) for s in SECTIONS})


def to_spec(settings: Settings) -> str:
    """The canonical evaluator spec of the settings a preset (or any settings) holds.

    Raises:
        ConfigError: A setting that changes the chunks or the ranking has no spec part
            (``separators``, ``prepend_context`` …), or ``sub_vector_tokens`` and
            ``query.sub_weight`` are not set together.
    """
    c, q = settings.chunk, settings.query
    defaults = ChunkSettings()
    for key in _NO_SPEC:
        if getattr(c, key) != getattr(defaults, key):
            raise ConfigError(f"chunk.{key} has no evaluator spec: tune cannot measure it")
    if (c.sub_vector_tokens is None) != (q.sub_weight is None):
        raise ConfigError("chunk.sub_vector_tokens and query.sub_weight work together: set "
                          "both or neither")  # fmt: skip
    name = "fissure-recursive" if c.strategy == "recursive" else c.strategy
    text = f"{name}:{c.budget}" + (f":{c.overlap_tokens}" if c.overlap_tokens else "")
    parts = []
    for option, key, _ in _NUMBERS:
        value = getattr(c, key)
        default = EVAL_TOKENIZER if key == "tokenizer" else getattr(defaults, key)
        if value != default:
            parts.append(f"{option}={_number(value)}")
    if c.embed_headings:
        parts.append("hctx")
    if c.embed_window_tokens is not None:
        parts.append(f"win={c.embed_window_tokens}")
        parts.extend(f"{o}={_number(getattr(c, k))}" for o, k, _ in _WINDOW[1:]
                     if getattr(c, k) != getattr(defaults, k))  # fmt: skip
    if q.sub_weight is not None:
        parts.append(f"sub={_number(q.sub_weight)}")
        parts.extend(["subctx"] if c.embed_headings else [])
        parts.append(f"subsize={c.sub_vector_tokens}")
    if c.dedup:
        parts.append("dedup")
    mode = q.mode or DEFAULT_MODE  # unset: the folder store's default
    if mode != "dense":
        parts.append(f"mode={mode}")
    return "+".join([text, *parts])


def canonical(spec: str) -> str:
    """``spec`` written the way :func:`to_spec` writes it (same strategy, same settings)."""
    return to_spec(settings_of(preset_of(spec)))


def _take(options: dict[str, str], option: str, kind: type, spec: str) -> Any:
    if option not in options:
        return None
    raw = options.pop(option)
    try:
        return kind(raw)
    except ValueError as exc:
        raise ConfigError(f"strategy {spec!r}: {option}= needs a {kind.__name__}") from exc


def _flag(options: dict[str, str], option: str) -> bool:
    return options.pop(option, None) is not None


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
