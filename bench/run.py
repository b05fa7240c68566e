"""Chunking throughput and correctness: fissure against LangChain, semchunk and chonkie.

Usage::

    python -m bench.run                  # full corpora, 3 repeats, peak memory; writes results
    python -m bench.run --quick          # ~200 KB of each corpus, no memory pass
    python -m bench.run --repeats 5 --limit-mb 2

Within each repeat every system runs once over the whole corpus, taking turns in a fixed
order on each ~1 MB slice of documents (A B C, A B C … slice after slice), so the drift of a
shared machine hits all systems alike. Each system gets a fresh splitter per repeat, built
outside the timed region. Throughput is UTF-8 bytes of input per wall-clock second; the
ratio against a group's peer is taken per repeat, and medians are reported. Correctness is
checked on the first repeat's outputs, untimed.
"""

from __future__ import annotations

import argparse
import gc
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import corpora, environment
from bench.checks import Quality, check_document, measure
from bench.systems import GROUPS, Group, Splitter, System, all_systems, key

RESULTS_DIR = Path(__file__).resolve().parent / "results"
QUICK_DIR = environment.CACHE / "quick"
QUICK_MB = 0.2
WARMUP_CHARS = 2000
SLICE_BYTES = 1_000_000  # systems alternate every ~1 MB, so drift hits all alike
Counter = Callable[[str], int]


def time_slice(splitter: Splitter, docs: list[str]) -> tuple[list[Any], float, float]:
    """Outputs, wall seconds and CPU seconds of one splitter over ``docs``."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    outputs = [splitter(text) for text in docs]
    return outputs, time.perf_counter() - wall0, time.process_time() - cpu0


def slices(docs: list[str], size: int = SLICE_BYTES) -> list[list[str]]:
    """Consecutive runs of whole documents of about ``size`` UTF-8 bytes each."""
    out: list[list[str]] = [[]]
    used = 0
    for text in docs:
        if used >= size:
            out.append([])
            used = 0
        out[-1].append(text)
        used += len(text.encode("utf-8"))
    return out


def check_outputs(
    quality: Quality, system: System, docs: list[str], outputs: list[Any], size: Counter
) -> None:
    """Add the correctness counts of one system's outputs over ``docs`` to ``quality``,
    re-measuring sizes with ``size`` (the group's independent measure)."""
    assert system.pieces is not None
    group = group_of(system)
    for text, output in zip(docs, outputs, strict=True):
        check_document(quality, text, system.pieces(output), size, group.budget)


def group_of(system: System) -> Group:
    """The budget group a system belongs to."""
    return next(g for g in GROUPS if g.key == system.group)


class Timings:
    """Per-system totals of each repeat, and the errors that stopped a system."""

    def __init__(self, systems: list[System]) -> None:
        self.wall: dict[str, list[float]] = {key(s): [] for s in systems}
        self.cpu: dict[str, list[float]] = {key(s): [] for s in systems}
        self.errors: dict[str, str] = {}

    def fail(self, system: System, exc: Exception) -> None:
        """Stop timing ``system``: a peer that cannot run here is skipped, not fatal."""
        self.errors[key(system)] = f"{type(exc).__name__}: {exc}"[:300]
        self.wall[key(system)].clear()
        self.cpu[key(system)].clear()


def run_corpus(
    corpus: corpora.Corpus, systems: list[System], repeats: int, log: Callable[[str], None]
) -> list[dict[str, Any]]:
    """Time every system ``repeats`` times, interleaved per slice, and check outputs once."""
    docs = [d.text for d in corpus.documents]
    timings = Timings(systems)
    quality = {key(s): Quality() for s in systems if s.pieces is not None}
    for system in systems:
        try:
            system.make()(docs[0][:WARMUP_CHARS])  # imports, compiled patterns, vocabularies
        except Exception as exc:
            timings.fail(system, exc)
    for r in range(repeats):
        wall = one_repeat(systems, slices(docs), timings, quality if r == 0 else None)
        for k, seconds in wall.items():
            log(f"  {corpus.name} {r + 1}/{repeats} {k}: {corpus.n_bytes / 1e6 / seconds:.2f} MB/s")
    return [summarize(s, corpus.n_bytes, timings, quality.get(key(s))) for s in systems]


def one_repeat(
    systems: list[System],
    parts: list[list[str]],
    timings: Timings,
    quality: dict[str, Quality] | None,
) -> dict[str, float]:
    """One pass of every working system, alternating slice by slice; wall seconds per key.

    Each system gets a fresh splitter, built before timing. With ``quality``, every slice's
    outputs are checked (untimed) right after they are produced, then dropped.
    """
    live = [s for s in systems if key(s) not in timings.errors]
    splitters = {key(s): s.make() for s in live}
    wall = dict.fromkeys(splitters, 0.0)
    cpu = dict.fromkeys(splitters, 0.0)
    sizes = {g.key: measure(g.measure) for g in GROUPS} if quality else {}
    gc.collect()
    for part in parts:
        for system in live:
            k = key(system)
            if k in timings.errors:
                continue
            try:
                outputs, w, c = time_slice(splitters[k], part)
            except Exception as exc:
                timings.fail(system, exc)
                continue
            wall[k] += w
            cpu[k] += c
            if quality and k in quality:
                check_outputs(quality[k], system, part, outputs, sizes[system.group])
            del outputs
    done = {k: w for k, w in wall.items() if k not in timings.errors}
    for k in done:
        timings.wall[k].append(wall[k])
        timings.cpu[k].append(cpu[k])
    return done


def _ratios(peer: list[float], mine: list[float]) -> dict[str, float | None]:
    if not mine or len(peer) != len(mine):
        return {"median": None, "min": None, "max": None}
    ratios = [p / m for p, m in zip(peer, mine, strict=True)]
    return {
        "median": round(statistics.median(ratios), 3),
        "min": round(min(ratios), 3),
        "max": round(max(ratios), 3),
    }


def summarize(
    system: System, n_bytes: int, timings: Timings, quality: Quality | None
) -> dict[str, Any]:
    """One result row: medians, per-repeat ratios against the group's peer, and checks."""
    group = group_of(system)
    k, peer = key(system), f"{group.key}:{group.peer}"
    wall, cpu = timings.wall[k], timings.cpu[k]
    if k in timings.errors:
        quality = None
    ratio, cpu_ratio = _ratios(timings.wall[peer], wall), _ratios(timings.cpu[peer], cpu)
    return {
        "system": system.name,
        "group": group.key,
        "note": system.note,
        "error": timings.errors.get(k),
        "wall_s": [round(w, 4) for w in wall],
        "cpu_s": [round(c, 4) for c in cpu],
        "mb_per_s": round(n_bytes / 1e6 / statistics.median(wall), 3) if wall else None,
        "cpu_mb_per_s": round(n_bytes / 1e6 / statistics.median(cpu), 3) if cpu else None,
        "ratio": ratio["median"],
        "ratio_min": ratio["min"],
        "ratio_max": ratio["max"],
        "cpu_ratio": cpu_ratio["median"],
        "quality": quality.to_dict() if quality else None,
        "peak_rss_mib": None,
    }


def add_memory(
    corpus: corpora.Corpus,
    rows: list[dict[str, Any]],
    systems: list[System],
    limit_mb: float | None,
    log: Callable[[str], None],
) -> None:
    """Fill ``peak_rss_mib`` for each system that ran, one child process each."""
    from bench.memory import peak_rss_mib

    for row, system in zip(rows, systems, strict=True):
        if row["mb_per_s"] is None:
            continue
        try:
            row["peak_rss_mib"] = peak_rss_mib(corpus.name, key(system), limit_mb, timeout=900)
        except RuntimeError as exc:
            log(f"  {corpus.name} memory {key(system)} failed: {exc}")
            continue
        log(f"  {corpus.name} memory {key(system)}: {row['peak_rss_mib']} MiB")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_MB} MB of each corpus, no memory pass, results under "
        "bench/.cache/quick (never over the committed results)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per system (>= 1)")
    parser.add_argument(
        "--limit-mb",
        type=float,
        default=None,
        help="use a deterministic subset of about this many MB per corpus",
    )
    parser.add_argument("--corpora", nargs="+", default=list(corpora.NAMES), choices=corpora.NAMES)
    parser.add_argument(
        "--only",
        default=None,
        help="run only systems whose name contains this text (peers always run)",
    )
    parser.add_argument(
        "--memory",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="measure peak RSS per system in child processes (default: on, off with --quick)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for chunking.md and chunking.json "
        "(default: bench/results, or bench/.cache/quick with --quick)",
    )
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.quick and args.limit_mb is None:
        args.limit_mb = QUICK_MB
    if args.memory is None:
        args.memory = not args.quick
    if args.out is None:
        args.out = QUICK_DIR if args.quick else RESULTS_DIR
    return args


