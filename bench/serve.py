"""Service load benchmark: concurrent clients upload real files to ``fissure serve`` while
the default MiniLM embedder works through the backlog.

    .venv/bin/python -m bench.serve                 # 1,000 files, 50 clients (quiet machine)
    .venv/bin/python -m bench.serve --smoke         # 100 files, 10 clients; labelled a smoke run

Measured: accept latency (client side, p50/p99) of every upload; sustained documents per
second from the first upload to the last job done, against ``fissure ingest`` of the same
files in a fresh process (same settings, same embedder); peak RSS of the API process, the
engine and the parsers, sampled through the run (and the API process's RSS as uploads
accumulate, to show it is flat); and at the end, that every document is searchable (a
query with its first chunk's text finds it), none is missing and none is duplicated
(store and manifest agree, one job per document). Writes ``bench/results/serve.md`` and
``serve.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import queue
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

CACHE = Path(__file__).parent / ".cache" / "serve"
RESULTS = Path(__file__).parent / "results"
ROOT = Path(__file__).resolve().parents[1]


def corpus(n: int, max_kb: int) -> Path:
    """``n`` real files of at most ``max_kb`` KiB: 70 % stdlib modules, 30 % Markdown docs
    installed on this machine, picked in the order of a hash of their path, copied into one
    folder."""
    root = CACHE / f"corpus-{n}-{max_kb}k"
    if root.is_dir() and len(list(root.rglob("*.*"))) == n:
        return root
    shutil.rmtree(root, ignore_errors=True)
    stdlib = Path(os.__file__).parent
    def fits(path: Path) -> bool:
        return path.is_file() and 200 < path.stat().st_size <= max_kb * 1024

    python = [p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts
              and not {"test", "tests", "idle_test"} & set(p.parts) and fits(p)]  # fmt: skip
    site = Path(sys.prefix) / "lib"
    markdown = [p for base in (site, Path("/usr/share/doc"), Path("/usr/lib"))
                for p in base.rglob("*.md") if fits(p)]  # fmt: skip
    want_md = min(len(markdown), int(n * 0.3))
    picked = _sample(python, n - want_md) + _sample(markdown, want_md)
    for i, path in enumerate(picked):
        target = root / f"{i:04d}-{path.name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return root


def _sample(paths: list[Path], n: int) -> list[Path]:
    ranked = sorted(set(paths), key=lambda p: hashlib.sha256(str(p).encode()).hexdigest())
    return ranked[:n]


# -- the baseline --------------------------------------------------------------------------


def child_ingest(root: Path) -> dict[str, Any]:
    """In a fresh process: ``fissure ingest`` of ``root`` with MiniLM, at the engine's
    niceness; the run's time excludes loading the model, as the service's does (its engine
    loads it at start)."""
    from fissure.embed import load_embedder
    from fissure.ingest import Options, ingest, open_source
    from fissure.serve.settings import ServiceSettings

    # The service's engine runs at this niceness; on a shared machine the baseline must too,
    # or the comparison measures the neighbours (on a quiet machine it changes nothing).
    os.nice(ServiceSettings().engine_nice)
    store = CACHE / "store-ingest"
    shutil.rmtree(store, ignore_errors=True)
    embedder = load_embedder("minilm")
    summary = ingest(open_source(str(root)), store, embedder, Options())
    return {"files": summary.listed, "documents": summary.documents, "chunks": summary.chunks,
            "seconds": summary.timings.total, "failures": len(summary.failures),
            "main_rss_mb": _own_peak_mb(),
            "worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
            }  # fmt: skip


def baseline(root: Path) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.serve", "--child-ingest", str(root)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT, env=_env())
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- the service ---------------------------------------------------------------------------


class Service:
    """``fissure serve`` with the default MiniLM on a fresh store, and an RSS sampler."""

    def __init__(self, store: Path) -> None:
        shutil.rmtree(store, ignore_errors=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.store = store
        self.log = open(CACHE / "serve.log", "w")  # noqa: SIM115
        cmd = [sys.executable, "-m", "fissure", "serve", "--store", str(store), "--port",
               str(self.port), "--max-queued", "1000000"]  # fmt: skip
        self.process = subprocess.Popen(cmd, env=_env(), stdout=self.log, stderr=self.log,
                                        start_new_session=True)  # fmt: skip
        self.peaks: dict[str, float] = {"api": 0.0, "engine": 0.0, "parsers": 0.0}
        self.api_curve: list[tuple[int, float]] = []
        self.uploaded = 0
        self._stop = threading.Event()

    def wait_ready(self) -> None:
        import httpx

        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    threading.Thread(target=self._sample, daemon=True).start()
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError("the service did not get ready; see bench/.cache/serve/serve.log")

    def _sample(self) -> None:
        step = 0
        while not self._stop.wait(0.5):
            procs = tree(self.process.pid)
            rss = {"api": _rss_mb(self.process.pid),
                   "engine": sum(_rss_mb(p) for p in procs["engine"]),
                   "parsers": max((_rss_mb(p) for p in procs["parsers"]), default=0.0)}  # fmt: skip
            for role, mb in rss.items():
                self.peaks[role] = max(self.peaks[role], mb)
            if self.uploaded >= step:
                self.api_curve.append((self.uploaded, rss["api"]))
                step = self.uploaded + 50

    def stop(self) -> None:
        self._stop.set()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log.close()


def load(service: Service, files: list[Path], clients: int) -> dict[str, Any]:
    """Every file uploaded once by ``clients`` concurrent clients; latencies of the answers."""
    import httpx

    todo: queue.Queue[Path] = queue.Queue()
    for path in files:
        todo.put(path)
    latencies: list[float] = []
    refused: list[int] = []
    jobs: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()

    def client() -> None:
        with httpx.Client(base_url=service.url, timeout=60) as http:
            while True:
                try:
                    path = todo.get_nowait()
                except queue.Empty:
                    return
                body = [("files", (path.name, path.read_bytes()))]
                started = time.perf_counter()
                answer = http.post("/v1/documents", files=body)
                took = time.perf_counter() - started
                with lock:
                    if answer.status_code == 202:
                        latencies.append(took)
                        job = answer.json()["jobs"][0]
                        jobs[job["id"]] = job
                        service.uploaded += 1
                    else:
                        refused.append(answer.status_code)
                if answer.status_code != 202:
                    time.sleep(float(answer.headers.get("retry-after", "1")))
                    todo.put(path)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"latencies": latencies, "refused": refused, "jobs": jobs}


def wait_done(service: Service, n: int) -> list[dict[str, Any]]:
    """Every job of the namespace once none is queued or running."""
    import httpx

    with httpx.Client(base_url=service.url, timeout=60) as http:
        while True:
            jobs = _all_jobs(http)
            if len(jobs) >= n and all(j["state"] in ("done", "failed") for j in jobs):
                return jobs
            time.sleep(1.0)


def _all_jobs(http: Any) -> list[dict[str, Any]]:
    found, cursor = [], None
    while True:
        params = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
        page = http.get("/v1/jobs", params=params).json()
        found.extend(page["jobs"])
        cursor = page["next_cursor"]
        if cursor is None:
            return found


def verify(service: Service, jobs: list[dict[str, Any]]) -> dict[str, Any]:
    """Every document searchable by its own first chunk; nothing missing or duplicated."""
    import httpx

    found = missed = 0
    with httpx.Client(base_url=service.url, timeout=60) as http:
        for job in jobs:
            if job["state"] != "done" or not job["chunks"]:
                continue
            chunks = http.get(f"/v1/documents/{job['document_id']}/chunks").json()["chunks"]
            text = chunks[0]["text"][:1000]
            hits = http.post("/v1/query", json={"text": text, "k": 5}).json()["hits"]
            if any(h["document_id"] == job["document_id"] for h in hits):
                found += 1
            else:
                missed += 1
    return {"searchable": found, "not_found": missed,
            "documents": len({j["document_id"] for j in jobs}), "jobs": len(jobs),
            "done": sum(j["state"] == "done" for j in jobs),
            "failed": sum(j["state"] == "failed" for j in jobs),
            "chunks_by_jobs": sum(j["chunks"] or 0 for j in jobs)}  # fmt: skip


def store_check(store: Path) -> dict[str, Any]:
    """After the service stopped: what the store and the manifest hold."""
    from fissure.store import ChromaStore, Manifest

    chroma = ChromaStore(store / "chroma")
    spans = [(m["source"], m["start"], m["end"]) for _, _, m in chroma.items()]
    manifest = Manifest(store)
    listed = manifest.chunk_ids()
    stored = {i for i, _, _ in chroma.items()}
    pending = manifest.pending()
    manifest.close()
    return {"stored_chunks": chroma.count(), "distinct_spans": len(set(spans)),
            "manifest_agrees": listed == stored, "pending": len(pending)}  # fmt: skip


def run(n: int, clients: int, max_kb: int) -> dict[str, Any]:
    root = corpus(n, max_kb)
    files = sorted(root.iterdir())
    base = baseline(root)
    service = Service(CACHE / "store-serve")
    try:
        service.wait_ready()
        started = time.perf_counter()
        uploaded = load(service, files, clients)
        upload_s = time.perf_counter() - started
        jobs = wait_done(service, len(files))
        total_s = time.perf_counter() - started
        checks = verify(service, jobs)
    finally:
        service.stop()
    lat = sorted(uploaded["latencies"])
    return {
        "files": len(files), "clients": clients, "max_kb": max_kb,
        "bytes": sum(p.stat().st_size for p in files),
        "accept_p50_ms": 1000 * statistics.median(lat),
        "accept_p99_ms": 1000 * lat[min(len(lat) - 1, int(0.99 * len(lat)))],
        "accept_max_ms": 1000 * lat[-1], "refused": len(uploaded["refused"]),
        "upload_s": upload_s, "service_s": total_s, "service_docs_s": len(files) / total_s,
        "ingest": base, "ingest_docs_s": base["files"] / base["seconds"],
        "peaks_mb": service.peaks, "api_curve": service.api_curve,
        **checks, **store_check(service.store),
    }  # fmt: skip


def report(r: dict[str, Any], smoke: bool, command: str) -> str:
    ratio = r["service_docs_s"] / r["ingest_docs_s"]
    curve = ", ".join(f"{n}: {mb:.0f}" for n, mb in r["api_curve"])
    title = "# Service load benchmark"
    if smoke:
        title += " — SMOKE RUN (not the full measurement)"
    lines = [
        title, "",
        *(["> A small run on a shared machine to prove the harness works. The full run is "
           "`python -m bench.serve` (1,000 files, 50 clients) on a quiet machine.", ""]
          if smoke else []),
        f"`{command}` on {platform.machine()}, {os.cpu_count()} cores (load average "
        f"{os.getloadavg()[0]:.1f} at the end), Python {platform.python_version()}. "
        f"{r['files']} files ({r['bytes'] / 1e6:.1f} MB, each at most {r['max_kb']} KiB: stdlib "
        "modules and Markdown docs) "
        f"uploaded one per request by {r['clients']} concurrent clients; the engine embeds "
        "with all-MiniLM-L6-v2 (fp32, CPU), default settings, one parser process.", "",
        "| measure | value | target |", "|---|---:|---:|",
        f"| accept latency p50 | {r['accept_p50_ms']:.1f} ms | |",
        f"| accept latency p99 | {r['accept_p99_ms']:.1f} ms | ≤ 100 ms |",
        f"| accept latency max | {r['accept_max_ms']:.1f} ms | |",
        f"| uploads refused (429/503, retried) | {r['refused']} | |",
        f"| all uploads answered after | {r['upload_s']:.1f} s | |",
        f"| service: first upload → last job done | {r['service_s']:.1f} s "
        f"({r['service_docs_s']:.2f} documents/s) | |",
        f"| `fissure ingest` of the same files (model load excluded) | "
        f"{r['ingest']['seconds']:.1f} s ({r['ingest_docs_s']:.2f} documents/s) | |",
        f"| service throughput / ingest throughput | {ratio:.1%} | ≥ 90 % |",
        f"| peak RSS: API process | {r['peaks_mb']['api']:.0f} MiB | flat |",
        f"| peak RSS: engine (model, Chroma, writer) | {r['peaks_mb']['engine']:.0f} MiB | |",
        f"| peak RSS: largest parser process | {r['peaks_mb']['parsers']:.0f} MiB | |",
        f"| `fissure ingest` peak RSS (main / parser) | {r['ingest']['main_rss_mb']:.0f} / "
        f"{r['ingest']['worker_rss_mb']:.0f} MiB | |", "",
        f"API process RSS (MiB) by uploads accepted so far: {curve}.", "",
        "## At the end", "",
        "| check | value |", "|---|---:|",
        f"| jobs / distinct documents | {r['jobs']} / {r['documents']} |",
        f"| done / failed | {r['done']} / {r['failed']} |",
        f"| searchable by their first chunk (top 5) | {r['searchable']} (not found: "
        f"{r['not_found']}) |",
        f"| chunks by the jobs / in the store / distinct spans | {r['chunks_by_jobs']} / "
        f"{r['stored_chunks']} / {r['distinct_spans']} |",
        f"| manifest lists exactly the stored chunks | {r['manifest_agrees']} |",
        f"| documents left pending | {r['pending']} |",
        f"| `fissure ingest`: documents / chunks | {r['ingest']['documents']} / "
        f"{r['ingest']['chunks']} |",
    ]  # fmt: skip
    return "\n".join(lines) + "\n"


def tree(pid: int) -> dict[str, list[int]]:
    """The processes a ``fissure serve`` started: ``engine`` and ``parsers``."""
    found: dict[str, list[int]] = {"engine": [], "parsers": []}
    for child in children(pid):
        if "fissure.serve.engine" in cmdline(child):
            found["engine"].append(child)
            found["parsers"].extend(children(child))
    return found


def children(pid: int) -> list[int]:
    """Children of every thread of ``pid`` (a thread's children are listed under it)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found.extend(int(p) for p in (task / "children").read_text().split())
        except OSError:
            continue
    return found


def cmdline(pid: int) -> str:
    """A process's command line, arguments joined by NULs."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _own_peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
            "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--max-kb", type=int, default=100, help="largest file, KiB")
    parser.add_argument("--smoke", action="store_true", help="100 files of <= 16 KiB, 10 clients")
    parser.add_argument("--child-ingest", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_ingest:
        print(json.dumps(child_ingest(args.child_ingest)))
        return
    n, clients, max_kb = (100, 10, 16) if args.smoke else (args.files, args.clients, args.max_kb)
    CACHE.mkdir(parents=True, exist_ok=True)
    result = run(n, clients, max_kb)
    command = "python -m bench.serve"
    command += " --smoke" if args.smoke else f" --files {n} --clients {clients} --max-kb {max_kb}"
    (RESULTS / "serve.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    (RESULTS / "serve.md").write_text(report(result, args.smoke, command))
    print((RESULTS / "serve.md").read_text())


if __name__ == "__main__":
    main()
