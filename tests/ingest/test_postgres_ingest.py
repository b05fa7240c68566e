"""Ingesting into PostgreSQL: the same store as the embedded one, incremental and
crash-safe, and two runs writing the same database at once lose nothing and duplicate
nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tests.ingest.conftest import (
    SETTINGS,
    assert_same_store,
    pg_rows,
    run,
    snapshot,
    vectors_of,
    write_corpus,
)
from tests.ingest.helpers import HashEmbedder

pytest.importorskip("psycopg")
ROOT = Path(__file__).resolve().parents[2]
SUB = replace(SETTINGS, sub_vector_tokens=12)
SCRIPT = """
import sys
from tests.ingest.conftest import run
from tests.ingest.helpers import HashEmbedder
print("go", flush=True)
run(sys.argv[1], sys.argv[2], HashEmbedder(delay=float(sys.argv[4])), namespace=sys.argv[3],
    batch_chunks=6)
"""


def _start(corpus: Path, dsn: str, namespace: str, delay: float) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")])}
    process = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(corpus), dsn, namespace, str(delay)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None and process.stdout.readline() == b"go\n"
    return process


def _same_vectors(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert set(got) == set(want)
    worst = max(float(np.abs(got[i] - want[i]).max()) for i in want)
    assert worst <= 1e-5, worst


def test_postgres_store_equals_the_embedded_one(
    tmp_path: Path, pg_dsn: str, pg_namespace: str
) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    (corpus / "stuck.hang").write_text("never parsed")
    folder = tmp_path / "store"
    first = run(corpus, pg_dsn, namespace=pg_namespace, settings=SUB, timeout=3)
    run(corpus, folder, settings=SUB, timeout=3)
    assert first.processed == 9 and [f.error_type for f in first.failures] == ["Timeout"]
    assert_same_store(snapshot(pg_dsn, pg_namespace), snapshot(folder))
    _same_vectors(vectors_of(pg_dsn, pg_namespace), vectors_of(folder))
    # Incremental: one changed, one gone, one new; settings unchanged.
    (corpus / "doc1.md").write_text("# Changed\n\n" + "fresh words " * 60)
    (corpus / "doc2.md").unlink()
    (corpus / "new.md").write_text("# New\n\n" + "new words here " * 30)
    embedder = HashEmbedder()
    again = run(corpus, pg_dsn, embedder, namespace=pg_namespace, settings=SUB, timeout=3)
    assert (again.processed, again.removed, again.unchanged) == (2, 1, 7)  # the hang stays
    run(corpus, folder, settings=SUB, timeout=3)
    assert_same_store(snapshot(pg_dsn, pg_namespace), snapshot(folder))
    assert again.documents == 8 and again.corpus_chunks == len(snapshot(folder)["chunks"])


@pytest.mark.slow
def test_two_runs_at_once_and_a_killed_one(tmp_path: Path, pg_dsn: str, pg_namespace: str) -> None:
    corpus = write_corpus(tmp_path / "corpus", n=16)
    # Two runs of the same corpus at once: each writes every document, in the same order,
    # so they meet on every one of them.
    both = [_start(corpus, pg_dsn, pg_namespace, 0.05) for _ in range(2)]
    for process in both:
        assert process.wait(180) == 0, process.stderr.read().decode() if process.stderr else ""
    fresh = tmp_path / "fresh"
    run(corpus, fresh)
    want = snapshot(fresh)
    got = snapshot(pg_dsn, pg_namespace)
    assert_same_store(got, want)
    # Now change the corpus and kill a run in the middle of writing, while another starts.
    for i in range(4, 12):
        (corpus / f"doc{i}.md").write_text(f"# Rewritten {i}\n\n" + "changed " * 80)
    before = pg_rows(pg_dsn, "documents", pg_namespace)
    victim = _start(corpus, pg_dsn, pg_namespace, 0.3)
    deadline = time.monotonic() + 120
    while pg_rows(pg_dsn, "pending", pg_namespace) == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.4)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert pg_rows(pg_dsn, "pending", pg_namespace) > 0, "the kill did not land mid-write"
    assert pg_rows(pg_dsn, "documents", pg_namespace) == before
    survivor = _start(corpus, pg_dsn, pg_namespace, 0.0)
    assert survivor.wait(180) == 0, survivor.stderr.read().decode() if survivor.stderr else ""
    fresh2 = tmp_path / "fresh2"
    run(corpus, fresh2)
    assert_same_store(snapshot(pg_dsn, pg_namespace), snapshot(fresh2))
