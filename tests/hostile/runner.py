"""One hostile case through ``fissure chunk``, ``fissure ingest``, ``dlq list`` and ``query``.

Shared by ``tests/hostile/test_content.py`` (which asserts on the result) and
``bench/hostile.py`` (which tabulates it). A case folder holds the hostile entries and two
good files (:mod:`tests.hostile.content_cases`); the commands run from its parent with the
``hashing`` embedder, so that what is measured is parsing, splitting and storing.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tests.hostile.measure import Measured, run_measured

SRC = str(Path(__file__).resolve().parents[2] / "src")
GOOD = ("good-notes.md", "good-code.py")


def fissure(*args: str, cwd: Path, timeout: float) -> Measured:
    """``python -m fissure ARGS`` with this checkout's sources, measured."""
    env = {"PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    return run_measured([sys.executable, "-m", "fissure", *args], timeout=timeout, cwd=cwd,
                        env=env)  # fmt: skip


@dataclass
class CaseRun:
    """What the commands did with one case folder.

    Attributes:
        chunk, ingest: The two runs (exit status, seconds, peak MiB, output).
        sources: File names that got chunks from ``fissure chunk``.
        jsonl_bytes: Size of its JSONL.
        lines: Its stderr lines (skips, fallbacks, the summary).
        dead: ``fissure dlq list`` lines after the ingest.
        stored: File names with chunks in the store (from ``ingest --export``).
        found: Whether the good Markdown file came back from an unfiltered query (``None``
            when there is no phrase to look for).
    """

    chunk: Measured
    ingest: Measured
    sources: set[str] = field(default_factory=set)
    jsonl_bytes: int = 0
    lines: list[str] = field(default_factory=list)
    dead: list[str] = field(default_factory=list)
    stored: set[str] = field(default_factory=set)
    found: bool | None = None


def run_case(
    folder: Path, args: tuple[str, ...], timeout: float, phrase: str | None, good: str = GOOD[0]
) -> CaseRun:
    """Chunk, ingest, list dead letters and query for ``phrase`` (when given): ``found`` is
    whether the good file ``good`` is among the hits."""
    cwd, name = folder.parent, folder.name
    out = cwd / f"{name}.jsonl"
    chunk = fissure("chunk", name, "-o", str(out), *args, cwd=cwd, timeout=timeout)
    store, export = cwd / f"{name}.store", cwd / f"{name}.export.jsonl"
    ingest = fissure("ingest", name, "--store", str(store), "--embedder", "hashing",
                     "--no-progress", "--export", str(export), *args, cwd=cwd,
                     timeout=timeout)  # fmt: skip
    result = CaseRun(chunk, ingest, lines=chunk.stderr.replace("\n ", " ").splitlines())
    result.sources, result.jsonl_bytes = _sources(out)
    result.stored, _ = _sources(export)
    if (store / "manifest.sqlite3").is_file():
        letters = fissure("dlq", "list", "--store", str(store), cwd=cwd, timeout=120)
        result.dead = letters.stdout.splitlines()
        if phrase is not None:
            hits = fissure("query", phrase, "--store", str(store), "-k", "5", cwd=cwd,
                           timeout=120)  # fmt: skip
            result.found = good in hits.stdout
    return result


def _sources(jsonl: Path) -> tuple[set[str], int]:
    """The file names with chunks in a JSONL file, and its size."""
    if not jsonl.is_file():
        return set(), 0
    with jsonl.open(encoding="utf-8") as rows:
        names = {Path(json.loads(row)["source"]).name for row in rows}
    return names, jsonl.stat().st_size


def hostile_entries(folder: Path, good: Iterable[str] = GOOD) -> list[Path]:
    """The entries of a case folder other than its good files (named ``good``)."""
    skip = set(good)
    return sorted(p for p in folder.iterdir() if p.name not in skip)
