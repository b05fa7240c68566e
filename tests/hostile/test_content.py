"""Every content case of the hostile corpus through ``fissure chunk`` and ``fissure ingest``.

For each case (see :mod:`tests.hostile.content_cases`): both commands end within their
time limit without a traceback (``chunk`` exits 0; ``ingest`` exits 1 exactly when the
hostile file was dead-lettered); the good files get chunks and are found by ``fissure
query``; the hostile file is chunked (``chunks``/``fallback``), or skipped by ``chunk`` and
dead-lettered by ``ingest`` with a reason that names what was wrong (``error``); the JSONL
stays proportional to the input; and the peak resident memory of the command's whole
process tree stays under ``CEILING_MB`` with the default limits.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.content_cases import CASES, GOOD_MD, GOOD_PY, good_phrase
from tests.hostile.measure import Measured
from tests.hostile.runner import hostile_entries, run_case

CEILING_MB = 1024
TIME_S = 300  # per command; the slow cases get three times that
# JSONL per byte of input: text, offsets and a bounded breadcrumb per chunk.
OUTPUT_RATIO = 10


def _check_run(result: Measured, what: str, rc: int = 0) -> None:
    assert not result.timed_out, f"{what}: killed after {result.seconds:.0f} s"
    assert result.rc == rc, f"{what}: rc {result.rc}\n{result.stderr[-2000:]}"
    assert "Traceback" not in result.stderr, f"{what}:\n{result.stderr[-2000:]}"
    assert result.peak_mb <= CEILING_MB, f"{what}: peak {result.peak_mb:.0f} MiB"


def _expected(outcome: str) -> tuple[str, str]:
    kind, _, text = outcome.partition(":")
    assert kind in ("chunks", "fallback", "error"), outcome
    return kind, text.strip()


def _marks(slow: bool) -> list[pytest.MarkDecorator]:
    # Two commands of up to TIME_S each (three times that when slow), plus dlq and query.
    budget = 2 * TIME_S * (3 if slow else 1) + 120
    return [pytest.mark.timeout(budget), *([pytest.mark.slow] if slow else [])]


PARAMS = [pytest.param(name, marks=_marks(case.slow)) for name, case in CASES.items()]


@pytest.mark.parametrize("name", PARAMS)
def test_hostile_content_through_chunk_and_ingest(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    folder = tmp_path / name
    kind, reason = _expected(case.build(folder))
    (hostile,) = hostile_entries(folder)
    size = sum(p.stat().st_size for p in folder.iterdir())
    run = run_case(folder, case.args, TIME_S * (3 if case.slow else 1), good_phrase(folder))

    _check_run(run.chunk, f"{name}: fissure chunk")
    assert {GOOD_MD, GOOD_PY} <= run.sources, (name, run.sources)
    assert run.jsonl_bytes <= OUTPUT_RATIO * size + 1_000_000, (name, run.jsonl_bytes)
    skip = [line for line in run.lines if line.startswith(f"skipped {name}/{hostile.name}")]
    note = [line for line in run.lines if line.startswith(f"fallback {name}/{hostile.name}")]
    if kind == "error":
        assert hostile.name not in run.sources
        assert skip and reason in skip[0], (name, run.chunk.stderr[-1500:])
    else:
        assert hostile.name in run.sources and not skip, (name, run.chunk.stderr[-1500:])
    if kind == "fallback":
        assert note and reason in note[0], (name, run.chunk.stderr[-1500:])

    _check_run(run.ingest, f"{name}: fissure ingest", 1 if kind == "error" else 0)
    dead = [line for line in run.dead if hostile.name in line]
    if kind == "error":
        assert dead and reason in dead[0], (name, run.dead, run.ingest.stderr[-1500:])
    else:
        assert not dead, (name, dead)

    # Stored and findable: a query copied from the good file returns it, however many
    # near-identical chunks the hostile file stored (issue 13's case 10: exact search).
    assert {GOOD_MD, GOOD_PY} <= run.stored, (name, run.stored)
    assert run.found is not False, (name, "stored, but not found by fissure query")
