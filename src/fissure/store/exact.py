"""The store's own copy of its vectors, laid out for exact search.

Chroma's HNSW index loses documents on clustered data (a few hundred copies of one chunk
fill each other's neighbour lists and become an island that a search never leaves), and
reading vectors back through Chroma costs about 45 µs each, too slow to scan per query.
So :class:`~fissure.store.chroma.ChromaStore` keeps a second copy: unit float32 rows in
``.npy`` files that are memory-mapped and scanned in blocks. A million 384-wide chunks are
1.5 GB of page cache and a few hundred milliseconds of matrix-vector products; only one
block is in flight at a time.

One folder per collection::

    seg-000000000007/      rows written by one upsert (or several, merged)
        vectors.npy        float32, n x dim, unit rows
        rows.npz           ids (bytes), fp (id_key of the id), source (id_key of the
                           source), tag (text_key for chunks; the owner chunk's id_key
                           for pieces)
    del-000000000008.npy   the source keys one delete removed

Sequence numbers order everything: a row is live unless a newer segment holds its id or a
newer tombstone its source. Files appear by an atomic rename, so a reader sees a write
whole or not at all; writers hold the folder lock exclusively, readers share it while they
list and open files. After a write, once more than :data:`MAX_FILES` files exist, the
segments are merged: the newer ones among themselves while they are small next to the
oldest, otherwise everything with the tombstones applied. Each row is thus rewritten a few
times over a store's life, and a reader opens at most a dozen files.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fissure.store.locking import locked as _locked
from fissure.store.ranking import firsts, id_keys, member, places

MAX_FILES = 12  # segments + tombstones before a merge
BLOCK = 65_536  # rows per matrix-vector product: 96 MiB of 384-wide float32


@dataclass(frozen=True)
class Batch:
    """Rows to write: ``ids`` (str), and per row ``source``/``tag`` keys, a unit vector
    and where the row starts in its document."""

    ids: list[str]
    sources: np.ndarray
    tags: np.ndarray
    vectors: np.ndarray
    starts: np.ndarray | None = None  # zeros when unknown


@dataclass
class Rows:
    """The live rows of a collection, in a fixed order, and the vectors behind them."""

    ids: np.ndarray  # bytes
    fp: np.ndarray  # uint64
    source: np.ndarray  # uint64
    tag: np.ndarray  # uint64
    start: np.ndarray  # int64
    parts: list[tuple[np.ndarray, np.ndarray]]  # (vectors, live rows of it), in row order
    _by_fp: np.ndarray | None = field(default=None, repr=False)
    _place: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.fp)

    @property
    def place(self) -> np.ndarray:
        """Source key, start and id key of each row: how ties are ordered."""
        if self._place is None:
            self._place = places(self.source, self.start, self.fp)
        return self._place

    def scores(self, query: np.ndarray) -> np.ndarray:
        """The cosine of the unit ``query`` with every live row."""
        query = np.array(query, dtype=np.float32)  # an owned copy: BLAS takes the fast path
        out = []
        for vectors, live in self.parts:
            blocks = [vectors[at : at + BLOCK] @ query for at in range(0, len(vectors), BLOCK)]
            part = np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.float32)
            out.append(part[live])
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)

    def scores_at(self, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
        """The cosine of the unit ``query`` with the live rows ``rows`` only."""
        query = np.array(query, dtype=np.float32)
        return self.at(rows) @ query if len(rows) else np.zeros(0, dtype=np.float32)

    def at(self, rows: np.ndarray) -> np.ndarray:
        """The vectors of the live rows ``rows``, in that order."""
        dim = self.parts[0][0].shape[1] if self.parts else 0
        out = np.empty((len(rows), dim), dtype=np.float32)
        start = 0
        for vectors, live in self.parts:
            mine = (rows >= start) & (rows < start + len(live))
            if mine.any():
                out[mine] = vectors[live[rows[mine] - start]]
            start += len(live)
        return out

    def lookup(self, fps: np.ndarray) -> np.ndarray:
        """The row of each id key in ``fps`` (``-1`` where it is not live)."""
        if self._by_fp is None:
            self._by_fp = np.argsort(self.fp, kind="stable")
        if not len(self.fp):
            return np.full(len(fps), -1, dtype=np.int64)
        sorted_fp = self.fp[self._by_fp]
        at = np.minimum(np.searchsorted(sorted_fp, fps), len(sorted_fp) - 1)
        return np.where(sorted_fp[at] == fps, self._by_fp[at], -1).astype(np.int64)

    def vectors(self) -> Iterator[np.ndarray]:
        """The live vectors, block by block, in row order."""
        for vectors, live in self.parts:
            for at in range(0, len(live), BLOCK):
                yield np.asarray(vectors[live[at : at + BLOCK]])


@dataclass(frozen=True)
class _Segment:
    seq: int
    path: Path


class VectorFile:
    """The exact-search copy of one collection, in ``folder``.

    Args:
        folder: Where the segments live (created on the first write).
        lock: The lock file shared by every collection of the store.
        read_only: Only read: :meth:`rows` never makes the lock file.
    """

    def __init__(self, folder: Path, lock: Path, read_only: bool = False) -> None:
        self.folder = folder
        self.lock_path = lock
        self.read_only = read_only
        self._cached: tuple[tuple[str, ...], Rows] | None = None
        self._loaded: dict[str, _Loaded] = {}  # files never change once renamed in

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the store's lock exclusively (writers call :meth:`add`, :meth:`delete`
        and :meth:`replace` inside it, and write Chroma inside it too)."""
        with _locked(self.lock_path, exclusive=True):
            yield

    def add(self, batch: Batch) -> None:
        """Write ``batch`` as one segment (the last copy of a repeated id wins)."""
        if not batch.ids:
            return
        ids = np.asarray([i.encode("utf-8", "surrogatepass") for i in batch.ids])
        fp = id_keys(batch.ids)
        keep = np.sort(len(fp) - 1 - firsts(fp[::-1]))  # the last copy of each id
        self.folder.mkdir(parents=True, exist_ok=True)
        seq = self._next_seq()
        starts = _starts(batch)
        vectors = np.asarray(batch.vectors, dtype=np.float32)
        self._write(seq, [(ids[keep], fp[keep], batch.sources[keep], batch.tags[keep],
                           vectors[keep], starts[keep])])  # fmt: skip
        self._compact()

    def delete(self, sources: np.ndarray) -> None:
        """Remove every row whose source key is in ``sources`` (a tombstone file)."""
        if not len(sources) or not self.folder.is_dir():
            return
        segments, _ = self._listing()
        gone = np.sort(np.asarray(sources, dtype=np.uint64))
        if not any(member(_load(s, self._loaded)[0]["source"], gone).any() for s in segments):
            return  # no row has these sources (a new document): no tombstone to carry
        seq = self._next_seq()
        tmp = self.folder / f".tmp-del-{seq}-{os.getpid()}.npy"
        _save(tmp, np.asarray(sources, dtype=np.uint64))
        os.replace(tmp, self.folder / f"del-{seq:012d}.npy")
        _sync_dir(self.folder)
        self._compact()

    def replace(self, batches: Iterable[Batch], upper: int, dim: int) -> None:
        """Make the copy exactly ``batches`` (at most ``upper`` rows of width ``dim``):
        one new segment, every older file removed."""
        self.folder.mkdir(parents=True, exist_ok=True)
        old_segments, old_tombs = self._listing()
        seq = self._next_seq()
        self._write(seq, _rows_of(batches), upper=upper, dim=dim)
        for s in old_segments:
            shutil.rmtree(s.path, ignore_errors=True)
        for t in old_tombs:
            t.path.unlink(missing_ok=True)
        self._loaded.clear()

    def rows(self) -> Rows:
        """The live rows now (cached while the folder's files stay the same)."""
        with _locked(self.lock_path, exclusive=False, create=not self.read_only):
            segments, tombs = self._listing()
            names = tuple(p.path.name for p in (*segments, *tombs))
            if self._cached is None or self._cached[0] != names:
                self._cached = (names, _live(segments, tombs, self._loaded))
                self._loaded = {k: v for k, v in self._loaded.items() if k in names}
            return self._cached[1]

    def _listing(self) -> tuple[list[_Segment], list[_Segment]]:
        segments, tombs = [], []
        if self.folder.is_dir():
            for entry in os.scandir(self.folder):
                if entry.name.startswith("seg-"):
                    segments.append(_Segment(int(entry.name[4:]), Path(entry.path)))
                elif entry.name.startswith("del-") and entry.name.endswith(".npy"):
                    tombs.append(_Segment(int(entry.name[4:-4]), Path(entry.path)))
        return sorted(segments, key=_seq), sorted(tombs, key=_seq)

    def _next_seq(self) -> int:
        segments, tombs = self._listing()
        return max((p.seq for p in (*segments, *tombs)), default=0) + 1

    def _write(
        self,
        seq: int,
        parts: Iterable[tuple[np.ndarray, ...]],
        upper: int | None = None,
        dim: int | None = None,
    ) -> None:
        """Write one segment ``seq`` from ``(ids, fp, source, tag, vectors)`` parts."""
        tmp = self.folder / f".tmp-seg-{seq}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        parts = list(parts) if upper is None else parts
        if upper is None:
            upper = sum(len(p[1]) for p in parts)  # type: ignore[arg-type]
            dim = next((p[4].shape[1] for p in parts), 0)  # type: ignore[union-attr]
        columns: list[list[np.ndarray]] = [[], [], [], [], []]
        n = 0
        with open(tmp / "vectors.npy", "wb") as f:
            header = {"descr": "<f4", "fortran_order": False, "shape": (upper, dim or 0)}
            np.lib.format.write_array_header_1_0(f, header)
            for part in parts:
                take = min(len(part[1]), upper - n)
                f.write(np.ascontiguousarray(part[4][:take], dtype="<f4").tobytes())
                for column, values in zip(columns, (*part[:4], part[5]), strict=True):
                    column.append(values[:take])
                n += take
            f.write(bytes(4 * (dim or 0) * (upper - n)))  # fewer rows came: zeros, unread
            f.flush()
            os.fsync(f.fileno())
        ids = _cat(columns[0], "S1")
        fp, source, tag = (_cat(c, np.uint64).astype(np.uint64) for c in columns[1:4])
        start = _cat(columns[4], np.int64).astype(np.int64)
        with open(tmp / "rows.npz", "wb") as f:
            np.savez(f, ids=ids, fp=fp, source=source, tag=tag, start=start)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.folder / f"seg-{seq:012d}")
        _sync_dir(self.folder)

    def _compact(self) -> None:
        """Merge segments once there are too many files (the caller holds the lock)."""
        segments, tombs = self._listing()
        if len(segments) + len(tombs) <= MAX_FILES:
            return
        try:
            self._merge_some(segments, tombs)
        finally:  # forget merged segments: their maps would keep the deleted files on disk
            names = {p.path.name for p in self._listing()[0]}
            self._loaded = {k: v for k, v in self._loaded.items() if k in names}

    def _merge_some(self, segments: list[_Segment], tombs: list[_Segment]) -> None:
        sizes = [len(_load(s, self._loaded)[0]["fp"]) for s in segments]
        if len(segments) > 1 and sum(sizes[1:]) * 4 < sizes[0] and len(tombs) < MAX_FILES // 2:
            # The newer segments only; a tombstone stays while it still removes a row of
            # the oldest segment.
            newer = [t for t in tombs if t.seq > segments[0].seq]
            self._merge(segments[1:], newer, keep_tombs=True)
            base = np.sort(_load(segments[0], self._loaded)[0]["source"])
            for tomb in newer:
                if not member(np.load(tomb.path), base).any():
                    tomb.path.unlink(missing_ok=True)
        else:
            self._merge(segments, tombs, keep_tombs=False)

    def _merge(self, segments: list[_Segment], tombs: list[_Segment], keep_tombs: bool) -> None:
        """Write the live rows of ``segments`` as one new, newest segment, then remove them
        (and ``tombs`` unless they must still apply to an older segment). A crash in
        between leaves rows that the new segment supersedes: nothing is lost."""
        rows = _live(segments, tombs, self._loaded)
        dim = rows.parts[0][0].shape[1] if rows.parts else 0
        blocks = rows.vectors()

        def parts() -> Iterator[tuple[np.ndarray, ...]]:
            at = 0
            for block in blocks:
                s = slice(at, at + len(block))
                yield rows.ids[s], rows.fp[s], rows.source[s], rows.tag[s], block, rows.start[s]
                at += len(block)

        self._write(self._next_seq(), parts(), upper=len(rows), dim=dim)
        for segment in segments:
            shutil.rmtree(segment.path, ignore_errors=True)
        if not keep_tombs:
            for tomb in tombs:
                tomb.path.unlink(missing_ok=True)


