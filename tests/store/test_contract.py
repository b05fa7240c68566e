"""The contract of :class:`fissure.store.protocol.Store`, run against every backend.

Each test gets a fresh, empty store of each backend as :func:`fissure.store.open.open_store`
opens it for ``fissure ingest``, ``fissure query`` and the service: the embedded Chroma
folder (``tmp_path``) and a namespace of its own in PostgreSQL (the session's server from
``tests/conftest.py``). Vectors are fixed, so every expected score is known exactly.

Where a backend breaks the contract today, its test is marked ``xfail(strict=True)`` for
that backend alone (:func:`_gap`), with the reason: the gap stays visible, and the mark has
to go when the backend is fixed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from fissure.errors import ConfigError, FissureError
from fissure.store.ids import link_id, piece_id
from fissure.store.open import open_store
from fissure.store.protocol import Hit, Piece, Store, chunk_metadata
from fissure.store.ranking import id_key
from fissure.types import Chunk

DIM = 8


@dataclass
class Backend:
    """Opens stores of one backend: its own namespace, or others beside it."""

    name: str
    spec: str | Path
    namespace: str
    opened: list[Store] = field(default_factory=list)

    def open(self, other: str = "") -> Store:
        """The store of this test's namespace, or of the namespace ``other`` beside it."""
        if not other:
            namespace = self.namespace
        else:
            namespace = self.namespace + other if self.name == "postgres" else other
        store, manifest = open_store(self.spec, namespace=namespace)
        manifest.close()
        self.opened.append(store)
        return store


@pytest.fixture(params=["chroma", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "postgres":
        pytest.importorskip("psycopg", reason="pip install 'fissure[postgres]'")
        found = Backend("postgres", request.getfixturevalue("pg_dsn"),
                        request.getfixturevalue("pg_namespace"))  # fmt: skip
    else:
        found = Backend("chroma", tmp_path / "store", "default")
    yield found
    for store in found.opened:
        store.close()


@pytest.fixture
def store(backend: Backend) -> Store:
    return backend.open()


def _gap(request: pytest.FixtureRequest, backend: Backend, on: Sequence[str], why: str) -> None:
    """Mark the running test as a known breach of the contract by the backends ``on``."""
    if backend.name in on:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"{backend.name}: {why}"))


def e(*weights: float) -> np.ndarray:
    """A DIM-wide vector with these leading weights."""
    out = np.zeros(DIM, dtype=np.float32)
    out[: len(weights)] = weights
    return out


def doc(
    source: str,
    parts: Sequence[str],
    headings: tuple[str, ...] = (),
    entity: str | None = None,
    page: int | None = None,
    cell: int | None = None,
) -> list[Chunk]:
    """The chunks of a document made of ``parts``, with offsets and lines into its text."""
    doc_id = hashlib.sha256(source.encode()).hexdigest()[:16]
    chunks, at, line = [], 0, 1
    for index, part in enumerate(parts):
        lines = (line, line + part.count("\n"))
        chunks.append(Chunk(part, at, at + len(part), doc_id, index, len(part.split()), lines,
                            "contract", source, headings, entity, page, cell))  # fmt: skip
        at, line = at + len(part), lines[1]
    assert "".join(c.text for c in chunks) == "".join(parts)  # they slice the text back
    return chunks


def fill(store: Store, chunks: Sequence[Chunk], vectors: Sequence[np.ndarray]) -> None:
    store.upsert(chunks, np.stack(vectors))


def stored(store: Store) -> dict[str, tuple[str, dict[str, object]]]:
    return {i: (t, m) for i, t, m in store.items()}


def ids(hits: Sequence[Hit]) -> list[str]:
    return [h.chunk_id for h in hits]


# Two documents: A's chunks point along axes 0-2, B's along 3-4.
A = doc("a.md", ["Alpha — first part.\n", "Second: naïve café ☕ 東京\r\n", "\tthird\u0301  "],
        headings=("Title", "Sub › part"))  # fmt: skip
B = doc("dir/b.txt", ["beta one ", "beta two"], entity="Beta", page=3, cell=7)
VA = [e(1), e(0, 1), e(0, 0, 1)]
VB = [e(0, 0, 0, 1), e(0, 0, 0, 0, 1)]


def test_every_backend_is_a_store(store: Store) -> None:
    assert isinstance(store, Store)


def test_a_fresh_store_is_empty(store: Store) -> None:
    assert (store.count(), store.count_pieces()) == (0, 0)
    assert list(store.items()) == [] and list(store.pieces()) == []
    assert store.source_items("a.md") == []
    assert store.query(e(1), 5) == []
    assert store.query(e(1), 5, {"source": "a.md"}, sub_weight=0.5, collapse=False) == []


