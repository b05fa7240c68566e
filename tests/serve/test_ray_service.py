"""``fissure serve --engine ray`` on a real two-node Ray cluster in a loopback-only network
namespace, against ``fissure serve`` with the local engine on the same files. One child
process (``tests/serve/ray_scenario.py``) starts everything, kills the non-head node while
the Ray service works, writes what it saw as JSON and stops everything; this test asserts
on it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.ingest.ray_cluster import run_scenario
from tests.ingest.test_ray_engine import _loopback

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1000)]


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("ray-serve") / "seen.json"
    return run_scenario("tests.serve.ray_scenario", out, timeout=900)


def test_ray_service_equals_the_local_one_through_a_node_death(seen: dict[str, Any]) -> None:
    assert "error" not in seen, (seen.get("error"), seen.get("ray_log"), seen.get("local_log"))
    local, ray = seen["local"], seen["ray"]
    poison = {"broken.pdf": "InputError", "stuck.hang": "Timeout"}
    for service in (local, ray):
        # Every good job done, the poison in the DLQ with its reason, each document once.
        states = {name: (state, kind) for name, (state, _, kind) in service["jobs"].items()}
        assert states == {n: ("failed", poison[n]) if n in poison else ("done", None)
                          for n in seen["files"]}  # fmt: skip
        assert service["dlq"] == sorted([n, "parse", k] for n, k in poison.items())
        assert service["listed"] == service["distinct_documents"] == len(seen["files"])
    # The same store: chunk ids, texts, offsets, manifest; every chunk an exact slice.
    same = seen["compare"]
    assert same["chunks_only_a"] == same["chunks_only_b"] == [], "chunk ids differ"
    assert same["chunks_equal"] and same["documents_equal"] and same["listed_is_stored"]
    assert same["pending"] == [[], []] and same["n_chunks"][0] > 100
    assert seen["exact"] == [True, True]
    # The node died mid-run: the document its actor held failed (WorkerDied), went back to
    # the queue and was done on the other node; the engine went on with one actor.
    assert 6 <= ray["leased_before_kill"] <= 8  # while the slow files were parsed
    assert ray["killed_processes"] >= 2  # the raylet and the processes under it
    retried = [n for n, (state, attempts, _) in ray["jobs"].items()
               if n not in poison and attempts > 1]  # fmt: skip
    assert len(retried) == 1, ray["jobs"]
    assert ray["restarts"]["replaced"] == local["restarts"]["replaced"] + 1
    # Parsing ran on Ray: the Ray engine has no parser processes of its own.
    assert any("fissure.ingest.worker" in c for c in local["engine_children"])
    assert not any("fissure.ingest.worker" in c for c in ray["engine_children"])
    # Only loopback: the namespace has no other interface, every socket is on 127.0.0.1.
    network = ray["network"]
    assert network["interfaces"] == ["lo"] and len(network["sockets"]) > 5
    for line in network["sockets"]:
        assert _loopback(line.split()[2]) and _loopback(line.split()[4]), line
