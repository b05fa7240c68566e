"""Output for scripts: ``query --json`` / ``--queries``, ``status --json``, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fissure.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("scriptable")
    docs = root / "docs"
    docs.mkdir()
    (docs / "bread.md").write_text(
        "# Bread\n\n## Dough\n\nKnead the dough and let it rise.\n\n## Baking\n\n"
        "Bake the loaf in a hot oven until the crust is brown.\n"
    )
    (docs / "rocks.txt").write_text("Granite is an igneous rock.\n\nShale is sedimentary.\n")
    (docs / "code.py").write_text("def knead(dough):\n    return dough * 2\n")
    out = runner.invoke(app, ["ingest", str(docs), "--store", str(root / "s"), "--embedder",
                              "hashing", "--workers", "1", "--max-tokens", "12"])  # fmt: skip
    assert out.exit_code == 0, out.output
    return docs, root / "s"


def _lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def test_query_json_hits_point_into_their_documents(store: tuple[Path, Path]) -> None:
    docs, s = store
    out = runner.invoke(app, ["query", "bake the loaf in the oven", "-k", "3", "--store", str(s),
                              "--json"])  # fmt: skip
    assert out.exit_code == 0, out.output
    (answer,) = _lines(out.stdout)
    assert answer["query"] == "bake the loaf in the oven"
    hits = answer["hits"]
    assert [h["rank"] for h in hits] == [1, 2, 3]
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    for h in hits:
        text = Path(h["source"]).read_text()
        assert text[h["start"] : h["end"]] == h["text"]
        first, last = h["lines"]
        assert first == text.count("\n", 0, h["start"]) + 1
        assert last == text.count("\n", 0, h["end"] - 1) + 1
    top = hits[0]
    assert top["source"].endswith("bread.md") and top["headings"] == ["Bread", "Baking"]


def test_queries_file_gives_one_line_per_query_in_order(
    store: tuple[Path, Path], tmp_path: Path
) -> None:
    _, s = store
    asked = ["knead the dough", "igneous rock", "return dough"]
    file = tmp_path / "q.txt"
    file.write_text(f"{asked[0]}\n\n  {asked[1]}  \n{asked[2]}\n")
    out = runner.invoke(app, ["query", "--queries", str(file), "-k", "2", "--store", str(s)])
    assert out.exit_code == 0, out.output
    answers = _lines(out.stdout)
    assert [a["query"] for a in answers] == asked
    for question, answer in zip(asked, answers, strict=True):
        alone = runner.invoke(app, ["query", question, "-k", "2", "--store", str(s), "--json"])
        assert _lines(alone.stdout) == [answer]  # batch and single queries agree
    piped = runner.invoke(app, ["query", "--queries", "-", "-k", "2", "--store", str(s)],
                          input="\n".join(asked) + "\n")  # fmt: skip
    assert _lines(piped.stdout) == answers


def test_status_json_counts(store: tuple[Path, Path]) -> None:
    _, s = store
    out = runner.invoke(app, ["status", "--store", str(s), "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["dim"] == 256 and report["dead_letters"] == 0 and report["pending"] == 0
    (source,) = report["sources"]
    assert source["documents"] == 3 and source["failed"] == 0
    assert source["settings"]["max_tokens"] == 12 and source["embedder"] == "hashing"
    assert source["chunks"] >= 4 and source["tokens"]["max"] <= 12


def test_exit_codes(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nwords here\n")
    (docs / "noise.txt").write_bytes(bytes(range(256)) * 4)
    args = ["ingest", str(docs), "--store", str(tmp_path / "s"), "--embedder", "hashing",
            "--workers", "1"]  # fmt: skip
    assert runner.invoke(app, args).exit_code == 1  # done, with a dead letter
    assert runner.invoke(app, args).exit_code == 0  # nothing new failed
    s = str(tmp_path / "s")
    report = json.loads(runner.invoke(app, ["status", "--store", s, "--json"]).stdout)
    assert report["dead_letters"] == 1 and report["sources"][0]["failed"] == 1
    for bad in (["query", "--store", s], ["query", "x", "--queries", "-", "--store", s],
                ["query", "x", "--store", str(tmp_path / "none"), "--json"],
                ["status", "--store", str(tmp_path / "none"), "--json"]):  # fmt: skip
        out = runner.invoke(app, bad)
        assert out.exit_code == 2 and "error:" in out.output, (bad, out.output)
    for command in ("ingest", "query", "status"):
        assert "Exit status" in runner.invoke(app, [command, "--help"]).output
