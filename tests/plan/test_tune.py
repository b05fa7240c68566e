"""``fissure tune``: the evaluator's figures on each half, the held-out choice, the preset it
writes (and the file it keeps), and answers given as quoted text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fissure.cli import app
from fissure.eval.dataset import load_chroma
from fissure.eval.run import run_eval
from fissure.plan.questions import load_questions
from fissure.plan.recipe import to_spec
from fissure.plan.tune import GRIDS, grid, tune
from fissure.settings import load_settings, read_config
from tests.plan.tuning import chroma_folder, write_corpus, write_questions

runner = CliRunner()
SPECS = ["structural:40+min=10", "fixed:30:10", "sentence:30+mode=hybrid",
         "structural:60+hctx+win=120+share=0.5+sub=0.4+subctx+subsize=12+dedup"]  # fmt: skip


@pytest.fixture(scope="module")
def chroma(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return chroma_folder(tmp_path_factory.mktemp("tune") / "records")


def test_tune_gives_the_evaluators_figures_on_each_half(chroma: Path, tmp_path: Path) -> None:
    dataset = load_questions(chroma, chroma / "questions_df.csv").dataset
    assert dataset == load_chroma(chroma)  # the same dataset python -m fissure.eval reads
    specs = grid(SPECS)
    tuned = tune(dataset, specs, embedder="hashing", cache_dir=tmp_path / "cache")
    assert [c.spec for c in tuned.candidates] == specs
    for half in ("even", "odd"):
        direct = run_eval(chroma, specs, embedder="hashing", questions=half,
                          out_dir=tmp_path / half, cache_dir=None)  # fmt: skip
        assert [c.halves[half] for c in tuned.candidates] == direct  # every figure
    scores = [c.score("even", "k=5/recall") for c in tuned.candidates]
    assert tuned.chosen == scores.index(max(scores))  # the first best on the choosing half
    held = tuned.to_dict()["held_out"]
    assert held["recall"] == round(tuned.winner.score("odd", "k=5/recall"), 2)
    assert tuned.questions == {"even": 30, "odd": 30}


def test_choose_on_odd_and_by_iou(chroma: Path, tmp_path: Path) -> None:
    dataset = load_chroma(chroma)
    tuned = tune(dataset, grid(SPECS[:3]), embedder="hashing", metric="iou", choose_on="odd",
                 cache_dir=tmp_path)  # fmt: skip
    scores = [c.score("odd", "k=5/iou") for c in tuned.candidates]
    assert tuned.report_on == "even" and tuned.chosen == scores.index(max(scores))


SETTINGS = """\
# team settings: keep this comment
preset = "fast"

[store]
path = ".fissure/docs"  # where our index lives

