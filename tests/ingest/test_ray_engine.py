"""The Ray engine on a real two-node Ray cluster (one CPU per node) and a real PostgreSQL,
all inside a network namespace with only loopback. One child process
(``tests/ingest/ray_scenario.py``) starts everything, runs every scenario, writes what it
saw as JSON and stops everything; this test asserts on it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.ingest.ray_cluster import run_scenario

# Every test here reads what one run of the scenario saw (minutes), whichever runs first.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1600)]


def _loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    return host in ("*", "0.0.0.0", "::", "::1") or host.removeprefix("::ffff:").startswith("127.")


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    pytest.importorskip("psycopg", reason="pip install 'fissure[postgres]'")
    out = tmp_path_factory.mktemp("ray") / "seen.json"
    return run_scenario("tests.ingest.ray_scenario", out, timeout=1500)


def _ok(part: dict[str, Any]) -> None:
    assert "error" not in part, part.get("error")
    assert part["chunks_only_a"] == part["chunks_only_b"] == [], "chunk ids differ"
    assert part["chunks_equal"] and part["pieces_equal"], "chunk texts or offsets differ"
    assert part["documents_equal"] and part["failures_equal"], "manifests differ"
    assert part["listed_is_stored"] and part["pending"] == [[], []]
    assert part["max_vector_gap"] <= 1e-5


def test_ray_store_equals_the_local_one(seen: dict[str, Any]) -> None:
    same = seen["same"]
    assert "error" not in same, same.get("error")
    steps = {s["step"]: s for s in same["steps"]}
    assert list(steps) == ["first", "incremental", "settings"]
    for step in steps.values():
        _ok(step)
        assert step["ray"] == step["local"], "the run summaries differ"
    first, inc, new = steps["first"]["ray"], steps["incremental"]["ray"], steps["settings"]["ray"]
    assert first["processed"] == first["listed"] > 15 and first["chunks"] > 50
    assert (inc["processed"], inc["removed"], inc["unchanged"]) == (2, 1, inc["listed"] - 2)
    assert new["unchanged"] == 0 and new["processed"] == new["listed"]
    # Only loopback: the namespace has no other interface, every socket is on 127.0.0.1.
    network = same["network"]
    assert network["interfaces"] == ["lo"]
    assert len(network["sockets"]) > 5  # the driver is connected: these are Ray's and ours
    for line in network["sockets"]:
        local, peer = line.split()[2], line.split()[4]
        assert _loopback(local) and _loopback(peer), line


def test_poisoned_files_end_in_the_dead_letter_queue(seen: dict[str, Any]) -> None:
    part = seen["poisoned"]
    assert "error" not in part, part.get("error")
    kinds = {name: (stage, kind) for name, stage, kind, _ in part["failures"]}
    assert kinds == {
        "broken.pdf": ("parse", "InputError"),
        "noise.txt": ("parse", "InputError"),
        "stuck.hang": ("parse", "Timeout"),
        "hog.boom": ("parse", "WorkerDied"),
    }
    assert part["dlq"] == sorted([n, s, k] for n, (s, k) in kinds.items())
    assert part["summary"]["documents"] == 5 and part["summary"]["workers_replaced"] == 2
    assert part["stored_sources"] == ["code.py", "doc0.md", "doc1.md", "doc2.md", "notes.txt"]


def test_a_killed_node_then_a_rerun_equals_a_clean_run(seen: dict[str, Any]) -> None:
    part = seen["killed"]
    assert "error" not in part, part.get("error")
    assert 0 < part["committed_before_kill"] < 42, "the node was not killed mid-run"
    assert part["killed_processes"] >= 2  # the raylet and the workers under it
    assert part["rerun_exit"] == 0, part["rerun_tail"]
    _ok(part)
    assert part["n_chunks"][0] > 100
