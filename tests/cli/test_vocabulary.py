"""One vocabulary across the CLI (docs/cli.md): ``--json`` on every command that prints
results, help labels without ``<bool>``, flags named as flags, one ``error:`` style, and
scores that say what they are with a relevance within 0..1."""

from __future__ import annotations

import ast
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from fissure.cli import app
from fissure.cli.output import KEYWORD_FLAGS
from fissure.embed.load import SPECS, resolve

SRC = Path(__file__).resolve().parents[2] / "src" / "fissure"
SAMPLES = Path(__file__).resolve().parents[2] / "samples"
runner = CliRunner()
WIDE = {"COLUMNS": "400", "TERMINAL_WIDTH": "400"}
# The commands that print no results, so have no --json; each with why.
NO_RESULTS = {
    ("serve",): "a long-running HTTP service: its log goes to stderr, its answers over HTTP",
    ("embed-serve",): "a long-running HTTP service, as serve",
}
KEYWORD = re.compile(r"\b[a-z_]\w*=(?:True|False)\b")
JSON_FLAG = re.compile(r"(?<![\w-])--json(?![\w-])")


def _walk(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _walk(sub, (*path, name))
    return found


COMMANDS = _walk(typer.main.get_command(app))
LEAVES = [path for path, command in COMMANDS if not getattr(command, "commands", None)]


@cache
def _help(path: tuple[str, ...]) -> str:
    result = runner.invoke(app, [*path, "--help"], env=WIDE)
    assert result.exit_code == 0, (path, result.output)
    return result.output


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "fissure")
def test_every_help_speaks_the_vocabulary(path: tuple[str, ...]) -> None:
    text = _help(path)
    assert "<bool>" not in text, f"fissure {' '.join(path)} --help labels a flag <bool>"
    repeatable = [line for line in text.splitlines() if re.match(r"\W*--\S+\s+<list\[", line)]
    assert not repeatable, repeatable  # a repeatable option is "<str>..."
    assert not KEYWORD.findall(text), f"a Python keyword in fissure {' '.join(path)} --help"
    usage = next(line for line in text.splitlines() if "Usage:" in line)
    arguments = re.findall(r"[{\[]([^\]}]+)[}\]]", usage.split("[OPTIONS]", 1)[-1])
    assert all(a == a.upper() for a in arguments), usage  # arguments are named in capitals


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_every_command_that_prints_results_has_json(path: tuple[str, ...]) -> None:
    if path in NO_RESULTS:
        assert not JSON_FLAG.search(_help(path)), f"{path} has --json: drop it from NO_RESULTS"
    else:
        assert JSON_FLAG.search(_help(path)), f"fissure {' '.join(path)} has no --json"


def test_the_allow_list_names_real_commands() -> None:
    assert set(NO_RESULTS) <= set(LEAVES) and all(NO_RESULTS.values())


def test_library_messages_name_flags_not_keywords() -> None:
    """Every ``x=True`` in a message the library raises is translated into its flag."""
    said = set()
    for file in SRC.rglob("*.py"):
        if "cli" in file.relative_to(SRC).parts:
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                for part in ast.walk(node.exc):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        said |= set(KEYWORD.findall(part.value))
    assert said <= set(KEYWORD_FLAGS), f"translate {sorted(said - set(KEYWORD_FLAGS))}"
    assert "overwrite=True" in said  # the scan sees the one there is


