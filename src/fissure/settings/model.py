"""The settings model: one typed object that every command and the Python API read.

A :class:`Settings` has one section per concern, each a frozen dataclass whose fields are
the keys of that section in ``fissure.toml`` and whose defaults are fissure's built-in
defaults (the CLI's ``--help`` shows these, ``docs/settings.md`` lists them). Sections
validate themselves when built, as :class:`~fissure.config.ChunkSettings` does.
"""

from __future__ import annotations

import json
import types
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from fissure.config import ChunkSettings
from fissure.errors import ConfigError
from fissure.source.read import DEFAULT_MAX_BYTES
from fissure.store.fusion import check_mode

DEFAULT_STORE = ".fissure/store"
# Where `fissure eval` writes its reports and keeps its embedding cache.
EVAL_OUT = Path(".fissure/eval")
EVAL_CACHE = Path(".fissure/cache")
ENGINES = ("local", "ray")
# TOML has no null: an optional key is set back to "none" with this string.
NONE = "none"


@dataclass(frozen=True)
class SourceSettings:
    """How files are found and read (``fissure chunk`` and ``fissure ingest``).

    Attributes:
        max_bytes: Files larger than this are skipped; a read stops here whatever the file
            system said.
        follow_outside_links: Also follow links that lead outside the folder.
    """

    max_bytes: int = DEFAULT_MAX_BYTES
    follow_outside_links: bool = False

    def __post_init__(self) -> None:
        _positive(self, "max_bytes")


@dataclass(frozen=True)
class StoreSettings:
    """Where the index lives (``ingest``, ``query``, ``status``, ``dlq``).

    Attributes:
        path: A store folder (manifest, dead letters, Chroma) or ``postgresql://…``.
    """

    path: str = DEFAULT_STORE

    def __post_init__(self) -> None:
        if not isinstance(self.path, str) or not self.path:
            raise ConfigError(f"store path must be a folder or postgresql://…, got {self.path!r}")


@dataclass(frozen=True)
class IngestSettings:
    """How ``fissure ingest`` runs (what it produces is the chunk settings and the embedder).

    Attributes:
        embedder: What embeds the stored vectors (:func:`fissure.embed.load_embedder`).
        workers: Parsing processes; ``None``: cores - 1, 1 to 4 (Ray: the CPUs left).
        timeout: Seconds one document may take to parse and split, plus ``timeout_per_mb``
            per MB of it (also the limits of ``fissure chunk``; see :mod:`fissure.limits`).
        memory_mb: Address-space cap per worker, MiB; 0: none.
        timeout_per_mb: Extra seconds per MB of a document.
        max_inflate_mb: How far one document's compressed content (DOCX members, PDF
            streams) may inflate, MiB.
        batch_chunks: Chunks per embedding batch (and per store write and commit).
        engine: ``local`` (worker processes here) or ``ray`` (a Ray cluster).
        address: The Ray cluster, ``HOST:PORT``; ``None``: ``$RAY_ADDRESS``, else a local Ray.
        progress: Progress bars on stderr (when it is a terminal).
    """

    embedder: str = "minilm:auto"
    workers: int | None = None
    timeout: float = 120.0
    memory_mb: int = 4096
    timeout_per_mb: float = 10.0
    max_inflate_mb: int = 256
    batch_chunks: int = 256
    engine: str = "local"
    address: str | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        if self.workers is not None:
            _positive(self, "workers")
        _positive(self, "batch_chunks")
        if not self.timeout > 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {self.timeout}")
        if self.memory_mb < 0:
            raise ConfigError(f"memory_mb must be >= 0 (0: no cap), got {self.memory_mb}")
        if not self.timeout_per_mb >= 0:
            raise ConfigError(f"timeout_per_mb must be >= 0 seconds, got {self.timeout_per_mb}")
        _positive(self, "max_inflate_mb")
        if self.engine not in ENGINES:
            raise ConfigError(f"engine {self.engine!r}: use local or ray")


