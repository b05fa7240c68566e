"""The Ray engine's batches without a cluster: how a wave is cut, and one batch through the
parse actor and the embedding actor classes as Ray Data calls them (one pickled blob per
batch in, one per batch out), with a real fissure worker process underneath."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fissure.ingest.ray_engine import _Embedding, _Fixed, _waves, batch_docs, outcomes
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


def test_batches_give_each_actor_a_few_calls_and_stay_bounded() -> None:
    for docs, actors in ((1340, 1), (1340, 2), (2000, 8), (30, 1), (42, 2), (1, 4), (0, 2)):
        batch = batch_docs(docs, actors)
        assert 1 <= batch <= 64
        calls = -(-docs // batch)
        # about four calls per actor, unless that would make batches over 64 documents
        assert batch == 64 or calls >= min(docs, 4 * actors) // 2
    assert batch_docs(1340, 2) == batch_docs(1340, 1) == 64


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
