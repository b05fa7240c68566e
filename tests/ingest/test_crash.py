"""A run killed with SIGKILL at any moment, then re-run, ends with exactly the store of an
uninterrupted run: the same chunk ids, no duplicates, nothing missing."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ingest.conftest import assert_same_store, run, snapshot, write_corpus

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import sys
from tests.ingest.conftest import run
print("go", flush=True)
from tests.ingest.helpers import HashEmbedder
run(sys.argv[1], __import__("pathlib").Path(sys.argv[2]), HashEmbedder(delay=0.15),
    batch_chunks=6)
"""


def _start(corpus: Path, store: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")])}
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(corpus), str(store)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def _documents(store: Path, since: float) -> int:
    """Documents committed since ``since`` (wall-clock time)."""
    try:
        conn = sqlite3.connect(f"file:{store / 'manifest.sqlite3'}?mode=ro", uri=True)
        try:
            sql = "SELECT count(*) FROM documents WHERE updated >= ?"
            return int(conn.execute(sql, (since,)).fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def _kill(corpus: Path, store: Path, after: float, docs: int = 0) -> bool:
    """Start a run and SIGKILL it once it has committed ``docs`` documents and ``after``
    more seconds have passed; True if it was still running then."""
    since = time.time()
    process = _start(corpus, store)
    assert process.stdout is not None and process.stdout.readline() == b"go\n"
    while docs and _documents(store, since) < docs and process.poll() is None:
        time.sleep(0.01)
    try:
        process.wait(after)
        return False
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait()
        return True


@pytest.mark.slow
def test_sigkill_at_random_moments_then_rerun(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", n=30)
    store = tmp_path / "store"
    rng = random.Random(int(os.environ.get("FISSURE_CRASH_SEED", "7")))
    done = _start(corpus, tmp_path / "timing")  # how long one uninterrupted run takes here
    assert done.stdout is not None and done.stdout.readline() == b"go\n"
    started = time.monotonic()
    assert done.wait(120) == 0, done.stderr.read().decode() if done.stderr else ""
    span = time.monotonic() - started
    # Kills at random times, and kills at random delays after the run has committed a
    # random number of documents (so that some surely land in the middle of writing).
    plan = [(rng.uniform(0, 0.3), rng.randint(2, 10)), (rng.uniform(0.05, 0.9) * span, 0),
            (rng.uniform(0, 0.3), rng.randint(2, 8)), (rng.uniform(0, 0.3), rng.randint(2, 8)),
            (rng.uniform(0.05, 0.6) * span, 0)]  # fmt: skip
    killed, partial = 0, []
    for attempt, (after, docs) in enumerate(plan):
        if attempt == 3:  # change the corpus under a half-finished store
            for i in range(3, 15):
                (corpus / f"doc{i}.md").write_text(f"# Rewritten {i}\n\n" + "changed " * 80)
            (corpus / "doc2.md").unlink()
            write_corpus(corpus / "more", n=4)
        killed += _kill(corpus, store, after, docs)
        state = snapshot(store) if (store / "manifest.sqlite3").exists() else None
        partial.append((len(state["documents"]), len(state["pending"])) if state else (0, 0))
    assert killed >= 3, f"the runs finished before they could be killed: {partial}"
    assert any(pending for _, pending in partial) or any(0 < d < 32 for d, _ in partial), (
        f"no kill landed mid-run: {partial}"
    )
    final = _start(corpus, store)
    assert final.wait(120) == 0, final.stderr.read().decode() if final.stderr else ""
    fresh = tmp_path / "fresh"
    run(corpus, fresh)
    got, want = snapshot(store), snapshot(fresh)
    assert_same_store(got, want)
    assert len(got["chunks"]) == sum(n for _, n in want["documents"].values())
