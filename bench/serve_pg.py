"""Jobs per second of ``fissure serve`` on PostgreSQL with one and with two service processes.

``python -m bench.serve_pg [--smoke] [--files N] [--embedders hashing,minilm]`` starts a
PostgreSQL with pgvector (``fissure.store.pg_local``, 127.0.0.1), and for each embedder and
each process count a fresh database, that many ``fissure serve --store postgresql://…``
processes (one parser each, one shared ``--spool``), uploads the same stdlib files spread
over them (4 clients, one file per request) and times first upload → every job done (read
from the queue's table). Writes ``bench/results/serve-pg.md`` and ``.json``, with the load
average of the machine before and after each run: on a shared machine it moves the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from bench.service import env

RESULTS = Path(__file__).parent / "results"
STDLIB = Path(os.__file__).parent


def _port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _database(admin: str) -> str:
    import uuid

    import psycopg

    name = "bench" + uuid.uuid4().hex[:10]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    dsn = admin.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return dsn


def _start(dsn: str, work: Path, i: int, embedder: str) -> tuple[subprocess.Popen[bytes], str]:
    port = _port()
    cmd = [sys.executable, "-m", "fissure", "serve", "--store", dsn, "--spool",
           str(work / "spool"), "--state", str(work / f"state{i}"), "--port", str(port),
           "--workers", "1", "--embedder", embedder, "--max-queued", "1000000"]  # fmt: skip
    log = open(work / f"serve{i}.log", "wb")  # noqa: SIM115 - lives as long as the process
    process = subprocess.Popen(cmd, env=env(), stdout=log, stderr=log, start_new_session=True)
    return process, f"http://127.0.0.1:{port}"


def _ready(url: str, process: subprocess.Popen[bytes], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"fissure serve exited ({process.returncode})")
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{url} not ready in {timeout:g} s")


def _upload(urls: list[str], files: list[Path]) -> None:
    def send(at: int) -> None:
        path = files[at]
        for _ in range(200):
            answer = httpx.post(urls[at % len(urls)] + "/v1/documents", timeout=60,
                                files=[("files", (path.name, path.read_bytes()))])  # fmt: skip
            if answer.status_code == 202:
                return
            time.sleep(0.5)
        raise RuntimeError(f"{path.name} never accepted")

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(send, range(len(files))))


def _states(dsn: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT state, count(*) FROM fissure_jobs GROUP BY state").fetchall()
    return {s: int(n) for s, n in rows}


def one_run(admin: str, files: list[Path], processes: int, embedder: str) -> dict[str, Any]:
    """Time ``files`` through ``processes`` services on a fresh database."""
    dsn = _database(admin)
    work = Path(tempfile.mkdtemp(prefix="fissure-bench-pg-"))
    started = [_start(dsn, work, i, embedder) for i in range(processes)]
    try:
        for process, url in started:
            _ready(url, process)
        load_before = os.getloadavg()[0]
        t0 = time.monotonic()
        _upload([url for _, url in started], files)
        accepted = time.monotonic() - t0
        while True:
            states = _states(dsn)
            if states.get("done", 0) + states.get("failed", 0) >= len(files):
                break
            time.sleep(0.2)
        wall = time.monotonic() - t0
    finally:
        for process, _ in started:
            process.terminate()
        for process, _ in started:
            process.wait(60)
        shutil.rmtree(work, ignore_errors=True)
    return {"processes": processes, "embedder": embedder, "jobs": len(files),
            "done": states.get("done", 0), "failed": states.get("failed", 0),
            "accept_s": round(accepted, 2), "wall_s": round(wall, 2),
            "jobs_per_s": round(len(files) / wall, 2),
            "load_before": round(load_before, 2),
            "load_after": round(os.getloadavg()[0], 2)}  # fmt: skip


def report(rows: list[dict[str, Any]], command: str, smoke: bool) -> str:
    """The Markdown page."""
    lines = [
        "# fissure serve on PostgreSQL: one and two service processes",
        "",
        f"`{command}` on {os.cpu_count()} CPUs"
        + (" — **smoke run** (few files; proves the bench works, not a measurement)."
           if smoke else "."),  # fmt: skip
        "Each process: one parser (`--workers 1`); one shared spool; load average (1 min)",
        "before and after each run, since other work on the machine moves the figures.",
        "",
        "| embedder | processes | jobs | done | failed | accept s | wall s | jobs/s "
        "| load before → after |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]  # fmt: skip
    for r in rows:
        lines.append(f"| {r['embedder']} | {r['processes']} | {r['jobs']} | {r['done']} | "
                     f"{r['failed']} | {r['accept_s']} | {r['wall_s']} | {r['jobs_per_s']} | "
                     f"{r['load_before']} → {r['load_after']} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run the bench and write its results."""
    parser = argparse.ArgumentParser(prog="python -m bench.serve_pg")
    parser.add_argument("--smoke", action="store_true", help="few files, hashing embedder only")
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--embedders", default="hashing,minilm")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    from fissure.store.pg_local import temporary_postgres

    n = 30 if args.smoke else args.files
    embedders = ["hashing"] if args.smoke else args.embedders.split(",")
    files = sorted(STDLIB.glob("*.py"))[:n]
    rows = []
    with temporary_postgres() as admin:
        for embedder in embedders:
            for processes in (1, 2):
                rows.append(one_run(admin, files, processes, embedder))
                print(json.dumps(rows[-1]), flush=True)
    command = "python -m bench.serve_pg " + " ".join(sys.argv[1:])
    args.out.mkdir(parents=True, exist_ok=True)
    record = {"command": command.strip(), "rows": rows}
    (args.out / "serve-pg.json").write_text(json.dumps(record, indent=2) + "\n")
    (args.out / "serve-pg.md").write_text(report(rows, command.strip(), args.smoke))


if __name__ == "__main__":
    main()
