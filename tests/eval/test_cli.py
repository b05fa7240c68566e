"""``fissure eval`` as a command: a local Typer app around the command function."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from fissure.cli.eval import eval_

app = typer.Typer()
app.command()(eval_)


def test_eval_command_writes_reports(chroma_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, [
        str(chroma_dir), "--strategies", "tokentext:12,structural:12+min=3,hybrid:12+atom=4",
        "--embedder", "hashing", "-k", "3", "--budget-tokens", "30", "-o", str(out),
        "--cache-dir", str(tmp_path / "cache"),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads((out / "eval.json").read_text())
    names = [r["strategy"] for r in payload["results"]]
    assert names == ["tokentext:12", "structural:12+min=3", "hybrid:12+atom=4"]
    assert (out / "eval.md").is_file() and (out / "eval.png").is_file()


def test_eval_command_errors_are_one_line(chroma_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, [str(chroma_dir), "-s", "nope:5", "--embedder", "hashing",
                              "-o", str(tmp_path / "o"), "--no-cache"])  # fmt: skip
    assert bad.exit_code == 2 and "unknown strategy" in bad.output
    assert "Traceback" not in bad.output
    empty = runner.invoke(app, [str(chroma_dir), "-s", " , ", "--embedder", "hashing"])
    assert empty.exit_code == 2 and "no strategy" in empty.output


def test_eval_command_scores_one_half_of_the_questions(chroma_dir: Path, tmp_path: Path) -> None:
    counts = {}
    for half in ("all", "even", "odd"):
        out = tmp_path / half
        result = CliRunner().invoke(app, [
            str(chroma_dir), "-s", "tokentext:12", "--embedder", "hashing", "-o", str(out),
            "--no-cache", "--questions", half,
        ])  # fmt: skip
        assert result.exit_code == 0, result.output
        counts[half] = json.loads((out / "eval.json").read_text())["meta"]["questions"]
    assert isinstance(counts["all"], int) and counts["all"] >= 2
    even, odd = (int(str(counts[h]).split()[0]) for h in ("even", "odd"))
    assert even + odd == counts["all"] and "even rows" in str(counts["even"])
    bad = CliRunner().invoke(app, [str(chroma_dir), "-s", "tokentext:12", "--embedder",
                                   "hashing", "--no-cache", "--questions", "first"])  # fmt: skip
    assert bad.exit_code == 2 and "even or odd" in bad.output and "Traceback" not in bad.output