def test_chunks_come_back_exactly(store: Store) -> None:
    fill(store, A + B, VA + VB)
    assert store.count() == 5
    assert stored(store) == {c.chunk_id: (c.text, chunk_metadata(c)) for c in A + B}
    for chunks in (A, B):
        got = store.source_items(chunks[0].source or "")
        assert got == [(c.chunk_id, c.text, chunk_metadata(c)) for c in chunks]  # in order
    meta = stored(store)[B[1].chunk_id][1]
    assert all(type(meta[k]) is int for k in ("start", "end", "index", "page", "cell"))
    assert "entity" not in stored(store)[A[0].chunk_id][1]  # unset: left out, not None


def test_the_nearest_chunk_comes_first_with_exact_cosines(store: Store) -> None:
    fill(store, A + B, VA + VB)
    query = e(3, 1, 0, 0, 2)  # any length: scores are cosines
    hits = store.query(query, k=3, collapse=False)  # the 4th and 5th tie at 0
    want = sorted(((float(v @ query) / float(np.linalg.norm(query)), c) for c, v in
                   zip(A + B, VA + VB, strict=True)), key=lambda p: -p[0])[:3]  # fmt: skip
    assert ids(hits) == [c.chunk_id for _, c in want]
    assert [h.score for h in hits] == pytest.approx([s for s, _ in want], abs=1e-5)
    assert hits[0].text == A[0].text and hits[0].metadata == chunk_metadata(A[0])
    assert ids(store.query(query, k=2)) == ids(hits)[:2]
    assert store.query(VB[1], k=1)[0].score == pytest.approx(1.0, abs=1e-5)


def test_equal_scores_go_by_source_then_start_then_id(store: Store) -> None:
    same = [c for d in ("x.md", "y.md", "z.md") for c in doc(d, [f"{d} one", f"{d} two"])]
    fill(store, same, [e(1)] * len(same))
    hits = store.query(e(1), k=len(same), collapse=False)
    order = sorted(same, key=lambda c: (id_key(c.source or ""), c.start, id_key(c.chunk_id)))
    assert ids(hits) == [c.chunk_id for c in order]


def test_where_is_equality_applied_before_ranking(store: Store) -> None:
    fill(store, A + B, VA + VB)
    assert ids(store.query(e(1), 1, {"source": "dir/b.txt"})) == [B[0].chunk_id]
    assert ids(store.query(e(1), 5, {"source": "a.md", "index": 2})) == [A[2].chunk_id]
    assert store.query(e(1), 5, {"source": "nowhere"}) == []
    assert store.query(e(1), 5, {"no_such_key": "x"}) == []


@pytest.mark.parametrize("value", [{"$in": ["a.md", "dir/b.txt"]}, ["a.md"]], ids=["dict", "list"])
def test_where_refuses_values_that_are_not_scalars(
    request: pytest.FixtureRequest, backend: Backend, store: Store, value: object
) -> None:
    _gap(request, backend, ["chroma"], "where values go to Chroma as they are: a dict is "
         "applied as a Chroma operator ($in matches), a list fails with chromadb's "
         "ValueError")  # fmt: skip
    fill(store, A + B, VA + VB)
    with pytest.raises(ConfigError):
        store.query(e(1), 5, {"source": value})


@pytest.mark.parametrize("k", [0, -1])
def test_k_below_one_finds_nothing(
    request: pytest.FixtureRequest, backend: Backend, store: Store, k: int
) -> None:
    if k < 0:
        _gap(request, backend, ["postgres"], "a negative k is not checked: hits come back")
    fill(store, A, VA)
    assert store.query(e(1), k) == []


def test_query_options_are_checked(store: Store) -> None:
    fill(store, A, VA)
    for bad in (-0.1, 1.5, True):
        with pytest.raises(ConfigError):
            store.query(e(1), 5, sub_weight=bad)
    with pytest.raises(ConfigError):
        store.query(None, 5)  # dense needs a vector
    with pytest.raises(ConfigError):
        store.query(e(1), 5, mode="nonsense")
    assert ids(store.query(e(1), 1, mode="dense")) == ids(store.query(e(1), 1))  # no text


def test_upserts_are_idempotent_and_replace_by_id(store: Store) -> None:
    fill(store, A + B, VA + VB)
    before = stored(store)
    fill(store, A + B, VA + VB)
    fill(store, A[:1], VA[:1])
    assert store.count() == 5 and stored(store) == before
    fill(store, A[:1], [e(0, 0, 0, 0, 0, 1)])  # same chunk, a new vector: it replaces
    assert ids(store.query(e(0, 0, 0, 0, 0, 1), 1)) == [A[0].chunk_id]
    assert store.query(e(1), 1)[0].score < 0.5


def test_a_length_mismatch_writes_nothing(store: Store) -> None:
    with pytest.raises(ValueError):
        store.upsert(A, np.stack(VA[:2]))
    assert store.count() == 0


