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
           "8", "--embedder", "hashing", "--faults", "--rates", "40", "--out",
           str(tmp_path / "out"), "--work", str(tmp_path / "work")]  # fmt: skip
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
    (paced,) = result["open_loop"]
    assert paced["rate"] == 40 and paced["refused"] == 0
    assert 0 < paced["p50_ms"] <= paced["p99_ms"] <= paced["max_ms"]
    assert paced["seconds"] >= 12 / 40 * 0.3  # the uploads were paced, not sent at once
    assert all(f["same_chunks_as_clean"] and f["done"] == 12 for f in result["faults"])
    report = (tmp_path / "out" / "serve.md").read_text()
    assert "accept latency p99" in report and "kill -9 during the same load" in report
    assert "| 40 | " in report  # the open-loop row


@pytest.mark.slow
def test_the_postgres_service_bench_runs(tmp_path: Path) -> None:
    """bench/serve_pg.py keeps working: one and two service processes on PostgreSQL, every
    job done (its timings are not checked)."""
    pytest.importorskip("psycopg_pool")
    cmd = [sys.executable, "-m", "bench.serve_pg", "--smoke", "--out", str(tmp_path)]
    path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # runuser, for the server
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PATH": path,
                               "HF_HUB_OFFLINE": "1"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads((tmp_path / "serve-pg.json").read_text())["rows"]
    assert [r["processes"] for r in rows] == [1, 2]
    assert all(r["done"] == r["jobs"] == 30 and r["failed"] == 0 for r in rows)
    assert "| hashing | 2 | 30 | 30 | 0 |" in (tmp_path / "serve-pg.md").read_text()
