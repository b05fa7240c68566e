"""Smoke passes of the two hostile-input benches: they run end to end and write their tables.

``bench/hostile.py`` on two cases and ``bench/fuzz.py`` on two dozen inputs, as a user
would run them (child processes); nothing about time is asserted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=280)  # fmt: skip


@pytest.mark.timeout(300)
def test_hostile_bench_writes_its_table(tmp_path: Path) -> None:
    out = tmp_path / "hostile.md"
    done = _bench("bench.hostile", "--only", "deep_json", "docx_bomb", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line for line in out.read_text().splitlines() if line.startswith("| ")]
    names = [row.split("|")[1].strip() for row in rows[1:]]
    assert names == ["deep_json", "docx_bomb"], rows
    assert "inflates past" in rows[2] and rows[2].rstrip().endswith("| yes |")


@pytest.mark.timeout(300)
def test_fuzz_bench_writes_its_table(tmp_path: Path) -> None:
    out = tmp_path / "fuzz.md"
    done = _bench("bench.fuzz", "--inputs", "24", "--out", str(out), "--only", "json", "csv",
                  "--keep", str(tmp_path / "found"))  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    text = out.read_text()
    assert "| json | 12 |" in text and "| csv | 12 |" in text and "| **all** | **24** |" in text