def test_replacing_a_document_leaves_no_stale_chunk(store: Store) -> None:
    fill(store, A + B, VA + VB)
    store.upsert_pieces([_piece(A[0], 0, 5)], np.stack([e(1)]))
    new = doc("a.md", ["Alpha — rewritten.\n", "and shorter"], headings=("Title",))
    store.delete_sources(["a.md"])  # what the writer does: delete by source, then upsert
    fill(store, new, [e(1), e(0, 1)])
    assert store.source_items("a.md") == [(c.chunk_id, c.text, chunk_metadata(c)) for c in new]
    assert set(stored(store)) == {c.chunk_id for c in new + B}
    assert store.count_pieces() == 0
    old = {c.chunk_id for c in A}
    assert not old & set(ids(store.query(e(1, 1, 1), 10, collapse=False)))


def test_deleting_a_document_removes_its_chunks_and_pieces(store: Store) -> None:
    fill(store, A + B, VA + VB)
    store.upsert_pieces([_piece(A[0], 0, 5), _piece(B[0], 0, 4)], np.stack([e(1), e(0, 0, 0, 1)]))
    store.delete_sources(["a.md", "a.md", "never-stored.md"])
    store.delete_sources([])
    assert store.count() == 2 and set(stored(store)) == {c.chunk_id for c in B}
    assert store.source_items("a.md") == []
    assert [m["source"] for _, _, m in store.pieces()] == ["dir/b.txt"]
    assert set(ids(store.query(e(1), 10, collapse=False))) == {c.chunk_id for c in B}


def _piece(chunk: Chunk, start: int, end: int, *more: Chunk) -> Piece:
    """A piece of ``chunk``'s document at chunk-relative offsets, linked to it and ``more``."""
    at = chunk.start + start
    text = chunk.text[start:end]
    return Piece(chunk.source or "", at, at + len(text), text,
                 (chunk.chunk_id, *(c.chunk_id for c in more)))  # fmt: skip


def test_pieces_are_stored_per_linked_chunk_and_blend_the_score(store: Store) -> None:
    fill(store, A, VA)
    plain = store.query(e(1, 1), 3, collapse=False)
    assert store.query(e(1, 1), 3, sub_weight=0.5, collapse=False) == plain  # no pieces yet
    across = _piece(A[0], 10, len(A[0].text), A[1])  # a piece on a chunk boundary
    for _ in range(2):  # idempotent
        store.upsert_pieces([across], np.stack([e(0, 0, 0, 1)]))
    assert store.count_pieces() == 2
    records = {i: (t, m) for i, t, m in store.pieces()}
    assert records == {
        link_id(across.piece_id, c.chunk_id): (across.text, {
            "source": "a.md", "start": across.start, "end": across.end,
            "piece_id": piece_id("a.md", across.start, across.end, across.text),
            "chunk_id": c.chunk_id})
        for c in A[:2]
    }  # fmt: skip
    hits = store.query(e(0, 0, 0, 1), 3, sub_weight=0.25, collapse=False)
    # (1 - w) * own + w * best piece; a chunk without a piece keeps its own score
    assert [h.score for h in hits] == pytest.approx([0.25, 0.25, 0.0], abs=1e-5)
    assert ids(hits) == [A[0].chunk_id, A[1].chunk_id, A[2].chunk_id]


def test_near_copies_in_one_document_collapse_to_the_earliest(store: Store) -> None:
    copies = doc("log.txt", ["retry 1 failed", "Retry 22  failed", "retry 3 failed", "done"])
    other = doc("other.txt", ["retry 9 failed"])
    fill(store, copies + other, [e(1), e(1), e(1), e(0, 1), e(1)])
    hits = store.query(e(1), 5)
    tied = sorted([copies[0], other[0]], key=lambda c: id_key(c.source or ""))
    assert ids(hits) == [c.chunk_id for c in tied] + [copies[3].chunk_id]
    assert [h.copies for h in hits] == [3 if c is copies[0] else 1 for c in tied] + [1]
    assert len(store.query(e(1), 5, collapse=False)) == 5
    assert all(h.copies == 1 for h in store.query(e(1), 5, collapse=False))


def test_namespaces_never_see_each_other(backend: Backend, store: Store) -> None:
    other = backend.open("b")
    fill(store, A, VA)
    fill(other, B, VB)
    other.upsert_pieces([_piece(B[0], 0, 4)], np.stack([e(0, 0, 0, 1)]))
    assert (store.count(), other.count()) == (3, 2)
    assert (store.count_pieces(), other.count_pieces()) == (0, 1)
    assert set(stored(store)) == {c.chunk_id for c in A}
    assert set(stored(other)) == {c.chunk_id for c in B}
    assert store.source_items("dir/b.txt") == [] and other.source_items("a.md") == []
    assert set(ids(store.query(e(0, 0, 0, 1), 10, collapse=False))) == {c.chunk_id for c in A}
    other.delete_sources(["a.md"])  # a source only the first namespace holds
    assert store.count() == 3


