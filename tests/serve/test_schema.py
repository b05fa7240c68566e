"""The OpenAPI schema: the served one is the committed docs/openapi.json, and schemathesis
fuzzes every operation against a live server (bounded examples): no 5xx, and every answer
conforms to the schema (status code, content type, body)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from fissure.serve.auth import new_key
from tests.serve.server import ROOT, Server

COMMITTED = ROOT / "docs" / "openapi.json"
EXAMPLES = 40  # per operation and mode: under a minute for all of them here
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    folder = tmp_path_factory.mktemp("fuzz")
    key, line = new_key("fuzz", "fuzz", ["read", "write"])
    (folder / "keys.jsonl").write_text(line + "\n")
    (folder / "allowed").mkdir()
    (folder / "allowed" / "a.md").write_text("# A\n\nAllowed.\n")
    options = [
        "--keys-file",
        str(folder / "keys.jsonl"),
        "--allow-root",
        str(folder / "allowed"),
        "--max-file-bytes",
        "100000",
        "--timeout",
        "5",
    ]
    with Server(folder / "store", options) as server:
        yield server, key


def test_the_served_schema_is_the_committed_one(fuzzed: tuple[Server, str]) -> None:
    server, _ = fuzzed
    with server.client() as client:
        served = client.get("/openapi.json").json()
    committed = json.loads(COMMITTED.read_text())
    assert served == committed, (
        "docs/openapi.json is stale: python -m fissure.serve.app > docs/openapi.json"
    )


def _operations() -> list[tuple[str, str, GenerationMode]]:
    """Every (method, path) of the committed schema but the event stream, which never ends
    by design (it has its own tests in test_service.py); valid requests, and invalid ones
    where the operation takes any input."""
    paths = json.loads(COMMITTED.read_text())["paths"]
    found = []
    for path, ops in sorted(paths.items()):
        for method, op in sorted(ops.items()):
            if path == "/v1/events":
                continue
            found.append((method.upper(), path, GenerationMode.POSITIVE))
            if op.get("parameters") or op.get("requestBody"):
                found.append((method.upper(), path, GenerationMode.NEGATIVE))
    return found


@pytest.fixture(scope="module")
def live_schema(fuzzed: tuple[Server, str]) -> schemathesis.BaseSchema:
    server, _ = fuzzed
    return schemathesis.openapi.from_url(server.url + "/openapi.json")


@pytest.mark.parametrize(("method", "path", "mode"), _operations())
def test_no_5xx_and_every_answer_matches_the_schema(
    live_schema: schemathesis.BaseSchema,
    fuzzed: tuple[Server, str],
    method: str,
    path: str,
    mode: GenerationMode,
) -> None:
    """Valid requests (positive) and invalid ones (negative). schemathesis's own pytest
    plugin does not run under pytest 9, so each operation's strategy is drawn here."""
    server, key = fuzzed
    strategy = live_schema[path][method].as_strategy(generation_mode=mode)
    headers = {"Authorization": f"Bearer {key}"}

    @given(case=strategy)
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case: schemathesis.Case) -> None:
        case.call_and_validate(base_url=server.url, headers=headers, checks=CHECKS, timeout=30)

    fuzz()


def test_the_server_survived_the_fuzzing(fuzzed: tuple[Server, str]) -> None:
    """Runs last: the engine never restarted, and fuzzed uploads really made jobs."""
    server, key = fuzzed
    with server.client(key) as client:
        assert client.get("/readyz").status_code == 200
        metrics = client.get("/metrics").text
        jobs = client.get("/v1/jobs", params={"limit": 1000}).json()["jobs"]
    assert 'kind="engine"' not in metrics
    assert jobs, "no fuzzed upload was accepted: the multipart schema is not exercised"
