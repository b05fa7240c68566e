"""The PostgreSQL side shared by the store and the manifest: connecting, the schema, vectors.

Every table has a ``namespace`` column (the service keeps one per API key; the CLI uses
``default``), so one database holds any number of independent stores. Vectors are pgvector
``vector`` values of any width in one column, with a ``dim`` column beside them; each width
gets its own partial HNSW index (cosine) on ``embedding::vector(dim)``, made the first time a
vector of that width is written, as pgvector's documentation shows for mixed widths.
"""

from __future__ import annotations

import hashlib
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from fissure.errors import MissingDependencyError, StoreError

_SCHEMA_LOCK = 0x66697373  # advisory lock key: "fiss"; DDL runs under it, once at a time
SCHEMA = """
CREATE TABLE IF NOT EXISTS fissure_chunks (
    namespace text NOT NULL, chunk_id text NOT NULL, source text NOT NULL,
    text text NOT NULL, metadata jsonb NOT NULL, dim integer NOT NULL,
    embedding vector NOT NULL, PRIMARY KEY (namespace, chunk_id));
CREATE INDEX IF NOT EXISTS fissure_chunks_source ON fissure_chunks (namespace, source);
CREATE INDEX IF NOT EXISTS fissure_chunks_metadata ON fissure_chunks
    USING gin (metadata jsonb_path_ops);
CREATE TABLE IF NOT EXISTS fissure_pieces (
    namespace text NOT NULL, link_id text NOT NULL, piece_id text NOT NULL,
    chunk_id text NOT NULL, source text NOT NULL, start_at integer NOT NULL,
    end_at integer NOT NULL, text text NOT NULL, dim integer NOT NULL,
    embedding vector NOT NULL, PRIMARY KEY (namespace, link_id));
CREATE INDEX IF NOT EXISTS fissure_pieces_source ON fissure_pieces (namespace, source);
CREATE INDEX IF NOT EXISTS fissure_pieces_chunk ON fissure_pieces (namespace, chunk_id);
CREATE TABLE IF NOT EXISTS fissure_documents (
    namespace text NOT NULL, source text NOT NULL, origin text NOT NULL,
    digest text NOT NULL, fingerprint text NOT NULL, status text NOT NULL,
    chunk_ids text[] NOT NULL, tokens integer[] NOT NULL, updated double precision NOT NULL,
    PRIMARY KEY (namespace, source));
CREATE INDEX IF NOT EXISTS fissure_documents_origin ON fissure_documents (namespace, origin);
CREATE TABLE IF NOT EXISTS fissure_pending (
    namespace text NOT NULL, source text NOT NULL, PRIMARY KEY (namespace, source));
CREATE TABLE IF NOT EXISTS fissure_failures (
    id bigserial PRIMARY KEY, namespace text NOT NULL, source text NOT NULL,
    origin text NOT NULL, stage text NOT NULL, error_type text NOT NULL,
    message text NOT NULL, traceback text NOT NULL, time double precision NOT NULL);
CREATE INDEX IF NOT EXISTS fissure_failures_source ON fissure_failures (namespace, source);
CREATE TABLE IF NOT EXISTS fissure_runs (
    namespace text NOT NULL, origin text NOT NULL, spec text NOT NULL, config jsonb NOT NULL,
    time double precision NOT NULL, PRIMARY KEY (namespace, origin));
CREATE TABLE IF NOT EXISTS fissure_meta (
    namespace text NOT NULL, key text NOT NULL, value text NOT NULL,
    PRIMARY KEY (namespace, key));
"""


def redact(dsn: str) -> str:
    """The connection string without its password, for messages."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(dsn)
    except Exception:  # not parseable: show only the scheme
        return dsn.split("://", 1)[0] + "://…"
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host') or 'localhost'}{port}/{parts.get('dbname', '')}"


def lock_key(namespace: str, source: str) -> int:
    """A document's advisory-lock key: 64 bits of a hash of its namespace and source."""
    digest = hashlib.blake2b(f"{namespace}\0{source}".encode("utf-8", "surrogatepass"),
                             digest_size=8).digest()  # fmt: skip
    return int.from_bytes(digest, "big", signed=True)


class Database:
    """One connection (autocommit; explicit transactions where several writes go together),
    safe to share between threads, with pgvector's type registered.

    Args:
        dsn: ``postgresql://user:password@host:port/database``.

    Raises:
        MissingDependencyError: psycopg is not installed.
        StoreError: The server cannot be reached, or has no ``vector`` extension.
    """

    def __init__(self, dsn: str) -> None:
        try:
            import psycopg
        except ImportError as exc:
            raise MissingDependencyError("psycopg", "postgres", "a PostgreSQL store") from exc
        self.dsn = dsn
        self._error = psycopg.Error
        self._lock = threading.RLock()
        try:
            self.conn = psycopg.connect(dsn, autocommit=True, connect_timeout=30)
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to {redact(dsn)}: {_first_line(exc)}; is the "
                             "server running and the address right?") from exc  # fmt: skip
        with self.run():
            _ensure_schema(self.conn, dsn)
            _register_vector(self.conn)

    @contextmanager
    def run(self, transaction: bool = False) -> Iterator[Any]:
        """The connection, held by this thread; with ``transaction``, inside one.

        Raises:
            StoreError: What the server answered, when it refused.
        """
        with self._lock:
            try:
                if transaction:
                    with self.conn.transaction():
                        yield self.conn
                else:
                    yield self.conn
            except self._error as exc:
                raise StoreError(f"{redact(self.dsn)}: {_first_line(exc)}") from exc

    def close(self) -> None:
        """Close the connection (the server releases this session's advisory locks)."""
        with self._lock:
            self.conn.close()


def _ensure_schema(conn: Any, dsn: str) -> None:
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        has = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        if has is None:
            try:
                with conn.transaction():
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except Exception as exc:
                raise StoreError(
                    f"{redact(dsn)} has no pgvector: install it on the server and run "
                    f"`CREATE EXTENSION vector` as a superuser ({_first_line(exc)})"
                ) from exc
        conn.execute(SCHEMA)


def ensure_vector_index(db: Database, table: str, dim: int) -> None:
    """The HNSW (cosine) index for ``dim``-wide vectors of ``table``, made once."""
    name = f"{table}_hnsw_{int(dim)}"
    with db.run(transaction=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_class WHERE relname = %s", (name,)).fetchone()
        if found:
            return
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING hnsw "
            f"((embedding::vector({int(dim)})) vector_cosine_ops) WHERE dim = {int(dim)}"
        )


def _register_vector(conn: Any) -> None:
    """Send numpy arrays as pgvector's binary ``vector`` and read ``vector`` as float32."""
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise StoreError("the vector type is missing: run `CREATE EXTENSION vector`")

    class VectorDumper(Dumper):
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj: Any) -> bytes:
            values = np.asarray(obj, dtype=">f4").ravel()
            return struct.pack(">HH", len(values), 0) + values.tobytes()

    class VectorLoader(Loader):
        def load(self, data: Any) -> np.ndarray:
            text = bytes(data).decode("ascii").strip("[]")
            return np.array(text.split(","), dtype=np.float32) if text else np.zeros(0, np.float32)

    class VectorBinaryLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> np.ndarray:
            return np.frombuffer(bytes(data)[4:], dtype=">f4").astype(np.float32)

    info.register(conn)
    conn.adapters.register_dumper(np.ndarray, VectorDumper)
    conn.adapters.register_loader(info.oid, VectorLoader)
    conn.adapters.register_loader(info.oid, VectorBinaryLoader)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
