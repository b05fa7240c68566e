"""bench/serve.py keeps working: a tiny run with the hashing embedder (its timings are not
checked, only that every measurement and end check is there and holds)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serve.server import ROOT


@pytest.mark.slow
def test_the_service_bench_runs_and_its_end_checks_hold(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "bench.serve", "--files", "12", "--clients", "3", "--max-kb",
           "8", "--embedder", "hashing", "--faults", "--out", str(tmp_path / "out"), "--work",
           str(tmp_path / "work")]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PATH": "/usr/bin:/bin",
                               "HF_HUB_OFFLINE": "1"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "out" / "serve.json").read_text())
    assert result["files"] == result["jobs"] == result["documents"] == result["done"] == 12
    assert result["searchable"] == 12 and result["not_found"] == 0
    assert result["chunks_by_jobs"] == result["stored_chunks"] == result["distinct_spans"]
    assert result["stored_chunks"] == result["ingest"]["chunks"]
    assert result["manifest_agrees"] and result["pending"] == 0
    assert [f["mode"] for f in result["faults"]] == ["server", "engine"]
    assert all(f["same_chunks_as_clean"] and f["done"] == 12 for f in result["faults"])
    report = (tmp_path / "out" / "serve.md").read_text()
    assert "accept latency p99" in report and "kill -9 during the same load" in report
