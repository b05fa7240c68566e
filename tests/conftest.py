"""Shared fixtures: sizers are built once per session (loading a tokenizer is not free)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from fissure.size import Sizer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def pytest_report_header() -> str:
    """Which path this run tests: the compiled twins or the pure Python code."""
    from fissure import _compiled

    if _compiled.pure_python():
        return f"fissure: pure Python ({_compiled.PURE_ENV} is set)"
    built = sorted(n for n, why in _compiled.reasons().items() if why == "compiled")
    return f"fissure: compiled twins {built or 'none (not built)'}; {_compiled.PURE_ENV}=1 for none"


SIZER_NAMES = ("chars", "words", "cl100k_base", "o200k_base", "minilm")
_SIZERS: dict[str, Sizer] = {}


def get_sizer(name: str) -> Sizer:
    """A shared sizer (its cache survives between tests, as it would in a real run)."""
    if name not in _SIZERS:
        _SIZERS[name] = Sizer.named(name)
    return _SIZERS[name]


@pytest.fixture(params=SIZER_NAMES)
def sizer(request: pytest.FixtureRequest) -> Sizer:
    return get_sizer(request.param)


@pytest.fixture(scope="session")
def pg_dsn() -> Iterator[str]:
    """A real PostgreSQL with pgvector for the whole session: ``$FISSURE_TEST_PG`` when set,
    else a server started here (``fissure.store.pg_local``: 127.0.0.1 only, an unprivileged
    user, a temporary data folder), stopped at the end."""
    named = os.environ.get("FISSURE_TEST_PG")
    if named:
        yield named
        return
    pytest.importorskip("psycopg", reason="pip install 'fissure[postgres]'")
    from fissure.store.pg_local import temporary_postgres

    with temporary_postgres() as dsn:
        yield dsn


@pytest.fixture
def pg_namespace() -> str:
    """A namespace of its own for each test, so tests sharing the server never meet."""
    import uuid

    return "t" + uuid.uuid4().hex[:12]
