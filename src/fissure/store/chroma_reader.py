"""The default store opened for reading only: Chroma's files are read, never written.

chromadb 1.x (its Rust core) cannot open a folder it may not write. ``PersistentClient``
writes ``chroma.sqlite3`` on every open, even for a plain ``get_collection`` (its
migrations table and its log), so it fails with ``attempt to write a readonly database``
on a read-only mount and ``database or disk is full`` on a full disk. It opens that file
by a fixed path that cannot take ``mode=ro``, and has no read-only setting. A query needs
nothing from Chroma that fissure cannot read itself, though:

* the vectors, from the exact copy (:mod:`fissure.store.exact`), which queries scan up
  to :data:`~fissure.store.chroma.EXACT_MAX` chunks anyway;
* BM25, from the lexical index (:mod:`fissure.store.lexical`), opened read-only;
* texts, metadata, counts and ``where`` filters, from Chroma's SQLite metadata segment,
  opened ``mode=ro`` (tables ``segments``, ``embeddings`` and ``embedding_metadata``:
  the layout Chroma has kept since 0.4 and its local mode still reads and writes).

So :class:`ReadOnlyChroma` is :class:`~fissure.store.chroma.ChromaStore` with those reads
swapped in: the same search code and the same hits, and no chromadb start-up (seconds).
Chroma is opened only for what only it has, and only where the folder can be written:
its HNSW index (past ``exact_max`` chunks; on a read-only store every chunk is scanned
instead, which finds the same hits, only more slowly), and the one-off rebuild of an
exact copy or a lexical index that is behind Chroma (a store made by an older fissure).
Where Chroma cannot be opened, a lexical index like that is rebuilt in memory from the
texts, and an incomplete exact copy is an error that says what to do.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fissure.errors import ConfigError, FissureError, StoreError
from fissure.store.chroma import COLLECTION, EXACT, EXACT_MAX, PIECES, ChromaStore
from fissure.store.exact import Rows, VectorFile
from fissure.store.lexical import DEFAULT_TOKENIZER, LexicalIndex, open_existing
from fissure.store.protocol import Hit, Piece
from fissure.store.readonly import connect, read_only_message
from fissure.types import Chunk

DATABASE = "chroma.sqlite3"
DOCUMENT = "chroma:document"  # the key under which Chroma keeps a record's text
_PAGE = 500  # ids per statement (SQLite allows 32766 variables; pages keep them short)
_SEGMENT = """
SELECT s.id FROM segments s
JOIN collections c ON s.collection = c.id
JOIN databases d ON c.database_id = d.id
WHERE c.name = ? AND s.scope = 'METADATA'
  AND d.name = 'default_database' AND d.tenant_id = 'default_tenant'
