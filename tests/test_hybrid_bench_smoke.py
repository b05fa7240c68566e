"""Smoke pass of the retrieval-mode benchmarks (``bench.hybrid``, ``bench.hybrid_costs``):
they run end to end on the code lookup with a model-free embedder. Nothing is timed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_hybrid_benchmarks_run_end_to_end(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")])}
    for module in ("bench.hybrid", "bench.hybrid_costs"):
        cmd = [sys.executable, "-m", module, "--smoke", "--embedder", "hashing",
               "--cache", str(tmp_path / "cache")]  # fmt: skip
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=280)  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        assert "| dense |" in done.stdout and "hybrid (" in done.stdout
