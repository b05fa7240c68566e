"""Smoke pass of ``bench/store_write.py``: it runs end to end and prints a row per variant.

Timings are never asserted (STYLE.md); the full run is ``python -m bench.store_write``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench.store_write import VARIANTS

ROOT = Path(__file__).resolve().parents[2]


def test_store_write_bench_prints_a_rate_per_variant() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-m", "bench.store_write", "--smoke"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")][1:]  # no header
    assert [row.split(" | ")[0][2:] for row in rows] == list(VARIANTS)
    for row in rows:
        rates = [float(cell) for cell in row.strip("| ").split(" | ")[1:]]
        assert len(rates) == 2 and all(rate > 0 for rate in rates), row
