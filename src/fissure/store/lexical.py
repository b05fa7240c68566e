"""The lexical index: BM25 over the stored chunks' text, in SQLite FTS5 beside the store.

Dense MiniLM vectors blur exact strings: an identifier (``parse_args``, ``ConnectionReset``),
an error code or a rare term is where a question and its chunk share letters but not
meaning the model learnt. FTS5 (in the standard library's ``sqlite3``) ranks by BM25 over
words, which finds them.

**Tokens.** FTS5's ``unicode61`` tokenizer with ``_`` as a token character, so
``snake_case`` names stay one token; and a second column, ``terms``, holds the parts of
every compound identifier (``parse_args`` → ``parse args``, ``ConnectionResetError`` →
``connection reset error``, ``utf8`` → ``utf 8``), so a question that spells the words
finds the name and a question that spells the name finds it whole (a rare token, so a high
BM25 weight). Dotted names (``os.path.join``) split on the dots anyway.

``trigram`` (FTS5's tokenizer of all three-character substrings, case-folded) is the
default: a question's word then matches inside any longer name (``sum`` in ``fsum``,
``chunk`` in ``_split_chunks``). Held out, the two are level on Chroma's benchmark and
trigrams are ahead on the code lookup (``bench/results/eval-hybrid.md``); the index is
larger (the costs are there too). Words shorter than three characters are not looked for.

**Queries** are the OR of the question's words (and their parts), less a short list of
English function words: those would match nearly every chunk, cost time and add nothing
BM25 does not already weigh down.

**Tables.** One SQLite file per store folder (namespaces are separate folders, so they
never share a file), two tables per collection: ``<name>_rows`` (chunk id, source) and the
FTS5 table ``<name>_fts`` with the same rowid. Writes are one transaction each, durable
(``synchronous=FULL``) before the caller goes on to the vector store.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from fissure.errors import ConfigError
from fissure.store.readonly import connect

FILENAME = "fissure-lexical.sqlite3"
TOKENIZERS = {"words": "unicode61 tokenchars '_'", "trigram": "trigram"}
DEFAULT_TOKENIZER = "trigram"  # held out, level on prose and ahead on code (eval-hybrid.md)
_WORD = re.compile(r"\w+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_PAGE = 500
STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "so",
        "than",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    }
)


def parts(token: str) -> list[str]:
    """The lower-case parts of a compound identifier (``[]`` when it has only one):
    ``parse_args`` → ``parse``, ``args``; ``HTTPServerError`` → ``http``, ``server``,
    ``error``; ``utf8`` → ``utf``, ``8``."""
    # Case and digit boundaries are read in ASCII names only: elsewhere (``Größe``) they
    # are letters of one word, and only ``_`` separates parts.
    found = [p.lower() for piece in token.split("_") if piece
             for p in (_PART.findall(piece) if piece.isascii() else [piece])]  # fmt: skip
    return found if len(found) > 1 else []


def terms(text: str) -> str:
    """The ``terms`` column of ``text``: the parts of each compound identifier in it."""
    return " ".join(p for token in _WORD.findall(text) for p in parts(token))


def match_expression(question: str, tokenizer: str = DEFAULT_TOKENIZER) -> str | None:
    """The FTS5 query for ``question``: its words and their parts, OR-ed, stop words left
    out (``None`` when nothing is left to look for)."""
    words: list[str] = []
    for token in _WORD.findall(question):
        low = token.lower()
        if low in STOPWORDS:
            continue
        if tokenizer == "trigram":
            words.extend([low] if len(low) >= 3 else [])
        else:
            words.extend([low, *parts(token)])
    unique = list(dict.fromkeys(words))
    return " OR ".join(f'"{w}"' for w in unique) if unique else None


class LexicalIndex:
    """BM25 over chunk texts in one SQLite file (or ``:memory:``).

    Args:
        path: The SQLite file, or ``":memory:"``.
        name: The collection's name (tables ``<name>_rows`` and ``<name>_fts``).
        tokenizer: ``words`` (unicode61, ``_`` kept, identifier parts) or ``trigram``.
        reset: When the tables were built with another tokenizer, drop them (empty again,
            for the caller to refill) instead of refusing.
        read_only: Open an existing file for searching only: nothing is written or
            created (:func:`fissure.store.readonly.connect`).

    Raises:
        ConfigError: The name or tokenizer is unknown, the file cannot be opened, or it
            was built with another tokenizer (without ``reset``; read-only: or has no
            tables for ``name``).
    """

    def __init__(self, path: str | Path, name: str = "fissure",
                 tokenizer: str = DEFAULT_TOKENIZER, reset: bool = False,
                 read_only: bool = False) -> None:  # fmt: skip
        if tokenizer not in TOKENIZERS:
            raise ConfigError(f"lexical tokenizer must be one of {', '.join(TOKENIZERS)}, "
                              f"got {tokenizer!r}")  # fmt: skip
        if not _NAME.fullmatch(name):
            raise ConfigError(f"lexical table name {name!r}: use letters, digits, '_.-'")
        self.path, self.name, self.tokenizer = str(path), name, tokenizer
        self._rows, self._fts = f'"{name}_rows"', f'"{name}_fts"'
        self._lock = threading.Lock()
        if read_only:
            self._conn = connect(Path(self.path))
            self._built()
            return
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
            self._create(reset)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the lexical index {self.path}: {exc}") from exc

    def _built(self) -> None:
        """Check, reading only, that the file holds this collection's tables built with
        this tokenizer."""
        try:
            row = self._conn.execute("SELECT tokenizer FROM lexical_meta WHERE name = ?",
                                     (self.name,)).fetchone()  # fmt: skip
            self._conn.execute(f"SELECT count(*) FROM {self._rows}").fetchone()
            self._conn.execute(f"SELECT rowid FROM {self._fts} LIMIT 0").fetchall()
        except sqlite3.Error as exc:
            self._conn.close()
            raise ConfigError(f"cannot read the lexical index {self.path}: {exc}") from exc
        if row is None or row[0] != self.tokenizer:
            self._conn.close()
            raise ConfigError(f"the lexical index {self.path} has no {self.name} index built "
                              f"with the {self.tokenizer} tokenizer")  # fmt: skip

    def _create(self, reset: bool) -> None:
        conn = self._conn
        if self.path != ":memory:":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")  # durable before the vector store is written
        with conn:
            conn.execute("CREATE TABLE IF NOT EXISTS lexical_meta (name TEXT PRIMARY KEY, "
                         "tokenizer TEXT NOT NULL)")  # fmt: skip
            conn.execute("INSERT OR IGNORE INTO lexical_meta VALUES (?, ?)",
                         (self.name, self.tokenizer))  # fmt: skip
            built = conn.execute("SELECT tokenizer FROM lexical_meta WHERE name = ?",
                                 (self.name,)).fetchone()[0]  # fmt: skip
            if built != self.tokenizer and reset:
                conn.execute(f"DROP TABLE IF EXISTS {self._fts}")
                conn.execute(f"DROP TABLE IF EXISTS {self._rows}")
                conn.execute("UPDATE lexical_meta SET tokenizer = ? WHERE name = ?",
                             (self.tokenizer, self.name))  # fmt: skip
            elif built != self.tokenizer:
                raise ConfigError(f"the lexical index {self.path} was built with the "
                                  f"{built} tokenizer; open it with that one")  # fmt: skip
            conn.execute(f"CREATE TABLE IF NOT EXISTS {self._rows} (rowid INTEGER PRIMARY "
                         "KEY, chunk_id TEXT NOT NULL UNIQUE, source TEXT NOT NULL)")  # fmt: skip
            conn.execute(f'CREATE INDEX IF NOT EXISTS "{self.name}_by_source" '
                         f"ON {self._rows} (source)")  # fmt: skip
            spec = TOKENIZERS[self.tokenizer].replace('"', '""')
            conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {self._fts} USING fts5(text, "
                         f'terms, tokenize="{spec}")')  # fmt: skip

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._conn.close()

    def add(self, ids: Sequence[str], sources: Sequence[str], texts: Sequence[str]) -> None:
        """Add or replace chunks (keyed by id), in one durable transaction."""
        if not (len(ids) == len(sources) == len(texts)):
            raise ValueError(f"{len(ids)} ids, {len(sources)} sources, {len(texts)} texts")
        with self._lock, self._conn:
            self._drop([(i,) for i in ids], "chunk_id")
            for chunk_id, source, text in zip(ids, sources, texts, strict=True):
                row = self._conn.execute(
                    f"INSERT INTO {self._rows} (chunk_id, source) VALUES (?, ?)",
                    (chunk_id, source),
                ).lastrowid
                extra = terms(text) if self.tokenizer == "words" else ""
                self._conn.execute(f"INSERT INTO {self._fts} (rowid, text, terms) "
                                   "VALUES (?, ?, ?)", (row, text, extra))  # fmt: skip

    def delete_sources(self, sources: Iterable[str]) -> None:
        """Remove every chunk of ``sources`` (one transaction)."""
        with self._lock, self._conn:
            self._drop([(s,) for s in set(sources)], "source")

    def _drop(self, keys: list[tuple[str]], column: str) -> None:
        """Delete the rows whose ``column`` is one of ``keys`` (inside a transaction)."""
        for at in range(0, len(keys), _PAGE):
            part = [k for (k,) in keys[at : at + _PAGE]]
            marks = ",".join("?" * len(part))
            chosen = f"SELECT rowid FROM {self._rows} WHERE {column} IN ({marks})"
            self._conn.execute(f"DELETE FROM {self._fts} WHERE rowid IN ({chosen})", part)
            self._conn.execute(f"DELETE FROM {self._rows} WHERE {column} IN ({marks})", part)

    def replace(self, records: Iterable[tuple[str, str, str]]) -> None:
        """Drop everything and index ``(chunk_id, source, text)`` records instead (the
        one-off rebuild of a store made before the index existed)."""
        with self._lock, self._conn:
            self._conn.execute(f"DELETE FROM {self._fts}")
            self._conn.execute(f"DELETE FROM {self._rows}")
        batch: list[tuple[str, str, str]] = []
        for record in records:
            batch.append(record)
            if len(batch) >= _PAGE:
                self.add(*zip(*batch, strict=True))  # type: ignore[arg-type]
                batch = []
        if batch:
            self.add(*zip(*batch, strict=True))  # type: ignore[arg-type]

    def search(self, question: str, limit: int | None = None) -> list[tuple[str, float]]:
        """``(chunk_id, score)`` of the chunks that share a word with ``question``, best
        first; the score is BM25 (FTS5's ``bm25()`` negated: higher is better); equal
        scores by chunk id. ``limit``: at most that many (``None``: all matches)."""
        expression = match_expression(question, self.tokenizer)
        if expression is None:
            return []
        sql = (f"SELECT r.chunk_id, -bm25({self._fts}) AS score FROM {self._fts} "
               f"JOIN {self._rows} r ON r.rowid = {self._fts}.rowid "
               f"WHERE {self._fts} MATCH ? ORDER BY score DESC, r.chunk_id")  # fmt: skip
        args: tuple[object, ...] = (expression,)
        if limit is not None:
            sql, args = sql + " LIMIT ?", (expression, int(limit))
        with self._lock:
            return [(str(i), float(s)) for i, s in self._conn.execute(sql, args)]

    def count(self) -> int:
        """How many chunks the index holds."""
        with self._lock:
            return int(self._conn.execute(f"SELECT count(*) FROM {self._rows}").fetchone()[0])

    def records(self) -> dict[str, tuple[str, str]]:
        """``chunk_id -> (source, text)`` of every indexed chunk (for checks)."""
        sql = (f"SELECT r.chunk_id, r.source, f.text FROM {self._rows} r "
               f"JOIN {self._fts} f ON f.rowid = r.rowid")  # fmt: skip
        with self._lock:
            return {i: (s, t) for i, s, t in self._conn.execute(sql)}


def open_beside(folder: Path, name: str, tokenizer: str = DEFAULT_TOKENIZER) -> LexicalIndex:
    """A store folder's lexical index (:data:`FILENAME` inside it), rebuilt empty when it
    was built with another tokenizer; in memory when the folder cannot be written and has
    none (the caller fills it from the store).

    Raises:
        ConfigError: The file is there but cannot be opened.
    """
    try:
        return LexicalIndex(folder / FILENAME, name, tokenizer, reset=True)
    except ConfigError:
        if (folder / FILENAME).exists() or os.access(folder, os.W_OK):
            raise
        return LexicalIndex(":memory:", name, tokenizer)


def open_existing(
    folder: Path, name: str, tokenizer: str = DEFAULT_TOKENIZER
) -> LexicalIndex | None:
    """A store folder's lexical index opened for reading only (nothing is written or
    created); ``None`` when there is none for ``name`` built with ``tokenizer`` (the caller
    then indexes the texts in memory)."""
    if not (folder / FILENAME).is_file():
        return None
    try:
        return LexicalIndex(folder / FILENAME, name, tokenizer, read_only=True)
    except ConfigError:
        return None