def test_a_keyword_in_a_library_message_is_said_as_its_flag(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    out = runner.invoke(app, ["models", "distill", "--out", str(tmp_path)])
    assert out.exit_code == 2
    assert out.stderr.startswith("error: ") and "pass --overwrite to rebuild" in out.stderr
    assert "overwrite=True" not in out.output


# The parser's own errors (an unknown option or command, a missing argument, a bad value)
# also say where to look: "(see fissure CMD --help)"; "see" is the command's path here.


@pytest.mark.parametrize(
    ("args", "code", "says", "see"),
    [
        (["tune", "--nope"], 2, "error: no such option: --nope", "fissure tune"),
        (["tune"], 2, "error: missing argument 'PATH'", "fissure tune"),
        (["tune", str(SAMPLES), "--metric", "x"], 2, "error: --metric 'x': use recall or iou",
         None),
        (["tune", str(SAMPLES)], 2, "error: samples: no questions to tune on", None),
        (["query", "x", "-k", "many"], 2, "error: invalid value for '-k'", "fissure query"),
        (["chunk", "no-such-file", "--json"], 2, "error: no such file or folder", None),
        (["chunk", str(SAMPLES), "--json", "--format", "table"], 2, "error: --json prints",
         None),
        (["nothing-here"], 2, "error: no such command 'nothing-here'", "fissure"),
    ],
)  # fmt: skip
def test_one_error_style(args: list[str], code: int, says: str, see: str | None) -> None:
    out = runner.invoke(app, args, env=WIDE)
    assert out.exit_code == code, out.output
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert out.stderr.replace(str(SAMPLES.parent) + "/", "").startswith(says), out.stderr
    assert "Error" not in out.stderr and "╭" not in out.stderr and "Traceback" not in out.stderr
    hint = re.search(r"\(see (.+) --help\)$", out.stderr.rstrip())
    assert (hint.group(1) if hint else None) == see, out.stderr


def test_chunk_json_lines_slice_back_exactly() -> None:
    file = SAMPLES / "fault-lines.md"
    out = runner.invoke(app, ["chunk", str(file), "--json", "--max-tokens", "40", "--no-config"])
    assert out.exit_code == 0, out.output
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    text = file.read_text(encoding="utf-8")
    assert len(rows) > 1 and [r["index"] for r in rows] == list(range(len(rows)))
    assert all(text[r["start"] : r["end"]] == r["text"] for r in rows)
    assert all(r["n_tokens"] <= 40 for r in rows)
    same = runner.invoke(app, ["chunk", str(file), "--format", "jsonl", "--max-tokens", "40",
                               "--no-config"])  # fmt: skip
    assert same.stdout == out.stdout  # --format jsonl is the old spelling of --json


def test_models_list_json() -> None:
    out = runner.invoke(app, ["models", "list", "--json", "--no-config"])
    assert out.exit_code == 0, out.output
    listed = json.loads(out.stdout)
    assert [e["spec"] for e in listed["embedders"]] == list(SPECS)
    assert set(listed["defaults"]) == {"ingest.embedder", "chunk.embedder", "query.embedder"}
    by_spec = {e["spec"]: e for e in listed["embedders"]}
    assert by_spec["hashing"]["ready"] and by_spec["hashing"]["lacks"] is None
    # One default for the stored vectors and the semantic cuts: this machine's fastest MiniLM.
    auto = by_spec[listed["defaults"]["ingest.embedder"]]
    assert auto["spec"] == "minilm:auto"
    assert auto["default_for"] == ["ingest.embedder", "chunk.embedder"]
    assert auto["about"].endswith(f"here: {resolve('minilm:auto')}")
    for entry in listed["embedders"]:
        assert entry["ready"] == (entry["lacks"] is None) and entry["about"]
    text = runner.invoke(app, ["models", "list", "--no-config"])
    assert text.exit_code == 0 and "hashing" in text.stdout and "ready" in text.stdout


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("vocabulary")
    docs = root / "docs"
    docs.mkdir()
    (docs / "bread.md").write_text(
        "# Bread\n\n## Dough\n\nKnead the dough and let it rise.\n\n## Baking\n\n"
        "Bake the loaf in a hot oven until the crust is brown.\n"
    )
    (docs / "rocks.txt").write_text("Granite is an igneous rock.\n\nShale is sedimentary.\n")
    (docs / "noise.txt").write_bytes(bytes(range(256)) * 4)  # a dead letter
    out = runner.invoke(app, ["ingest", str(docs), "--store", str(root / "s"), "--embedder",
                              "hashing", "--workers", "1", "--max-tokens", "12", "--no-config",
                              "--json"])  # fmt: skip
    assert out.exit_code == 1, out.output  # done, with a dead letter
    summary = json.loads(out.stdout)
    assert summary["failed"] == 1 and summary["listed"] == 3 and summary["chunks"] >= 3
    assert summary["failures"][0]["source"].endswith("noise.txt")
    return root / "s"


@pytest.mark.parametrize(
    ("mode", "kind"), [("dense", "cosine"), ("lexical", "bm25"), ("hybrid", "rrf")]
)
def test_query_hits_say_their_mode_and_a_relevance(store: Path, mode: str, kind: str) -> None:
    args = ["query", "bake the loaf in the oven", "-k", "3", "--store", str(store), "--mode",
            mode, "--no-config"]  # fmt: skip
    out = runner.invoke(app, [*args, "--json"])
    assert out.exit_code == 0, out.output
    (answer,) = [json.loads(line) for line in out.stdout.splitlines()]
    hits = answer["hits"]
    assert hits and answer["mode"] == mode
    for hit in hits:
        assert hit["mode"] == mode and hit["score_kind"] == kind
        assert 0.0 <= hit["relevance"] <= 1.0
    relevances = [h["relevance"] for h in hits]
    assert relevances == sorted(relevances, reverse=True)  # monotone in the score
    assert hits[0]["source"].endswith("bread.md") and hits[0]["relevance"] > 0
    label = {"dense": "cosine", "lexical": "bm25", "hybrid": "hybrid rrf"}[mode]
    first = runner.invoke(app, args).stdout.splitlines()[0]
    assert re.match(rf"{label} -?\d+\.\d{{3}}  relevance \d\.\d\d  .*bread\.md:", first), first


def test_relevance_formulas() -> None:
    from fissure.cli.query import relevance

    assert relevance(0.55, "dense") == 0.55 and relevance(-0.3, "dense") == 0.0
    assert relevance(5.0, "lexical") == 0.5 and relevance(0.0, "lexical") == 0.0
    assert relevance(1 / 6, "hybrid") == 1.0 and relevance(-2.5, "hybrid") == 0.0
    assert relevance(0.6 / 6, "hybrid") == 0.6  # first in the dense ranking alone


def test_json_output_is_only_json_on_stdout(store: Path) -> None:
    s = ["--store", str(store), "--no-config"]
    for args, lines in ((["status", *s], False), (["dlq", "list", *s], True),
                        (["config", "show", "--no-config"], False)):  # fmt: skip
        out = runner.invoke(app, [*args, "--json"])
        assert out.exit_code == 0, (args, out.output)
        if lines:
            (letter,) = [json.loads(line) for line in out.stdout.splitlines()]
            assert letter["source"].endswith("noise.txt") and letter["stage"] == "parse"
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}", letter["time"])
        else:
            assert isinstance(json.loads(out.stdout), dict)


def test_a_failure_is_exit_1_in_the_same_style(store: Path) -> None:
    out = runner.invoke(app, ["status", "--store", str(store), "--no-config", "--check",
                              "--min-recall", "1.01"])  # fmt: skip
    assert out.exit_code == 1
    assert out.stderr.startswith("error: self-recall") and "Traceback" not in out.output
