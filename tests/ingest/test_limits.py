"""The per-document limits in the worker pool and in-process: named, bounded, proportional.

A breach of the memory cap is a dead letter reading ``memory limit (N MiB, --memory-mb)``,
not ``MemoryError:``; the time budget grows with the document (``timeout_per_mb``) and does
not count a worker's start-up or its embedding; a worker that cannot start says why once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fissure import Chunker
from fissure.errors import LimitError
from fissure.ingest import workers
from fissure.ingest.workers import Task, WorkerPool
from fissure.limits import Limits
from tests.ingest.conftest import SETTINGS, run, write_corpus
from tests.ingest.helpers import PLUGIN


def test_a_memory_breach_is_a_named_dead_letter(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "corpus", n=1)
    (root / "eats.hog").write_text("allocates until the cap")
    summary = run(root, tmp_path / "store", memory_mb=1024)
    (failure,) = summary.failures
    assert failure.error_type == "LimitError"
    assert "memory limit (1024 MiB, --memory-mb)" in failure.message
    assert summary.documents == 3 and summary.workers_replaced == 0


def _one(pool: WorkerPool, name: str, data: bytes) -> workers.Outcome:
    return next(iter(pool.run([Task(name, data)])))


def test_the_time_budget_grows_per_mb_and_the_message_names_both_flags() -> None:
    big = b"x" * 1_000_000
    with WorkerPool(SETTINGS, workers=1, timeout=1, timeout_per_mb=0, plugins=(PLUGIN,)) as pool:
        late = _one(pool, "late.slow", big)
    assert late.error_type == "Timeout" and "--timeout" in late.message
    with WorkerPool(SETTINGS, workers=1, timeout=1, timeout_per_mb=10, plugins=(PLUGIN,)) as pool:
        fine = _one(pool, "fine.slow", big)  # 1 s + 10 s for its 1 MB
    assert not fine.failed, fine.message
    assert "--timeout-per-mb" in WorkerPool(SETTINGS, timeout=1)._late(
        workers._Slot(None, None), Task("x", big)
    )  # type: ignore[arg-type]


def test_embedding_and_start_up_do_not_count_against_the_deadline() -> None:
    slot = workers._Slot(None, None)  # type: ignore[arg-type]
    slot.begin(Task("x", b""), budget=10)
    assert slot.due() == workers.BOOT_S + slot.spawned  # still starting: its own allowance
    slot.booted(now=100.0)
    assert slot.due() == 110.0
    workers._embedding(slot, True, now=104.0)
    assert slot.due() == float("inf")
    workers._embedding(slot, False, now=134.0)
    assert slot.due() == 140.0 and slot.embedded == 30.0


def test_a_worker_that_cannot_start_is_one_clear_error(tmp_path: Path) -> None:
    pdf = Path(__file__).resolve().parents[1] / "corpus" / "pdf" / "report.pdf"
    done = subprocess.run(
        [sys.executable, "-m", "fissure", "chunk", str(pdf), "-o", str(tmp_path / "o.jsonl")],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "FISSURE_PLUGINS": "no_such_plugin_module"},
    )  # fmt: skip
    assert done.returncode == 2
    assert "the parsing workers cannot start" in done.stderr and "no_such_plugin" in done.stderr
    assert "Traceback" not in done.stderr


def test_in_process_the_cap_raises_a_limit_error_and_is_lifted_after(tmp_path: Path) -> None:
    import tests.ingest.helpers  # noqa: F401  registers .hog in this process

    path = tmp_path / "eats.hog"
    path.write_text("allocates")
    chunker = Chunker(SETTINGS, limits=Limits(memory_mb=256))
    with pytest.raises(LimitError, match=r"memory limit \(256 MiB, Limits\(memory_mb=…\)\)"):
        chunker.chunk_file(path)
    assert len(bytearray(512 * 1024 * 1024)) > 0  # the cap is gone again
    assert chunker.chunk("still works")[0].text == "still works"
