"""Every hostile folder entry of :mod:`tests.hostile.walk_cases` through ``fissure chunk`` and
``fissure ingest`` in child processes, each under a hard time limit and a memory ceiling.

Each run must end with rc 0 and no traceback, chunks for both good files, the hostile
entry reported (a skip line, a dead letter) or chunked as the case expects, nothing from
outside the folder in the output or the store (``/etc/passwd``'s first line, a canary in
the child's environment for ``/proc/self/environ``), the good files first for a query
copied from them, and a peak resident memory under :data:`CEILING_MIB`. The runs go
three at a time; the whole module takes well under a minute on a quiet machine.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fissure.cli import app
from fissure.store import ChromaStore, Manifest
from tests.hostile import walk_cases
from tests.hostile.measure import Measured, run_measured
from tests.hostile.runner import SRC

CEILING_MIB = 1024  # peak resident memory of any one run
LIMIT_S = 90  # per run; a FIFO that blocked would hit it
CANARY = f"canary-{uuid.uuid4().hex}"
COMMANDS = ("chunk", "ingest")


@dataclass
class Case:
    name: str
    root: Path
    expect: str
    runs: dict[str, Measured]


@pytest.fixture(scope="module")
def cases() -> Iterator[dict[str, Case]]:
    scratch = Path(tempfile.mkdtemp(prefix="fissure-hostile-"))  # not tmp_path: see remove_tree
    built: dict[str, Case] = {}
    for name, build in walk_cases.CASES.items():
        root = scratch / name / "root"
        built[name] = Case(name, root, build(root), {})
    jobs = [(c, cmd) for c in built.values() for cmd in COMMANDS]
    with ThreadPoolExecutor(max_workers=3) as pool:
        for (case, cmd), ran in zip(jobs, pool.map(lambda j: _run(*j), jobs), strict=True):
            case.runs[cmd] = ran
    yield built
    walk_cases.remove_tree(scratch)


def _run(case: Case, command: str) -> Measured:
    out = case.root.parent
    if command == "chunk":
        args = ["chunk", str(case.root), "-t", "words", "-o", str(out / "chunks.jsonl")]
    else:
        args = ["ingest", str(case.root), "--store", str(out / "store"), "--embedder",
                "hashing", "-t", "words", "--workers", "1", "--timeout", "30"]  # fmt: skip
    env = {"FISSURE_CANARY": CANARY, "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    return run_measured([sys.executable, "-m", "fissure", *args], timeout=LIMIT_S, env=env)


def _kind(case: Case) -> str:
    return case.expect.split(":", 1)[0]


def _clean(ran: Measured) -> None:
    assert not ran.timed_out, f"killed after {LIMIT_S} s:\n{ran.stderr[-2000:]}"
    assert ran.rc == 0, ran.stderr[-2000:]
    assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
    assert ran.peak_mb < CEILING_MIB, f"peak {ran.peak_mb:.0f} MiB"


def _no_outside(texts: list[str]) -> None:
    for text in texts:
        assert CANARY not in text
        assert not any(marker in text for marker in walk_cases.OUTSIDE_MARKERS)


@pytest.mark.parametrize("name", sorted(walk_cases.CASES))
def test_chunk(cases: dict[str, Case], name: str) -> None:
    case = cases[name]
    ran = case.runs["chunk"]
    _clean(ran)
    rows = [json.loads(line) for line in
            (case.root.parent / "chunks.jsonl").read_text("utf-8").splitlines()]  # fmt: skip
    sources = {Path(r["source"]).name for r in rows if not r["source"].startswith("file:")}
    odd = {r["source"] for r in rows if r["source"].startswith("file:")}
    assert {"good_one.md", "good_two.txt"} <= sources
    _no_outside([r["text"] for r in rows] + [ran.stderr])
    skipped = [line for line in ran.stderr.splitlines() if line.startswith("skipped ")]
    kind = _kind(case)
    if kind == "skip":
        assert skipped, ran.stderr
        assert len(sources) + len(odd) == 2, sources  # nothing but the good files
    elif kind == "chunks":
        assert not skipped and len(sources) + len(odd) > 2, ran.stderr
    elif kind == "ignored":
        assert "secret.md" not in sources


@pytest.mark.parametrize("name", sorted(walk_cases.CASES))
def test_ingest(cases: dict[str, Case], name: str) -> None:
    case = cases[name]
    ran = case.runs["ingest"]
    _clean(ran)
    store = case.root.parent / "store"
    items = list(ChromaStore(store / "chroma").items())
    names = {Path(m["source"]).name for _, _, m in items}
    assert {"good_one.md", "good_two.txt"} <= names
    _no_outside([t for _, t, _ in items] + [ran.stderr])
    manifest = Manifest(store)
    try:
        failures = manifest.failures()
    finally:
        manifest.close()
    kind = _kind(case)
    if kind == "skip":
        assert failures and all(f.error_type == "Skipped" for f in failures), failures
        assert names == {"good_one.md", "good_two.txt"}
        assert f"{len(failures)} failed" in ran.stderr
    elif kind == "chunks":
        assert not failures and len(names) > 2
    elif kind == "ignored":
        assert "secret.md" not in names
    for good, words in walk_cases.QUERIES.items():
        out = CliRunner().invoke(app, ["query", words, "--store", str(store), "-k", "1"])
        assert out.exit_code == 0, out.output
        assert good in out.output.splitlines()[0], out.output


def test_names_are_printed_escaped(cases: dict[str, Case]) -> None:
    case = cases["control_names"]
    store = case.root.parent / "store"
    runner = CliRunner()
    shown = [runner.invoke(app, ["query", "red alarm light blinks", "--store", str(store)]),
             runner.invoke(app, ["chunk", str(case.root), "-t", "words", "-f", "table"]),
             runner.invoke(app, ["status", "--store", str(store)])]  # fmt: skip
    text = "".join(out.output for out in shown) + case.runs["ingest"].stderr
    assert all(out.exit_code == 0 for out in shown), text
    assert "\x1b" not in text and "\\x1b[31mred\\x1b[0m.md" in text
    assert "fake\\n0 failed.md" in text and "\n0 failed.md" not in text
    assert "[bold red]loud.md" in text  # markup in a name is printed, not applied


def test_dead_letters_with_odd_names_are_listed_escaped(tmp_path: Path) -> None:
    root = tmp_path / "root"
    walk_cases._good(root)
    os.mkfifo(root / "\x1b[2J\nfissure: 0 failed")
    store = tmp_path / "store"
    runner = CliRunner()
    out = runner.invoke(app, ["ingest", str(root), "--store", str(store), "--embedder",
                              "hashing", "-t", "words", "--workers", "1"])  # fmt: skip
    assert out.exit_code == 0, out.output
    listed = runner.invoke(app, ["dlq", "list", "--store", str(store)])
    assert listed.exit_code == 0
    for text in (out.output, listed.output):
        assert "\x1b" not in text and "\\x1b[2J\\nfissure: 0 failed" in text
        assert not any(line.startswith("fissure: 0 failed") for line in text.splitlines())
    rows = [line for line in listed.output.splitlines() if "\t" in line]
    assert len(rows) == 1 and rows[0].split("\t")[1:3] == ["source", "Skipped"]
