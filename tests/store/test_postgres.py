"""The PostgreSQL store and manifest against a real server: the same answers as Chroma and
the SQLite manifest on the same inputs, namespaces that never meet, and per-document locks
that make concurrent runs safe."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fissure import Chunker
from fissure.errors import ConfigError
from fissure.store import ChromaStore, Entry, Failure, Manifest, Store
from fissure.store.manifest import ManifestProtocol
from fissure.store.open import open_store
from fissure.store.protocol import Piece
from tests.ingest.helpers import HashEmbedder

pytest.importorskip("psycopg")

from fissure.store.pg_manifest import PostgresManifest  # noqa: E402
from fissure.store.postgres import _ANN_SETTINGS, PostgresStore  # noqa: E402

WORDS = ["granite", "basalt", "fault", "quartz", "shale", "magma", "slate", "mica"]


def _corpus() -> list[Any]:
    """Chunks of several documents with varied metadata (sources, indices, headings)."""
    chunker = Chunker(tokenizer="words", max_tokens=12)
    chunks = []
    for d in range(6):
        body = "\n\n".join(
            f"## {WORDS[(d + j) % 8]} part {j}\n\n"
            + " ".join(f"{WORDS[(d * j + k) % 8]}{k % 5}" for k in range(25))
            for j in range(3)
        )
        chunks += chunker.chunk(f"# Doc {d}\n\n{body}\n", source=f"doc{d}.md")
    return chunks


def _pieces(chunks: list[Any]) -> list[Piece]:
    out = []
    for c in chunks[::2]:
        out.append(Piece(c.source, c.start, c.start + 8, c.text[:8], (c.chunk_id,)))
    a, b = chunks[0], chunks[1]
    out.append(Piece(a.source, a.end - 3, b.start + 3, "span", (a.chunk_id, b.chunk_id)))
    return out


def _fill(store: Store, chunks: list[Any], pieces: list[Piece]) -> None:
    hasher = HashEmbedder()
    store.upsert(chunks, hasher.embed([c.text for c in chunks]))
    store.upsert_pieces(pieces, hasher.embed([p.text for p in pieces]))


def _same_hits(got: list[Any], want: list[Any]) -> None:
    assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-5)
    by_id = {h.chunk_id: h for h in want}
    for hit in got:  # equal scores may come in either order; every id must be right
        twin = by_id.get(hit.chunk_id)
        if twin is None:
            assert any(abs(h.score - hit.score) < 1e-5 for h in want), hit
            continue
        assert (hit.text, hit.metadata) == (twin.text, twin.metadata)
        assert hit.score == pytest.approx(twin.score, abs=1e-5)


def test_postgres_answers_as_chroma_does(tmp_path: Path, pg_dsn: str, pg_namespace: str) -> None:
    chunks = _corpus()
    pieces = _pieces(chunks)
    chroma, pg = ChromaStore(tmp_path / "chroma"), PostgresStore(pg_dsn, pg_namespace)
    assert isinstance(pg, Store)
    for store in (chroma, pg):
        _fill(store, chunks, pieces)
        _fill(store, chunks[:5], pieces[:2])  # upserts are idempotent
    assert pg.count() == chroma.count() == len(chunks)
    assert pg.count_pieces() == chroma.count_pieces()
    assert sorted(pg.items()) == sorted(chroma.items())
    assert sorted(pg.pieces()) == sorted(chroma.pieces())
    queries = HashEmbedder().embed([c.text for c in chunks[::9]] + ["anything", "fault2"])
    where_cases: list[dict[str, Any] | None] = [
        None,
        {"source": "doc2.md"},
        {"source": "doc3.md", "index": 1},
        {"source": "nowhere"},
    ]
    for query in queries:
        for where in where_cases:
            for k in (1, 4):
                _same_hits(pg.query(query, k, where), chroma.query(query, k, where))
                for weight in (0.0, 0.4, 1.0):
                    _same_hits(pg.query(query, k, where, sub_weight=weight),
                               chroma.query(query, k, where, sub_weight=weight))  # fmt: skip
    with pytest.raises(ConfigError, match="sub_weight"):
        pg.query(queries[0], sub_weight=1.5)
    for mode in ("lexical", "hybrid"):  # embedded-store only, said plainly
        with pytest.raises(ConfigError, match="postgresql:// store answers mode dense only"):
            pg.query(queries[0], mode=mode, text="fault2")
    for store in (chroma, pg):
        store.delete_sources(["doc1.md", "doc4.md", "never-there"])
    assert sorted(pg.items()) == sorted(chroma.items())
    assert sorted(pg.pieces()) == sorted(chroma.pieces())
    _same_hits(pg.query(queries[0], 5, sub_weight=0.4), chroma.query(queries[0], 5, sub_weight=0.4))
    vectors = dict(pg.vectors())
    assert np.allclose(vectors[chunks[0].chunk_id], HashEmbedder().embed([chunks[0].text])[0],
                       atol=1e-6)  # fmt: skip
    pg.close()


def test_namespaces_never_meet(pg_dsn: str, pg_namespace: str) -> None:
    chunks = _corpus()
    a = PostgresStore(pg_dsn, pg_namespace + "a")
    b = PostgresStore(pg_dsn, pg_namespace + "b")
    _fill(a, chunks[:10], [])
    _fill(b, chunks[10:], _pieces(chunks[10:]))
    query = HashEmbedder().embed([chunks[0].text])[0]
    # collapse=False: every stored chunk comes back, so the sets must be exactly each namespace's
    assert {h.chunk_id for h in a.query(query, 100, collapse=False)} == {
        c.chunk_id for c in chunks[:10]}  # fmt: skip
    assert {h.chunk_id for h in b.query(query, 100, sub_weight=0.5, collapse=False)} == {
        c.chunk_id for c in chunks[10:]}  # fmt: skip
    # collapsed, near-copies fold into one hit, but never into another namespace's chunk
    assert {h.chunk_id for h in a.query(query, 100)} <= {c.chunk_id for c in chunks[:10]}
    assert {h.chunk_id for h in b.query(query, 100, sub_weight=0.5)} <= {
        c.chunk_id for c in chunks[10:]}  # fmt: skip
    b.delete_sources([c.source for c in chunks])
    assert b.count() == 0 and a.count() == 10
    a.close()
    b.close()


def test_large_namespaces_go_through_the_hnsw_index(pg_dsn: str, pg_namespace: str) -> None:
    chunks = _corpus()
    pg = PostgresStore(pg_dsn, pg_namespace, exact_below=0)  # always the index
    exact = PostgresStore(pg_dsn, pg_namespace)
    _fill(pg, chunks, _pieces(chunks))
    vectors = HashEmbedder().embed([c.text for c in chunks])
    with pg.db.run(transaction=True) as conn:
        conn.execute(_ANN_SETTINGS.format(ef=100))
        plan = conn.execute(
            "EXPLAIN SELECT chunk_id FROM fissure_chunks WHERE namespace = %s AND dim = 16 "
            "ORDER BY embedding::vector(16) <=> %b::vector(16) LIMIT 3",
            (pg_namespace, vectors[0]),
        ).fetchall()
    assert any("hnsw" in row[0] for row in plan), plan
    for chunk, vector in list(zip(chunks, vectors, strict=True))[::5]:
        top = pg.query(vector, 1)[0]  # the chunk itself, or one with the same text
        assert top.text == chunk.text and top.score == pytest.approx(1.0, abs=1e-5)
        # A filter keeps k hits: the iterative scan goes on past the first candidates.
        only = pg.query(vector, 3, {"source": "doc5.md"})
        _same_hits(only, exact.query(vector, 3, {"source": "doc5.md"}))
        assert len(only) == 3 and {h.metadata["source"] for h in only} == {"doc5.md"}
    pg.close()
    exact.close()


def _index_scans(store: PostgresStore, index: str, before: int | None = None) -> int:
    """How often ``index`` has been scanned; with ``before``, waits (up to 15 s) for the
    count to move past it, since a backend reports its statistics about once a second."""
    deadline = time.monotonic() + 15
    while True:
        with store.db.run() as conn:
            conn.execute("SELECT pg_stat_clear_snapshot()")
            row = conn.execute("SELECT idx_scan FROM pg_stat_user_indexes WHERE "
                               "indexrelname = %s", (index,)).fetchone()  # fmt: skip
        scans = int(row[0]) if row else 0
        if before is None or scans > before or time.monotonic() > deadline:
            return scans
        time.sleep(0.3)


def test_up_to_exact_below_chunks_every_query_is_exact(pg_dsn: str, pg_namespace: str) -> None:
    """At most ``exact_below`` chunks: each query is the brute-force answer (a scan, the
    index never touched); one chunk more: the HNSW index answers."""
    from fissure.types import Chunk

    rng = np.random.default_rng(11)
    n, dim = 150, 24  # a width no other test uses: its index's scan count is this test's
    vectors = rng.standard_normal((n + 1, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chunks = [Chunk(f"passage {i} " + WORDS[i % 8] * (1 + i % 5), 0, 9, f"d{i}", 0, 9,
                    (1, 1), "structural", source=f"doc{i}.md") for i in range(n + 1)]  # fmt: skip
    store = PostgresStore(pg_dsn, pg_namespace, exact_below=n)
    store.upsert(chunks[:n], vectors[:n])
    index = f"fissure_chunks_hnsw_{dim}"
    assert store.searches_exactly() and not store.searches_exactly(n + 1)
    scans = _index_scans(store, index)
    for q in rng.standard_normal((20, dim)).astype(np.float32):
        q /= np.linalg.norm(q)
        want = np.argsort(-(vectors[:n] @ q))[:10]
        hits = store.query(q, 10, collapse=False)
        assert [h.chunk_id for h in hits] == [chunks[i].chunk_id for i in want]
        assert [h.score for h in hits] == pytest.approx((vectors[want] @ q).tolist(), abs=1e-5)
    time.sleep(1.5)  # long enough for the backend to have reported any index scan
    assert _index_scans(store, index) == scans, "a namespace below exact_below used the index"
    store.upsert(chunks[n:], vectors[n:])  # one past the threshold
    assert not store.searches_exactly()
    top = store.query(vectors[3], 1, collapse=False)[0]
    assert top.chunk_id == chunks[3].chunk_id and top.score == pytest.approx(1.0, abs=1e-5)
    assert _index_scans(store, index, before=scans) > scans, "the HNSW index was not used"
    store.close()


def _manifest_story(m: ManifestProtocol) -> list[Any]:
    """The same calls on any manifest; what it answered, in order."""
    seen: list[Any] = []
    m.mark_pending(["a", "b"])
    seen.append(sorted(m.pending()))
    good = Entry("a", "o", "h1", "fp", "ok", ("c1", "c2"), (3, 4))
    bad = Entry("b", "o", "h2", "fp", "failed")
    m.commit([good, bad], [Failure("b", "o", "parse", "InputError", "binary", "tb", 1.0)])
    seen += [m.pending(), m.known("o"), sorted(m.chunk_ids("o")), m.failures(), m.failures("x")]
    m.commit([Entry("b", "o", "h3", "fp", "ok", ("c3",), (5,))])
    seen += [m.failures(), list(m.documents()), list(m.documents("o")), sorted(m.chunk_ids())]
    m.commit([Entry("b", "o", "h4", "fp", "failed")], [Failure("b", "o", "fetch", "E", "x", "", 2)])
    seen += [m.clear_failures(), m.known("o"), m.clear_failures(["zz"])]
    m.commit([Entry("c", "p", "h", "fp", "failed")], [Failure("c", "p", "fetch", "E", "y", "", 3)])
    seen += [m.clear_failures(["c"]), m.known("p")]
    m.forget(["a"])
    seen.append(m.known("o"))
    m.record_run("o", "spec", {"embedder": "minilm", "settings": {"max_tokens": None}})
    seen += [{o: (s, c) for o, (s, c, _) in m.runs().items()}, m.get_meta("dim")]
    m.set_meta("dim", "16")
    m.set_meta("dim", "384")
    seen.append(m.get_meta("dim"))
    odd = Failure("e", "q", "parse", "E", "caf\udce9 \x00", "", 4)  # stored escaped
    m.commit([Entry("e", "q", "h", "fp", "failed")], [odd])
    seen.append(m.failures("q"))
    m.forget(["e"])
    m.mark_pending(["d"])
    seen.append(m.claim_orphans())  # this run holds "d" itself: not an orphan of another
    m.forget(["d"])
    return seen


def test_postgres_manifest_answers_as_sqlite_does(
    tmp_path: Path, pg_dsn: str, pg_namespace: str
) -> None:
    sqlite, pg = Manifest(tmp_path), PostgresManifest(pg_dsn, pg_namespace)
    assert isinstance(pg, ManifestProtocol) and isinstance(sqlite, ManifestProtocol)
    want = _manifest_story(sqlite)
    got = _manifest_story(pg)
    want[-1] = []  # SQLite assumes one run at a time: it hands back every mark
    assert got == want
    sqlite.close()
    pg.close()


def test_a_document_is_held_until_committed(pg_dsn: str, pg_namespace: str) -> None:
    first = PostgresManifest(pg_dsn, pg_namespace)
    second = PostgresManifest(pg_dsn, pg_namespace)
    first.mark_pending(["x", "y"])
    assert second.claim_orphans() == []  # first is alive and holds them
    entered = threading.Event()

    def wait_for_x() -> None:
        second.mark_pending(["x"])
        entered.set()

    waiter = threading.Thread(target=wait_for_x)
    waiter.start()
    time.sleep(0.5)
    assert not entered.is_set(), "a second run wrote a document the first one holds"
    first.commit([Entry("x", "o", "h", "fp", "ok", ("c",), (1,))])
    waiter.join(10)
    assert entered.is_set()
    second.commit([Entry("x", "o", "h2", "fp", "ok", ("c2",), (1,))])
    first.close()  # dies holding "y": its mark is an orphan now
    third = PostgresManifest(pg_dsn, pg_namespace)
    assert second.claim_orphans() == ["y"]
    assert third.claim_orphans() == []  # second holds it now
    second.forget(["y"])
    assert third.pending() == [] and third.known("o")["x"].digest == "h2"
    second.close()
    third.close()


def test_open_store_names_both_kinds(tmp_path: Path, pg_dsn: str, pg_namespace: str) -> None:
    with pytest.raises(ConfigError, match="no store"):
        open_store(tmp_path / "none", create=False)
    with pytest.raises(ConfigError, match="no store"):
        open_store(pg_dsn, namespace=pg_namespace, create=False)
    with pytest.raises(ConfigError, match="namespace"):
        open_store(tmp_path, namespace="../up")
    store, manifest = open_store(pg_dsn, namespace=pg_namespace)
    assert isinstance(store, PostgresStore) and isinstance(manifest, PostgresManifest)
    manifest.set_meta("dim", "16")
    manifest.close()
    store.close()
    store, manifest = open_store(pg_dsn, namespace=pg_namespace, create=False)
    assert manifest.get_meta("dim") == "16"
    manifest.close()
    store.close()
    _, folder = open_store(tmp_path / "s", namespace="team-a")
    assert isinstance(folder, Manifest) and (tmp_path / "s/namespaces/team-a").is_dir()
    folder.close()
