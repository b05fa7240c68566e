"""The Ray engine's batches without a cluster: how a wave is cut, and one batch through the
parse actor and the embedding actor classes as Ray Data calls them (one pickled blob per
batch in, one per batch out), with a real fissure worker process underneath."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fissure.ingest.ray_engine import (
    DOC_WEIGHT,
    _Embedding,
    _Fixed,
    _waves,
    batches,
    outcomes,
)
from fissure.ingest.ray_parts import Chunking
from fissure.ingest.workers import Task
from tests.ingest.conftest import SETTINGS
from tests.ingest.helpers import PLUGIN, HashEmbedder


@given(st.lists(st.integers(0, 50), max_size=60), st.integers(1, 9), st.integers(1, 120))
@settings(max_examples=200, deadline=None)
def test_a_wave_is_cut_into_batches_that_keep_every_document_once(
    sizes: list[int], docs: int, size: int
) -> None:
    tasks = [Task(f"d{i}", b"x" * n) for i, n in enumerate(sizes)]
    batches = list(_waves(iter(tasks), docs, size))
    assert [t for b in batches for t in b] == tasks  # all of them, once, in order
    for batch in batches:
        assert 1 <= len(batch) <= docs
        assert sum(len(t.data) for t in batch[:-1]) < size  # closes once the bytes are reached


@given(st.lists(st.integers(0, 400), max_size=300), st.integers(1, 8),
       st.sampled_from([500, 4000, 10**9]))  # fmt: skip
@settings(max_examples=200, deadline=None)
def test_batches_share_the_work_evenly_between_the_actors(
    sizes: list[int], actors: int, most_bytes: int
) -> None:
    tasks = [Task(f"d{i}", b"x" * n) for i, n in enumerate(sizes)]
    cut = batches(tasks, actors, most_bytes)
    assert [t for b in cut for t in b] == tasks and all(cut)  # all, once, in order
    if len(tasks) >= 4 * actors:  # enough to go round: a few calls each, the same number
        assert len(cut) >= 4 * actors and len(cut) % actors == 0
    work = [sum(len(t.data) + DOC_WEIGHT for t in b) for b in cut]
    heaviest = max((len(t.data) + DOC_WEIGHT for t in tasks), default=0)
    if cut:  # no batch holds more than its share by more than one document
        assert max(work) <= sum(work) / len(cut) + heaviest


def test_the_bench_corpus_goes_in_even_batches_of_about_64() -> None:
    tasks = [Task(f"d{i}", b"x" * 2000) for i in range(1340)]
    for actors, count in ((1, 21), (2, 22)):  # 21 of 64 would leave one actor a batch short
        cut = batches(tasks, actors, 32 * 1024 * 1024)
        assert len(cut) == count and max(len(b) for b in cut) - min(len(b) for b in cut) <= 1


class _Rows:
    """What :func:`outcomes` reads from a Ray dataset: ``iter_rows()``."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def iter_rows(self) -> Any:
        return iter(self.rows)


def test_one_batch_through_the_parse_and_embedding_actors() -> None:
    texts = {f"doc{i}.md": f"# Title {i}\n\n" + " ".join(f"w{i}_{k}" for k in range(90))
             for i in range(5)}  # fmt: skip
    tasks = [Task(s, t.encode()) for s, t in texts.items()]
    tasks.append(Task("noise.txt", bytes(range(256)) * 20))  # binary: an InputError
    tasks.append(Task("stuck.hang", b"never returns"))  # the plugin's hanging parser
    limits = {"timeout": 3.0, "memory_mb": 1024, "timeout_per_mb": 0.0}
    actor = Chunking(SETTINGS, limits, (PLUGIN,))
    try:
        blob = pickle.dumps(tasks[:4])
        rows = [actor({"batch": np.array([blob], dtype=object)}),
                actor({"batch": np.array([pickle.dumps(tasks[4:])], dtype=object)})]  # fmt: skip
    finally:
        actor.pool.close()
    assert [len(r["outcomes"]) for r in rows] == [1, 1]  # one blob per batch, not per row
    done = list(outcomes(_Rows([{"outcomes": r["outcomes"][0]} for r in rows])))
    assert sorted(o.source for o in done) == sorted(t.source for t in tasks)
    by_source = {o.source: o for o in done}
    assert (by_source["noise.txt"].stage, by_source["noise.txt"].error_type) == (
        "parse", "InputError")  # fmt: skip
    assert by_source["stuck.hang"].error_type == "Timeout"
    for source, text in texts.items():
        chunks = by_source[source].chunks
        assert len(chunks) > 1 and not by_source[source].failed
        assert all(text[c.start : c.end] == c.text for c in chunks)  # exact offsets
    embedder = HashEmbedder()
    embedding = _Embedding(_Fixed(embedder), 0.6, False)
    out = embedding({"outcomes": np.array([r["outcomes"][0] for r in rows], dtype=object)})
    assert out["model"] == [embedder.model_id] * 2
    items = [e for blob in out["embedded"] for e in pickle.loads(blob)]
    assert sorted(e.outcome.source for e in items) == sorted(t.source for t in tasks)
    for item in items:  # each document's own vectors, in its chunks' order
        if item.outcome.chunks:
            want = embedder.embed([c.embedding_text() for c in item.outcome.chunks])
            assert item.chunk_vectors is not None
            assert np.allclose(item.chunk_vectors, want, atol=1e-6)
