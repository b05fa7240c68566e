"""Semantic and hybrid chunking: thresholds, exact cut selection, reasons, topic shifts."""

from __future__ import annotations

import numpy as np
import pytest

from fissure import Chunker, ConfigError
from fissure.embed.hashing import HashingEmbedder
from fissure.size import Ruler, Sizer
from fissure.split import semantic as sm

EMBEDDER = HashingEmbedder(dim=512)

# Three topics that share no word across topics and many words within one.
TOPICS = [
    "Volcanoes erupt magma. Magma rises, volcanoes erupt. Lava flows from volcanoes. "
    "Volcanic lava and magma. Magma chambers feed volcanoes.",
    "Bees make honey. Honey bees visit flowers. Flowers give bees nectar. "
    "Bees store honey. Hives protect bees and honey.",
    "Trains run on rails. Rails connect stations. Stations serve trains. "
    "Timetables list stations and trains. Rails carry heavy trains.",
]


def test_threshold_methods():
    d = np.array([0.1, 0.2, 0.1, 0.9, 0.15, 0.2, 0.8, 0.1])
    value, label = sm.threshold(d, "percentile", 75)
    assert value == pytest.approx(np.percentile(d, 75)) and label == "p75"
    value, _ = sm.threshold(d, "standard_deviation", 1.0)
    assert value == pytest.approx(d.mean() + d.std())
    q1, q3 = np.percentile(d, [25, 75])
    assert sm.threshold(d, "interquartile", 1.5)[0] == pytest.approx(d.mean() + 1.5 * (q3 - q1))
    value, _ = sm.threshold(d, "gradient", 80)
    assert 0.1 <= value <= 0.9


def test_boundary_distances_compare_the_windows_either_side():
    v = np.array([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=np.float32)
    assert np.allclose(sm.boundary_distances(v, 0), [0.0, 1.0, 0.0])
    # With a buffer of one, the boundary after atom 1 compares atoms 0-1 with 2-3.
    d = sm.boundary_distances(v, 1)
    assert d[1] == pytest.approx(1.0) and d[0] < d[1] and d[2] < d[1]


def test_dynamic_programming_respects_budget_and_prefers_high_scores():
    text = " ".join(f"w{i}" for i in range(12))
    ruler = Ruler(text, Sizer.words())
    bounds = [text.index(f"w{i}") for i in range(12)] + [len(text)]
    table = ruler.table(bounds)
    scores = [0.0] + [-1.0] * 11
    scores[4] = scores[8] = 2.0
    assert sm.choose_cuts(table, scores, 4, 0) == [0, 4, 8]
    # A budget of 3 forces extra cuts: the least bad ones keep the good cuts.
    starts = sm.choose_cuts(table, scores, 3, 0)
    assert 4 in starts and 8 in starts
    assert all(b - a <= 3 for a, b in zip(starts, [*starts[1:], 12], strict=False))


def test_semantic_cuts_at_topic_shifts_with_reasons():
    text = " ".join(TOPICS)
    chunker = Chunker(
        strategy="semantic",
        embedder=EMBEDDER,
        tokenizer="words",
        max_tokens=200,
        breakpoint_amount=80,
    )
    chunks = chunker.chunk(text)
    starts = [c.text.split(".")[0] for c in chunks]
    assert "Bees make honey" in starts and "Trains run on rails" in starts
    cut_reasons = [c.metadata.get("reason") for c in chunks[:-1]]
    assert all(r and r.startswith("semantic") and ">" in r for r in cut_reasons)


def test_target_chunks_and_budget_cuts_say_budget():
    text = " ".join(TOPICS)
    chunks = Chunker(
        strategy="semantic", embedder=EMBEDDER, tokenizer="words", max_tokens=200, target_chunks=3
    ).chunk(text)
    assert len(chunks) == 3
    tight = Chunker(
        strategy="semantic",
        embedder=EMBEDDER,
        tokenizer="words",
        max_tokens=12,
        breakpoint_amount=99,
    ).chunk(text)
    assert max(c.n_tokens for c in tight) <= 12
    assert any("budget" in c.metadata.get("reason", "") for c in tight[:-1])


def test_hybrid_keeps_headings_and_merges_close_neighbours():
    doc = "\n\n".join(f"# Topic {i}\n\n" + t.replace(". ", ".\n\n") for i, t in enumerate(TOPICS))
    chunker = Chunker(
        strategy="hybrid", embedder=EMBEDDER, tokenizer="words", max_tokens=120, atom_tokens=12
    )
    from fissure.parse import parse

    document = parse(doc.encode(), "topics.md")
    traced = chunker.trace_document(document)
    chunks = traced.chunks
    assert [c.text.split("\n")[0] for c in chunks] == ["# Topic 0", "# Topic 1", "# Topic 2"]
    assert traced.trace is not None and len(traced.trace.distances) == len(traced.trace.atoms) - 1


def test_semantic_settings_are_validated():
    with pytest.raises(ConfigError, match="breakpoint"):
        Chunker(strategy="semantic", embedder=EMBEDDER, breakpoint="magic")
    with pytest.raises(ConfigError, match="percentile"):
        Chunker(strategy="semantic", embedder=EMBEDDER, breakpoint_amount=150)
    with pytest.raises(ConfigError, match="target_chunks"):
        Chunker(strategy="semantic", embedder=EMBEDDER, target_chunks=0)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["semantic", "hybrid"])
def test_invariants_with_the_real_minilm(strategy):
    """The same invariants with the real model: exact, within budget, covering, repeatable."""
    from pathlib import Path

    from fissure.parse import parse
    from tests.chunk_checks import assert_chunk_invariants

    chunker = Chunker(strategy=strategy, embedder="minilm", max_tokens=96)
    samples = Path(__file__).resolve().parents[2] / "samples"
    for path in sorted(samples.iterdir()):
        document = parse(path.read_bytes(), str(path))
        chunks = chunker.chunk_document(document)
        assert_chunk_invariants(document, chunker, chunks)
        assert all(c.metadata.get("reason") for c in chunks[:-1])
