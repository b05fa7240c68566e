"""The service's settings: every limit is one typed field with a default, validated once.

The supervisor (``fissure serve``) builds a :class:`ServiceSettings`, and hands it to the
API processes and the engine as JSON in ``$FISSURE_SERVE_SETTINGS`` (uvicorn's worker
processes are fresh interpreters, so they cannot share Python objects).
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from fissure.config import ChunkSettings
from fissure.errors import ConfigError
from fissure.settings.model import IngestSettings
from fissure.source.files import DEFAULT_MAX_BYTES

SETTINGS_ENV = "FISSURE_SERVE_SETTINGS"
_DATABASES = ("postgresql://", "postgres://")
DAY = 86_400.0
ENGINES = ("local", "ray")
_POSITIVE_INTS = (
    "port",
    "api_workers",
    "recycle_after",
    "batch_chunks",
    "max_attempts",
    "max_file_bytes",
    "max_request_bytes",
    "max_files",
    "max_queued",
    "max_spool_bytes",
    "retry_after_seconds",
    "max_query_k",
    "max_budget_tokens",
    "max_inflate_mb",
)
_POSITIVE_SECONDS = (
    "timeout",
    "lease_seconds",
    "backoff_seconds",
    "backoff_max_seconds",
    "retention_seconds",
    "spool_retention_seconds",
    "dlq_retention_seconds",
    "purge_interval_seconds",
    "poll_seconds",
)


def _default_workers() -> int:
    from fissure.ingest import default_workers

    return default_workers()


@dataclass(frozen=True)
class ServiceSettings:
    """How ``fissure serve`` runs; the docs' table of limits is this class.

    Attributes:
        store: The store folder: manifest, Chroma, job queue and spool live here. With
            ``database``, this process's own folder instead (engine lock and socket,
            fingerprint, metrics): one per service process.
        database: ``postgresql://…``: the job queue, manifest, dead letters, chunks and
            vectors live in this database, shared by every service process that names it.
        spool: The upload spool folder (default ``store/spool``); with ``database``, a
            folder every service process shares (the same path on every machine).
        host: Address to listen on; anything but loopback needs API keys.
        port: TCP port.
        api_workers: uvicorn worker processes answering HTTP (all state is in the
            database, so any of them answers any request).
        workers: Parsing processes of the engine (as ``fissure ingest --workers``); with
            ``engine="ray"``, parse actors (``None``: the cluster's CPUs).
        engine: Where documents are parsed and split: ``local`` (worker processes of the
            engine) or ``ray`` (actors on a Ray cluster; embedding and store writes stay in
            the engine).
        address: The Ray cluster (``HOST:PORT``) with ``engine="ray"``; ``None``:
            ``$RAY_ADDRESS``, else a Ray started by the engine.
        embedder: Embedder spec (:func:`fissure.embed.load_embedder`).
        chunk: Chunk settings; with the embedder they make the settings fingerprint, which
            is part of every document id.
        timeout: Seconds one document may take to parse and split before its worker is
            killed.
        memory_mb: Address-space cap of each parsing process, MiB (``None``: none).
        timeout_per_mb: Extra seconds per MB of a document on top of ``timeout``.
        max_inflate_mb: How far one document's compressed content (DOCX members, PDF
            streams) may inflate, MiB.
        recycle_after: A parsing process is replaced after this many documents.
        batch_chunks: Chunks per embedding batch, gathered across documents.
        lease_seconds: How long a job stays leased without renewal; a job whose worker
            died comes back after this.
        max_attempts: Attempts before a job lands in the dead-letter queue.
        backoff_seconds: Wait before the first retry; it doubles with every attempt.
        backoff_max_seconds: The longest wait between attempts.
        max_file_bytes: Largest document accepted (413 above it).
        max_request_bytes: Largest request body accepted (413 above it).
        max_files: Most files per request (413 above it).
        max_queued: Most jobs waiting or running; past it uploads get 429.
        max_spool_bytes: Most bytes kept in the spool; past it uploads get 429.
        retry_after_seconds: The ``Retry-After`` a 429 or 503 answers with.
        retention_seconds: How long finished jobs and their events are kept.
        spool_retention_seconds: How long a finished job's uploaded bytes are kept.
        dlq_retention_seconds: How long failed jobs (and their bytes) are kept.
        purge_interval_seconds: How often the engine removes what outlived its retention.
        poll_seconds: How often an idle engine and the event streams look for news.
        allowed_roots: Server folders that ``POST /v1/documents`` JSON may name (paths and
            ``git:`` repositories under them); empty: none.
        allow_github: Whether JSON may name ``github:OWNER/REPO`` sources.
        keys_file: API keys (hashed), one JSON object per line; see :mod:`fissure.serve.auth`.
        max_query_k: Largest ``k`` a query may ask for.
        max_budget_tokens: Largest reader budget (``budget_tokens``) a query may ask for.
        engine_nice: Niceness of the engine (and its parsers), so accepting uploads keeps
            the CPU it needs while a backlog is worked off (19: the engine takes only what
            the API leaves; lower it when other busy programs share the machine).
        plugins: Modules the parsing processes import first (they may register parsers).
        access_log: Whether the API logs one line per request to stderr (client, method,
            path with query secrets hidden, status, milliseconds); on, as in uvicorn.
    """

    store: Path = Path(".fissure/serve")
    database: str | None = None
    spool: Path | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    api_workers: int = 1
    workers: int | None = field(default_factory=_default_workers)
    engine: str = "local"
    address: str | None = None
    embedder: str = "minilm:auto"
    chunk: ChunkSettings = field(default_factory=ChunkSettings)
    # The per-document limits default to fissure ingest's (one place says what they are).
    timeout: float = IngestSettings.timeout
    memory_mb: int | None = IngestSettings.memory_mb
    timeout_per_mb: float = IngestSettings.timeout_per_mb
    max_inflate_mb: int = IngestSettings.max_inflate_mb
    recycle_after: int = 1000
    batch_chunks: int = 256
    lease_seconds: float = 60.0
    max_attempts: int = 3
    backoff_seconds: float = 2.0
    backoff_max_seconds: float = 300.0
    max_file_bytes: int = DEFAULT_MAX_BYTES
    max_request_bytes: int = 200_000_000
    max_files: int = 100
    max_queued: int = 100_000
    max_spool_bytes: int = 10_000_000_000
    retry_after_seconds: int = 5
    retention_seconds: float = 7 * DAY
    spool_retention_seconds: float = 3600.0
    dlq_retention_seconds: float = 30 * DAY
    purge_interval_seconds: float = 300.0
    poll_seconds: float = 0.2
    allowed_roots: tuple[Path, ...] = ()
    allow_github: bool = False
    keys_file: Path | None = None
    max_query_k: int = 100
    max_budget_tokens: int = 32_000
    engine_nice: int = 19
    plugins: tuple[str, ...] = ()
    access_log: bool = True

    def __post_init__(self) -> None:
        for name in _POSITIVE_INTS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        for name in _POSITIVE_SECONDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ConfigError(f"{name} must be a positive number of seconds, got {value!r}")
        self._check_engine()
        if isinstance(self.timeout_per_mb, bool) or not self.timeout_per_mb >= 0:
            raise ConfigError(f"timeout_per_mb must be >= 0 seconds, got {self.timeout_per_mb!r}")
        if self.port > 65535:
            raise ConfigError(f"port must be at most 65535, got {self.port}")
        if self.memory_mb is not None and self.memory_mb < 64:
            raise ConfigError(f"memory_mb must be at least 64 (or None), got {self.memory_mb}")
        if self.max_file_bytes > self.max_request_bytes:
            raise ConfigError("max_file_bytes must not exceed max_request_bytes")
        if self.database is not None and not self.database.startswith(_DATABASES):
            raise ConfigError(f"database must be a postgresql:// URL, got {self.database[:20]!r}")
        if self.database is not None and self.spool is None:
            raise ConfigError(
                "a service on a database needs --spool DIR: a folder every "
                "service process shares (the same path on every machine)"
            )
        if not -20 <= self.engine_nice <= 19:
            raise ConfigError(f"engine_nice must be within -20..19, got {self.engine_nice}")

    def _check_engine(self) -> None:
        if self.engine not in ENGINES:
            raise ConfigError(f"engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        workers = self.workers
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                    or workers < 1):  # fmt: skip
            raise ConfigError(f"workers must be a positive integer, got {self.workers!r}")
        if self.workers is None and self.engine == "local":
            raise ConfigError("workers must be a positive integer with the local engine")
        if self.address is not None and self.engine != "ray":
            raise ConfigError("--address names a Ray cluster: use it with --engine ray")
        if self.engine == "ray":
            from fissure.ingest.ray_parts import need_ray

            need_ray("fissure serve --engine ray")

    @property
    def spool_folder(self) -> Path:
        """Where uploaded bytes are spooled."""
        return self.spool if self.spool is not None else self.store / "spool"

    @property
    def loopback(self) -> bool:
        """Whether ``host`` is a loopback address (or a name that resolves only to one)."""
        return is_loopback(self.host)

    def to_json(self) -> str:
        """The settings as JSON (for the processes the supervisor starts)."""
        raw = asdict(self)
        return json.dumps(raw, default=str, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ServiceSettings:
        """Settings from :meth:`to_json`."""
        raw: dict[str, Any] = json.loads(text)
        chunk = dict(raw.pop("chunk"))
        if chunk.get("separators") is not None:
            chunk["separators"] = tuple(chunk["separators"])
        raw["store"] = Path(raw["store"])
        raw["spool"] = Path(raw["spool"]) if raw.get("spool") else None
        raw["keys_file"] = Path(raw["keys_file"]) if raw.get("keys_file") else None
        raw["allowed_roots"] = tuple(Path(p) for p in raw.get("allowed_roots", ()))
        raw["plugins"] = tuple(raw.get("plugins", ()))
        known = {f.name for f in fields(cls)}
        return cls(chunk=ChunkSettings(**chunk), **{k: v for k, v in raw.items() if k in known})

    @classmethod
    def from_env(cls) -> ServiceSettings:
        """The settings the supervisor passed in ``$FISSURE_SERVE_SETTINGS``.

        Raises:
            ConfigError: The variable is not set (start the service with ``fissure serve``).
        """
        text = os.environ.get(SETTINGS_ENV)
        if not text:
            raise ConfigError(f"${SETTINGS_ENV} is not set: start the service with fissure serve")
        return cls.from_json(text)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only loopback addresses (``localhost``, ``127.0.0.1``, ``::1``)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)
