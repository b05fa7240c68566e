"""Small-to-big (``fissure.store.handover``): the budget is never exceeded, no text is
handed over twice, every passage is exact document text; and through ``fissure query``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fissure.cli import app
from fissure.size import Sizer
from fissure.store.handover import hand_over
from fissure.store.protocol import Hit

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "quake", "the", "7", "ß", "\n"])
SIZER = Sizer.named("cl100k_base")


def _hit(docs: dict[str, str], source: str, start: int, end: int, n: int) -> Hit:
    text = docs[source][start:end]
    return Hit(f"{source}:{start}:{end}:{n}", 1.0 / (n + 1), text,
               {"source": source, "doc_id": source, "start": start, "end": end})  # fmt: skip


@st.composite
def rankings(draw: st.DrawFn) -> tuple[dict[str, str], list[Hit]]:
    """Two or three documents and a ranking of spans of them that may overlap, touch,
    contain each other or repeat another document's text."""
    body = " ".join(draw(st.lists(WORDS, min_size=20, max_size=120)))
    docs = {"a.md": body, "b.md": draw(st.sampled_from([body, body[::-1], "x " + body]))}
    if draw(st.booleans()):
        docs["c.md"] = " ".join(draw(st.lists(WORDS, min_size=5, max_size=40)))
    hits = []
    for n in range(draw(st.integers(1, 25))):
        source = draw(st.sampled_from(sorted(docs)))
        size = len(docs[source])
        start = draw(st.integers(0, size - 1))
        end = draw(st.integers(start + 1, min(size, start + 80)))
        hits.append(_hit(docs, source, start, end, n))
    return docs, hits


@settings(max_examples=200, deadline=None)
@given(rankings(), st.integers(1, 300))
def test_budget_exact_text_no_overlap_no_repeats(
    case: tuple[dict[str, str], list[Hit]], budget: int
) -> None:
    docs, hits = case
    handed = hand_over(hits, budget, SIZER)
    assert sum(p.n_tokens for p in handed) <= budget
    for p in handed:
        assert docs[p.source][p.start : p.end] == p.text  # exact document text
        assert p.n_tokens == SIZER.count(p.text)
    assert [p.rank for p in handed] == sorted(p.rank for p in handed)
    for i, p in enumerate(handed):
        for q in handed[i + 1 :]:
            if p.source == q.source:  # neither overlapping nor touching: they would be one
                assert p.end < q.start or q.end < p.start
            assert p.text not in q.text and q.text not in p.text  # no text handed twice
    # Hits are taken in order up to the first that does not fit; nothing after it counts.
    held = {c for p in handed for c in p.chunk_ids}
    skipped = [i for i, h in enumerate(hits) if h.chunk_id not in held
               and h.text.strip() and not any(h.text in p.text for p in handed)]  # fmt: skip
    if skipped:
        assert hand_over(hits[: skipped[0]], budget, SIZER) == handed


def test_overlapping_chunks_are_handed_once_and_a_bridge_joins_passages() -> None:
    docs = {"d": "one two three four five six seven eight nine ten"}
    hits = [_hit(docs, "d", 0, 13, 0), _hit(docs, "d", 24, 33, 1), _hit(docs, "d", 8, 28, 2)]
    [p] = hand_over(hits, 1000, SIZER)
    assert (p.start, p.end, p.text) == (0, 33, docs["d"][:33])
    assert p.rank == 1 and len(p.chunk_ids) == 3


def test_the_first_chunk_that_does_not_fit_ends_the_list() -> None:
    docs = {"d": "alpha " * 40 + "beta " * 5}
    hits = [_hit(docs, "d", 0, 240, 0), _hit(docs, "d", 240, 265, 1)]
    assert hand_over(hits, 10, SIZER) == []  # nothing truncated, nothing skipped past
    assert len(hand_over(hits, 1000, SIZER)) == 1  # adjacent: one passage
    with pytest.raises(ValueError, match="at least 1"):
        hand_over(hits, 0, SIZER)


def test_query_budget_tokens_through_the_cli(tmp_path: Path) -> None:
    runner = CliRunner()
    store = tmp_path / "store"
    args = ["--store", str(store), "--embedder", "hashing", "--workers", "1", "--no-config"]
    out = runner.invoke(app, ["ingest", str(SAMPLES), "--max-tokens", "60", *args])
    assert out.exit_code == 0, out.output
    asked = ["query", "how is a local magnitude estimated?", "--store", str(store), "--json",
             "--no-config", "--budget-tokens", "300"]  # fmt: skip
    got = runner.invoke(app, asked)
    assert got.exit_code == 0, got.output
    line = json.loads(got.stdout)
    passages = line["passages"]
    assert passages and line["tokens"] <= 300 and line["budget_tokens"] == 300
    for p in passages:
        path = Path(p["source"])
        assert path.suffix in (".md", ".txt", ".py")  # the samples: the text is the file's
        with path.open(encoding="utf-8", newline="") as f:
            assert f.read()[p["start"] : p["end"]] == p["text"]
        assert SIZER.count(p["text"]) == p["n_tokens"]
    assert sum(p["n_tokens"] for p in passages) == line["tokens"] > 100  # filled, not one chunk
    bad = runner.invoke(app, [*asked[:-1], "0"])
    assert bad.exit_code == 2 and "budget_tokens" in bad.output
