"""Fixtures for the service tests: a real server per module, on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.serve.server import Server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with the hashing embedder and one parser, shared by a module's tests."""
    store = tmp_path_factory.mktemp("serve") / "store"
    with Server(store, ["--timeout", "5"]) as running:
        yield running
