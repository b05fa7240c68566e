"""Every content case of the hostile corpus through ``fissure chunk`` and ``fissure ingest``.

For each case (see :mod:`tests.hostile.content_cases`): both commands exit 0 within their
time limit without a traceback; the good files get chunks and are found by ``fissure
query``; the hostile file is chunked (``chunks``/``fallback``), or skipped by ``chunk`` and
dead-lettered by ``ingest`` with a reason that names what was wrong (``error``); the JSONL
stays proportional to the input; and the peak resident memory of the command's whole
process tree stays under ``CEILING_MB`` with the default limits.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.hostile.content_cases import CASES, GOOD_MD, GOOD_PY, good_phrase
from tests.hostile.measure import Measured, run_measured

CEILING_MB = 1024
TIME_S = 300  # per command; the slow cases get three times that
SRC = str(Path(__file__).resolve().parents[2] / "src")
# JSONL per byte of input: text, offsets and a bounded breadcrumb per chunk.
OUTPUT_RATIO = 10


def _fissure(*args: str, cwd: Path, slow: bool) -> Measured:
    env = {"PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "fissure", *args]
    return run_measured(command, timeout=TIME_S * (3 if slow else 1), cwd=cwd, env=env)


def _check_run(result: Measured, what: str) -> None:
    assert not result.timed_out, f"{what}: killed after {result.seconds:.0f} s"
    assert result.rc == 0, f"{what}: rc {result.rc}\n{result.stderr[-2000:]}"
    assert "Traceback" not in result.stderr, f"{what}:\n{result.stderr[-2000:]}"
    assert result.peak_mb <= CEILING_MB, f"{what}: peak {result.peak_mb:.0f} MiB"


def _expected(outcome: str) -> tuple[str, str]:
    kind, _, text = outcome.partition(":")
    assert kind in ("chunks", "fallback", "error"), outcome
    return kind, text.strip()


PARAMS = [pytest.param(name, marks=[pytest.mark.slow] if case.slow else []) for name, case in
          CASES.items()]  # fmt: skip


@pytest.mark.parametrize("name", PARAMS)
def test_hostile_content_through_chunk_and_ingest(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    folder = tmp_path / name
    kind, reason = _expected(case.build(folder))
    hostile = next(p for p in folder.iterdir() if p.name not in (GOOD_MD, GOOD_PY))
    size = sum(p.stat().st_size for p in folder.iterdir())

    out = tmp_path / "chunks.jsonl"
    chunked = _fissure("chunk", name, "-o", str(out), *case.args, cwd=tmp_path, slow=case.slow)
    _check_run(chunked, f"{name}: fissure chunk")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    sources = {Path(r["source"]).name for r in rows}
    assert {GOOD_MD, GOOD_PY} <= sources, (name, sources)
    assert out.stat().st_size <= OUTPUT_RATIO * size + 1_000_000, (name, out.stat().st_size)
    lines = chunked.stderr.replace("\n ", " ").splitlines()
    if kind == "error":
        assert hostile.name not in sources
        skip = [line for line in lines if line.startswith(f"skipped {name}/{hostile.name}")]
        assert skip and reason in skip[0], (name, chunked.stderr[-1500:])
    else:
        assert hostile.name in sources, (name, chunked.stderr[-1500:])
    if kind == "fallback":
        note = [line for line in lines if line.startswith(f"fallback {name}/{hostile.name}")]
        assert note and reason in note[0], (name, chunked.stderr[-1500:])

    store = tmp_path / "store"
    ingested = _fissure("ingest", name, "--store", str(store), "--embedder", "hashing",
                        "--no-progress", *case.args, cwd=tmp_path, slow=case.slow)  # fmt: skip
    _check_run(ingested, f"{name}: fissure ingest")
    letters = _fissure("dlq", "list", "--store", str(store), cwd=tmp_path, slow=False)
    assert letters.rc == 0, letters.stderr
    dead = [line for line in letters.stdout.splitlines() if hostile.name in line]
    if kind == "error":
        assert dead and reason in dead[0], (name, letters.stdout, ingested.stderr[-1500:])
    else:
        assert not dead, (name, dead)

    _check_findable(folder, store, tmp_path)


def _check_findable(folder: Path, store: Path, cwd: Path) -> None:
    """The good Markdown file comes back from a query copied from it. Where it does only
    with a filter on its source, the approximate index lost it among the hostile file's
    near-identical chunks: issue 13's case 10, fixed in the store, not here."""
    phrase = good_phrase(folder)
    found = _fissure("query", phrase, "--store", str(store), "-k", "5", cwd=cwd, slow=False)
    assert found.rc == 0, found.stderr
    if GOOD_MD in found.stdout:
        return
    source = f"source={(folder / GOOD_MD).resolve()}"
    only = _fissure("query", phrase, "--store", str(store), "-k", "1", "--where", source,
                    cwd=cwd, slow=False)  # fmt: skip
    assert GOOD_MD in only.stdout, (folder.name, found.stdout, only.stdout)
    pytest.xfail(f"{folder.name}: stored, but found only with --where (issue 13 case 10)")
