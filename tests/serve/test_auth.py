"""API keys over HTTP: no key → 401, a read key on a write route → 403, and no key sees,
lists, queries or deletes another namespace's documents, jobs, events or dead letters."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fissure.serve.auth import Keys, new_key
from tests.serve.server import Server, upload, wait_jobs


class Team:
    """The keys of the test server: two namespaces, one of them with a read-only key."""

    def __init__(self, folder: Path) -> None:
        self.alice, alice = new_key("alice", "team-a", ["read", "write"])
        self.reader, reader = new_key("reader", "team-a", ["read"])
        self.bob, bob = new_key("bob", "team-b", ["read", "write"])
        self.file = folder / "keys.jsonl"
        self.file.write_text("\n".join([alice, reader, bob]) + "\n")


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Team]]:
    folder = tmp_path_factory.mktemp("auth")
    keys = Team(folder)
    options = ["--keys-file", str(keys.file), "--timeout", "3", "--max-attempts", "1"]
    with Server(folder / "store", options) as running:
        yield running, keys


ROUTES = [
    ("POST", "/v1/documents"),
    ("GET", "/v1/jobs"),
    ("GET", "/v1/jobs/x"),
    ("GET", "/v1/events"),
    ("GET", "/v1/documents/x"),
    ("GET", "/v1/documents/x/chunks"),
    ("DELETE", "/v1/documents/x"),
    ("POST", "/v1/query"),
    ("GET", "/v1/dlq"),
    ("POST", "/v1/dlq/x/retry"),
    ("DELETE", "/v1/dlq/x"),
]
WRITE_ROUTES = [
    ("POST", "/v1/documents"),
    ("DELETE", "/v1/documents/x"),
    ("GET", "/v1/dlq"),
    ("POST", "/v1/dlq/x/retry"),
    ("DELETE", "/v1/dlq/x"),
]


@pytest.mark.parametrize(("method", "route"), ROUTES)
def test_no_key_or_a_wrong_key_is_401(team: tuple[Server, Team], method: str, route: str) -> None:
    server, _ = team
    for headers in ({}, {"Authorization": "Bearer fsk_wrong"}, {"X-API-Key": "nope"}):
        answer = httpx.request(method, server.url + route, headers=headers, timeout=30)
        assert answer.status_code == 401, (route, headers, answer.text)
        assert answer.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(("method", "route"), WRITE_ROUTES)
def test_a_read_key_on_a_write_route_is_403(
    team: tuple[Server, Team], method: str, route: str
) -> None:
    server, keys = team
    with server.client(keys.reader) as client:
        answer = client.request(method, route)
    assert answer.status_code == 403 and "'write' scope" in answer.json()["detail"]


def test_health_and_metrics_need_no_key(team: tuple[Server, Team]) -> None:
    server, _ = team
    assert httpx.get(server.url + "/healthz").status_code == 200
    assert httpx.get(server.url + "/readyz").status_code == 200
    assert "fissure_queue_depth" in httpx.get(server.url + "/metrics").text


def test_namespaces_never_see_each_other(team: tuple[Server, Team]) -> None:
    server, keys = team
    text = b"# Shared words\n\nBoth teams upload these exact bytes about basalt columns.\n"
    alice, bob, reader = (
        server.client(keys.alice),
        server.client(keys.bob),
        server.client(keys.reader),
    )
    events: list[dict[str, object]] = []
    follower = threading.Thread(target=_follow, args=(server, keys.bob, events), daemon=True)
    follower.start()
    mine = upload(alice, [("basalt.md", text), ("stuck.hang", b"never parsed")]).json()["jobs"]
    doc, stuck = mine[0], mine[1]
    assert wait_jobs(alice, [doc["id"], stuck["id"]])[stuck["id"]]["state"] == "failed"
    # The read-only key of the same namespace sees alice's document; bob's key sees nothing.
    assert reader.get(f"/v1/documents/{doc['document_id']}").status_code == 200
    for route in (
        f"/v1/jobs/{doc['id']}",
        f"/v1/documents/{doc['document_id']}",
        f"/v1/documents/{doc['document_id']}/chunks",
    ):
        assert bob.get(route).status_code == 404, route
    assert bob.get("/v1/jobs").json()["jobs"] == []
    assert bob.get("/v1/dlq").json()["jobs"] == []
    assert len(alice.get("/v1/dlq").json()["jobs"]) == 1
    assert bob.post("/v1/query", json={"text": "basalt columns", "k": 10}).json()["hits"] == []
    hits = reader.post("/v1/query", json={"text": "basalt columns", "k": 10}).json()["hits"]
    assert [h["document_id"] for h in hits] == [doc["document_id"]]
    # Bob cannot retry, drop or delete alice's things.
    assert bob.post(f"/v1/dlq/{stuck['id']}/retry").status_code == 404
    assert bob.delete(f"/v1/dlq/{stuck['id']}").status_code == 404
    assert bob.delete(f"/v1/documents/{doc['document_id']}").status_code == 404
    assert alice.get(f"/v1/documents/{doc['document_id']}/chunks").json()["chunks"]
    # The same bytes from bob are his own job and his own copy.
    theirs = upload(bob, [("basalt.md", text)]).json()["jobs"][0]
    assert theirs["created_now"] and theirs["id"] != doc["id"]
    assert theirs["document_id"] == doc["document_id"]  # same bytes, same settings
    wait_jobs(bob, [theirs["id"]])
    assert alice.delete(f"/v1/documents/{doc['document_id']}").json()["deleted"] is True
    assert alice.get(f"/v1/documents/{doc['document_id']}").status_code == 404
    assert bob.get(f"/v1/documents/{theirs['document_id']}/chunks").json()["chunks"]
    follower.join(timeout=5)
    seen = {e["job_id"] for e in events}
    assert theirs["id"] in seen and not seen & {doc["id"], stuck["id"]}
    for c in (alice, bob, reader):
        c.close()


def _follow(server: Server, key: str, into: list[dict[str, object]]) -> None:
    """Collect bob's events for a while."""
    headers = {"Authorization": f"Bearer {key}"}
    try:
        with httpx.stream(
            "GET",
            server.url + "/v1/events?after=0",
            headers=headers,
            timeout=httpx.Timeout(20, read=20),
        ) as stream:
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    into.append(json.loads(line[6:]))
                    if into[-1]["state"] == "done":
                        return
    except httpx.HTTPError:
        return


def test_keys_are_stored_hashed(team: tuple[Server, Team]) -> None:
    _, keys = team
    stored = keys.file.read_text()
    assert keys.alice not in stored and keys.bob not in stored
    loaded = Keys.load(keys.file, env="")
    found = loaded.identify(keys.alice)
    assert found is not None and found.namespace == "team-a" and found.allows("write")
    assert loaded.identify(keys.alice + "x") is None
