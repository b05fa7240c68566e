"""The character ceiling beside the token budget (``ChunkSettings.max_chars``).

A run without spaces longer than 100 characters is one MiniLM word piece (``[UNK]``): by
tokens alone 10 KB of it is one token and fits any budget. Every strategy must cut it to the
ceiling all the same, with exact offsets and full coverage, whatever format it comes in;
and the default ceiling must leave ordinary text exactly as the budget alone cuts it.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fissure import Chunker, Document
from fissure.cli import app
from fissure.config import CHARS_PER_TOKEN, MIN_MAX_CHARS, STRATEGIES, ChunkSettings
from fissure.embed.hashing import HashingEmbedder
from fissure.errors import ConfigError
from fissure.ingest.plan import fingerprint
from fissure.parse import registry
from fissure.size import Ruler
from fissure.split.recursive import CharPacker, char_packer
from tests.chunk_checks import assert_chunk_invariants
from tests.conftest import get_sizer
from tests.test_corpus_snapshots import FILES

RUN = "x" * 10_000  # one [UNK] for MiniLM
EMBEDDER = HashingEmbedder(dim=64)


def _documents() -> dict[str, Document]:
    zeros = base64.b64encode(bytes(7_500)).decode()  # 10,000 "A": no + or / to split it
    return {
        "plain": Document.from_text(f"start {RUN} end"),
        "json": registry.parse(json.dumps({"a": RUN, "b": [1, 2]}).encode(), "data.json"),
        "markdown": registry.parse(
            f"# Image\n\nThe bytes of the picture:\n\n{zeros}\n\nThat was all.\n".encode(),
            "image.md",
        ),
    }


DOCUMENTS = _documents()


def make(strategy: str, **settings) -> Chunker:
    chunker = Chunker(strategy=strategy, embedder=EMBEDDER, **settings)
    chunker.sizer = get_sizer(chunker.settings.tokenizer)
    return chunker


def test_the_formats_parse_as_meant():
    assert DOCUMENTS["json"].mime == "application/json"
    assert DOCUMENTS["markdown"].mime == "text/markdown"
    minilm = get_sizer("minilm")
    assert minilm.count(RUN) == 1  # what makes the token budget blind to it
    assert minilm.count(base64.b64encode(bytes(7_500)).decode()) == 1


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_run_one_token_long_is_cut_to_the_ceiling(strategy: str, name: str):
    document = DOCUMENTS[name]
    chunker = make(strategy)  # minilm, 254 tokens: the default ceiling, 4064 characters
    assert chunker.settings.char_ceiling == 254 * CHARS_PER_TOKEN == 4064
    chunks = chunker.chunk_document(document)
    assert_chunk_invariants(document, chunker, chunks)  # exact, covered, within both
    assert all(len(c.text) <= 4064 for c in chunks)
    assert max(len(c.text) for c in chunks) == 4064  # cut at the ceiling, not before
    assert len(chunks) >= 3


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_given_ceiling_holds_with_overlap_and_context(strategy: str):
    text = "Intro line.\n\n" + " ".join(f"w{i}" for i in range(300)) + f"\n\n{RUN[:900]}\n"
    document = registry.parse(f"# Title\n\n{text}".encode(), "doc.md")
    settings = {"max_tokens": 64, "max_chars": 120, "overlap_tokens": 6}
    if strategy != "fixed":
        settings["prepend_context"] = True
    chunker = make(strategy, **settings)
    chunks = chunker.chunk_document(document)
    assert_chunk_invariants(document, chunker, chunks)
    assert all(len(c.text) <= 120 for c in chunks)


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s != "fixed"])
def test_the_ceiling_descends_to_words_before_characters(strategy: str):
    """Words shorter than the ceiling stay whole: the packer cuts a span over the ceiling
    by its finer parts, as it cuts one over budget; only the run longer than the ceiling
    itself is cut inside."""
    words = " ".join(f"word{i:03d}" for i in range(200))
    text = f"{words} {RUN[:250]} tail"
    chunker = make(strategy, max_tokens=200, max_chars=100)
    document = Document.from_text(text)
    chunks = chunker.chunk_document(document)
    assert_chunk_invariants(document, chunker, chunks)
    whole = set(text.split())
    for c in chunks:
        if "x" not in c.text:
            assert set(c.text.split()) <= whole, c.text  # no word cut
    assert any(len(c.text) == 100 and set(c.text) == {"x"} for c in chunks)


def test_the_default_is_derived_from_the_budget():
    assert ChunkSettings().max_chars is None
    assert ChunkSettings().char_ceiling == 4064  # minilm's 254
    assert ChunkSettings(tokenizer="cl100k_base").char_ceiling == 512 * CHARS_PER_TOKEN
    assert ChunkSettings(max_tokens=8).char_ceiling == MIN_MAX_CHARS
    assert ChunkSettings(max_tokens=100, max_chars=50).char_ceiling == 50
    # The characters sizer's budget is already in characters: its ceiling never binds.
    assert ChunkSettings(tokenizer="chars").char_ceiling >= ChunkSettings(tokenizer="chars").budget
    assert ChunkSettings.from_dict(ChunkSettings(max_chars=900).to_dict()).max_chars == 900


@pytest.mark.parametrize("bad", [0, -5, True, 2.5, "100"])
def test_a_ceiling_that_cannot_work_is_refused(bad):
    with pytest.raises(ConfigError, match="max_chars must be a positive integer"):
        ChunkSettings(max_chars=bad)


def test_the_default_changes_no_chunk_of_the_corpus():
    """Over every corpus file (and the samples), at a budget small enough for the floor to
    be the ceiling and at the default budget, the default ceiling cuts nothing the budget
    alone did not (the snapshot tests pin the two budgets they use the same way)."""
    for tokenizer, budget in (("minilm", 8), ("minilm", 254), ("words", 16)):
        for strategy in ("structural", "fixed"):
            default = make(strategy, tokenizer=tokenizer, max_tokens=budget)
            unbounded = make(strategy, tokenizer=tokenizer, max_tokens=budget, max_chars=10**9)
            for path in FILES:
                document = registry.parse(path.read_bytes(), path.name)
                got = [(c.start, c.end) for c in default.chunk_document(document)]
                assert got == [(c.start, c.end) for c in unbounded.chunk_document(document)], (
                    path.name,
                    tokenizer,
                    budget,
                    strategy,
                )


def test_the_compiled_packer_runs_only_where_the_ceiling_cannot_bind():
    if CharPacker is None:
        pytest.skip("the compiled packer is not built (or FISSURE_PURE_PYTHON is set)")
    ruler = Ruler("some text", get_sizer("chars"))
    loose = ChunkSettings(strategy="recursive", tokenizer="chars", max_tokens=300)
    assert char_packer(loose, ruler, 300) is not None
    tight = replace(loose, max_chars=120)
    assert char_packer(tight, ruler, 300) is None  # the Python packer, which keeps it


def test_the_default_keeps_a_stores_stamp():
    base = ChunkSettings()
    assert fingerprint(replace(base, max_chars=None), "m") == fingerprint(base, "m")
    assert fingerprint(replace(base, max_chars=2000), "m") != fingerprint(base, "m")


def test_the_flag_and_the_file_set_it(tmp_path: Path):
    runner = CliRunner()
    (tmp_path / "fissure.toml").write_text("[chunk]\nmax_chars = 300\n", encoding="utf-8")
    shown = runner.invoke(
        app, ["config", "show", "--json", "--config", str(tmp_path / "fissure.toml")]
    )
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["settings"]["chunk"]["max_chars"] == 300
    flagged = runner.invoke(app, ["config", "show", "--json", "--no-config", "--max-chars", "70"])
    data = json.loads(flagged.output)
    assert data["settings"]["chunk"]["max_chars"] == 70
    assert data["origins"]["chunk"]["max_chars"] == "flag --max-chars"
    off = runner.invoke(app, ["config", "show", "--json", "--no-config", "--max-chars", "0"])
    assert json.loads(off.output)["settings"]["chunk"]["max_chars"] is None
    source = tmp_path / "long.txt"
    source.write_text(f"start {RUN} end\n", encoding="utf-8")
    cut = runner.invoke(app, ["chunk", "--no-config", "--max-chars", "500", str(source)])
    assert cut.exit_code == 0, cut.output
    rows = [json.loads(line) for line in cut.output.splitlines() if line.startswith("{")]
    assert rows and all(len(r["text"]) <= 500 for r in rows)
    assert "".join(r["text"] for r in rows).count("x") == len(RUN)