"""


class ReadOnlyChroma(ChromaStore):
    """A Chroma store folder read without opening Chroma (nothing is written or created).

    Queries are :meth:`ChromaStore.query <fissure.store.chroma.ChromaStore.query>`'s; every
    write raises :class:`~fissure.errors.StoreError`.

    Args:
        folder: Where Chroma keeps its files (``STORE/chroma``).
        collection: Collection name.
        exact_max: As for :class:`~fissure.store.chroma.ChromaStore`.
        lexer: The lexical index's tokenizer.

    Raises:
        ConfigError: Chroma's database is there but cannot be read.
    """

    def __init__(
        self,
        folder: str | Path,
        collection: str = COLLECTION,
        *,
        exact_max: int | None = None,
        lexer: str = DEFAULT_TOKENIZER,
    ) -> None:
        # Not ChromaStore.__init__: that opens Chroma, which is what this class avoids.
        self.folder = Path(folder)
        self.exact_max = EXACT_MAX if exact_max is None else int(exact_max)
        lock = self.folder / EXACT / "lock"
        self._exact = VectorFile(self.folder / EXACT / collection, lock, read_only=True)
        self._exact_pieces = VectorFile(self.folder / EXACT / (collection + PIECES), lock,
                                        read_only=True)  # fmt: skip
        self._name, self._lexer = collection, lexer
        self._lexical: LexicalIndex | None = None
        self._lexical_synced = False
        self._chroma: ChromaStore | None = None
        self._tried = False
        path = self.folder / DATABASE
        # A store whose Chroma was never made (a run that stored nothing) holds no chunks.
        self._db = connect(path) if path.is_file() else None
        self._segments = {name: self._segment(name) for name in (collection, collection + PIECES)}

    def upsert(self, chunks: Sequence[Chunk], embeddings: np.ndarray) -> None:
        """Refused: the store is open for reading only."""
        raise StoreError(read_only_message(self.folder.parent, "opened for reading"))

    def upsert_pieces(self, pieces: Sequence[Piece], embeddings: np.ndarray) -> None:
        """Refused: the store is open for reading only."""
        raise StoreError(read_only_message(self.folder.parent, "opened for reading"))

    def delete_sources(self, sources: Sequence[str]) -> None:
        """Refused: the store is open for reading only."""
        raise StoreError(read_only_message(self.folder.parent, "opened for reading"))

    def query(
        self,
        vector: np.ndarray | None,
        k: int = 5,
        where: Mapping[str, Any] | None = None,
        *,
        search: str = "auto",
        **options: Any,
    ) -> list[Hit]:
        """:meth:`ChromaStore.query <fissure.store.chroma.ChromaStore.query>` (its keyword
        options passed on); past ``exact_max`` chunks, ``auto`` scans every chunk when
        Chroma's index cannot be opened (a read-only folder, a full disk)."""
        if search == "auto" and self.count() > self.exact_max and self._full() is None:
            search = "exact"
        return super().query(vector, k, where, search=search, **options)

    def close(self) -> None:
        """Close the files this reader opened (and Chroma, if it had to be opened)."""
        super().close()
        if self._db is not None:
            self._db.close()
            self._db = None
        if self._chroma is not None:
            self._chroma.close()

    def lexical(self) -> LexicalIndex:
        """The lexical index as the folder holds it; when it has none or is behind the
        chunks, Chroma's rebuild where the folder can be written, else one in memory."""
        if self._lexical is None:
            index = open_existing(self.folder, self._name, self._lexer)
            if index is None or index.count() < self.count():
                if index is not None:
                    index.close()
                full = self._full()
                if full is not None:
                    index = full.lexical()
                else:
                    index = LexicalIndex(":memory:", self._name, self._lexer)
                    index.replace((i, str(m.get("source", "")), t) for i, t, m in self.items())
            self._lexical = index
        return self._lexical

    def rows(self) -> Rows:
        """The live rows of the chunks' exact copy.

        Raises:
            ConfigError: The copy lacks chunks (a store made before it existed) and Chroma
                cannot be opened here to rebuild it.
        """
        return self._rows(self._exact, pieces=False)

    def piece_rows(self) -> Rows:
        """The live rows of the piece links' exact copy (see :meth:`rows`)."""
        return self._rows(self._exact_pieces, pieces=True)

    def _rows(self, table: VectorFile, pieces: bool) -> Rows:
        rows = table.rows()
        total = self.count_pieces() if pieces else self.count()
        if len(rows) >= total:  # a superset after a crash: the search skips the extra rows
            return rows
        full = self._full()
        if full is None:
            raise ConfigError(
                f"the store in {self.folder.parent} has {total} vectors in Chroma but its exact "
                f"copy ({EXACT}) holds {len(rows)} (a store made by an older fissure), and "
                "Chroma cannot be opened read-only to rebuild it: run fissure query once where "
                "the store can be written, then copy it here again"
            )
        return full.piece_rows() if pieces else full.rows()

    def nearest(
        self, query: np.ndarray, n: int, where: Mapping[str, Any] | None, pieces: bool = False
    ) -> list[tuple[str, dict[str, Any]]]:
        """Chroma's approximate nearest ``n`` (the index path), where Chroma can be opened.

        Raises:
            ConfigError: It cannot (a read-only folder, a full disk).
        """
        full = self._full()
        if full is None:
            raise ConfigError(f"the store in {self.folder.parent} cannot be written, so "
                              "Chroma's index cannot be opened: search exactly (the auto "
                              "or exact search) instead")  # fmt: skip
        return full.nearest(query, n, where, pieces)

    def count(self) -> int:
        """How many chunks the store holds."""
        return self._count(self._name)

    def count_pieces(self) -> int:
        """How many piece records the store holds."""
        return self._count(self._name + PIECES)

    def fetch(self, ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """``id -> (text, metadata)`` for the chunks of ``ids`` that Chroma holds."""
        return self._fetch(self._name, ids)

    def matching(self, where: Mapping[str, Any]) -> list[str]:
        """The ids of the chunks whose metadata equals ``where`` (every key).

        Raises:
            ConfigError: A value is an operator (``{"$in": …}``): equality only here.
        """
        segment = self._segments[self._name]
        if segment is None or not where:
            return [] if segment is None else [i for i, _, _ in self.items()]
        sql = "SELECT e.embedding_id FROM embeddings e WHERE e.segment_id = ?"
        args: list[Any] = [segment]
        for key, value in where.items():
            if key.startswith("$") or isinstance(value, Mapping | list | tuple):
                raise ConfigError(f"where {key!r}: a read-only store filters on equality of "
                                  "metadata values only")  # fmt: skip
            given: list[Any]
            if isinstance(value, bool):
                test, given = "bool_value = ?", [int(value)]
            elif isinstance(value, int | float):  # Chroma matches ints and floats alike
                test, given = "(int_value = ? OR float_value = ?)", [value, value]
            else:
                test, given = "string_value = ?", [str(value)]
            sql += f" AND e.id IN (SELECT id FROM embedding_metadata WHERE key = ? AND {test})"
            args += [key, *given]
        return [str(i) for (i,) in self._select(sql + " ORDER BY e.id", args)]

    def items(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored ``(chunk_id, text, metadata)``, page by page."""
        return self._records(self._name)

    def source_items(self, source: str) -> list[tuple[str, str, dict[str, Any]]]:
        """Every stored ``(chunk_id, text, metadata)`` of one document, in chunk order."""
        found = self._fetch(self._name, self.matching({"source": source}))
        rows = [(i, t, m) for i, (t, m) in found.items()]
        return sorted(rows, key=lambda row: int(row[2].get("index", 0)))

    def pieces(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored piece link ``(record_id, text, metadata)``, page by page."""
        return self._records(self._name + PIECES)

    def _full(self) -> ChromaStore | None:
        """Chroma itself, opened once on first need where the folder can be written
        (``None`` where it cannot, or refuses: a full disk)."""
        if not self._tried:
            self._tried = True
            if os.access(self.folder, os.W_OK):
                try:
                    self._chroma = ChromaStore(self.folder, self._name, exact_max=self.exact_max,
                                               lexer=self._lexer)  # fmt: skip
                except FissureError:
                    self._chroma = None
        return self._chroma

    def _segment(self, collection: str) -> str | None:
        rows = self._select(_SEGMENT, [collection]) if self._db is not None else []
        return str(rows[0][0]) if rows else None

    def _count(self, collection: str) -> int:
        segment = self._segments[collection]
        if segment is None:
            return 0
        sql = "SELECT count(*) FROM embeddings WHERE segment_id = ?"
        return int(self._select(sql, [segment])[0][0])

    def _fetch(self, collection: str, ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        segment = self._segments[collection]
        out: dict[str, tuple[str, dict[str, Any]]] = {}
        for at in range(0, len(ids) if segment is not None else 0, _PAGE):
            part = list(ids[at : at + _PAGE])
            marks = ",".join("?" * len(part))
            sql = ("SELECT e.embedding_id, m.key, m.string_value, m.int_value, m.float_value, "
                   "m.bool_value FROM embeddings e LEFT JOIN embedding_metadata m ON m.id = e.id "
                   f"WHERE e.segment_id = ? AND e.embedding_id IN ({marks})")  # fmt: skip
            for record, key, *values in self._select(sql, [segment, *part]):
                text, meta = out.setdefault(str(record), ("", {}))
                if key == DOCUMENT:
                    out[str(record)] = (str(values[0] or ""), meta)
                elif key is not None and not key.startswith("chroma:"):
                    meta[key] = _value(*values)
        return out

    def _records(self, collection: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
        segment = self._segments[collection]
        if segment is None:
            return
        last = -1
        while True:
            sql = ("SELECT id, embedding_id FROM embeddings WHERE segment_id = ? AND id > ? "
                   "ORDER BY id LIMIT ?")  # fmt: skip
            page = self._select(sql, [segment, last, _PAGE])
            if not page:
                return
            found = self._fetch(collection, [str(i) for _, i in page])
            for _, record in page:
                if str(record) in found:
                    yield str(record), *found[str(record)]
            last = int(page[-1][0])

    def _select(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        """Rows of a statement on Chroma's database (one clear error if its layout is not
        the one this reader knows: a newer chromadb)."""
        if self._db is None:
            return []
        try:
            return self._db.execute(sql, list(args)).fetchall()
        except sqlite3.Error as exc:
            raise ConfigError(f"cannot read {self.folder / DATABASE} without Chroma ({exc}): "
                              "open the store where it can be written, or with the chromadb "
                              "version that made it") from exc  # fmt: skip


def _value(string: Any, integer: Any, real: Any, boolean: Any) -> Any:
    """A metadata value as Chroma hands it back: whichever of its columns is set."""
    if boolean is not None:
        return bool(boolean)
    if integer is not None:
        return int(integer)
    if real is not None:
        return float(real)
    return string
