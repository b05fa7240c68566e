"""Smoke pass of the benchmark harness: it runs end to end and writes well-formed results.

Timing is never asserted (STYLE.md: a benchmark is not a timed unit test). The harness runs
as a child process, as a user would run it, so its one-thread environment settings do not
leak into this test session.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_quick_run_writes_well_formed_rows(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "bench.run", "--quick", "--repeats", "1", "--out", str(tmp_path)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=110)
    assert done.returncode == 0, done.stderr[-3000:]

    results = json.loads((tmp_path / "chunking.json").read_text(encoding="utf-8"))
    assert results["meta"]["command"].startswith("python -m bench.run --quick")
    assert [c["name"] for c in results["corpora"]] == ["stdlib", "prose"]
    for corpus in results["corpora"]:
        assert 0.05 < corpus["mb"] <= 0.25
        rows = {(r["group"], r["system"]): r for r in corpus["rows"]}
        peers = [
            ("chars", "langchain recursive"),
            ("tokens", "langchain token"),
            ("minilm", "langchain sentence-transformers"),
        ]
        for peer in peers:
            assert rows[peer]["error"] is None, rows[peer]["error"]
            assert rows[peer]["ratio"] == pytest.approx(1.0)
        for row in rows.values():
            if row["error"] is not None:
                continue  # a peer that cannot run offline is reported as skipped
            assert len(row["wall_s"]) == 1
            assert row["mb_per_s"] > 0
            assert row["ratio"] is not None
            if row["system"] not in ("tiktoken encode_ordinary", "tokenizers encode"):
                quality = row["quality"]
                assert quality["chunks"] > 0
                assert quality["max_size"] > 0
        fissure = [r for r in rows.values() if r["system"].startswith("fissure")]
        assert fissure and all(r["error"] is None for r in fissure)

    page = (tmp_path / "chunking.md").read_text(encoding="utf-8")
    assert "| system | MB/s |" in page
    assert page.count("### Budget") == 6  # three budgets, two corpora
