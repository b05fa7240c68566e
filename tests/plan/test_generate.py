"""``fissure tune --generate``: questions from an OpenAI-compatible chat endpoint, against a
real HTTP server on 127.0.0.1 that plays the model (nothing leaves the machine)."""

from __future__ import annotations

import csv
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fissure.cli import app
from fissure.plan.generate import chat_url, parse_reply
from fissure.plan.questions import load_questions
from tests.plan.tuning import write_corpus

runner = CliRunner()
SENTENCE = re.compile(r"The \w+ of \w+ \w+ [\w ]+? for record \d+\.")


class FakeModel(BaseHTTPRequestHandler):
    """Answers chat completions the way :attr:`mode` says; records what it was sent."""

    mode = "good"
    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 (the http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeModel.seen.append({"path": self.path, "body": body,
                               "auth": self.headers.get("Authorization")})  # fmt: skip
        if self.mode == "error":
            return self._send(503, {"error": {"message": "model is loading"}})
        if self.mode == "shape":
            return self._send(200, {"result": "not a chat completion"})
        prompt = body["messages"][0]["content"]
        found = SENTENCE.findall(prompt.split("<passage>")[1])
        n = len(FakeModel.seen)
        if self.mode == "prose" or not found:
            content = "Sure! Here is a question about the passage."
        elif n % 3 == 0:  # one quote the passage does not hold, verbatim
            content = json.dumps({"question": f"Question {n}?",
                                  "quotes": [found[0].upper(), found[-1]]})  # fmt: skip
        else:
            content = "```json\n" + json.dumps({"question": f"Question {n}?",
                                                "quotes": [found[0]]}) + "\n```"  # fmt: skip
        return self._send(200, {"choices": [{"message": {"role": "assistant",
                                                         "content": content}}]})  # fmt: skip

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)  # loopback only, never through a proxy
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    FakeModel.mode, FakeModel.seen = "good", []
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _args(docs: Path, endpoint: str, out: Path, n: int = 9) -> list[str]:
    return [
        "tune",
        str(docs),
        "--generate",
        str(n),
        "--endpoint",
        endpoint,
        "--model",
        "fake-1",
        "--questions",
        str(out),
        "--embedder",
        "hashing",
        "--grid",
        "structural:40",
        "--grid",
        "fixed:30",
        "--no-write",
        "--cache-dir",
        str(out.parent / "cache"),
    ]


def test_generates_locates_writes_and_tunes(server: str, tmp_path: Path, monkeypatch) -> None:
    docs = tmp_path / "docs"
    write_corpus(docs)
    monkeypatch.setenv("TEST_KEY", "sk-local")
    out = tmp_path / "questions.csv"
    result = runner.invoke(app, [*_args(docs, server, out), "--api-key-env", "TEST_KEY"])
    assert result.exit_code == 0, result.output
    assert len(FakeModel.seen) == 9
    first = FakeModel.seen[0]
    assert first["path"] == "/v1/chat/completions" and first["body"]["model"] == "fake-1"
    assert first["auth"] == "Bearer sk-local"
    # 9 asked; every third reply has one quote that is not verbatim (upper-cased): dropped
    assert "generated 9 questions from 9 passages" in result.output
    assert "3 of 12 quotes not found verbatim and dropped" in result.output
    with out.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 9
    located = load_questions(docs, out)
    assert located.unlocated == 0 and len(located.dataset.questions) == 9
    for q in located.dataset.questions:  # each answer is a sentence of its document, exactly
        text = located.dataset.corpora[q.corpus_id]
        assert all(SENTENCE.fullmatch(text[s:e]) for s, e in q.gold)
    assert "held out, odd rows (4 questions)" in result.output
    # It never overwrites questions already there.
    again = runner.invoke(app, _args(docs, server, out))
    assert again.exit_code == 2 and "exists" in again.output


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("error", 'answered HTTP 503: {"error": {"message": "model is loading"}}'),
        ("shape", "did not answer a chat completion"),
        ("prose", "none of the 3 replies gave a question"),
    ],
)
def test_a_failing_endpoint_is_one_clear_line(server, tmp_path, mode, message) -> None:
    docs = tmp_path / "docs"
    write_corpus(docs)
    FakeModel.mode = mode
    result = runner.invoke(app, _args(docs, server, tmp_path / "q.csv", n=3))
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "q.csv").exists()


def test_an_unreachable_endpoint_and_missing_options(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write_corpus(docs)
    closed = ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    port = closed.server_address[1]
    closed.server_close()  # nothing listens there now
    result = runner.invoke(app, _args(docs, f"http://127.0.0.1:{port}/v1", tmp_path / "q.csv"))
    assert result.exit_code == 2 and "cannot reach" in result.output
    result = runner.invoke(app, ["tune", str(docs), "--generate", "5"])
    assert result.exit_code == 2 and "--endpoint URL and --model NAME" in result.output
    # A bad option is refused before any question is asked for.
    FakeModel.seen = []
    result = runner.invoke(app, [*_args(docs, "http://127.0.0.1:9/v1", tmp_path / "q.csv"),
                                 "--choose-on", "third"])  # fmt: skip
    assert result.exit_code == 2 and "--choose-on 'third'" in result.output
    assert not FakeModel.seen and not (tmp_path / "q.csv").exists()


def test_reply_parsing_and_urls() -> None:
    assert parse_reply('{"question": "Q?", "quotes": "one"}') == ("Q?", ["one"])
    assert parse_reply('```\n{"question": "Q?", "quotes": ["a", ""]}\n```') == ("Q?", ["a"])
    assert parse_reply('{"question": "", "quotes": ["a"]}') is None
    assert parse_reply("[1, 2]") is None and parse_reply("no json") is None
    assert chat_url("http://h:1/v1/") == "http://h:1/v1/chat/completions"
    assert chat_url("http://h:1/v1/chat/completions") == "http://h:1/v1/chat/completions"
    with pytest.raises(Exception, match="http"):
        chat_url("h:1/v1")
