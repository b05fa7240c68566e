"""The shared manifest: documents, the pending journal, dead letters, runs and settings in
PostgreSQL, beside the chunks (:mod:`fissure.store.postgres`), one namespace per store.

Many runs can share it at once. A document is held with a session-level advisory lock from
:meth:`~PostgresManifest.mark_pending` until :meth:`~PostgresManifest.commit` or
:meth:`~PostgresManifest.forget`: a second run that reaches the same document waits, then
replaces what the first wrote, so two runs never interleave one document's delete and
upsert, and chunk ids (content-addressed primary keys) are never duplicated. A run that dies
loses its connection and with it its locks; the next run to start claims its pending marks
(:meth:`~PostgresManifest.claim_orphans`: only marks whose lock is free) and redoes them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from fissure.errors import ConfigError
from fissure.store.manifest import Entry, Failure, Known
from fissure.store.pg_schema import Database, lock_key
from fissure.store.postgres import DEFAULT_NAMESPACE

_FAILURE_COLUMNS = "source, origin, stage, error_type, message, traceback, time"


class PostgresManifest:
    """The manifest of one namespace of a PostgreSQL database.

    Args:
        dsn: ``postgresql://user:password@host:port/database``.
        namespace: Which store inside the database.

    Raises:
        MissingDependencyError: psycopg is not installed.
        StoreError: The database cannot be reached or lacks pgvector.
    """

    def __init__(self, dsn: str, namespace: str = DEFAULT_NAMESPACE) -> None:
        if not namespace:
            raise ConfigError("the namespace must not be empty")
        self.namespace = namespace
        self.db = Database(dsn)
        self._held: set[str] = set()

    def close(self) -> None:
        """Close the connection; the server releases every document this run still held."""
        self._held.clear()
        self.db.close()

    def known(self, origin: str) -> dict[str, Known]:
        """Every document recorded for ``origin``."""
        rows = self._read("SELECT source, digest, fingerprint, status FROM fissure_documents "
                          "WHERE namespace = %s AND origin = %s", origin)  # fmt: skip
        return {s: Known(d, f, st) for s, d, f, st in rows}

    def pending(self) -> list[str]:
        """Documents marked as being written, by live runs or by runs that died."""
        return [s for (s,) in self._read("SELECT source FROM fissure_pending WHERE "
                                         "namespace = %s ORDER BY source")]  # fmt: skip

    def pending_namespaces(self) -> list[str]:
        """Every namespace of the database with documents marked pending (a service engine
        opens those at start, which redoes what a dead run left half-written)."""
        with self.db.run() as conn:
            rows = conn.execute("SELECT DISTINCT namespace FROM fissure_pending "
                                "ORDER BY namespace").fetchall()  # fmt: skip
        return [n for (n,) in rows]

    def claim_orphans(self) -> list[str]:
        """Pending documents that no live run holds, now held by this one."""
        claimed = []
        for source in self.pending():
            if source in self._held:
                continue
            with self.db.run() as conn:
                key = lock_key(self.namespace, source)
                if not conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
                    continue  # a live run is writing it
                still = conn.execute(  # it may have been committed since it was listed
                    "SELECT 1 FROM fissure_pending WHERE namespace = %s AND source = %s",
                    (self.namespace, source),
                ).fetchone()
                if still is None:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
                    continue
            self._held.add(source)
            claimed.append(source)
        return claimed

    def mark_pending(self, sources: Iterable[str]) -> None:
        """Hold ``sources`` (waiting for any run that holds one) and journal them."""
        wanted = sorted(set(sources) - self._held, key=lambda s: lock_key(self.namespace, s))
        with self.db.run() as conn:
            for source in wanted:  # one global order, so two runs cannot deadlock
                conn.execute("SELECT pg_advisory_lock(%s)", (lock_key(self.namespace, source),))
                self._held.add(source)
        self._execute_many(
            "INSERT INTO fissure_pending VALUES (%s, %s) ON CONFLICT DO NOTHING",
            [(self.namespace, s) for s in sorted(set(sources))],
        )

    def commit(self, entries: Sequence[Entry], failures: Sequence[Failure] = ()) -> None:
        """Record finished documents and their failures, clear their pending marks (one
        transaction), then release them. A document's earlier failures are dropped."""
        now = time.time()
        ns = self.namespace
        sources = [e.source for e in entries]
        with self.db.run(transaction=True) as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO fissure_documents VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (namespace, source) DO UPDATE SET origin = EXCLUDED.origin, "
                "digest = EXCLUDED.digest, fingerprint = EXCLUDED.fingerprint, "
                "status = EXCLUDED.status, chunk_ids = EXCLUDED.chunk_ids, "
                "tokens = EXCLUDED.tokens, updated = EXCLUDED.updated",
                [(ns, e.source, e.origin, e.digest, e.fingerprint, e.status,
                  list(e.chunk_ids), list(e.tokens), now) for e in entries],
            )  # fmt: skip
            cur.execute("DELETE FROM fissure_failures WHERE namespace = %s AND source = ANY(%s)",
                        (ns, sources))  # fmt: skip
            cur.executemany(
                f"INSERT INTO fissure_failures (namespace, {_FAILURE_COLUMNS}) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                [(ns, f.source, f.origin, f.stage, f.error_type, f.message, f.traceback,
                  f.time) for f in failures],
            )  # fmt: skip
            cur.execute("DELETE FROM fissure_pending WHERE namespace = %s AND source = ANY(%s)",
                        (ns, sources))  # fmt: skip
        self._release(sources)

    def forget(self, sources: Iterable[str]) -> None:
        """Drop every record of ``sources`` (after their chunks left the store), then
        release them."""
        keys = sorted(set(sources))
        with self.db.run(transaction=True) as conn:
            for table in ("fissure_documents", "fissure_failures", "fissure_pending"):
                conn.execute(f"DELETE FROM {table} WHERE namespace = %s AND source = ANY(%s)",
                             (self.namespace, keys))  # fmt: skip
        self._release(keys)

    def failures(self, origin: str | None = None) -> list[Failure]:
        """The dead-letter queue, oldest first, optionally for one origin."""
        sql = f"SELECT {_FAILURE_COLUMNS} FROM fissure_failures WHERE namespace = %s"
        if origin:
            rows = self._read(sql + " AND origin = %s ORDER BY id", origin)
        else:
            rows = self._read(sql + " ORDER BY id")
        return [Failure(*row) for row in rows]

    def clear_failures(self, sources: Sequence[str] | None = None) -> int:
        """Drop dead letters (all, or those of ``sources``) and the failed documents' rows,
        so that the next run tries those documents again. Returns how many were dropped."""
        only = "" if sources is None else " AND source = ANY(%s)"
        args: tuple[Any, ...] = (self.namespace,) + (() if sources is None else (list(sources),))
        with self.db.run(transaction=True) as conn:
            n = conn.execute(f"DELETE FROM fissure_failures WHERE namespace = %s{only}",
                             args).rowcount  # fmt: skip
            conn.execute("DELETE FROM fissure_documents WHERE namespace = %s AND status = "
                         f"'failed'{only}", args)  # fmt: skip
        return int(n)

    def documents(self, origin: str | None = None) -> Iterator[tuple[str, str, list[int]]]:
        """``(source, status, chunk token counts)`` of every document, by source."""
        sql = "SELECT source, status, tokens FROM fissure_documents WHERE namespace = %s"
        rows = self._read(sql + " AND origin = %s ORDER BY source", origin) if origin else (
            self._read(sql + " ORDER BY source"))  # fmt: skip
        for source, status, tokens in rows:
            yield source, status, list(tokens)

    def chunk_ids(self, origin: str | None = None) -> set[str]:
        """Every chunk id the manifest says the store holds."""
        sql = "SELECT unnest(chunk_ids) FROM fissure_documents WHERE namespace = %s"
        rows = self._read(sql + " AND origin = %s", origin) if origin else self._read(sql)
        return {i for (i,) in rows}

    def record_run(self, origin: str, spec: str, config: dict[str, Any]) -> None:
        """Remember how ``origin`` was ingested (for ``dlq retry`` and ``status``)."""
        from psycopg.types.json import Jsonb

        self._execute_many(
            "INSERT INTO fissure_runs VALUES (%s, %s, %s, %s, %s) ON CONFLICT (namespace, "
            "origin) DO UPDATE SET spec = EXCLUDED.spec, config = EXCLUDED.config, "
            "time = EXCLUDED.time",
            [(self.namespace, origin, spec, Jsonb(config), time.time())],
        )

    def runs(self) -> dict[str, tuple[str, dict[str, Any], float]]:
        """``origin -> (spec, config, time)`` of the last run of every origin."""
        rows = self._read("SELECT origin, spec, config, time FROM fissure_runs WHERE "
                          "namespace = %s ORDER BY origin")  # fmt: skip
        return {o: (s, dict(c), t) for o, s, c, t in rows}

    def get_meta(self, key: str) -> str | None:
        """A store-wide setting, e.g. the embedding width."""
        rows = self._read("SELECT value FROM fissure_meta WHERE namespace = %s AND key = %s", key)
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a store-wide setting."""
        self._execute_many(
            "INSERT INTO fissure_meta VALUES (%s, %s, %s) ON CONFLICT (namespace, key) "
            "DO UPDATE SET value = EXCLUDED.value",
            [(self.namespace, key, value)],
        )

    def _release(self, sources: Iterable[str]) -> None:
        mine = [s for s in sources if s in self._held]
        with self.db.run() as conn:
            for source in mine:
                conn.execute("SELECT pg_advisory_unlock(%s)", (lock_key(self.namespace, source),))
                self._held.discard(source)

    def _read(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        with self.db.run() as conn:
            return conn.execute(sql, (self.namespace, *args)).fetchall()

    def _execute_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with self.db.run(transaction=True) as conn, conn.cursor() as cur:
            cur.executemany(sql, rows)
