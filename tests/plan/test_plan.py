"""Survey, recommend and estimate: their numbers agree with what fissure really does."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fissure.cli import app
from fissure.config import ChunkSettings
from fissure.embed import HashingEmbedder
from fissure.errors import ConfigError
from fissure.plan import estimate, recommend, survey
from fissure.plan.estimate import MODELS, model_named
from fissure.size import Sizer

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
runner = CliRunner()


@pytest.fixture(scope="module")
def corpus_survey():
    return survey([CORPUS])


def test_survey_counts_structure_per_format(corpus_survey) -> None:
    s = corpus_survey
    assert s.complete and s.scale == 1.0 and not s.skipped
    assert s.files == len([p for p in CORPUS.rglob("*") if p.is_file()])
    by_name = {Path(p.source).name: p for p in s.profiles}
    assert (by_name["guide.md"].headings, by_name["guide.md"].tables) == (8, 1)
    assert by_name["pathlike.py"].entities == 8  # 2 classes, 3 methods, 3 functions
    assert by_name["report.pdf"].pages == 2 and by_name["cities.csv"].tables == 1
    notes = by_name["notes.txt"]
    assert (notes.headings, notes.entities, notes.tables, notes.pages) == (0, 0, 0, 0)
    assert s.total_bytes == sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())


def _chunk_cli(path: Path, *args: str) -> list[dict]:
    out = runner.invoke(app, ["chunk", str(path), *args])
    assert out.exit_code == 0, out.output
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("strategy", ["structural", "recursive", "sentence", "fixed"])
def test_estimate_is_what_fissure_chunk_makes(corpus_survey, strategy: str) -> None:
    """With every file sampled the estimate is exact: the chunks `fissure chunk` writes."""
    base = ChunkSettings(tokenizer="minilm", max_tokens=120, overlap_tokens=10)
    (row,), timing = estimate(corpus_survey, [strategy], base, MODELS["minilm"],
                              price_per_million=2.5, time_sample=0)  # fmt: skip
    chunks = _chunk_cli(CORPUS, "-s", strategy, "--max-tokens", "120", "--overlap-tokens", "10")
    assert timing is None and row.scale == 1.0
    assert row.chunks == len(chunks)
    # The model's own tokenizer; a chunk that continues a table embeds its header context too.
    assert row.tokens == sum(c["n_tokens"] + c["metadata"].get("context_tokens", 0) for c in chunks)
    assert row.vector_bytes == len(chunks) * 384 * 4
    assert row.text_bytes == sum(len(c["text"].encode()) for c in chunks)
    assert row.cost == pytest.approx(row.tokens / 1e6 * 2.5)
    assert row.truncated == sum(c["n_tokens"] > 254 for c in chunks) == 0


def test_context_is_counted_in_the_tokens(corpus_survey) -> None:
    plain = ChunkSettings(max_tokens=120)
    with_context = ChunkSettings(max_tokens=120, prepend_context=True)
    (a,), _ = estimate(corpus_survey, ["structural"], plain, MODELS["minilm"], time_sample=0)
    (b,), _ = estimate(corpus_survey, ["structural"], with_context, MODELS["minilm"],
                       time_sample=0)  # fmt: skip
    chunks = _chunk_cli(CORPUS, "--max-tokens", "120", "--prepend-context")
    context = sum(c["metadata"].get("context_tokens", 0) for c in chunks)
    assert context > 0 and b.chunks == len(chunks)
    assert b.tokens == sum(c["n_tokens"] for c in chunks) + context  # counts add at a newline
    (h,), _ = estimate(corpus_survey, ["structural"], plain, MODELS["minilm"], time_sample=0,
                       embed_headings=True)  # fmt: skip
    assert h.chunks == a.chunks and h.tokens > a.tokens


def test_a_sample_scales_by_bytes(tmp_path: Path) -> None:
    for i in range(20):
        shutil.copy(CORPUS / "markdown" / "guide.md", tmp_path / f"copy{i}.md")
    whole = survey([tmp_path])
    part = survey([tmp_path], sample=5, seed=3)
    assert len(part.profiles) == 5 and not part.complete and part.scale == pytest.approx(4.0)
    base = ChunkSettings(max_tokens=100)
    (exact,), _ = estimate(whole, ["structural"], base, MODELS["minilm"], time_sample=0)
    (scaled,), _ = estimate(part, ["structural"], base, MODELS["minilm"], time_sample=0)
    assert (scaled.chunks, scaled.tokens, scaled.vector_bytes) == (
        exact.chunks, exact.tokens, exact.vector_bytes)  # fmt: skip
    assert [p.source for p in part.profiles] == [p.source for p in survey(
        [tmp_path], sample=5, seed=3).profiles]  # same seed, same sample  # fmt: skip


def test_timing_and_models(corpus_survey) -> None:
    base = ChunkSettings(max_tokens=120)
    rows, timing = estimate(corpus_survey, ["structural", "fixed"], base, MODELS["minilm"],
                            time_sample=16, embedder=HashingEmbedder())  # fmt: skip
    assert timing is not None and timing.texts == 16 and timing.seconds > 0
    for row in rows:
        assert row.embed_seconds == pytest.approx(row.tokens / timing.tokens_per_second)
    api = model_named("text-embedding-3-large")
    (row,), timing = estimate(corpus_survey, ["structural"], base, api, time_sample=16)
    assert timing is None and row.embed_seconds is None
    assert row.vector_bytes == row.chunks * 3072 * 4
    cl100k = Sizer.tiktoken("cl100k_base")
    chunks = _chunk_cli(CORPUS, "--max-tokens", "120")
    embedded = [f"{c['context']}\n{c['text']}" if "context_tokens" in c["metadata"] else c["text"]
                for c in chunks]  # fmt: skip
    assert row.tokens == sum(cl100k.count(t) for t in embedded)
    assert model_named("mine", dim=99).dim == 99
    with pytest.raises(ConfigError, match="--dim"):
        model_named("mine")
    with pytest.raises(ConfigError, match="price"):
        estimate(corpus_survey, ["fixed"], base, api, price_per_million=-1)


def _write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def test_recommend_code_cuts_nothing_whole_and_fits_minilm() -> None:
    s = survey([CORPUS / "code", CORPUS / "python"])
    advice = recommend(s)
    assert advice.kind == "code" and advice.value("strategy") == "structural"
    compared = advice.compared
    assert compared["structural"].units > 0 and compared["structural"].cuts == 0
    assert compared["fixed"].cuts > 0
    minilm, cl100k = Sizer.minilm(), Sizer.tiktoken("cl100k_base")
    ratios = sorted(minilm.count(d.text) / cl100k.count(d.text) for d in s.documents)
    p90 = ratios[math.ceil(0.9 * len(ratios)) - 1]
    assert advice.value("max-tokens") == min(200, math.floor(254 / p90))
    assert advice.value("overlap-tokens") == 0
    settings = advice.settings()
    assert settings.strategy == "structural" and settings.tokenizer == "cl100k_base"
    assert all(e.source.startswith("bench/results/") for a in advice.advice for e in a.evidence)


def test_recommend_prose(tmp_path: Path) -> None:
    flat = " ".join(f"Sentence number {i} says something plain." for i in range(400))
    advice = recommend(survey([_write(tmp_path / "flat", {"a.txt": flat, "b.txt": flat})]))
    assert advice.kind == "flat prose" and advice.value("strategy") == "semantic"
    doc = "\n\n".join(f"## Part {i}\n\n" + "Words in a paragraph here. " * 20 for i in range(9))
    advice = recommend(survey([_write(tmp_path / "md", {"g.md": "# Guide\n\n" + doc})]))
    assert advice.kind == "structured prose" and advice.value("strategy") == "structural"
    assert advice.value("max-tokens") == 150 and advice.value("min-tokens") == 60
    assert advice.command("docs").startswith("fissure ingest docs --strategy structural")


def test_the_commands(tmp_path: Path) -> None:
    out = runner.invoke(app, ["recommend", str(CORPUS), "--json"])
    assert out.exit_code == 0, out.output
    advice = json.loads(out.stdout)
    assert advice["files"] == advice["sampled"] + advice["skipped"]
    assert {"strategy", "max-tokens", "overlap-tokens"} <= {a["setting"] for a in advice["advice"]}
    out = runner.invoke(app, ["estimate", str(CORPUS), "-s", "structural,fixed", "--model",
                              "text-embedding-3-small", "--price-per-million", "0.02"])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "structural" in out.stdout and "1536 dimensions" in out.stdout
    out = runner.invoke(app, ["estimate", str(CORPUS), "-s", "structural", "--json",
                              "--time-sample", "0"])  # fmt: skip
    row = json.loads(out.stdout)["strategies"][0]
    assert row["chunks"] == len(_chunk_cli(CORPUS)) and json.loads(out.stdout)["exact"]
    for bad in (["estimate", str(tmp_path / "none")], ["estimate", str(CORPUS), "-s", "nope"],
                ["estimate", str(CORPUS), "--model", "unknown-model"],
                ["recommend", str(tmp_path / "none")]):  # fmt: skip
        result = runner.invoke(app, bad)
        assert result.exit_code == 2 and "error:" in result.output, (bad, result.output)
    for command in ("recommend", "estimate"):
        assert "Exit status" in runner.invoke(app, [command, "--help"]).output