@dataclass(frozen=True)
class QuerySettings:
    """How ``fissure query`` ranks.

    Attributes:
        k: How many chunks to return.
        sub_weight: Blend each chunk's score with its best sentence piece's this much,
            0..1; ``None``: off (needs a store ingested with ``sub_vector_tokens``).
        embedder: ``None``: the embedder the store was built with.
        mode: ``dense``, ``lexical`` or ``hybrid`` (``fissure.store.fusion``); ``None``:
            the store's default, hybrid for a folder store, dense for PostgreSQL.
        budget_tokens: Small-to-big: hand over the ranked chunks as passages (overlap and
            repeats removed) up to this many cl100k_base tokens
            (:func:`fissure.store.handover.hand_over`) instead of ``k`` chunks; ``None``: off.
    """

    k: int = 5
    sub_weight: float | None = None
    embedder: str | None = None
    mode: str | None = None
    budget_tokens: int | None = None

    def __post_init__(self) -> None:
        _positive(self, "k")
        if self.budget_tokens is not None:
            _positive(self, "budget_tokens")
        if self.sub_weight is not None and not 0 <= self.sub_weight <= 1:
            raise ConfigError(f"sub_weight must be within 0..1, got {self.sub_weight}")
        if self.mode is not None:
            check_mode(self.mode)


@dataclass(frozen=True)
class Settings:
    """Every setting in force, by section (see ``docs/settings.md``).

    >>> Settings().chunk.strategy, Settings().query.k
    ('structural', 5)
    """

    chunk: ChunkSettings = field(default_factory=ChunkSettings)
    source: SourceSettings = field(default_factory=SourceSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    ingest: IngestSettings = field(default_factory=IngestSettings)
    query: QuerySettings = field(default_factory=QuerySettings)


# The sections of a settings file, in the order `fissure config show` prints them.
SECTIONS: dict[str, type] = {
    "chunk": ChunkSettings,
    "source": SourceSettings,
    "store": StoreSettings,
    "ingest": IngestSettings,
    "query": QuerySettings,
}


def keys(section: str) -> tuple[str, ...]:
    """The keys of one section, in declaration order."""
    return tuple(f.name for f in fields(SECTIONS[section]))


def defaults(section: str) -> dict[str, Any]:
    """The built-in default of every key of ``section``."""
    built = SECTIONS[section]()
    return {name: getattr(built, name) for name in keys(section)}


def check_value(section: str, key: str, value: Any) -> Any:
    """``value`` as the key's type (a TOML list becomes a tuple, an integer a float where a
    number is wanted, ``"none"`` ``None`` where the key is optional).

    Raises:
        ConfigError: The value is not of the key's type; the message says which type.
    """
    hint = typing.get_type_hints(SECTIONS[section])[key]
    ok, converted = _convert(hint, value)
    if not ok:
        raise ConfigError(f"expected {describe(hint)}, got {_show(value)}")
    return converted


def describe(hint: Any) -> str:
    """The type in words, as the error messages and the docs say it."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        inner = [describe(a) for a in args if a is not type(None)]
        return " or ".join(inner) + (f' or "{NONE}"' if type(None) in args else "")
    if typing.get_origin(hint) is tuple:
        return "a list of strings"
    names = {
        bool: "true or false",
        int: "an integer",
        float: "a number",
        str: "a string",
        Path: "a path (string)",
    }
    return names.get(hint, str(hint))


def toml_value(value: Any) -> str:
    """``value`` written as TOML (``None`` as the string ``"none"``, which reads back as it).

    >>> toml_value(None), toml_value(True), toml_value(("\\n\\n", " ")), toml_value(0.8)
    ('"none"', 'true', '["\\\\n\\\\n", " "]', '0.8')
    """
    if value is None:
        return f'"{NONE}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | Path):
        return json.dumps(str(value), ensure_ascii=False)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return repr(value)


def _convert(hint: Any, value: Any) -> tuple[bool, Any]:
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        if value == NONE and type(None) in args:
            return True, None
        for arg in args:
            ok, converted = _convert(arg, value)
            if ok:
                return True, converted
        return False, None
    if typing.get_origin(hint) is tuple:
        good = isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
        return good, tuple(value) if good else None
    if hint is bool:
        return isinstance(value, bool), value
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if hint is float:
        good = isinstance(value, int | float) and not isinstance(value, bool)
        return good, float(value) if good else None
    if hint is str or hint is Path:
        return isinstance(value, str), hint(value) if isinstance(value, str) else None
    return hint is type(None) and value is None, value


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    return repr(value)


def _positive(section: object, name: str) -> None:
    value = getattr(section, name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")
