"""Bad documents become dead letters with their reason; the run finishes; good ones are in."""

from __future__ import annotations

from pathlib import Path

import pytest

from fissure.ingest import Options, ingest, open_source
from fissure.store import ChromaStore, Manifest
from tests.ingest.conftest import SETTINGS, run, snapshot, write_corpus
from tests.ingest.helpers import PLUGIN, HashEmbedder


def _mixed(root: Path) -> Path:
    write_corpus(root, n=3)
    (root / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << garbage \x00\x01\xff\xfe")
    (root / "noise.txt").write_bytes(bytes(range(256)) * 20)
    (root / "stuck.hang").write_text("this parser never returns")
    (root / "hog.boom").write_text("a memory hog parses this")
    return root


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, object]:
    root = _mixed(tmp_path_factory.mktemp("mixed") / "corpus")
    store = root.parent / "store"
    summary = run(root, store, timeout=3, memory_mb=1024)
    return root, store, summary


def test_the_run_finishes_and_says_what_failed(mixed: tuple[Path, Path, object]) -> None:
    root, store, summary = mixed
    reasons = {Path(f.source).name: (f.stage, f.error_type, f.message) for f in summary.failures}
    assert set(reasons) == {"broken.pdf", "noise.txt", "stuck.hang", "hog.boom"}
    assert reasons["broken.pdf"][0] == "parse" and "not a readable PDF" in reasons["broken.pdf"][2]
    assert "binary" in reasons["noise.txt"][2] or "no parser" in reasons["noise.txt"][2]
    assert reasons["stuck.hang"][1] == "Timeout" and "killed" in reasons["stuck.hang"][2]
    assert reasons["hog.boom"][1] == "WorkerDied" and "SIGABRT" in reasons["hog.boom"][2]
    assert summary.workers_replaced == 2
    assert summary.documents == 5 and summary.processed == 9


def test_every_failure_is_a_dead_letter(mixed: tuple[Path, Path, object]) -> None:
    root, store, summary = mixed
    manifest = Manifest(store)
    letters = manifest.failures()
    manifest.close()
    assert sorted(Path(f.source).name for f in letters) == [
        "broken.pdf", "hog.boom", "noise.txt", "stuck.hang"]  # fmt: skip
    assert all(f.message and f.time > 0 for f in letters)
    assert any("Traceback" in f.traceback for f in letters)


def test_good_documents_are_searchable(mixed: tuple[Path, Path, object]) -> None:
    root, store, _ = mixed
    chroma = ChromaStore(store / "chroma")
    for chunk_id, text, _ in list(chroma.items())[:5]:
        vector = HashEmbedder().embed([text])[0]
        hits = chroma.query(vector, k=1)
        assert hits[0].chunk_id == chunk_id and hits[0].score > 0.99
    code = str(root / "code.py")
    only = chroma.query(HashEmbedder().embed(["x"])[0], k=50, where={"source": code})
    assert len(only) == 1 and only[0].metadata["entity"] == "alpha"
    both = chroma.query(HashEmbedder().embed(["x"])[0], k=50, where={"source": code, "index": 0})
    assert [h.chunk_id for h in both] == [only[0].chunk_id]


def test_unchanged_failures_are_not_retried_until_asked(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "corpus", n=1)
    (root / "stuck.hang").write_text("x")
    store = tmp_path / "store"
    run(root, store, timeout=2)
    embedder = HashEmbedder()
    again = run(root, store, embedder, timeout=2)
    assert again.processed == 0 and embedder.calls == 0
    assert len(snapshot(store)["failures"]) == 1
    # The fix: the document becomes parseable; a forced retry clears its dead letter.
    (root / "stuck.hang").rename(root / "stuck.md")
    fixed = run(root, store)
    assert fixed.failures == [] and fixed.removed == 1 and snapshot(store)["failures"] == []


def test_retry_forces_failed_documents(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "corpus", n=1)
    (root / "stuck.hang").write_text("x")
    store = tmp_path / "store"
    run(root, store, timeout=2)
    options = Options(settings=SETTINGS, workers=1, timeout=2, plugins=(PLUGIN,))
    source = open_source(str(root))
    summary = ingest(source, store, HashEmbedder(), options, force={str(root / "stuck.hang")})
    assert summary.processed == 1 and summary.failures[0].error_type == "Timeout"
