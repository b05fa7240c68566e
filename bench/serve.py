"""Service load benchmark: concurrent clients upload real files to ``fissure serve`` while
the default MiniLM embedder works through the backlog.

    .venv/bin/python -m bench.serve                 # 1,000 files, 50 clients (quiet machine)
    .venv/bin/python -m bench.serve --smoke         # 100 files, 10 clients; labelled a smoke run
    .venv/bin/python -m bench.serve --faults        # also: the load again, kill -9 twice
                                                    # (server, then engine), store vs clean run

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
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench.service import CACHE, ROOT, Service, env, load, own_peak_mb, wait_done

RESULTS = Path(__file__).parent / "results"


def corpus(n: int, max_kb: int) -> Path:
    """``n`` real files of at most ``max_kb`` KiB: 70 % stdlib modules, 30 % Markdown docs
    installed on this machine, picked in the order of a hash of their path, copied into one
    folder. No two have the same bytes: the service makes one job of identical uploads (the
    same document id), so a copy would count as a file and not as a document."""
    root = CACHE / f"corpus-{n}-{max_kb}k-distinct"
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
    seen: set[str] = set()
    markdown = _sample(markdown, len(markdown), seen)
    want_md = min(len(markdown), int(n * 0.3))
    python = _sample(python, n - want_md, seen)
    picked = python + markdown[: n - len(python)]  # more Markdown where modules run short
    if len(picked) < n:
        raise SystemExit(f"only {len(picked)} distinct files of at most {max_kb} KiB here; "
                         "raise --max-kb or lower --files")  # fmt: skip
    for i, path in enumerate(picked):
        target = root / f"{i:04d}-{path.name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return root


def _sample(paths: list[Path], n: int, seen: set[str]) -> list[Path]:
    """The first ``n`` paths in the order of a hash of their name whose bytes are not in
    ``seen`` (the digests of the files picked so far, which this adds to)."""
    ranked = sorted(set(paths), key=lambda p: hashlib.sha256(str(p).encode()).hexdigest())
    out = []
    for path in ranked:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            out.append(path)
            if len(out) == n:
                break
    return out


# -- the baseline --------------------------------------------------------------------------


def child_ingest(root: Path, store: Path, spec: str) -> dict[str, Any]:
    """In a fresh process: ``fissure ingest`` of ``root`` with the embedder ``spec``, at the
    engine's niceness; the run's time excludes loading the model, as the service's does (its
    engine loads it at start)."""
    from fissure.embed import load_embedder
    from fissure.ingest import Options, ingest, open_source
    from fissure.serve.settings import ServiceSettings

    # The service's engine runs at this niceness; on a shared machine the baseline must too,
    # or the comparison measures the neighbours (on a quiet machine it changes nothing).
    os.nice(ServiceSettings().engine_nice)
    shutil.rmtree(store, ignore_errors=True)
    embedder = load_embedder(spec)
    loaded = _cpu(resource.RUSAGE_SELF)
    summary = ingest(open_source(str(root)), store, embedder, Options())
    return {"files": summary.listed, "documents": summary.documents, "chunks": summary.chunks,
            "seconds": summary.timings.total, "failures": len(summary.failures),
            "main_rss_mb": own_peak_mb(),
            "worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
            "cpu_s": _cpu(resource.RUSAGE_SELF) - loaded + _cpu(resource.RUSAGE_CHILDREN),
            }  # fmt: skip


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def baseline(root: Path, work: Path, spec: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.serve", "--child-ingest", str(root), "--work", str(work),
           "--embedder", spec]  # fmt: skip
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT, env=env())
    return json.loads(out.stdout.strip().splitlines()[-1])


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


def snapshot(store: Path) -> dict[str, tuple[str, int, int, str]]:
    """After the service stopped: every stored chunk, ``id -> (source, start, end, text)``."""
    from fissure.store import ChromaStore

    chroma = ChromaStore(store / "chroma")
    return {i: (m["source"], m["start"], m["end"], t) for i, t, m in chroma.items()}


def store_check(store: Path) -> dict[str, Any]:
    """After the service stopped: what the store and the manifest hold."""
    from fissure.store import Manifest

    chunks = snapshot(store)
    manifest = Manifest(store)
    listed = manifest.chunk_ids()
    pending = manifest.pending()
    manifest.close()
    spans = {(s, a, b) for s, a, b, _ in chunks.values()}
    return {"stored_chunks": len(chunks), "distinct_spans": len(spans),
            "manifest_agrees": listed == set(chunks), "pending": len(pending)}  # fmt: skip


def fault_run(files: list[Path], clients: int, mode: str, within: float,
              clean: dict[str, tuple[str, int, int, str]], work: Path,
              spec: str) -> dict[str, Any]:  # fmt: skip
    """The same load with two ``kill -9`` (of the server, or of the engine) at random moments
    of the first ``within`` seconds; every upload is retried until it is accepted."""
    import random

    rng = random.Random(f"{mode}-{len(files)}")
    moments = sorted(rng.uniform(0.05, 1.0) * within for _ in range(2))
    service = Service(work / f"store-kill-{mode}", spec)
    strike = service.kill_server if mode == "server" else service.kill_engine
    try:
        service.wait_ready(sample=False)
        started = time.perf_counter()

        def striker() -> None:
            for moment in moments:
                time.sleep(max(0.0, moment - (time.perf_counter() - started)))
                strike()

        thread = threading.Thread(target=striker, daemon=True)
        thread.start()
        uploaded = load(service, files, clients)
        thread.join()
        jobs = wait_done(service, len(files))
        seconds = time.perf_counter() - started
    finally:
        service.stop()
    got = snapshot(service.store)
    checks = store_check(service.store)
    return {"mode": mode, "kills": service.kills, "moments_s": moments, "seconds": seconds,
            "unanswered_or_refused": len(uploaded["refused"]),
            "done": sum(j["state"] == "done" for j in jobs), "jobs": len(jobs),
            "same_chunks_as_clean": got == clean, "chunks": len(got),
            "manifest_agrees": checks["manifest_agrees"], "pending": checks["pending"]}  # fmt: skip


def open_loop(files: list[Path], clients: int, rate: float, work: Path, spec: str
              ) -> dict[str, Any]:  # fmt: skip
    """Accept latency when uploads arrive at ``rate`` per second (Poisson) instead of as fast
    as the server answers, on a fresh service whose engine starts on the backlog at once."""
    service = Service(work / f"store-open-{rate:g}", spec)
    try:
        service.wait_ready(sample=False)
        started = time.perf_counter()
        uploaded = load(service, files, clients, rate)
        seconds = time.perf_counter() - started
    finally:
        service.stop()
    return {"rate": rate, "seconds": seconds, "refused": len(uploaded["refused"]),
            **_latency(uploaded["latencies"])}  # fmt: skip


def _latency(seconds: list[float]) -> dict[str, float]:
    lat = sorted(seconds)
    return {"p50_ms": 1000 * statistics.median(lat),
            "p99_ms": 1000 * lat[min(len(lat) - 1, int(0.99 * len(lat)))],
            "max_ms": 1000 * lat[-1]}  # fmt: skip


def run(n: int, clients: int, max_kb: int, faults: bool, work: Path, spec: str,
        rates: list[float]) -> dict[str, Any]:  # fmt: skip
    """The clean run (and the open-loop and fault runs) with the stores under ``work``."""
    root = corpus(n, max_kb)
    files = sorted(root.iterdir())
    base = baseline(root, work, spec)
    service = Service(work / "store-serve", spec)
    try:
        service.wait_ready()
        idle = service.cpu_seconds()
        started = time.perf_counter()
        uploaded = load(service, files, clients)
        upload_s = time.perf_counter() - started
        jobs = wait_done(service, len(files))
        total_s = time.perf_counter() - started
        cpu = {k: v - idle[k] for k, v in service.cpu_seconds().items()}
        checks = verify(service, jobs)
    finally:
        service.stop()
    lat = _latency(uploaded["latencies"])
    clean = snapshot(service.store)
    paced = [open_loop(files, clients, rate, work, spec) for rate in rates]
    crashes = [fault_run(files, clients, mode, 0.6 * total_s, clean, work, spec)
               for mode in ("server", "engine")] if faults else []  # fmt: skip
    return {
        "faults": crashes, "open_loop": paced,
        "files": len(files), "clients": clients, "max_kb": max_kb, "embedder": spec,
        "bytes": sum(p.stat().st_size for p in files),
        "accept_p50_ms": lat["p50_ms"], "accept_p99_ms": lat["p99_ms"],
        "accept_max_ms": lat["max_ms"], "refused": len(uploaded["refused"]),
        "upload_s": upload_s, "service_s": total_s, "service_docs_s": len(files) / total_s,
        "ingest": base, "ingest_docs_s": base["files"] / base["seconds"],
        "peaks_mb": service.peaks, "api_curve": service.api_curve, "cpu_s": cpu,
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
        f"with {'all-MiniLM-L6-v2 (fp32, CPU)' if r['embedder'] == 'minilm' else r['embedder']},"
        " default settings, one parser process.", "",
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
        f"| CPU seconds, engine + parsers / `fissure ingest` + parsers | {r['cpu_s']['engine']:.1f}"
        f" / {r['ingest']['cpu_s']:.1f} ({r['ingest']['cpu_s'] / r['cpu_s']['engine']:.1%} "
        "efficiency; the load on a shared machine does not move this one) | |",
        f"| CPU seconds of the API process (accepting every upload) | {r['cpu_s']['api']:.1f} | |",
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
    if r["open_loop"]:
        lines += ["", "## Uploads arriving at a given rate (open loop)", "",
                  f"The same {r['files']} files, sent by {r['clients']} clients at the rate "
                  "below (Poisson arrivals) to a fresh service whose engine works on the "
                  "backlog meanwhile; each latency counts from the moment the upload was due, "
                  "so waiting for a free client or a slow answer is charged to the server.",
                  "", "| offered uploads/s | all answered after | p50 | p99 | max | refused |",
                  "|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for o in r["open_loop"]:
            lines.append(f"| {o['rate']:g} | {o['seconds']:.1f} s | {o['p50_ms']:.1f} ms | "
                         f"{o['p99_ms']:.1f} ms | {o['max_ms']:.1f} ms | "
                         f"{o['refused']} |")  # fmt: skip
    if r["faults"]:
        lines += ["", "## kill -9 during the same load (`--faults`)", "",
                  "| killed | kills at (s) | jobs done | uploads unanswered or refused, retried "
                  "| chunks | store equals the clean run's | manifest agrees | pending |",
                  "|---|---|---:|---:|---:|---|---|---:|"]  # fmt: skip
        for f in r["faults"]:
            at = ", ".join(f"{m:.1f}" for m in f["moments_s"])
            lines.append(f"| {f['mode']} ({f['kills']}×) | {at} | {f['done']} / {f['jobs']} | "
                         f"{f['unanswered_or_refused']} | {f['chunks']} | "
                         f"{f['same_chunks_as_clean']} | {f['manifest_agrees']} | "
                         f"{f['pending']} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--max-kb", type=int, default=100, help="largest file, KiB")
    parser.add_argument("--smoke", action="store_true", help="100 files of <= 16 KiB, 10 clients")
    parser.add_argument(
        "--faults",
        action="store_true",
        help="also rerun the load twice, killing the server / the engine",
    )
    parser.add_argument("--rates", default="100,200",
                        help="open-loop upload rates per second to measure, comma-separated "
                        "('' for none)")  # fmt: skip
    parser.add_argument("--embedder", default="minilm", help="for a quick check: hashing")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where serve.md/.json go")
    parser.add_argument("--work", type=Path, default=CACHE, help="where the stores go")
    parser.add_argument("--child-ingest", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_ingest:
        store = args.work / "store-ingest"
        print(json.dumps(child_ingest(args.child_ingest, store, args.embedder)))
        return
    n, clients, max_kb = (100, 10, 16) if args.smoke else (args.files, args.clients, args.max_kb)
    CACHE.mkdir(parents=True, exist_ok=True)
    rates = [float(x) for x in args.rates.split(",") if x.strip()]
    rates = rates[:1] if args.smoke else rates
    result = run(n, clients, max_kb, args.faults, args.work, args.embedder, rates)
    command = "python -m bench.serve"
    command += " --smoke" if args.smoke else f" --files {n} --clients {clients} --max-kb {max_kb}"
    command += " --faults" if args.faults else ""
    command += f" --rates {args.rates}" if args.rates != "100,200" else ""
    command += f" --embedder {args.embedder}" if args.embedder != "minilm" else ""
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "serve.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    (args.out / "serve.md").write_text(report(result, args.smoke, command))
    print((args.out / "serve.md").read_text())


if __name__ == "__main__":
    main()
