"""Poisoned files among good ones: a parser that hangs, a DOCX zip bomb and a corrupted PDF
land in the dead-letter queue with their reasons, and everything else is stored."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve.server import ROOT, Server, upload, wait_jobs

OPTIONS = [
    "--timeout",
    "4",
    "--memory-mb",
    "768",
    "--max-attempts",
    "2",
    "--backoff-seconds",
    "0.5",
    "--workers",
    "2",
]
BOMB_BYTES = 1_500_000_000  # what word/document.xml inflates to


def zip_bomb() -> bytes:
    """A real DOCX whose body XML inflates to 1.5 GB (about 1.5 MB on the wire)."""
    source = zipfile.ZipFile(ROOT / "tests/corpus/docx/report.docx")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as bomb:
        for item in source.infolist():
            if item.filename != "word/document.xml":
                bomb.writestr(item, source.read(item))
        with bomb.open("word/document.xml", "w", force_zip64=True) as xml:
            xml.write(
                b'<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats'
                b'.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>'
            )
            block = b"A" * (1 << 22)
            for _ in range(BOMB_BYTES // len(block)):
                xml.write(block)
            xml.write(b"</w:t></w:r></w:p></w:body></w:document>")
    return out.getvalue()


@pytest.fixture(scope="module")
def poisoned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, dict]]]:
    folder = tmp_path_factory.mktemp("dlq")
    good = [
        (f"good{i}.md", f"# Good {i}\n\nA good document, number {i}.\n".encode()) for i in range(6)
    ]
    bad = [
        ("stuck.hang", b"this parser never returns"),
        ("bomb.docx", zip_bomb()),
        ("broken.pdf", b"%PDF-1.7\n1 0 obj << garbage \x00\x01\xff\xfe endobj"),
    ]
    with Server(folder / "store", OPTIONS) as server, server.client() as client:
        answer = upload(client, good[:3] + bad + good[3:])
        assert answer.status_code == 202, answer.text
        jobs = {j["name"]: j for j in answer.json()["jobs"]}
        finished = wait_jobs(client, [j["id"] for j in jobs.values()], timeout=240)
        yield server, {name: finished[j["id"]] for name, j in jobs.items()}


def test_good_documents_finish_and_poison_is_dead_lettered(
    poisoned: tuple[Server, dict[str, dict]],
) -> None:
    _, jobs = poisoned
    states = {name: j["state"] for name, j in jobs.items()}
    assert states == {
        **{f"good{i}.md": "done" for i in range(6)},
        "stuck.hang": "failed",
        "bomb.docx": "failed",
        "broken.pdf": "failed",
    }


def test_each_dead_letter_says_why(poisoned: tuple[Server, dict[str, dict]]) -> None:
    _, jobs = poisoned
    hang, bomb, pdf = (jobs[n]["error"] for n in ("stuck.hang", "bomb.docx", "broken.pdf"))
    assert hang["type"] == "Timeout" and "longer than 4 s" in hang["message"]
    assert jobs["stuck.hang"]["attempts"] == 2  # a timeout is retried, then dead-lettered
    assert pdf["stage"] == "parse" and "not a readable PDF" in pdf["message"]
    assert jobs["broken.pdf"]["attempts"] == 1  # a parser's refusal is final at once
    # A zip bomb is refused before it is inflated (fissure.limits), at once and for good.
    assert bomb["type"] == "LimitError" and "inflates past" in bomb["message"], bomb
    assert jobs["bomb.docx"]["attempts"] == 1


def test_the_api_process_never_parsed_the_bomb(poisoned: tuple[Server, dict[str, dict]]) -> None:
    server, _ = poisoned
    rss = _rss_mb(server.pids()["server"][0])
    assert rss < 400, f"the API process holds {rss:.0f} MB"


def test_dead_letters_are_listed_retried_and_dropped(
    poisoned: tuple[Server, dict[str, dict]],
) -> None:
    server, jobs = poisoned
    with server.client() as client:
        letters = client.get("/v1/dlq").json()["jobs"]
        assert sorted(j["name"] for j in letters) == ["bomb.docx", "broken.pdf", "stuck.hang"]
        pdf = jobs["broken.pdf"]
        again = client.post(f"/v1/dlq/{pdf['id']}/retry")
        assert again.status_code == 200 and again.json()["state"] == "queued"
        assert again.json()["attempts"] == 0
        assert wait_jobs(client, [pdf["id"]])[pdf["id"]]["state"] == "failed"
        dropped = client.delete(f"/v1/dlq/{pdf['id']}")
        assert dropped.status_code == 200 and dropped.json()["name"] == "broken.pdf"
        assert client.get(f"/v1/jobs/{pdf['id']}").status_code == 404
        assert client.delete(f"/v1/dlq/{jobs['good0.md']['id']}").status_code == 404
        metrics = client.get("/metrics").text
        assert 'fissure_jobs{state="failed"} 2.0' in metrics
        assert 'fissure_worker_restarts_total{kind="replaced"}' in metrics


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0
