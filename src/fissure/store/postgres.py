"""The shared store: chunks, sentence pieces and their vectors in PostgreSQL with pgvector.

The same :class:`~fissure.store.protocol.Store` as :class:`~fissure.store.chroma.ChromaStore`,
with the same query semantics: cosine scores, ``where`` as equality on metadata keys (all must
hold; ``metadata @> …`` on a jsonb column with a GIN index), and ``sub_weight`` blending each
chunk's own cosine with its best piece's over the same candidates (the ``max(50, 10 k)``
nearest chunks and the chunks of as many nearest piece links, or every chunk when the store
holds no more). Pieces are kept one row per (piece, chunk it overlaps), like Chroma's links.

A namespace of up to ``exact_below`` chunks (:data:`EXACT_BELOW`, 200,000, by default) is
searched exactly (a scan, like a brute-force search: every stored chunk is findable, as in the
Chroma store up to its 1M); a larger one through the HNSW index with pgvector's iterative
scan, so filters still return ``k`` hits. The scan costs about 1.6 µs per chunk of 384 floats
on one core (157 ms median at 100,000 chunks on the 2-core development machine, so about
0.3 s at the threshold; ``python -m bench.pg_exact``); the index answers in tens of
milliseconds but, on data without structure (random vectors), finds only part of the true
top 10 (0.75 at 10k, 0.21 at 100k with ``ef_search`` 100; docs/scale.md).

Lexical and hybrid retrieval (``mode``) are embedded-store only for now: this store answers
``mode="dense"`` and refuses the others with a :class:`~fissure.errors.ConfigError`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from fissure.errors import ConfigError
from fissure.store.fusion import check_mode
from fissure.store.ids import link_id
from fissure.store.pg_schema import Database, ensure_vector_index
from fissure.store.protocol import Hit, Piece, chunk_metadata
from fissure.store.ranking import blend, id_keys, places, text_keys, top
from fissure.types import Chunk

DEFAULT_NAMESPACE = "default"
EXACT_BELOW = 200_000  # chunks up to which a namespace is searched exactly (docs/scale.md)
_PAGE = 1000
# For the approximate path: walk the HNSW index (an ordered scan, never a sort of the
# namespace's rows), and keep walking until the filters have let k rows through.
_ANN_SETTINGS = ("SET LOCAL hnsw.ef_search = {ef}; SET LOCAL hnsw.iterative_scan = "
                 "relaxed_order; SET LOCAL enable_sort = off")  # fmt: skip


class PostgresStore:
    """Chunks and vectors in one namespace of a PostgreSQL database.

    Args:
        dsn: ``postgresql://user:password@host:port/database``.
        namespace: Which store inside the database.
        exact_below: Namespaces with at most this many chunks are searched exactly (a scan:
            every chunk findable, ~0.3 s a query at the default 200,000); larger ones
            through the HNSW index, fast but approximate.
        ef_search: HNSW candidate list size (pgvector's ``hnsw.ef_search``) for larger ones:
            higher finds more of the true neighbours and costs more time.

    Raises:
        MissingDependencyError: psycopg is not installed.
        StoreError: The database cannot be reached or lacks pgvector.
    """

    def __init__(
        self,
        dsn: str,
        namespace: str = DEFAULT_NAMESPACE,
        *,
        exact_below: int = EXACT_BELOW,
        ef_search: int = 100,
    ) -> None:
        if not namespace:
            raise ConfigError("the namespace must not be empty")
        self.namespace = namespace
        self.exact_below = exact_below
        self.ef_search = ef_search
        self.db = Database(dsn)
        self._indexed: set[tuple[str, int]] = set()

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def upsert(self, chunks: Sequence[Chunk], embeddings: np.ndarray) -> None:
        """Add or replace chunks; ids are the chunks' content-addressed ``chunk_id``."""
        from psycopg.types.json import Jsonb

        vectors = self._vectors("fissure_chunks", chunks, embeddings)
        rows = [
            (self.namespace, c.chunk_id, c.source or "", c.text, Jsonb(chunk_metadata(c)),
             vectors.shape[1], v)
            for c, v in zip(chunks, vectors, strict=True)
        ]  # fmt: skip
        self._write(
            "INSERT INTO fissure_chunks VALUES (%s, %s, %s, %s, %s, %s, %b) "
            "ON CONFLICT (namespace, chunk_id) DO UPDATE SET source = EXCLUDED.source, "
            "text = EXCLUDED.text, metadata = EXCLUDED.metadata, dim = EXCLUDED.dim, "
            "embedding = EXCLUDED.embedding",
            rows,
        )

    def upsert_pieces(self, pieces: Sequence[Piece], embeddings: np.ndarray) -> None:
        """Add or replace pieces: one row per (piece, overlapped chunk) link."""
        vectors = self._vectors("fissure_pieces", pieces, embeddings)
        rows = [
            (self.namespace, link_id(p.piece_id, c), p.piece_id, c, p.source, p.start, p.end,
             p.text, vectors.shape[1], v)
            for p, v in zip(pieces, vectors, strict=True)
            for c in p.chunk_ids
        ]  # fmt: skip
        self._write(
            "INSERT INTO fissure_pieces VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %b) "
            "ON CONFLICT (namespace, link_id) DO UPDATE SET text = EXCLUDED.text, "
            "dim = EXCLUDED.dim, embedding = EXCLUDED.embedding",
            rows,
        )

    def _vectors(self, table: str, records: Sequence[Any], embeddings: np.ndarray) -> np.ndarray:
        """``embeddings`` as float32 rows, one per record, with ``table``'s index for their
        width in place."""
        if len(records) != len(embeddings):
            raise ValueError(f"{len(records)} records but {len(embeddings)} embeddings")
        if not len(records):
            return np.zeros((0, 0), dtype=np.float32)
        vectors = np.asarray(embeddings, dtype=np.float32).reshape(len(records), -1)
        if (table, vectors.shape[1]) not in self._indexed:
            ensure_vector_index(self.db, table, vectors.shape[1])
            self._indexed.add((table, vectors.shape[1]))
        return vectors

    def _write(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            with self.db.run(transaction=True) as conn, conn.cursor() as cur:
                cur.executemany(sql, rows)

    def delete_sources(self, sources: Sequence[str]) -> None:
        """Remove every chunk and piece of the documents from ``sources`` (one transaction)."""
        unique = sorted(set(sources))
        if not unique:
            return
        with self.db.run(transaction=True) as conn:
            for table in ("fissure_chunks", "fissure_pieces"):
                conn.execute(
                    f"DELETE FROM {table} WHERE namespace = %s AND source = ANY(%s)",
                    (self.namespace, unique),
                )

    def query(
        self,
        vector: np.ndarray | None,
        k: int = 5,
        where: Mapping[str, Any] | None = None,
        *,
        sub_weight: float | None = None,
        collapse: bool = True,
        mode: str | None = None,
        text: str | None = None,
    ) -> list[Hit]:
        """The ``k`` nearest chunks; ``where`` is equality on metadata keys (all must hold).

        With ``sub_weight`` ``w`` and pieces in the store, each candidate's score is
        ``(1 - w) * cos(vector, chunk) + w * max cos(vector, piece)`` over the pieces that
        overlap it (a chunk without a piece keeps its own score in both terms), as in
        :meth:`ChromaStore.query <fissure.store.chroma.ChromaStore.query>`. With
        ``collapse``, near-copies in one document come back as one hit, ranked and tied
        as :mod:`fissure.store.ranking` says (``Hit.copies`` counts those among the
        candidates).

        Raises:
            ConfigError: ``sub_weight`` is not within 0..1, ``where`` holds a value that
                is not a string, number or boolean, or ``mode`` is not ``dense``.
        """
        if check_mode(mode or "dense") != "dense":  # None: dense, the one mode here
            raise ConfigError(f"mode {mode} needs the lexical index of the embedded store (a "
                              "folder for --store); a postgresql:// store answers mode dense "
                              "only")  # fmt: skip
        if vector is None:
            raise ConfigError("a dense query needs a query vector")
        if sub_weight is not None and (isinstance(sub_weight, bool) or not 0 <= sub_weight <= 1):
            raise ConfigError(f"sub_weight must be within 0..1, got {sub_weight!r}")
        filters = _filters(where)
        query = np.asarray(vector, dtype=np.float32).ravel()
        count = self.count()
        if count == 0:
            return []
        if sub_weight is not None and self.count_pieces():
            return self._blended(query, k, filters, float(sub_weight), count, collapse)
        depth = max(4 * k, 64) if collapse else k
        while True:
            found = self._nearest("fissure_chunks", query, depth, filters, count, "chunk_id, "
                                  "text, metadata")  # fmt: skip
            scored = [(1.0 - float(d), i, t, m) for i, t, m, d in found]
            hits = _ranked(scored, k, collapse)
            if len(hits) >= k or len(found) < depth or depth >= count:
                return hits
            depth *= 4  # the nearest rows were copies of fewer than k passages: look deeper

    def _nearest(
        self, table: str, query: np.ndarray, k: int, filters: Any, count: int, columns: str
    ) -> list[tuple[Any, ...]]:
        """``columns`` and the cosine distance of the ``k`` nearest rows of ``table``."""
        dim = len(query)
        exact = self.searches_exactly(count)
        # The index is on embedding::vector(dim); ordering on the bare column scans exactly.
        key = "embedding" if exact else f"embedding::vector({dim})"
        sql = (
            f"SELECT {columns}, {key} <=> %(q)b AS distance FROM {table} "
            f"WHERE namespace = %(ns)s AND dim = {dim}"
            + (" AND metadata @> %(where)s" if filters is not None else "")
            + f" ORDER BY {key} <=> %(q)b LIMIT %(k)s"
        )
        args = {"q": query, "ns": self.namespace, "where": filters, "k": k}
        with self.db.run(transaction=True) as conn:
            if not exact:
                conn.execute(_ANN_SETTINGS.format(ef=max(int(self.ef_search), k)))
            return conn.execute(sql, args).fetchall()

    def _blended(
        self,
        query: np.ndarray,
        k: int,
        filters: Any,
        weight: float,
        count: int,
        collapse: bool,
    ) -> list[Hit]:
        depth = max(50, 10 * k)
        every = depth >= count
        candidates: list[str] = []
        if not every:
            near = self._nearest("fissure_chunks", query, depth, filters, count, "chunk_id")
            linked = self._nearest("fissure_pieces", query, depth, None, self.count_pieces(),
                                   "chunk_id")  # fmt: skip
            candidates = sorted({r[0] for r in near} | {r[0] for r in linked})
        sql = (
            "SELECT c.chunk_id, c.text, c.metadata, 1 - (c.embedding <=> %(q)b) AS own, "
            "max(1 - (p.embedding <=> %(q)b)) AS best FROM fissure_chunks c "
            "LEFT JOIN fissure_pieces p ON p.namespace = c.namespace AND p.chunk_id = c.chunk_id"
            " WHERE c.namespace = %(ns)s"
            + ("" if every else " AND c.chunk_id = ANY(%(ids)s)")
            + (" AND c.metadata @> %(where)s" if filters is not None else "")
            + " GROUP BY c.chunk_id, c.text, c.metadata, c.embedding"
        )
        args = {"q": query, "ns": self.namespace, "ids": candidates, "where": filters}
        with self.db.run() as conn:
            rows = conn.execute(sql, args).fetchall()
        own = np.asarray([r[3] for r in rows], dtype=np.float32)
        best = np.asarray([-np.inf if r[4] is None else r[4] for r in rows], dtype=np.float32)
        mixed = blend(own, best, weight).tolist()  # the blend the embedded store ranks by
        scored = [(s, i, t, m) for s, (i, t, m, _, _) in zip(mixed, rows, strict=True)]
        return _ranked(scored, k, collapse)

    def searches_exactly(self, count: int | None = None) -> bool:
        """Whether a query scans the namespace exactly (it holds at most ``exact_below``
        chunks; ``count``: as if it held that many) rather than walking the HNSW index."""
        return (self.count() if count is None else count) <= self.exact_below

    def count(self) -> int:
        """How many chunks the namespace holds."""
        return self._count("fissure_chunks")

    def count_pieces(self) -> int:
        """How many piece links (one per piece and chunk it overlaps) the namespace holds."""
        return self._count("fissure_pieces")

    def items(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored ``(chunk_id, text, metadata)``, by id."""
        for chunk_id, text, meta, _ in self._rows("fissure_chunks", "chunk_id, text, metadata"):
            yield chunk_id, text, dict(meta)

    def pieces(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored piece link ``(link_id, text, metadata)``, by id; the metadata has
        Chroma's keys: ``source``, ``start``, ``end``, ``piece_id``, ``chunk_id``."""
        columns = "link_id, text, source, start_at, end_at, piece_id, chunk_id"
        for link, text, source, start, end, piece, chunk, _ in self._rows("fissure_pieces",
                                                                          columns):  # fmt: skip
            yield link, text, {"source": source, "start": start, "end": end,
                               "piece_id": piece, "chunk_id": chunk}  # fmt: skip

    def source_items(self, source: str) -> list[tuple[str, str, dict[str, Any]]]:
        """Every stored ``(chunk_id, text, metadata)`` of one document, in chunk order."""
        with self.db.run() as conn:
            rows = conn.execute(
                "SELECT chunk_id, text, metadata FROM fissure_chunks WHERE namespace = %s "
                "AND source = %s ORDER BY (metadata->>'index')::int, chunk_id",
                (self.namespace, source),
            ).fetchall()
        return [(i, t, dict(m)) for i, t, m in rows]

    def vectors(self) -> Iterator[tuple[str, np.ndarray]]:
        """Every stored ``(chunk_id, vector)``, by id."""
        for chunk_id, vector, _ in self._rows("fissure_chunks", "chunk_id, embedding"):
            yield chunk_id, vector

    def _count(self, table: str) -> int:
        with self.db.run() as conn:
            sql = f"SELECT count(*) FROM {table} WHERE namespace = %s"
            return int(conn.execute(sql, (self.namespace,)).fetchone()[0])

    def _rows(self, table: str, columns: str) -> Iterator[tuple[Any, ...]]:
        """Rows page by page, keyed on the first column (no cursor held between pages)."""
        after = ""
        first = columns.split(",")[0].strip()
        while True:
            with self.db.run() as conn:
                page = conn.execute(
                    f"SELECT {columns}, {first} FROM {table} WHERE namespace = %s AND "
                    f"{first} > %s ORDER BY {first} LIMIT {_PAGE}",
                    (self.namespace, after),
                ).fetchall()
            if not page:
                return
            yield from page
            after = page[-1][-1]


def _filters(where: Mapping[str, Any] | None) -> Any:
    """``where`` as a jsonb containment argument, or ``None``."""
    if not where:
        return None
    for key, value in where.items():
        if value is not None and not isinstance(value, str | int | float | bool):
            raise ConfigError(f"where[{key!r}] must be a string, number or boolean, "
                              f"not {type(value).__name__}")  # fmt: skip
    from psycopg.types.json import Jsonb

    return Jsonb(dict(where))


def _ranked(scored: Sequence[tuple[float, str, str, Any]], k: int, collapse: bool) -> list[Hit]:
    """The ``k`` best of ``(score, chunk_id, text, metadata)`` rows, ordered and (with
    ``collapse``) grouped by the shared rules of :mod:`fissure.store.ranking`."""
    if not scored:
        return []
    scores = np.array([row[0] for row in scored], dtype=np.float64)
    ids = [row[1] for row in scored]
    metas = [dict(row[3]) for row in scored]
    sources = [str(m.get("source", "")) for m in metas]
    starts = np.array([int(m.get("start", 0)) for m in metas], dtype=np.int64)
    place = places(id_keys(sources), starts, id_keys(ids))
    groups = text_keys([row[2] for row in scored], sources) if collapse else None
    order = top(scores, k, place, groups)
    sizes: dict[int, int] = {}
    if groups is not None:
        for g in groups.tolist():
            sizes[g] = sizes.get(g, 0) + 1
    return [
        Hit(
            ids[i],
            float(scores[i]),
            scored[i][2],
            metas[i],
            copies=sizes.get(int(groups[i]), 1) if groups is not None else 1,
        )
        for i in order
    ]
