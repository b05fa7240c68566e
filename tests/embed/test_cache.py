from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from fissure.embed import CachedEmbedder
from fissure.embed.cache import FILENAME

from .conftest import HashEmbedder


def test_only_misses_are_embedded(tmp_path: Path):
    inner = HashEmbedder()
    cached = CachedEmbedder(inner, tmp_path)
    first = cached.embed(["a", "b", "a"])
    assert inner.seen == ["a", "b"]
    second = cached.embed(["b", "c", "a"])
    assert inner.seen == ["a", "b", "c"]
    np.testing.assert_array_equal(second[0], first[1])
    np.testing.assert_array_equal(second[2], first[0])
    assert (cached.hits, cached.misses) == (3, 3)
    assert (cached.dim, cached.model_id) == (8, "hash")
    assert cached.embed([]).shape == (0, 8)


def test_persists_and_keys_on_model(tmp_path: Path):
    CachedEmbedder(HashEmbedder(), tmp_path).embed(["x", "y"])
    again = HashEmbedder()
    CachedEmbedder(again, tmp_path).embed(["y", "x"])
    assert again.seen == []
    other = HashEmbedder(dim=4, model_id="other")
    out = CachedEmbedder(other, tmp_path).embed(["x"])
    assert other.seen == ["x"] and out.shape == (1, 4)


def test_two_processes_share_one_cache(tmp_path: Path):
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from conftest import HashEmbedder
        from fissure.embed import CachedEmbedder
        cached = CachedEmbedder(HashEmbedder(), {str(tmp_path)!r})
        for round in range(20):
            texts = [f"text {{i}}" for i in range(round * 10, round * 10 + 50)]
            out = cached.embed(texts)
            assert out.shape == (50, 8)
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script]) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    inner = HashEmbedder()
    out = CachedEmbedder(inner, tmp_path).embed([f"text {i}" for i in range(240)])
    assert inner.seen == []
    np.testing.assert_allclose(out, HashEmbedder().embed([f"text {i}" for i in range(240)]))
    assert (tmp_path / FILENAME).exists()
