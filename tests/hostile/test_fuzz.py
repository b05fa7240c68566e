"""A bounded fuzzing pass over every parser, and the inputs earlier fuzzing found, replayed.

The long run is ``bench/fuzz.py`` (``bench/results/fuzz.md``); this smoke pass generates a
few dozen mutated real files per format (derandomized, so it is the same pass every run)
and fails on an uncaught exception, a hang, a crash or a parser error hidden behind a
fallback (see :mod:`tests.hostile.fuzzing`). Every file under ``tests/corpus/fuzz/`` must
now end cleanly.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.hostile.fuzzing import FORMATS, REGRESSIONS, Oracle, inputs

SMOKE_EXAMPLES = 25


@pytest.fixture(scope="module")
def oracle() -> Iterator[Oracle]:
    with Oracle() as running:
        yield running


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_mutated_files_end_cleanly(fmt: str, oracle: Oracle) -> None:
    @settings(max_examples=SMOKE_EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(inputs(fmt))
    def run(named: tuple[str, bytes]) -> None:
        name, data = named
        found = oracle.check(name, data)
        assert not found.failed, f"{fmt} {name} ({len(data)} bytes): {found.kind}: {found.reason}"

    run()


def _regressions() -> list[Path]:
    if not REGRESSIONS.is_dir():
        return []
    return sorted(p for p in REGRESSIONS.iterdir() if p.is_file() and p.suffix != ".why")


@pytest.mark.parametrize("path", _regressions(), ids=lambda p: p.name)
def test_found_inputs_now_end_cleanly(path: Path, oracle: Oracle) -> None:
    found = oracle.check(path.name, path.read_bytes())
    assert not found.failed, f"{path.name}: {found.kind}: {found.reason}"