def test_what_was_written_survives_close_and_reopen(backend: Backend, store: Store) -> None:
    fill(store, A + B, VA + VB)
    store.upsert_pieces([_piece(A[0], 0, 5)], np.stack([e(1)]))
    before = (stored(store), sorted(store.pieces()), store.query(e(1, 1), 3, sub_weight=0.5))
    store.close()
    again = backend.open()
    after = (stored(again), sorted(again.pieces()), again.query(e(1, 1), 3, sub_weight=0.5))
    assert after[:2] == before[:2]
    assert ids(after[2]) == ids(before[2])
    assert [h.score for h in after[2]] == pytest.approx([h.score for h in before[2]], abs=1e-6)


def test_vectors_of_another_width_are_refused_and_change_nothing(
    request: pytest.FixtureRequest, backend: Backend, store: Store
) -> None:
    _gap(request, backend, ["chroma"], "refused with chromadb's InvalidArgumentError, after "
         "the lexical index and the exact copy took the rows: every later query fails "
         "(numpy matmul ValueError)")  # fmt: skip
    _gap(request, backend, ["postgres"], "accepted: the namespace holds vectors of two widths")
    fill(store, A, VA)
    refused: Exception | None = None
    try:
        store.upsert(B, np.ones((len(B), DIM + 2), dtype=np.float32))
    except Exception as exc:  # which kind is asserted below, after the state
        refused = exc
    assert store.count() == 3
    assert ids(store.query(e(1), 1)) == [A[0].chunk_id]
    assert isinstance(refused, FissureError), refused


def test_a_query_vector_of_another_width_is_refused(
    request: pytest.FixtureRequest, backend: Backend, store: Store
) -> None:
    _gap(request, backend, ["chroma"], "numpy's matmul ValueError, not a ConfigError")
    _gap(request, backend, ["postgres"], "rows of other widths are skipped: [] comes back")
    fill(store, A, VA)
    with pytest.raises(ConfigError):
        store.query(np.ones(DIM + 2, dtype=np.float32), 5)


def test_non_finite_vectors_are_refused_and_change_nothing(
    request: pytest.FixtureRequest, backend: Backend, store: Store
) -> None:
    _gap(request, backend, ["chroma"], "NaN vectors are stored as they are")
    fill(store, A, VA)
    with pytest.raises(FissureError):
        store.upsert(B, np.full((len(B), DIM), np.nan, dtype=np.float32))
    assert store.count() == 3


def test_any_text_a_chunk_holds_comes_back_exactly(
    request: pytest.FixtureRequest, backend: Backend, store: Store
) -> None:
    _gap(request, backend, ["postgres"], "PostgreSQL text cannot hold NUL: StoreError")
    odd = doc("odd.bin.txt", ["before\x00after", "\x0b\x0c\x1f\u2028\u00a0\ufeff"])
    fill(store, odd, [e(1), e(0, 1)])
    assert store.source_items("odd.bin.txt") == [(c.chunk_id, c.text, chunk_metadata(c))
                                                 for c in odd]  # fmt: skip


def test_the_recorded_embedder_belongs_to_one_namespace(backend: Backend) -> None:
    store, manifest = open_store(backend.spec, namespace=backend.namespace)
    manifest.set_meta("model", "model-a")
    manifest.set_meta("dim", str(DIM))
    manifest.close()
    store.close()
    other = backend.namespace + "b" if backend.name == "postgres" else "b"
    store, manifest = open_store(backend.spec, namespace=other)
    try:
        assert (manifest.get_meta("model"), manifest.get_meta("dim")) == (None, None)
    finally:
        manifest.close()
        store.close()


def test_an_embedder_with_another_model_id_is_refused(
    request: pytest.FixtureRequest, backend: Backend
) -> None:
    from fissure.ingest.pipeline import check_model

    _gap(request, backend, ["chroma", "postgres"], "check_model compares widths only: a "
         "same-width embedder with another model_id is let in and overwrites the recorded "
         "model, so one store mixes two embedders' vectors")  # fmt: skip

    @dataclass
    class Named:
        model_id: str
        dim: int = DIM

    store, manifest = open_store(backend.spec, namespace=backend.namespace)
    try:
        check_model(manifest, Named("model-a"), backend.spec)  # type: ignore[arg-type]
        with pytest.raises(ConfigError):  # another width: refused today
            check_model(manifest, Named("model-a", DIM + 1), backend.spec)  # type: ignore[arg-type]
        with pytest.raises(ConfigError):
            check_model(manifest, Named("model-b"), backend.spec)  # type: ignore[arg-type]
    finally:
        manifest.close()
        store.close()
