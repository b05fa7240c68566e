"""``fissure serve --engine ray`` on a real two-node Ray cluster (one CPU per node), in a
loopback-only network namespace: ``python -m tests.serve.ray_scenario OUT.json``.

One corpus (stdlib modules, eight ``.slow`` files that take 3 s each to parse, a corrupted
PDF and a file whose parser hangs) is uploaded to a service with the local engine and then
to one with ``--engine ray --address …``. While the Ray service works, the non-head node is
SIGKILLed (its raylet and everything under it, as if the machine died). The script writes
what both services ended with to ``OUT.json`` and stops everything it started;
``tests/serve/test_ray_service.py`` runs it and asserts on the JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from bench.service import children, cmdline

from tests.ingest.conftest import snapshot
from tests.ingest.ray_cluster import LocalCluster, network_report, reexec_in_loopback_namespace
from tests.ingest.ray_scenario import compare
from tests.serve.server import Server, upload, wait_jobs

STDLIB = Path(os.__file__).parent
# Short leases and backoff, so the killed node's document is retried soon; two attempts,
# so the hanging file reaches the dead-letter queue after two timeouts.
OPTIONS = ["--timeout", "5", "--max-attempts", "2", "--backoff-seconds", "1",
           "--lease-seconds", "10", "--batch-chunks", "64"]  # fmt: skip
POISON = {"broken.pdf": ("parse", "InputError"), "stuck.hang": ("parse", "Timeout")}


def corpus() -> list[tuple[str, bytes]]:
    """The files, slow ones first (so the node dies while its actor parses one)."""
    slow = [(f"slow{i}.slow", (f"slow words of file {i} " * 40).encode()) for i in range(8)]
    modules = [(p.name, p.read_bytes()) for p in sorted(STDLIB.glob("[a-f]*.py"))[:12]]
    poison = [("broken.pdf", b"%PDF-1.7\n1 0 obj << garbage \x00\x01\xff\xfe"),
              ("stuck.hang", b"this parser never returns")]  # fmt: skip
    return slow + modules + poison


def serve(store: Path, files: list[tuple[str, bytes]], options: list[str],
          cluster: LocalCluster | None = None) -> dict[str, Any]:  # fmt: skip
    """Upload ``files`` to a fresh service on ``store``, wait for every job (killing the
    cluster's second node mid-run, when ``cluster`` is given), and return what the service
    and its store ended with."""
    out: dict[str, Any] = {}
    started = time.monotonic()
    with Server(store, [*OPTIONS, *options]) as server, server.client() as client:
        out["start_seconds"] = round(time.monotonic() - started, 1)
        answer = upload(client, files)
        assert answer.status_code == 202, answer.text
        ids = {j["name"]: j["id"] for j in answer.json()["jobs"]}
        if cluster is not None:
            out.update(_kill_when_busy(client, cluster))
        jobs = wait_jobs(client, ids.values(), timeout=300)
        out["jobs"] = {name: [jobs[i]["state"], jobs[i]["attempts"],
                              (jobs[i]["error"] or {}).get("type")]
                       for name, i in ids.items()}  # fmt: skip
        listed = client.get("/v1/jobs", params={"limit": 1000}).json()["jobs"]
        out["listed"] = len(listed)
        out["distinct_documents"] = len({j["document_id"] for j in listed})
        dlq = client.get("/v1/dlq").json()
        out["dlq"] = sorted([d["name"], d["error"]["stage"], d["error"]["type"]]
                            for d in dlq["jobs"])  # fmt: skip
        time.sleep(1.0)  # the engine counts restarts when its round ends, just after this
        out["restarts"] = _restarts(client)
        out["engine_children"] = _engine_children(server)
    out["seconds"] = round(time.monotonic() - started, 1)
    return out


def _kill_when_busy(client: httpx.Client, cluster: LocalCluster) -> dict[str, Any]:
    """Kill the second node once six jobs were leased: both actors are then in the middle
    of slow files (jobs are leased in pairs, as actors come free, in upload order)."""
    deadline = time.monotonic() + 120
    leased: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        jobs = client.get("/v1/jobs", params={"limit": 1000}).json()["jobs"]
        leased = [j for j in jobs if j["attempts"] >= 1]
        if len(leased) >= 6:
            break
        time.sleep(0.1)
    return {"leased_before_kill": len(leased), "killed_processes": cluster.kill_node(1),
            "network": network_report()}  # fmt: skip


def _restarts(client: httpx.Client) -> dict[str, float]:
    found = {}
    for line in client.get("/metrics").text.splitlines():
        if line.startswith("fissure_worker_restarts_total{"):
            kind = line.split('kind="', 1)[1].split('"', 1)[0]
            found[kind] = float(line.rsplit(" ", 1)[1])
    return found


def _engine_children(server: Server) -> list[str]:
    """The command lines of the engine's child processes (local parsers, if any)."""
    engines = server.pids()["engine"]
    return [cmdline(c).replace("\0", " ").strip() for e in engines for c in children(e)]


def exact(store: Path, files: list[tuple[str, bytes]]) -> bool:
    """Whether every stored chunk is an exact slice of its file's text."""
    texts = {name: data.decode() for name, data in files if name.endswith((".py", ".slow"))}
    chunks = snapshot(store)["chunks"].values()
    return bool(chunks) and all(texts[Path(s).name][a:b] == t for s, a, b, t in chunks)


def main(out: Path) -> None:
    """Run both services; write what was seen to ``out``."""
    work = Path(tempfile.mkdtemp(prefix="fissure-ray-serve-"))
    files = corpus()
    results: dict[str, Any] = {"files": [n for n, _ in files]}
    cluster = LocalCluster(cpus=1)
    try:
        results["local"] = serve(work / "local", files, ["--workers", "2"])
        started = time.monotonic()
        cluster.start(nodes=2)
        results["cluster_start_seconds"] = round(time.monotonic() - started, 1)
        options = ["--engine", "ray", "--address", cluster.address, "--workers", "2"]
        results["ray"] = serve(work / "ray", files, options, cluster)
        local, ray = snapshot(work / "local"), snapshot(work / "ray")
        results["compare"] = compare(ray, local)
        results["exact"] = [exact(work / "local", files), exact(work / "ray", files)]
    except Exception:  # reported, so the test says what broke
        import traceback

        results["error"] = traceback.format_exc(limit=8)
        for name in ("local", "ray"):
            log = work / f"{name}-server.log"
            if log.exists():
                results[f"{name}_log"] = log.read_text("utf-8", "replace")[-3000:]
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    out.write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    reexec_in_loopback_namespace(["-m", "tests.serve.ray_scenario", *sys.argv[1:]])
    main(Path(sys.argv[1]))
