"""Settings through the command line: ``fissure config show``, ``--preset``, ``--config``,
``--no-config``, errors, and presets giving the same chunks as the flags they stand for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from fissure.cli import app
from fissure.cli.options import PARAM_KEYS

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
runner = CliRunner()
# The README's best recipe, as flags (README "Two retrieval options").
RECIPE = [
    "--strategy",
    "semantic",
    "--tokenizer",
    "cl100k_base",
    "--max-tokens",
    "140",
    "--min-tokens",
    "50",
    "--embed-window",
    "254",
    "--embed-window-share",
    "0.8",
    "--sub-vectors",
    "30",
    "--dedup",
    "--embed-headings",
]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()  # a repository root: the search for fissure.toml stops here
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FISSURE_NO_CONFIG", raising=False)
    monkeypatch.delenv("FISSURE_CONFIG", raising=False)
    monkeypatch.delenv("FISSURE_PRESET", raising=False)
    return tmp_path


def invoke(*args: str, **env: str):
    return runner.invoke(app, list(args), env=env or None)


def shown(*args: str) -> dict:
    out = invoke("config", "show", "--json", *args)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def one_line_error(out) -> str:
    assert out.exit_code == 2, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.output
    assert "Traceback" not in out.output
    return lines[0]


def test_config_show_says_where_each_value_came_from(project: Path) -> None:
    (project / "fissure.toml").write_text(
        'preset = "mine"\n[chunk]\nmax_tokens = 200\n[presets.mine.query]\nk = 8\n'
        "[presets.mine.chunk]\nmin_tokens = 10\n"
    )
    out = invoke("config", "show", "--min-tokens", "20", "--no-dedup")
    assert out.exit_code == 0, out.output
    text = out.stdout
    assert (
        "# file: fissure.toml" in text
        and "# preset: mine, the file's default (fissure.toml:1)" in text
    )
    rows = {
        line.split("#")[0].strip(): line.split("#", 1)[1].strip()
        for line in text.splitlines()
        if " = " in line and not line.startswith("#")
    }
    assert rows["max_tokens = 200"] == "fissure.toml:3"
    assert rows["min_tokens = 20"] == "flag --min-tokens"
    assert rows["dedup = false"] == "flag --no-dedup"
    assert rows["k = 8"] == "preset mine in fissure.toml:5"
    assert rows['strategy = "structural"'] == "default"
    assert rows['path = ".fissure/store"'] == "default"
    # The text is a settings file: pasted into fissure.toml it gives the same settings.
    body = "\n".join(line.split("  #")[0] for line in text.splitlines() if not line.startswith("#"))
    (project / "copy.toml").write_text(body)
    again = shown("--config", "copy.toml")
    first = shown("--min-tokens", "20", "--no-dedup")
    assert again["settings"] == first["settings"]


def test_config_show_json(project: Path) -> None:
    data = shown("--preset", "chroma-best", "--max-tokens", "120")
    assert data["file"] is None and data["preset"] == {
        "name": "chroma-best",
        "why": "named with --preset",
    }
    assert data["presets"] == {"fast": "built-in", "chroma-best": "built-in"}
    assert data["settings"]["chunk"]["max_tokens"] == 120
    assert data["origins"]["chunk"]["max_tokens"] == "flag --max-tokens"
    assert data["settings"]["chunk"]["strategy"] == "semantic"
    assert data["origins"]["chunk"]["strategy"] == "preset chroma-best (built-in)"
    assert data["settings"]["query"] == {
        "k": 5,
        "sub_weight": 0.4,
        "embedder": None,
        "mode": None,
        "budget_tokens": None,
    }
    assert set(data["settings"]) == {"chunk", "source", "store", "ingest", "query"}


def test_the_chroma_best_preset_is_the_readme_flags(project: Path) -> None:
    by_flags = shown(*RECIPE, "--sub-weight", "0.4")["settings"]
    assert shown("--preset", "chroma-best")["settings"] == by_flags


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("[chunk]\nmax_token = 3\n", "fissure.toml:2: unknown key 'max_token' in [chunk]"),
        ('[ingest]\nworkers = "two"\n', "fissure.toml:2: [ingest] workers: expected an integer"),
        ('[chunk]\nstrategy = "semantc"\n', "unknown strategy 'semantc'"),
    ],
)
@pytest.mark.parametrize(
    "command",
    [["chunk", "samples"], ["ingest", "samples"], ["query", "x"], ["status"], ["config", "show"]],
)
def test_a_bad_file_is_one_line_and_exit_2(project: Path, text: str, expect: str, command) -> None:
    (project / "fissure.toml").write_text(text)
    assert expect in one_line_error(invoke(*command))


def test_bad_preset_and_flags_are_one_line(project: Path) -> None:
    assert "no preset 'nope'" in one_line_error(invoke("chunk", str(SAMPLES), "--preset", "nope"))
    assert "no preset 'nope'" in one_line_error(invoke("query", "x", "--preset", "nope"))
    line = one_line_error(invoke("query", "x", "-k", "0"))
    assert "k must be a positive integer, got 0 (query.k = 0 from flag -k)" in line
    line = one_line_error(invoke("ingest", "samples", "--engine", "spark"))
    assert "engine 'spark'" in line and "flag --engine" in line
    line = one_line_error(invoke("chunk", "samples", "--overlap-tokens", "300"))
    assert "flag --overlap-tokens" in line


def test_no_config_and_an_explicit_file(project: Path) -> None:
    (project / "fissure.toml").write_text("[chunk]\nmax_token = 3\n")  # broken
    assert shown("--no-config")["file"] is None
    out = invoke("config", "show", "--json", FISSURE_NO_CONFIG="1")
    assert out.exit_code == 0 and json.loads(out.stdout)["file"] is None
    (project / "other.toml").write_text("[query]\nk = 7\n")
    assert shown("--config", "other.toml")["settings"]["query"]["k"] == 7
    out = invoke("config", "show", "--json", FISSURE_CONFIG="other.toml")
    assert json.loads(out.stdout)["settings"]["query"]["k"] == 7
    out = invoke("config", "show", "--json", "--no-config", FISSURE_PRESET="fast")
    assert json.loads(out.stdout)["preset"]["name"] == "fast"
    assert "contradict" in one_line_error(
        invoke("config", "show", "--config", "other.toml", "--no-config")
    )


def test_a_file_preset_gives_the_chunks_its_flags_give(project: Path) -> None:
    (project / "fissure.toml").write_text(
        '[presets.small.chunk]\nstrategy = "recursive"\nmax_tokens = 48\noverlap_tokens = 6\n'
        'tokenizer = "words"\nmin_tokens = 4\n[presets.small.source]\nmax_bytes = 100000\n'
    )
    by_preset = invoke("chunk", str(SAMPLES), "--preset", "small")
    by_flags = invoke(
        "chunk",
        str(SAMPLES),
        "--strategy",
        "recursive",
        "--max-tokens",
        "48",
        "--overlap-tokens",
        "6",
        "--tokenizer",
        "words",
        "--min-tokens",
        "4",
        "--max-bytes",
        "100000",
    )
    assert by_preset.exit_code == 0 and by_flags.exit_code == 0, by_preset.output
    assert by_preset.stdout == by_flags.stdout
    rows = [json.loads(line) for line in by_preset.stdout.splitlines()]
    assert rows and all(r["n_tokens"] <= 48 and r["strategy"] == "recursive" for r in rows)
    default = invoke("chunk", str(SAMPLES))
    assert default.stdout != by_preset.stdout  # the preset did something


def test_chroma_best_through_ingest_and_query_matches_the_flags(project: Path) -> None:
    # The boundary embedder from the file (cheap), the recipe from the preset or the flags.
    (project / "fissure.toml").write_text(
        '[chunk]\nembedder = "hashing"\n[ingest]\nembedder = "hashing"\nworkers = 1\n'
    )
    runs = {}
    for name, how in (("preset", ["--preset", "chroma-best"]), ("flags", RECIPE)):
        store, export = project / f"store-{name}", project / f"{name}.jsonl"
        out = invoke("ingest", str(SAMPLES), "--store", str(store), "--export", str(export), *how)
        assert out.exit_code == 0, out.output
        assert "sentence pieces" in out.output  # --sub-vectors 30 took effect
        ask = ["--preset", "chroma-best"] if name == "preset" else ["--sub-weight", "0.4"]
        hits = invoke(
            "query", "how is a local magnitude estimated?", "--store", str(store), "--json", *ask
        )
        assert hits.exit_code == 0, hits.output
        runs[name] = (export.read_text(), json.loads(hits.stdout)["hits"])
    assert runs["preset"][0] == runs["flags"][0]
    chunks = [json.loads(line) for line in runs["preset"][0].splitlines()]
    assert chunks and all(c["strategy"] == "semantic" and c["n_tokens"] <= 140 for c in chunks)
    assert [(h["chunk_id"], h["score"]) for h in runs["preset"][1]] == [
        (h["chunk_id"], h["score"]) for h in runs["flags"][1]
    ]


def _settings_commands() -> list[tuple[str, typer.main.click.Command]]:  # type: ignore[name-defined]
    group = typer.main.get_command(app)
    out = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        for sub_name, sub in (getattr(command, "commands", None) or {name: command}).items():
            if any(p.name == "preset" for p in sub.params):
                out.append((f"{name} {sub_name}".strip() if sub is not command else name, sub))
    return out


def test_every_settings_option_shows_its_key_and_the_models_default() -> None:
    from fissure.settings.model import defaults

    commands = _settings_commands()
    assert {"chunk", "ingest", "query", "status", "show", "estimate", "config show"} <= {
        name for name, _ in commands
    }
    for name, command in commands:
        names = {p.name for p in command.params}
        assert {"preset", "config_file", "no_config"} <= names, name
        for param in command.params:
            key = PARAM_KEYS.get(param.name)
            if key is None:
                continue
            assert param.default is None, f"{name} --{param.name}: defaults come from the model"
            section, _, field = key.partition(".")
            value = defaults(section)[field]
            assert f"; {key}]" in param.help, f"{name} {param.opts}: its help does not name {key}"
            if value is not None and not isinstance(value, bool):
                assert f"default: {value};" in param.help, (name, param.help)
