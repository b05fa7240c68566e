"""The long fuzzing run: mutated real files through every parser, counted and kept.

``python -m bench.fuzz --inputs 100000`` generates that many inputs across the parsers of
``fissure/parse/registry.py`` with :func:`tests.hostile.fuzzing.inputs` (hypothesis, a fresh
random seed per run), runs each in a worker (detect → parse → split, the per-document
timeout and memory cap of :class:`tests.hostile.fuzzing.Oracle`), and writes
``bench/results/fuzz.md``: inputs per format, what came back, time. Every failure (an
uncaught exception, a hang, a crash, a parser error hidden behind a fallback) is kept under
``tests/corpus/fuzz/`` for ``tests/hostile/test_fuzz.py`` to replay. It is CPU-heavy: run it
with ``nice -n 19``; ``--jobs N`` splits the formats over N processes (each with its own
worker). ``--inputs 600`` is a smoke run (seconds).
"""

from __future__ import annotations

import argparse
import multiprocessing
import platform
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from tests.hostile.fuzzing import FORMATS, REGRESSIONS, Oracle, inputs, keep

RESULTS = Path(__file__).resolve().parent / "results"
KINDS = ("ok", "refused", "uncaught", "hang", "crash", "masked")
Row = tuple[str, dict[str, int], float, list[str]]  # format, verdict counts, seconds, kept


def fuzz_format(
    fmt: str, count: int, oracle: Oracle, folder: Path = REGRESSIONS
) -> tuple[dict[str, int], float, list[str]]:
    """Run ``count`` inputs of ``fmt``; the verdict counts, seconds and kept files."""
    before = dict(oracle.counts)
    kept: list[str] = []
    started = time.perf_counter()

    # Only generation: a failure is recorded and the run goes on (no shrinking, no stop).
    @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(inputs(fmt))
    def run(named: tuple[str, bytes]) -> None:
        name, data = named
        found = oracle.check(name, data)
        if found.failed:
            kept.append(keep(f"{fmt}-{name}", data, found, folder).name)

    run()
    counts = {k: oracle.counts.get(k, 0) - before.get(k, 0) for k in KINDS}
    return counts, time.perf_counter() - started, kept


def report(rows: list[Row], total_s: float, timeout: float, command: str) -> str:
    """The Markdown results table."""
    lines = [
        "# Fuzzing every parser",
        "",
        f"`{command}` on {platform.machine()}, Python {platform.python_version()}: mutated "
        "real files of each format (tests/corpus, samples) through detect → parse → split in a "
        f"worker process (timeout {timeout:g} s per input, memory cap 2048 MiB). `refused` is a "
        "clear InputError or LimitError; `uncaught`, `hang`, `crash` and `masked` (a parser's "
        "programming error behind a fallback) are failures, kept under tests/corpus/fuzz/.",
        "",
        "| format | inputs | " + " | ".join(KINDS) + " | seconds |",
        "|---|---:|" + "---:|" * len(KINDS) + "---:|",
    ]
    totals = dict.fromkeys(KINDS, 0)
    for fmt, counts, seconds, _ in rows:
        n = sum(counts.values())
        lines.append(f"| {fmt} | {n:,} | " + " | ".join(f"{counts[k]:,}" for k in KINDS)
                     + f" | {seconds:.0f} |")  # fmt: skip
        for k in KINDS:
            totals[k] += counts[k]
    n = sum(totals.values())
    lines.append(f"| **all** | **{n:,}** | " + " | ".join(f"**{totals[k]:,}**" for k in KINDS)
                 + f" | **{total_s:.0f}** |")  # fmt: skip
    kept = [name for *_, names in rows for name in names]
    lines += ["", f"Failures kept: {len(kept)}" + (":" if kept else ".")]
    lines += [f"- `tests/corpus/fuzz/{name}`" for name in kept[:50]]
    return "\n".join(lines) + "\n"


def fuzz_formats(formats: list[str], each: int, timeout: float, folder: Path) -> list[Row]:
    """Fuzz several formats with one oracle (one worker process), in order."""
    rows = []
    with Oracle(timeout=timeout) as oracle:
        for fmt in formats:
            counts, seconds, kept = fuzz_format(fmt, each, oracle, folder)
            rows.append((fmt, counts, seconds, kept))
            print(f"{fmt}: {counts} in {seconds:.0f} s", flush=True)
    return rows


def main() -> None:
    """Parse arguments, fuzz, write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000, help="inputs across formats")
    parser.add_argument("--only", nargs="*", default=None, help="formats (default: all)")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per input")
    parser.add_argument("--jobs", type=int, default=1, help="processes, formats split among them")
    parser.add_argument("--out", type=Path, default=RESULTS / "fuzz.md")
    parser.add_argument("--keep", type=Path, default=REGRESSIONS, help="where failures go")
    args = parser.parse_args()
    formats = args.only or sorted(FORMATS)
    each = max(1, -(-args.inputs // len(formats)))  # at least --inputs in all
    started = time.perf_counter()
    shares = [formats[k :: args.jobs] for k in range(max(1, args.jobs)) if formats[k :: args.jobs]]
    if len(shares) == 1:
        rows = fuzz_formats(formats, each, args.timeout, args.keep)
    else:
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(len(shares), mp_context=spawn) as pool:
            done = [pool.submit(fuzz_formats, share, each, args.timeout, args.keep)
                    for share in shares]  # fmt: skip
            rows = sorted((row for future in done for row in future.result()), key=lambda r: r[0])
    command = f"python -m bench.fuzz --inputs {args.inputs}" + (
        f" --jobs {args.jobs}" if args.jobs > 1 else "")  # fmt: skip
    text = report(rows, time.perf_counter() - started, args.timeout, command)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
