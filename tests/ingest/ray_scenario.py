"""The Ray engine on a real two-node cluster and a real PostgreSQL, in a loopback-only
network namespace: ``python -m tests.ingest.ray_scenario OUT.json``.

It starts PostgreSQL (``fissure.store.pg_local``) and two Ray nodes of one CPU each, runs
the scenarios below, writes what it saw to ``OUT.json`` and stops everything it started.
``tests/ingest/test_ray_engine.py`` runs it and asserts on the JSON.

- ``same``: the Ray engine's store equals the local engine's on the same corpus (MiniLM on
  both), first run, then incremental (changes, a deletion, an addition), then new settings.
- ``poisoned``: a hanging parser (a plugin), a corrupted PDF, binary noise and a memory hog
  end as dead letters; the run finishes.
- ``killed``: a worker node is SIGKILLed mid-run (and a new one joins, as an autoscaler
  would); the run ends or is killed, a re-run finishes, the store equals a clean run's.
- ``network``: the namespace's interfaces and sockets while the driver is connected.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from tests.ingest.conftest import SETTINGS, pg_rows, run, snapshot, vectors_of, write_corpus
from tests.ingest.ray_cluster import (
    ROOT,
    LocalCluster,
    network_report,
    pythonpath,
    reexec_in_loopback_namespace,
)

DRIVER = """
import sys
from tests.ingest.conftest import run
from tests.ingest.helpers import HashEmbedder
from fissure.ingest.ray_engine import RayEngine
print("go", flush=True)
summary = run(sys.argv[1], sys.argv[2], HashEmbedder(delay=0.3), namespace="killed",
              engine=RayEngine(address=sys.argv[3], docs_per_batch=2), batch_chunks=6)