def select(only: str | None) -> list[System]:
    """All systems, or those matching ``only`` plus every group's peer."""
    systems = all_systems()
    if only is None:
        return systems
    peers = {f"{g.key}:{g.peer}" for g in GROUPS}
    return [s for s in systems if only in s.name or key(s) in peers]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark, write ``chunking.md`` and ``chunking.json``; return the results."""
    argv = sys.argv[1:] if argv is None else argv
    environment.prepare()
    from bench import report  # after prepare(): it imports the packages to read versions

    args = parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    systems = select(args.only)
    command = "python -m bench.run" + "".join(f" {shlex.quote(a)}" for a in argv)
    meta = report.metadata(command, args)  # before timing: the fissure tree that was measured
    results: dict[str, Any] = {"meta": meta, "corpora": []}
    for name in args.corpora:
        corpus = corpora.load(name, args.limit_mb)
        log(f"{name}: {len(corpus.documents)} documents, {corpus.n_bytes / 1e6:.2f} MB")
        here = [s for s in systems if s.applies_to(name)]
        rows = run_corpus(corpus, here, args.repeats, log)
        if args.memory:
            add_memory(corpus, rows, here, args.limit_mb, log)
        results["corpora"].append(report.corpus_info(corpus) | {"rows": rows})
    meta["load_after"] = report.machine_load()
    md_path, json_path = report.write(results, args.out)
    log(f"wrote {md_path} and {json_path}")
    return results


if __name__ == "__main__":
    main()
