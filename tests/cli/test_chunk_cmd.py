"""``fissure chunk``: JSONL that slices back exactly, tables, and clean errors."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fissure.cli import app

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
runner = CliRunner()


def _check_jsonl(output: str) -> list[dict]:
    rows = [json.loads(line) for line in output.splitlines() if line.strip()]
    cache: dict[str, str] = {}
    for row in rows:
        for key in (
            "source",
            "doc_id",
            "chunk_id",
            "index",
            "start",
            "end",
            "lines",
            "text",
            "n_tokens",
            "headings",
            "entity",
            "strategy",
            "metadata",
        ):
            assert key in row
        if row["source"] not in cache:
            raw = Path(row["source"]).read_bytes()
            cache[row["source"]] = raw.decode("utf-8-sig")
        assert cache[row["source"]][row["start"] : row["end"]] == row["text"]
    return rows


def test_jsonl_slices_back_from_the_files():
    result = runner.invoke(app, ["chunk", str(SAMPLES), "--max-tokens", "64"])
    assert result.exit_code == 0, result.output
    rows = _check_jsonl(result.stdout)
    assert {Path(r["source"]).name for r in rows} == {p.name for p in SAMPLES.iterdir()}
    assert max(r["n_tokens"] for r in rows) <= 64


def test_table_prints_stats(tmp_path):
    out = tmp_path / "table.txt"
    result = runner.invoke(app, ["chunk", str(SAMPLES), "-f", "table", "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "chunks" in text and "median" in text and "3 documents" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["chunk", "does-not-exist"], "no such file"),
        (["chunk", str(SAMPLES), "--strategy", "magic"], "unknown strategy"),
        (["chunk", str(SAMPLES), "--overlap-tokens", "999"], "overlap_tokens"),
        (["chunk", str(SAMPLES), "--format", "xml"], "unknown --format"),
        (["chunk", str(SAMPLES), "--tokenizer", "nope"], "unknown tokenizer"),
    ],
)
def test_errors_exit_nonzero_with_one_line(args, message):
    proc = subprocess.run(
        [sys.executable, "-m", "fissure", *args], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_binary_files_in_a_folder_are_skipped_with_a_reason(tmp_path):
    (tmp_path / "ok.txt").write_text("Fine text.\n")
    (tmp_path / "blob.md").write_bytes(b"\x00\x01\x02binary\xff")
    result = runner.invoke(app, ["chunk", str(tmp_path)])
    assert result.exit_code == 0
    assert "skipped" in result.stderr and "blob.md" in result.stderr
    assert len(_check_jsonl(result.stdout)) == 1


@pytest.mark.slow
def test_python_stdlib_jsonl_slices_back_exactly(tmp_path):
    """The whole standard library of this Python, chunked to JSONL, every line exact."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    out = tmp_path / "stdlib.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "fissure",
            "chunk",
            str(stdlib / "json"),
            str(stdlib / "email"),
            str(stdlib / "asyncio"),
            "-t",
            "cl100k_base",
            "--max-tokens",
            "512",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    rows = _check_jsonl(out.read_text(encoding="utf-8"))
    assert len(rows) > 300
    assert max(r["n_tokens"] for r in rows) <= 512


def test_timeout_holds_for_small_text_files(tmp_path):
    """A 200 KB script whose syntax-tree query runs for minutes (compiled code that no
    in-process deadline can interrupt) is ended at --timeout like any other document, and
    the folder's good file is still chunked."""
    (tmp_path / "good.md").write_text("# Title\n\nA paragraph of plain text.\n")
    (tmp_path / "nested.js").write_text("var x = " + "[" * 200_000)
    started = time.monotonic()
    command = ["chunk", str(tmp_path), "--timeout", "3", "--timeout-per-mb", "0"]
    proc = subprocess.run(
        [sys.executable, "-m", "fissure", *command], capture_output=True, text=True, timeout=120
    )
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert took < 45, f"--timeout 3 took {took:.0f} s"
    assert "skipped" in proc.stderr and "nested.js" in proc.stderr
    assert "took longer than 3 s" in proc.stderr
    assert {Path(r["source"]).name for r in _check_jsonl(proc.stdout)} == {"good.md"}