def memory_rows(batches: Iterable[Batch]) -> Rows:
    """Rows held in memory only (a store folder that cannot be written)."""
    parts = list(_rows_of(batches))
    vectors = _cat([p[4] for p in parts], np.float32)
    dim = next((p[4].shape[1] for p in parts), 0)
    vectors = vectors.reshape(-1, dim) if dim else np.zeros((0, 0), dtype=np.float32)
    return Rows(
        ids=_cat([p[0] for p in parts], "S1"),
        fp=_cat([p[1] for p in parts], np.uint64),
        source=_cat([p[2] for p in parts], np.uint64),
        tag=_cat([p[3] for p in parts], np.uint64),
        start=_cat([p[5] for p in parts], np.int64),
        parts=[(vectors, np.arange(len(vectors)))],
    )


def _seq(p: _Segment) -> int:
    return p.seq


def _starts(batch: Batch) -> np.ndarray:
    if batch.starts is None:
        return np.zeros(len(batch.ids), dtype=np.int64)
    return np.asarray(batch.starts, dtype=np.int64)


def _rows_of(batches: Iterable[Batch]) -> Iterator[tuple[np.ndarray, ...]]:
    for b in batches:
        ids = np.asarray([i.encode("utf-8", "surrogatepass") for i in b.ids])
        yield (ids, id_keys(b.ids), b.sources, b.tags, np.asarray(b.vectors, dtype=np.float32),
               _starts(b))  # fmt: skip