print("processed", summary.processed, flush=True)
"""


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """What differs between two snapshots (empty lists/False when they are equal)."""
    return {
        "chunks_only_a": sorted(set(a["chunks"]) - set(b["chunks"]))[:5],
        "chunks_only_b": sorted(set(b["chunks"]) - set(a["chunks"]))[:5],
        "chunks_equal": a["chunks"] == b["chunks"],
        "pieces_equal": a["pieces"] == b["pieces"],
        "documents_equal": a["documents"] == b["documents"],
        "failures_equal": a["failures"] == b["failures"],
        "listed_is_stored": a["listed"] == set(a["chunks"]) and b["listed"] == set(b["chunks"]),
        "pending": [a["pending"], b["pending"]],
        "n_chunks": [len(a["chunks"]), len(b["chunks"])],
    }


def max_vector_gap(dsn: str, a: str, b: str) -> float:
    va, vb = vectors_of(dsn, a), vectors_of(dsn, b)
    if set(va) != set(vb):
        return float("inf")
    return max((float(np.abs(va[i] - vb[i]).max()) for i in va), default=0.0)


def same(dsn: str, cluster: LocalCluster, work: Path) -> dict[str, Any]:
    import ray

    from fissure.embed import load_embedder
    from fissure.ingest.ray_engine import RayEngine

    corpus = write_corpus(work / "same", n=10)
    for folder in (ROOT / "tests" / "corpus").iterdir():  # every format the repo has
        if folder.is_dir():
            shutil.copytree(folder, corpus / folder.name)
    model = load_embedder("minilm")
    engine = RayEngine(make_embedder=partial(load_embedder, "minilm"))
    ray.init(address=cluster.address, log_to_driver=False)
    out: dict[str, Any] = {"network": network_report()}
    steps: list[dict[str, Any]] = []
    try:
        for step in ("first", "incremental", "settings"):
            if step == "incremental":
                (corpus / "doc1.md").write_text("# Changed\n\n" + "fresh words " * 60)
                (corpus / "doc2.md").unlink()
                (corpus / "new.md").write_text("# New\n\n" + "new words here " * 30)
            settings = replace(SETTINGS, max_tokens=25) if step == "settings" else SETTINGS
            got = run(corpus, dsn, model, namespace="ray", engine=engine, settings=settings)
            want = run(corpus, dsn, model, namespace="local", settings=settings)
            steps.append({
                "step": step, "ray": _summary(got), "local": _summary(want),
                **compare(snapshot(dsn, "ray"), snapshot(dsn, "local")),
                "max_vector_gap": max_vector_gap(dsn, "ray", "local"),
            })  # fmt: skip
    finally:
        ray.shutdown()
    out["steps"] = steps
    return out


def poisoned(dsn: str, cluster: LocalCluster, work: Path) -> dict[str, Any]:
    from fissure.ingest.ray_engine import RayEngine

    root = write_corpus(work / "poisoned", n=3)
    (root / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << garbage \x00\x01\xff\xfe")
    (root / "noise.txt").write_bytes(bytes(range(256)) * 20)
    (root / "stuck.hang").write_text("this parser never returns")
    (root / "hog.boom").write_text("a memory hog parses this")
    started = time.monotonic()
    summary = run(root, dsn, namespace="poisoned", timeout=5, memory_mb=1024,
                  engine=RayEngine(address=cluster.address))  # fmt: skip
    state = snapshot(dsn, "poisoned")
    return {
        "seconds": round(time.monotonic() - started, 1),
        "summary": _summary(summary),
        "failures": sorted(
            [Path(f.source).name, f.stage, f.error_type, f.message[:120]] for f in summary.failures
        ),
        "dlq": sorted([Path(s).name, stage, kind] for s, stage, kind in state["failures"]),
        "stored_sources": sorted({Path(v[0]).name for v in state["chunks"].values()}),
    }


def killed(dsn: str, cluster: LocalCluster, work: Path) -> dict[str, Any]:
    corpus = write_corpus(work / "killed", n=40)
    first = _driver(corpus, dsn, cluster)
    out: dict[str, Any] = {}
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and first.poll() is None:
        if pg_rows(dsn, "documents", "killed") >= 6:
            break
        time.sleep(0.05)
    out["committed_before_kill"] = pg_rows(dsn, "documents", "killed")
    out["killed_processes"] = cluster.kill_node(1)
    out["pending_after_kill"] = len(snapshot(dsn, "killed")["pending"])
    cluster.add_node()  # a replacement machine joins, as an autoscaler would start one
    try:
        out["first_run_exit"] = first.wait(240)
    except subprocess.TimeoutExpired:
        first.kill()
        out["first_run_exit"] = f"killed after 240 s: {first.wait()}"
    out["first_run_tail"] = (first.stderr.read() if first.stderr else b"").decode()[-1500:]
    out["committed_after_first"] = pg_rows(dsn, "documents", "killed")
    again = _driver(corpus, dsn, cluster)
    out["rerun_exit"] = again.wait(400)
    out["rerun_output"] = (again.stdout.read() if again.stdout else b"").decode()[-300:]
    out["rerun_tail"] = (again.stderr.read() if again.stderr else b"").decode()[-1500:]
    run(corpus, dsn, namespace="clean")
    out.update(compare(snapshot(dsn, "killed"), snapshot(dsn, "clean")))
    out["max_vector_gap"] = max_vector_gap(dsn, "killed", "clean")
    return out


def _driver(corpus: Path, dsn: str, cluster: LocalCluster) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": pythonpath()}
    process = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(corpus), dsn, cluster.address], cwd=ROOT,
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None and process.stdout.readline() == b"go\n"
    return process


def _summary(summary: Any) -> dict[str, Any]:
    return {key: getattr(summary, key) for key in ("listed", "unchanged", "processed",
            "removed", "chunks", "documents", "corpus_chunks", "workers_replaced")}  # fmt: skip


def main(out: Path) -> None:
    """Run every scenario; write what was seen to ``out``."""
    from fissure.store.pg_local import temporary_postgres

    results: dict[str, Any] = {}
    work = Path(tempfile.mkdtemp(prefix="fissure-ray-"))
    cluster = LocalCluster(cpus=1)
    try:
        with temporary_postgres() as dsn:
            started = time.monotonic()
            cluster.start(nodes=2)
            results["cluster_start_seconds"] = round(time.monotonic() - started, 1)
            for name, scenario in (("same", same), ("poisoned", poisoned), ("killed", killed)):
                started = time.monotonic()
                try:
                    results[name] = scenario(dsn, cluster, work)
                except Exception as exc:  # reported, so the test says which scenario broke
                    import traceback

                    results[name] = {"error": traceback.format_exc(limit=8), "type": repr(exc)}
                results[name]["seconds"] = round(time.monotonic() - started, 1)
                out.write_text(json.dumps(results, indent=1, default=str))
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    out.write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    reexec_in_loopback_namespace(["-m", "tests.ingest.ray_scenario", *sys.argv[1:]])
    main(Path(sys.argv[1]))
