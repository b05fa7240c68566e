"""Re-runs embed only what changed, and always end with the store a fresh run would build."""

from __future__ import annotations

from pathlib import Path

from fissure.config import ChunkSettings
from tests.ingest.conftest import assert_same_store, run, snapshot
from tests.ingest.helpers import HashEmbedder


def test_first_run_stores_every_chunk(corpus: Path, tmp_path: Path) -> None:
    embedder = HashEmbedder()
    summary = run(corpus, tmp_path / "store", embedder)
    assert summary.failures == []
    assert summary.processed == summary.listed == 8
    state = snapshot(tmp_path / "store")
    assert len(state["chunks"]) == summary.chunks == summary.corpus_chunks > 8
    assert embedder.texts == summary.chunks
    assert all(src.startswith(str(corpus)) for src, *_ in state["chunks"].values())


def test_incremental_runs_match_a_fresh_ingest(corpus: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    run(corpus, store)

    embedder = HashEmbedder()
    again = run(corpus, store, embedder)
    assert embedder.calls == 0 and again.unchanged == 8 and again.processed == 0

    (corpus / "doc1.md").write_text("# Changed\n\n" + "fresh words " * 60)
    (corpus / "doc2.md").unlink()
    (corpus / "new.md").write_text("# New\n\n" + "new words here " * 30)
    embedder = HashEmbedder()
    changed = run(corpus, store, embedder)
    assert (changed.processed, changed.removed, changed.unchanged) == (2, 1, 6)
    fresh = tmp_path / "fresh"
    run(corpus, fresh)
    assert_same_store(snapshot(store), snapshot(fresh))
    assert embedder.texts == sum(1 for s, *_ in snapshot(fresh)["chunks"].values()
                                 if s.endswith(("doc1.md", "new.md")))  # fmt: skip


def test_changed_settings_rechunk_everything(corpus: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    run(corpus, store)
    other = ChunkSettings(tokenizer="words", max_tokens=25)
    summary = run(corpus, store, settings=other)
    assert summary.processed == 8 and summary.unchanged == 0
    fresh = tmp_path / "fresh"
    run(corpus, fresh, settings=other)
    assert_same_store(snapshot(store), snapshot(fresh))
    summary = run(corpus, store, HashEmbedder(model_id="another-model"), settings=other)
    assert summary.processed == 8


def test_export_writes_this_runs_chunks(corpus: Path, tmp_path: Path) -> None:
    import io
    import json

    from fissure.ingest import Options, ingest, open_source
    from tests.ingest.conftest import SETTINGS

    stream = io.StringIO()
    summary = ingest(open_source(str(corpus)), tmp_path / "store", HashEmbedder(),
                     Options(settings=SETTINGS, workers=1), export=stream)  # fmt: skip
    rows = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert len(rows) == summary.chunks
    assert {r["chunk_id"] for r in rows} == set(snapshot(tmp_path / "store")["chunks"])
