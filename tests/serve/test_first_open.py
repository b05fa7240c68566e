"""A namespace's first concurrent queries (issue 32.3): a namespace not yet opened since the
service started is opened once, under a lock; a query that finds it still opening is
answered 503 with Retry-After, never 500, and once it is open every query answers 200."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fissure.serve.auth import new_key
from tests.serve.server import Server

TEAMS = [f"team-{i}" for i in range(4)]
CONCURRENT = 8  # first queries per namespace, all at once (the engine answers 4 at a time)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    folder = tmp_path_factory.mktemp("first-open")
    keys, lines = {}, []
    for team in TEAMS:
        keys[team], line = new_key(team, team, ["read", "write"])
        lines.append(line)
    (folder / "keys.jsonl").write_text("\n".join(lines) + "\n")
    with Server(folder / "store", ["--keys-file", str(folder / "keys.jsonl")]) as running:
        yield running, keys


def _all_at_once(server: Server, key: str, n: int) -> list[httpx.Response]:
    """``n`` queries sent together (a barrier releases them) on ``n`` connections."""
    barrier = threading.Barrier(n)
    answers: list[httpx.Response] = []

    def one() -> None:
        with server.client(key) as client:
            barrier.wait()
            answers.append(client.post("/v1/query", json={"text": "first words", "k": 3}))

    threads = [threading.Thread(target=one) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(45)
    return answers


def _summary(answers: list[httpx.Response]) -> str:
    return ", ".join(f"{a.status_code} {a.text[:160]}" for a in answers if a.status_code != 200)


@pytest.mark.timeout(60)
def test_concurrent_first_queries_never_answer_500(served: tuple[Server, dict[str, str]]) -> None:
    server, keys = served
    bad, failed = {}, 0
    for team in TEAMS:
        answers = _all_at_once(server, keys[team], CONCURRENT)
        assert len(answers) == CONCURRENT
        if any(a.status_code not in (200, 503) for a in answers):
            bad[team] = _summary(answers)
            failed += sum(a.status_code not in (200, 503) for a in answers)
        for answer in answers:
            if answer.status_code == 503:
                assert int(answer.headers["Retry-After"]) >= 1
                assert "opening" in answer.json()["detail"]
    total = len(TEAMS) * CONCURRENT
    assert not bad, f"{failed} of {total} first queries answered neither 200 nor 503: {bad}"
    for team in TEAMS:
        with server.client(keys[team]) as client:  # once opened, it answers
            again = client.post("/v1/query", json={"text": "first words", "k": 3})
            assert again.status_code == 200 and again.json()["hits"] == []
    assert Path(server.store / "namespaces" / TEAMS[0]).is_dir()


def test_a_namespace_opens_once_and_a_query_meanwhile_is_told_to_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fissure.embed.hashing import HashingEmbedder
    from fissure.serve import spaces
    from fissure.serve.rpc import Opening

    opened: list[str] = []
    release = threading.Event()
    real = spaces.open_store

    def slow_open(folder: Path, *, namespace: str) -> Any:
        opened.append(namespace)
        release.wait(20)
        return real(folder, namespace=namespace)

    monkeypatch.setattr(spaces, "open_store", slow_open)
    monkeypatch.setattr(spaces, "REQUEST_WAIT", 0.2)
    embedder = HashingEmbedder()
    space = spaces.Spaces(tmp_path, embedder, "stamp")
    vector = embedder.embed(["first words"])[0]
    writer = threading.Thread(target=space.open, args=("team",))  # the runner waits
    writer.start()
    while not opened:
        time.sleep(0.01)
    with pytest.raises(Opening, match="team is opening"):
        space.query("team", vector, 3, None, None)
    release.set()
    writer.join(20)
    answers: list[object] = []
    threads = [threading.Thread(target=lambda: answers.append(
        space.query("team", vector, 3, None, None))) for _ in range(8)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert answers == [[]] * 8 and opened == ["team"]
    space.close()


def test_opening_reaches_the_client_as_503_with_retry_after(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from fissure.serve.app import create_app
    from fissure.serve.auth import Keys
    from fissure.serve.rpc import EngineClient, EngineServer, Opening
    from fissure.serve.settings import ServiceSettings

    def opening(*_: object) -> None:
        raise Opening("namespace team is opening (…): retry in a moment")

    where = str(tmp_path / "engine.sock")
    server = EngineServer(where, b"k", {"query": opening, "ping": lambda: {}})
    server.start()
    key, line = new_key("k", "team", ["read"])
    settings = ServiceSettings(store=tmp_path / "store", retry_after_seconds=7)
    app = create_app(settings, Keys.load(env=f"[{line}]"), EngineClient(where, b"k"), stamp="s")
    try:
        with TestClient(app) as client:
            answer = client.post("/v1/query", json={"text": "x"},
                                 headers={"Authorization": f"Bearer {key}"})  # fmt: skip
            ready = client.get("/readyz").json()
    finally:
        server.close()
        app.state.ctx.queue.close()
    assert answer.status_code == 503 and answer.headers["Retry-After"] == "7"
    assert "team is opening" in answer.json()["detail"]
    assert ready["status"] == "ok" and ready["intake"]["ready"] and ready["engine"]["ready"]