[presets.mine.query]
k = 3
"""


def test_cli_writes_the_winner_and_keeps_the_file(
    chroma: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fissure.toml").write_text(SETTINGS, encoding="utf-8")
    args = ["tune", str(chroma), "--embedder", "hashing", "--cache-dir", str(tmp_path / "c"),
            "--json", *(x for s in SPECS for x in ("--grid", s))]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    text = (tmp_path / "fissure.toml").read_text(encoding="utf-8")
    assert text.startswith(SETTINGS)  # every line of the file as it was, then the preset
    assert f"# fissure tune: {report['chosen']}" in text
    config = read_config(tmp_path / "fissure.toml")
    assert config.values == {"store": {"path": ".fissure/docs"}} and config.default_preset == "fast"
    assert config.presets["mine"] == {"query": {"k": 3}}
    settings = load_settings("tuned")
    assert to_spec(settings) == report["chosen"]  # the preset is the chosen spec
    assert settings.store.path == ".fissure/docs"  # the file's own values still apply
    assert report["written"] == str(tmp_path / "fissure.toml")
    held = report["held_out"]
    row = next(c for c in report["candidates"] if c["spec"] == report["chosen"])
    assert row["odd"] == held and report["report_on"] == "odd"
    # Run again: the preset is replaced where it stands, not added twice.
    again = runner.invoke(app, [*args, "--preset-name", "tuned"])
    assert again.exit_code == 0, again.output
    assert (tmp_path / "fissure.toml").read_text(encoding="utf-8") == text


def test_cli_table_names_the_choice(chroma: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["tune", str(chroma), "--embedder", "hashing", "--no-write", "--grid", SPECS[0],
            "--grid", SPECS[1], "--cache-dir", str(tmp_path / "c")]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "held out, odd rows (30 questions): recall@5" in result.output
    assert f"python -m fissure.eval {chroma} -s" in result.output
    assert "0 of 60 references could not be located" in result.output
    assert not (tmp_path / "fissure.toml").exists()  # --no-write


def test_quoted_answers_are_located_like_offsets(tmp_path: Path) -> None:
    rows = write_corpus(tmp_path / "docs")
    write_questions(tmp_path / "spans.csv", rows)
    quoted = [dict(r) for r in rows]
    quoted[0]["quote"] = "a sentence that is in no document"
    quoted[1]["corpus_id"] = ""  # found by its quote
    quoted[2]["corpus_id"] = quoted[2]["corpus_id"] + ".md"  # by file name
    write_questions(tmp_path / "docs" / "quotes.csv", quoted, offsets=False)  # in the corpus
    by_span = load_questions(tmp_path / "docs", tmp_path / "spans.csv")
    by_quote = load_questions(tmp_path / "docs", tmp_path / "docs" / "quotes.csv")
    # The questions file is no document of the corpus it asks about (the other run reads
    # it as one: there it is just a file in the folder).
    assert set(by_quote.dataset.corpora) == set(by_span.dataset.corpora) - {"quotes.csv"}
    assert (by_quote.unlocated, by_quote.dropped, by_quote.references) == (1, 1, len(rows))
    assert by_quote.dataset.questions == by_span.dataset.questions[1:]
    for q in by_quote.dataset.questions:  # every answer slices back to its quote
        text = by_quote.dataset.corpora[q.corpus_id]
        assert [text[s:e] for s, e in q.gold] == [r["quote"] for r in rows if
                                                  r["question"] == q.query][:1]  # fmt: skip


def test_without_questions_says_how_to_get_them(tmp_path: Path) -> None:
    write_corpus(tmp_path / "docs")
    result = runner.invoke(app, ["tune", str(tmp_path / "docs")])
    assert result.exit_code == 2
    assert "no questions to tune on" in result.output and "--generate" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--grid", "recursive:200"], "only fissure's strategies map to settings"),
        (["--grid", "structural:200+find"], "+find has no setting"),
        (["--grid", "bogus"], "not a grid (small), a preset or a spec"),
        (["--metric", "mrr"], "--metric 'mrr': use recall or iou"),
        (["-k", "0"], "-k 0: retrieve at least one chunk"),
        (["--questions", "missing.csv"], "cannot read the questions file"),
    ],
)
def test_bad_input_is_one_line(chroma: Path, tmp_path, monkeypatch, args, message) -> None:
    monkeypatch.chdir(tmp_path)
    grid_args = [] if "--grid" in args else ["--grid", "fixed:30"]
    result = runner.invoke(app, ["tune", str(chroma), "--embedder", "hashing", *grid_args, *args])
    assert result.exit_code == 2 and message in result.output, result.output
    assert "Traceback" not in result.output


def test_presets_are_grid_points(tmp_path: Path) -> None:
    (tmp_path / "fissure.toml").write_text(
        '[presets.ours.chunk]\nstrategy = "fixed"\nmax_tokens = 90\n', encoding="utf-8"
    )
    specs = grid(["chroma-best", "ours", "fast", "small"], start=tmp_path)
    assert specs[:3] == [GRIDS["small"][4], "fixed:90+tok=minilm+mode=hybrid", GRIDS["small"][0]]
    assert len(specs) == 6  # chroma-best and fast are in the small grid already


def test_the_default_grid_is_small_and_runs(chroma: Path, tmp_path: Path) -> None:
    specs = grid(["small"])
    assert 2 <= len(specs) <= 5 and specs == list(GRIDS["small"])  # canonical already
    tuned = tune(load_chroma(chroma), specs, embedder="hashing", cache_dir=tmp_path)
    assert len(tuned.candidates) == len(specs) and not tuned.skipped


@pytest.mark.parametrize("spec", [*GRIDS["small"][:2], GRIDS["small"][3], "fixed:30:10"])
def test_the_preset_chunks_as_the_evaluator_did(spec: str, chroma: Path, tmp_path, monkeypatch):
    """`fissure chunk --preset tuned` cuts every corpus where the evaluator's spec cut it."""
    from fissure.embed import HashingEmbedder
    from fissure.eval.strategies import parse_strategy
    from fissure.plan.recipe import preset_of
    from fissure.settings.edit import write_preset

    monkeypatch.chdir(tmp_path)
    write_preset(tmp_path / "fissure.toml", "tuned", preset_of(spec, embedder="hashing"))
    strategy = parse_strategy(spec, HashingEmbedder())
    for path in sorted((chroma / "corpora").glob("*.md")):
        result = runner.invoke(app, ["chunk", str(path), "--preset", "tuned"])
        assert result.exit_code == 0, result.output
        cut = [(c["start"], c["end"]) for c in map(json.loads, result.stdout.splitlines())]
        assert cut == strategy.chunk(path.read_text(encoding="utf-8"), path.stem)
