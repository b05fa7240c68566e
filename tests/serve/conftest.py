"""Fixtures for the service tests: a real server per module, on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.serve.server import Server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with the hashing embedder and one parser, shared by a module's tests; it
    may read sources under its ``allowed`` folder (``server.store.parent / "allowed"``)."""
    folder = tmp_path_factory.mktemp("serve")
    (folder / "allowed").mkdir()
    with Server(
        folder / "store", ["--timeout", "5", "--allow-root", str(folder / "allowed")]
    ) as running:
        yield running
