"""Smoke pass of ``bench/store_search.py``: it runs end to end and writes its table.

Timings are never asserted (STYLE.md); the full run is ``python -m bench.store_search``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_store_bench_writes_a_row_per_size(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "bench.store_search", "--sizes", "300,600", "--queries", "3",
           "--out", str(tmp_path)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    page = (tmp_path / "store.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| 300 ") or
            line.startswith("| 600 ")]  # fmt: skip
    assert len(rows) == 2 and all(line.count("|") == 10 for line in rows)
    assert "–" not in rows[0]  # every column measured (the index too, at this size)
