"""The default store: an embedded, persistent ChromaDB collection in a folder.

Chroma never embeds anything here: every write carries fissure's own vectors and every
query is a vector, so Chroma's default embedding function (which downloads a model) is
never called.

Multi-vector retrieval (``fissure ingest --sub-vectors N``) keeps sentence pieces in a second
collection, ``<collection>-pieces``, in the same folder and space. Chroma metadata values are
scalars, so a piece is stored once per chunk it overlaps: one record per (piece, chunk) link,
with metadata ``source``, ``start``, ``end``, ``piece_id`` and ``chunk_id`` (a piece on a
chunk boundary has two records, same text and vector). Deleting a source deletes its
chunks and its pieces.

The lexical index (BM25 in SQLite FTS5, :mod:`fissure.store.lexical`) lives in
``fissure-lexical.sqlite3`` in the same folder, written in the exact copy's order: before
Chroma on upsert, after it on delete, so at any crash it holds every chunk Chroma holds
(the ingest journal then deletes and redoes the documents caught in between).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fissure.errors import ConfigError, MissingDependencyError
from fissure.store.exact import Batch, Rows, VectorFile, memory_rows
from fissure.store.fusion import Fusion, check_mode
from fissure.store.ids import link_id
from fissure.store.lexical import DEFAULT_TOKENIZER, LexicalIndex, open_beside
from fissure.store.protocol import Hit, Piece, chunk_metadata
from fissure.store.ranking import id_keys, text_keys, unit, unit_rows
from fissure.store.readonly import check_room, refusal
from fissure.store.search import SEARCHES, Plan, Search
from fissure.types import Chunk

COLLECTION = "fissure"
PIECES = "-pieces"  # the piece collection is named after the chunk one, with this suffix
EXACT = "fissure-exact"  # the exact-search copy of the vectors, a folder beside Chroma's
EXACT_MAX = 1_000_000  # chunks up to which every query is an exact scan (docs/store.md)
HNSW = {"space": "cosine", "max_neighbors": 32}  # new collections; old ones keep theirs
_PAGE = 1000  # sources per delete filter and ids per get
_DUMP = 5000  # records per page when the exact copy is rebuilt from Chroma


class ChromaStore:
    """Chunks and vectors in a persistent Chroma collection (cosine space), with an exact
    copy of the vectors that queries scan (:mod:`fissure.store.exact`).

    Queries follow :class:`~fissure.store.protocol.Store`: exact cosine scores, ``where``
    before ranking, near-copies collapsed. Up to ``exact_max`` chunks every chunk is
    scored; past it Chroma's HNSW index picks ``max(100, 10 * k)`` candidates, which are
    then scored exactly.

    Args:
        folder: Where Chroma keeps its files (created if missing).
        collection: Collection name.
        exact_max: Chunks up to which queries scan every vector (default
            :data:`EXACT_MAX`; ``0`` always uses the index).
        lexer: The lexical index's tokenizer (default
            :data:`fissure.store.lexical.DEFAULT_TOKENIZER`); an index built with another
            is rebuilt from Chroma's texts on the next lexical or hybrid query.

    Raises:
        MissingDependencyError: chromadb is not installed.
        ConfigError: The folder cannot be used.
    """

    def __init__(
        self,
        folder: str | Path,
        collection: str = COLLECTION,
        *,
        exact_max: int | None = None,
        lexer: str = DEFAULT_TOKENIZER,
    ) -> None:
        try:
            import chromadb
            from chromadb.config import Settings
            from chromadb.errors import ChromaError
        except ImportError as exc:
            raise MissingDependencyError("chromadb", purpose="the vector store") from exc
        self.folder = Path(folder)
        self.exact_max = EXACT_MAX if exact_max is None else int(exact_max)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            client = chromadb.PersistentClient(
                path=str(self.folder), settings=Settings(anonymized_telemetry=False)
            )
            config: Any = {"hnsw": HNSW}
            self._collection = client.get_or_create_collection(
                collection, embedding_function=None, configuration=config
            )
            self._pieces = client.get_or_create_collection(
                collection + PIECES, embedding_function=None, configuration=config
            )
        except (OSError, ChromaError) as exc:  # Chroma writes on open: read-only, full disk
            why = refusal(self.folder, exc, "Chroma's chroma.sqlite3")
            raise ConfigError(why or f"cannot open the store in {self.folder}: {exc}") from exc
        self._max_batch = int(client.get_max_batch_size())
        lock = self.folder / EXACT / "lock"
        self._exact = VectorFile(self.folder / EXACT / collection, lock)
        self._exact_pieces = VectorFile(self.folder / EXACT / (collection + PIECES), lock)
        self._fallback: dict[str, Rows] = {}
        self._name = collection
        self._lexical: LexicalIndex | None = None
        self._lexer = lexer
        self._lexical_synced = False

    def upsert(self, chunks: Sequence[Chunk], embeddings: np.ndarray) -> None:
        """Add or replace chunks; ids are the chunks' content-addressed ``chunk_id``."""
        if len(chunks) != len(embeddings):
            raise ValueError(f"{len(chunks)} chunks but {len(embeddings)} embeddings")
        if not len(chunks):
            return
        vectors = unit_rows(embeddings)
        sources = [c.source or "" for c in chunks]
        batch = Batch([c.chunk_id for c in chunks], id_keys(sources),
                      text_keys([c.text for c in chunks], sources), vectors,
                      np.asarray([c.start for c in chunks], dtype=np.int64))  # fmt: skip
        check_room(self.folder, len(chunks), vectors.shape[1], sum(len(c.text) for c in chunks))
        with self._exact.writing():  # lexical, copy, Chroma: a crash leaves supersets
            self._open_lexical().add(batch.ids, sources, [c.text for c in chunks])
            self._exact.add(batch)
            for at in range(0, len(chunks), self._max_batch):
                part = chunks[at : at + self._max_batch]
                self._collection.upsert(
                    ids=[c.chunk_id for c in part],
                    embeddings=vectors[at : at + len(part)],
                    documents=[c.text for c in part],
                    metadatas=[chunk_metadata(c) for c in part],  # type: ignore[misc]
                )

    def upsert_pieces(self, pieces: Sequence[Piece], embeddings: np.ndarray) -> None:
        """Add or replace pieces: one record per (piece, overlapped chunk) link."""
        if len(pieces) != len(embeddings):
            raise ValueError(f"{len(pieces)} pieces but {len(embeddings)} embeddings")
        vectors = unit_rows(embeddings) if len(pieces) else np.zeros((0, 0), np.float32)
        links = [(p, v) for p, v in zip(pieces, vectors, strict=True) for _ in p.chunk_ids]
        chunk_ids = [c for p in pieces for c in p.chunk_ids]
        if not links:
            return
        ids = [link_id(p.piece_id, c) for (p, _), c in zip(links, chunk_ids, strict=True)]
        batch = Batch(ids, id_keys([p.source for p, _ in links]), id_keys(chunk_ids),
                      np.asarray([v for _, v in links], dtype=np.float32),
                      np.asarray([p.start for p, _ in links], dtype=np.int64))  # fmt: skip
        check_room(self.folder, len(links), vectors.shape[1], sum(len(p.text) for p, _ in links))
        with self._exact.writing():
            self._exact_pieces.add(batch)
            for at in range(0, len(links), self._max_batch):
                part = links[at : at + self._max_batch]
                owners = chunk_ids[at : at + len(part)]
                self._pieces.upsert(
                    ids=ids[at : at + len(part)],
                    embeddings=batch.vectors[at : at + len(part)],
                    documents=[p.text for p, _ in part],
                    metadatas=[  # type: ignore[arg-type]
                        {
                            "source": p.source,
                            "start": p.start,
                            "end": p.end,
                            "piece_id": p.piece_id,
                            "chunk_id": c,
                        }
                        for (p, _), c in zip(part, owners, strict=True)
                    ],
                )

    def delete_sources(self, sources: Sequence[str]) -> None:
        """Remove every chunk and piece of the documents from ``sources``."""
        unique = sorted(set(sources))
        if not unique:
            return
        with self._exact.writing():  # Chroma first: a crash leaves the copy a superset
            for at in range(0, len(unique), _PAGE):
                part = unique[at : at + _PAGE]
                self._collection.delete(where={"source": {"$in": part}})  # type: ignore[dict-item]
                self._pieces.delete(where={"source": {"$in": part}})  # type: ignore[dict-item]
            self._exact.delete(id_keys(unique))
            self._exact_pieces.delete(id_keys(unique))
            self._open_lexical().delete_sources(unique)

    def query(
        self,
        vector: np.ndarray | None,
        k: int = 5,
        where: Mapping[str, Any] | None = None,
        *,
        sub_weight: float | None = None,
        collapse: bool = True,
        search: str = "auto",
        mode: str | None = None,
        text: str | None = None,
        fusion: Fusion | None = None,
    ) -> list[Hit]:
        """The ``k`` best chunks for ``vector``, as :class:`~fissure.store.protocol.Store`
        defines them.

        Args:
            vector: The query vector (not used, and may be ``None``, in ``lexical`` mode).
            k: How many hits at most.
            where: Equality on metadata keys (all must hold), applied before ranking.
            sub_weight: Blend each chunk's score with its best sentence piece's (0..1).
            collapse: Return one chunk of each group of near-copies (the best).
            search: ``auto`` (exact up to ``exact_max`` chunks), ``exact`` or ``index``.
            mode: ``dense`` (cosine), ``lexical`` (BM25; ``Hit.score`` is BM25) or
                ``hybrid`` (both, rank-fused; ``Hit.score`` is the fused score);
                ``None``: :data:`~fissure.store.fusion.DEFAULT_MODE` when ``text`` is
                given, else ``dense``.
            text: The question's text: what the lexical side looks for.
            fusion: How ``hybrid`` fuses (default :class:`~fissure.store.fusion.Fusion`).

        Raises:
            ConfigError: ``sub_weight`` is not within 0..1, ``search`` or ``mode`` is
                unknown, or a lexical mode has no ``text``.
        """
        if sub_weight is not None and (isinstance(sub_weight, bool) or not 0 <= sub_weight <= 1):
            raise ConfigError(f"sub_weight must be within 0..1, got {sub_weight!r}")
        if search not in SEARCHES:
            raise ConfigError(f"search must be one of {', '.join(SEARCHES)}, got {search!r}")
        mode = check_mode(mode, text)
        if mode != "dense" and not (text and text.strip()):
            raise ConfigError(f"mode {mode} needs the question's text (text=...)")
        if vector is None and mode != "lexical":
            raise ConfigError(f"mode {mode} needs a query vector")
        if k < 1 or self.count() == 0:
            return []
        rows = self.rows()
        exact = search == "exact" or (search == "auto" and len(rows) <= self.exact_max)
        weight = float(sub_weight) if sub_weight is not None and self.count_pieces() else None
        query = unit(vector) if vector is not None else np.zeros(0, dtype=np.float32)
        plan = Plan(query, k, where, weight, collapse, mode, text or "", fusion or Fusion())
        return Search(self, rows, plan).run(exact)

    def close(self) -> None:
        """Close the lexical index's file (Chroma and the exact copy write through and hold
        nothing open); the store opens it again if it is used after."""
        if self._lexical is not None:
            self._lexical.close()
            self._lexical, self._lexical_synced = None, False

    def lexical(self) -> LexicalIndex:
        """The lexical index of the chunks, opened on first use; rebuilt from Chroma once
        when it holds fewer chunks (a store made before it existed). A folder that cannot
        be written keeps a rebuilt index in memory for this process."""
        index = self._open_lexical()
        if not self._lexical_synced:  # once per process: writes keep it in step after
            with self._exact.writing():
                if index.count() < self.count():
                    index.replace((i, str(m.get("source", "")), t) for i, t, m in self.items())
            self._lexical_synced = True
        return index

    def _open_lexical(self) -> LexicalIndex:
        if self._lexical is None:
            self._lexical = open_beside(self.folder, self._name, self._lexer)
        return self._lexical

    def lexical_search(self, text: str, limit: int | None) -> list[tuple[str, float]]:
        """``(chunk_id, BM25)`` of the chunks that share a word with ``text``, best first."""
        return self.lexical().search(text, limit)

    def rows(self) -> Rows:
        """The live rows of the exact copy of the chunks (rebuilt from Chroma when it
        lacks some: a store made before the copy existed)."""
        return self._synced(self._exact, self._collection, pieces=False)

    def piece_rows(self) -> Rows:
        """The live rows of the exact copy of the piece links."""
        return self._synced(self._exact_pieces, self._pieces, pieces=True)

    def _synced(self, table: VectorFile, collection: Any, pieces: bool) -> Rows:
        name = str(table.folder)
        if name in self._fallback and len(self._fallback[name]) == int(collection.count()):
            return self._fallback[name]
        try:
            rows = table.rows()
            if len(rows) >= int(collection.count()):
                return rows
            with table.writing():
                total = int(collection.count())
                if len(table.rows()) < total:
                    dim = _dim(collection)
                    table.replace(_dump(collection, pieces), upper=total, dim=dim)
                return table.rows()
        except OSError:  # a read-only store: keep the copy in memory for this process
            self._fallback[name] = memory_rows(_dump(collection, pieces))
            return self._fallback[name]

    def fetch(self, ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """``id -> (text, metadata)`` for the chunks of ``ids`` that Chroma holds."""
        out: dict[str, tuple[str, dict[str, Any]]] = {}
        for at in range(0, len(ids), _PAGE):
            got = self._collection.get(ids=list(ids[at : at + _PAGE]),
                                       include=["documents", "metadatas"])  # fmt: skip
            docs = got["documents"] or []
            metas = got["metadatas"] or []
            for i, t, m in zip(got["ids"], docs, metas, strict=True):
                out[i] = (t or "", dict(m or {}))
        return out

    def matching(self, where: Mapping[str, Any]) -> list[str]:
        """The ids of the chunks whose metadata satisfies ``where``."""
        return list(self._collection.get(where=_where(where), include=[])["ids"])  # type: ignore[arg-type]

    def nearest(
        self, query: np.ndarray, n: int, where: Mapping[str, Any] | None, pieces: bool = False
    ) -> list[tuple[str, dict[str, Any]]]:
        """Chroma's approximate nearest ``n`` chunks (or piece links): ``(id, metadata)``."""
        collection = self._pieces if pieces else self._collection
        total = self.count_pieces() if pieces else self.count()
        found = collection.query(
            query_embeddings=[query],  # type: ignore[arg-type]
            n_results=max(1, min(n, total)),
            where=_where(where),  # type: ignore[arg-type]
            include=["metadatas"],
        )
        metas = (found["metadatas"] or [[]])[0]
        return [(i, dict(m or {})) for i, m in zip(found["ids"][0], metas, strict=True)]

    def count(self) -> int:
        """How many chunks the collection holds."""
        return int(self._collection.count())

    def count_pieces(self) -> int:
        """How many piece records (one per piece and chunk it overlaps) the store holds."""
        return int(self._pieces.count())

    def items(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored ``(chunk_id, text, metadata)``, page by page."""
        return _records(self._collection)

    def source_items(self, source: str) -> list[tuple[str, str, dict[str, Any]]]:
        """Every stored ``(chunk_id, text, metadata)`` of one document, in chunk order."""
        found = self._collection.get(
            where={"source": source},
            include=["documents", "metadatas"],  # type: ignore[list-item]
        )
        docs = found["documents"] or []
        metas = found["metadatas"] or []
        rows = [(i, t or "", dict(m or {})) for i, t, m in zip(found["ids"], docs, metas,
                                                                strict=True)]  # fmt: skip
        return sorted(rows, key=lambda row: int(row[2].get("index", 0)))

    def pieces(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored piece link ``(record_id, text, metadata)``, page by page."""
        return _records(self._pieces)


def _dim(collection: Any) -> int:
    got = collection.get(limit=1, include=["embeddings"])
    embeddings = got["embeddings"]
    return int(np.asarray(embeddings).shape[1]) if embeddings is not None and len(embeddings) else 0


def _dump(collection: Any, pieces: bool) -> Iterator[Batch]:
    """Every record of ``collection`` as exact-copy batches (the one-off rebuild)."""
    offset = 0
    include = ["embeddings", "metadatas"] + ([] if pieces else ["documents"])
    while True:
        page = collection.get(limit=_DUMP, offset=offset, include=include)
        if not page["ids"]:
            return
        metas = [dict(m or {}) for m in page["metadatas"] or []]
        names = [str(m.get("source", "")) for m in metas]
        if pieces:
            tags = id_keys([str(m.get("chunk_id", "")) for m in metas])
        else:
            tags = text_keys([t or "" for t in page["documents"] or []], names)
        vectors = unit_rows(np.asarray(page["embeddings"]))
        starts = np.asarray([int(m.get("start", 0) or 0) for m in metas], dtype=np.int64)
        yield Batch(list(page["ids"]), id_keys(names), tags, vectors, starts)
        offset += len(page["ids"])


def _records(collection: Any) -> Iterator[tuple[str, str, dict[str, Any]]]:
    offset = 0
    while True:
        page = collection.get(limit=_PAGE, offset=offset, include=["documents", "metadatas"])
        if not page["ids"]:
            return
        docs = page["documents"] or []
        metas = page["metadatas"] or []
        for i, t, m in zip(page["ids"], docs, metas, strict=True):
            yield i, t or "", dict(m or {})
        offset += len(page["ids"])


def _where(where: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not where:
        return None
    if len(where) == 1:
        return dict(where)
    return {"$and": [{k: v} for k, v in where.items()]}
