"""Issue 13's hostile corpus re-run: every case through ``fissure chunk`` and ``ingest``.

``python -m bench.hostile`` builds each case of ``tests/hostile/content_cases.py`` (and of
``tests/hostile/walk_cases.py`` where that module is present) in a temporary folder, runs
both commands with the default limits (the ``hashing`` embedder, so that parsing, splitting
and storing are what is measured), and writes ``bench/results/hostile.md``: per case the
outcome, the time, the peak resident memory of the command's whole process tree, and
whether the good files are found by ``fissure query``. ``--only NAME …`` runs some cases;
``--skip-slow`` leaves out the three slow ones (a CSV and a list literal of 19 MB each and
500 KB of semantic cuts, ~25 minutes on two busy cores).
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

from tests.hostile.runner import GOOD, CaseRun, hostile_entries, run_case

RESULTS = Path(__file__).resolve().parent / "results"
CEILING_MB = 1024
TIMEOUT_S = 1800


def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def cases(modules: list[ModuleType]) -> list[tuple[str, Callable[[Path], str], tuple[str, ...],
                                                   bool, str, ModuleType]]:  # fmt: skip
    """Every builder: (name, build, extra args, slow, issue row, module)."""
    found = []
    for module in modules:
        table = getattr(module, "CASES", {})
        for attribute in sorted(dir(module)):
            if not attribute.startswith("build_"):
                continue
            name = attribute.removeprefix("build_")
            case = table.get(name)
            args = tuple(getattr(case, "args", ()))
            slow = bool(getattr(case, "slow", False))
            issue = str(getattr(case, "issue", ""))
            found.append((name, getattr(module, attribute), args, slow, issue, module))
    return found


def _outcome(run: CaseRun, name: str, entries: list[Path], good: Iterable[str]) -> tuple[str, str]:
    """What ``chunk`` and ``ingest`` said about the hostile entries, shortly."""
    said = [_unpathed(line, name, entries) for line in run.lines
            if any(f"{name}/{e.name}" in line for e in entries)]  # fmt: skip
    # Any source but the case's good files came from a hostile entry (a file deep inside an
    # entry folder, or one under a non-UTF-8 name, has a name of its own).
    chunked = run.sources - set(good)
    if run.chunk.timed_out:
        chunk = "killed at the time limit"
    else:
        chunk = "; ".join(_short(line) for line in said) or ("chunks" if chunked else "nothing")
        if chunked and said:
            chunk = f"chunks; {chunk}"
    letters = [line for line in run.dead if any(e.name in line for e in entries)]
    ingest = "; ".join(_short(_unpathed(line.split("\t", 4)[-1], name, entries))
                       for line in letters) or "stored"  # fmt: skip
    if run.ingest.timed_out:
        ingest = "killed at the time limit"
    return chunk, ingest


def _unpathed(line: str, name: str, entries: list[Path]) -> str:
    """A message without the case's paths in it (``skipped x/y: x/y: why`` → ``skipped: why``)."""
    for entry in entries:
        # realpath, not Path.resolve: a symlink loop (case link_loop) must not raise here.
        # Longest first: a link's target (``/etc``) may be a part of its own path.
        paths = {os.path.realpath(entry), os.path.abspath(entry), f"{name}/{entry.name}"}
        for path in sorted(paths, key=len, reverse=True):
            line = line.replace(f" {path}: {path}:", ":").replace(f" {path}:", ":")
            line = line.replace(f"{path}: ", "").replace(path, entry.name)
    return line


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.replace("|", "/").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _found(run: CaseRun) -> str:
    if run.found is None:
        return "n/a"
    if run.found:
        return "yes"
    return "stored, not found (case 10)" if "good-notes.md" in run.stored else "not stored"


def row(
    name: str, issue: str, expected: str, size: int, run: CaseRun, entries: list[Path],
    good: Iterable[str],
) -> str:  # fmt: skip
    """One Markdown table row (``good``: the names of the case's good files)."""
    chunk, ingest = _outcome(run, name, entries, good)
    rc = f"{run.chunk.rc}/{run.ingest.rc}"
    peak = max(run.chunk.peak_mb, run.ingest.peak_mb)
    flag = "" if peak <= CEILING_MB else " **over**"
    return (f"| {name} | {issue} | {size / 1e6:.2f} | {_short(expected, 60)} | {chunk} | "
            f"{run.chunk.seconds:.1f} | {run.chunk.peak_mb:.0f} | {ingest} | "
            f"{run.ingest.seconds:.1f} | {run.ingest.peak_mb:.0f}{flag} | {rc} | "
            f"{_found(run)} |")  # fmt: skip


def main() -> None:
    """Parse arguments, run the cases, write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--skip-slow", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS / "hostile.md")
    args = parser.parse_args()
    modules = [m for m in (_module("tests.hostile.content_cases"),
                           _module("tests.hostile.walk_cases")) if m is not None]  # fmt: skip
    notes = [] if len(modules) == 2 else [
        "tests/hostile/walk_cases.py is not on this branch: the walk cases (1–7, 9) are not "
        "in this table; re-run after merging it."]  # fmt: skip
    rows = []
    started = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="fissure-hostile-")
    try:
        for name, build, extra, slow, issue, module in cases(modules):
            if (args.only and name not in args.only) or (slow and args.skip_slow):
                continue
            folder = Path(tmp) / name
            expected = build(folder)
            good = tuple(getattr(module, "GOOD", GOOD))  # the walk cases have their own
            entries = hostile_entries(folder, good)
            size = sum(p.stat().st_size for p in entries if p.is_file() and not p.is_symlink())
            phrase_of = getattr(module, "good_phrase", None)
            phrase = phrase_of(folder) if phrase_of else None
            run = run_case(folder, extra, TIMEOUT_S, phrase, getattr(module, "GOOD_FILE", GOOD[0]))
            rows.append(row(name, issue, expected, size, run, entries, good))
            print(rows[-1], flush=True)
    finally:
        # rm, not shutil.rmtree: the ~1000-deep tree of case deep_tree overflows its recursion.
        subprocess.run(["rm", "-rf", "--", tmp], check=False)
    write(args.out, rows, notes, time.perf_counter() - started)


def write(path: Path, rows: list[str], notes: list[str], seconds: float) -> None:
    """The report."""
    lines = [
        "# The hostile corpus (issue 13)",
        "",
        f"`python -m bench.hostile` on {platform.machine()}, Python {platform.python_version()}, "
        f"{seconds / 60:.0f} min in all. Each case is a folder with the hostile entry and two "
        "good files, run through `fissure chunk` and `fissure ingest --embedder hashing` with "
        "the default limits (--memory-mb 4096, --timeout 120 + 10 s/MB, --max-inflate-mb 256). "
        "Peak RSS is of the command's whole process tree (main process and workers, polled "
        f"every 20 ms), MiB; the ceiling is {CEILING_MB}. `rc` is chunk/ingest. `found`: the "
        "good Markdown file returned by `fissure query` for a sentence copied from it.",
        "",
        "| case | issue | MB | expected | chunk | s | MiB | ingest | s | MiB | rc | found |",
        "|---|---|---:|---|---|---:|---:|---|---:|---:|---|---|",
        *rows,
    ]
    if notes:
        lines += ["", *[f"Note: {n}" for n in notes]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