_Loaded = tuple[dict[str, np.ndarray], np.ndarray]  # a segment's columns and vectors


def _load(segment: _Segment, cache: dict[str, _Loaded]) -> _Loaded:
    """A segment's columns and memory-mapped vectors, read once."""
    name = segment.path.name
    if name not in cache:
        with np.load(segment.path / "rows.npz") as z:
            cols = {key: z[key] for key in ("ids", "fp", "source", "tag")}
            cols["start"] = z["start"] if "start" in z else np.zeros(len(cols["fp"]), np.int64)
        vectors = np.load(segment.path / "vectors.npy", mmap_mode="r")[: len(cols["fp"])]
        cache[name] = (cols, vectors)
    return cache[name]


def _live(
    segments: list[_Segment], tombs: list[_Segment], cache: dict[str, _Loaded] | None = None
) -> Rows:
    """Which rows of ``segments`` are live under ``tombs`` (newest decides)."""
    cache = {} if cache is None else cache
    events = sorted([(s.seq, "seg", s) for s in segments] + [(t.seq, "del", t) for t in tombs],
                    key=lambda e: -e[0])  # fmt: skip
    seen = np.zeros(0, dtype=np.uint64)
    dead = np.zeros(0, dtype=np.uint64)
    loaded = []
    for _, kind, item in events:
        if kind == "del":
            dead = np.sort(np.concatenate([dead, np.load(item.path)]))
            continue
        cols, vectors = _load(item, cache)
        live = ~member(cols["fp"], seen) & ~member(cols["source"], dead)
        seen = np.sort(np.concatenate([seen, cols["fp"]]))
        loaded.append((cols, vectors, np.flatnonzero(live)))
    pick = loaded[::-1]  # oldest first: row order follows the writes
    return Rows(
        ids=_cat([c["ids"][live] for c, _, live in pick], "S1"),
        fp=_cat([c["fp"][live] for c, _, live in pick], np.uint64),
        source=_cat([c["source"][live] for c, _, live in pick], np.uint64),
        tag=_cat([c["tag"][live] for c, _, live in pick], np.uint64),
        start=_cat([c["start"][live] for c, _, live in pick], np.int64),
        parts=[(v, live) for _, v, live in pick],
    )


def _cat(arrays: list[np.ndarray], dtype: object) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype)  # type: ignore[call-overload]


def _save(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as f:
        np.save(f, array)
        f.flush()
        os.fsync(f.fileno())


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_dir(folder: Path) -> None:
    with suppress(OSError):  # some file systems cannot sync a folder; renames stay atomic
        _fsync(folder)
