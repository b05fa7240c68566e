"""End to end over HTTP: upload → 202 → the engine → chunks that equal ``fissure chunk``'s."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serve.server import ROOT, Server, upload, wait_jobs

CORPUS = ROOT / "tests" / "corpus"
# One real file of every format (the corpus of the snapshot tests).
FILES = sorted(p for p in CORPUS.rglob("*/*") if p.is_file() and p.parent.name != "fuzz")
FIELDS = (
    "text",
    "start",
    "end",
    "lines",
    "headings",
    "entity",
    "page",
    "cell",
    "n_tokens",
    "index",
    "strategy",
)


def _fissure_chunk(path: Path) -> list[dict[str, object]]:
    """What ``fissure chunk`` prints for ``path``, one dict per chunk."""
    out = subprocess.run(
        [sys.executable, "-m", "fissure", "chunk", str(path)],
        capture_output=True,
        check=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    ).stdout.decode()
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_uploads_are_chunked_exactly_as_fissure_chunk_does(server: Server) -> None:
    files = FILES
    assert {p.suffix for p in files} >= {".md", ".py", ".pdf", ".docx", ".ipynb", ".html"}
    with server.client() as client:
        answer = upload(client, [(p.name, p.read_bytes()) for p in files])
        assert answer.status_code == 202, answer.text
        jobs = answer.json()["jobs"]
        assert [j["name"] for j in jobs] == [p.name for p in files]
        assert answer.headers["location"] == "/v1/jobs"
        done = wait_jobs(client, [j["id"] for j in jobs])
        assert {j["state"] for j in done.values()} == {"done"}, done
        for path, job in zip(files, jobs, strict=True):
            served = client.get(f"/v1/documents/{job['document_id']}/chunks").json()["chunks"]
            want = _fissure_chunk(path)
            assert len(served) == len(want) == done[job["id"]]["chunks"], path.name
            for got, expected in zip(served, want, strict=True):
                got["lines"] = list(got["lines"])
                assert {k: got[k] for k in FIELDS} == {k: expected[k] for k in FIELDS}, path.name


def test_the_same_bytes_twice_are_one_job(server: Server) -> None:
    data = b"# Twice\n\nThe same bytes, sent twice, make one job.\n"
    with server.client() as client:
        first = upload(client, [("twice.md", data)]).json()["jobs"][0]
        again = upload(client, [("other-name.md", data)]).json()["jobs"][0]
        assert first["created_now"] and not again["created_now"]
        assert again["id"] == first["id"] and again["document_id"] == first["document_id"]
        wait_jobs(client, [first["id"]])
        third = upload(client, [("twice.md", data)])
        assert third.status_code == 202 and third.json()["jobs"][0]["id"] == first["id"]
        page = client.get("/v1/jobs", params={"limit": 1000}).json()
        assert sum(j["document_id"] == first["document_id"] for j in page["jobs"]) == 1


def test_a_stored_document_is_found_by_a_query(server: Server) -> None:
    data = b"# Seismographs\n\nA seismograph records the tremors of the quaking ground.\n"
    with server.client() as client:
        job = upload(client, [("seismo.md", data)]).json()["jobs"][0]
        assert wait_jobs(client, [job["id"]])[job["id"]]["state"] == "done"
        hits = client.post("/v1/query", json={"text": "seismograph tremors quaking", "k": 3})
        assert hits.status_code == 200, hits.text
        best = hits.json()["hits"][0]
        assert best["document_id"] == job["document_id"] and best["name"] == "seismo.md"
        assert best["text"] == data.decode().rstrip("\n") and best["headings"] == ["Seismographs"]
        only = client.post(
            "/v1/query",
            json={"text": "tremors", "k": 5, "where": {"document_id": job["document_id"]}},
        )
        assert {h["document_id"] for h in only.json()["hits"]} == {job["document_id"]}


def test_traversal_names_are_metadata_only(server: Server, tmp_path: Path) -> None:
    with server.client() as client:
        answer = upload(
            client,
            [
                ("../../etc/passwd", b"root:x:0:0\n"),
                ("..\\..\\boot.ini", b"[boot]\n"),
                ("/abs/../x.md", b"# x\n"),
            ],
        )
        assert answer.status_code == 202, answer.text
        names = [j["name"] for j in answer.json()["jobs"]]
        assert names == ["etc/passwd", "boot.ini", "abs/x.md"]
        wait_jobs(client, [j["id"] for j in answer.json()["jobs"]])
    spooled = {p.name for p in (server.store / "spool").rglob("*") if p.is_file()}
    assert not any("passwd" in n or "boot" in n for n in spooled)
    assert all(len(n) == 64 for n in spooled)
    assert Path("/etc/passwd").read_text().startswith("root:")


@pytest.mark.parametrize(
    "route", ["/v1/jobs/nope", "/v1/documents/nope", "/v1/documents/nope/chunks"]
)
def test_unknown_ids_are_404(server: Server, route: str) -> None:
    with server.client() as client:
        answer = client.get(route)
        assert answer.status_code == 404 and "no " in answer.json()["detail"]


def test_query_modes(server: Server) -> None:
    data = b"# Net\n\nretry_on_ECONNRESET reopens the socket.\n\n# Bread\n\nKnead the dough.\n"
    with server.client() as client:
        job = upload(client, [("net.md", data)]).json()["jobs"][0]
        assert wait_jobs(client, [job["id"]])[job["id"]]["state"] == "done"
        for mode in ("dense", "lexical", "hybrid", None):  # None: the default, hybrid
            body = {"text": "ECONNRESET", "k": 3, **({"mode": mode} if mode else {})}
            hits = client.post("/v1/query", json=body)
            assert hits.status_code == 200, hits.text
            texts = [h["text"] for h in hits.json()["hits"]]
            if mode == "lexical":
                assert "ECONNRESET" in texts[0]  # the one chunk that has the word
            elif mode != "dense":
                assert any("ECONNRESET" in t for t in texts), texts
        bad = client.post("/v1/query", json={"text": "x", "mode": "sparse"})
        assert bad.status_code == 422


def test_query_with_a_reader_budget_hands_over_exact_passages(server: Server) -> None:
    from fissure.size import as_sizer

    # Distinct sections (near-copies would be collapsed into one hit): each sentence names
    # its own rock, place and number.
    rocks = ["granite", "basalt", "shale", "gneiss", "marble", "slate", "chalk", "flint"]
    places = ["ridge", "valley", "coast", "plateau", "canyon", "delta", "basin", "mesa"]
    sections = [
        f"# Part {i}\n\n"
        + " ".join(f"The fault under the {rocks[(i + j) % 8]} {places[(i * 3 + j) % 8]} slipped "
                   f"{i * 40 + j} centimetres in year {1900 + 7 * i + j}." for j in range(30))
        for i in range(6)
    ]  # fmt: skip
    data = "\n\n".join(sections) + "\n"
    count = as_sizer("cl100k_base").count
    with server.client() as client:
        job = upload(client, [("faults.md", data.encode())]).json()["jobs"][0]
        assert wait_jobs(client, [job["id"]])[job["id"]]["state"] == "done"
        for budget in (1, 150, 600, 5000):
            body = {
                "text": "the fault under the granite ridge slipped",
                "k": 3,
                "budget_tokens": budget,
                "where": {"document_id": job["document_id"]},
            }
            answer = client.post("/v1/query", json=body)
            assert answer.status_code == 200, answer.text
            got = answer.json()
            assert len(got["hits"]) == 3
            passages = got["passages"]
            assert got["tokens"] == sum(p["n_tokens"] for p in passages) <= budget
            assert [p["rank"] for p in passages] == sorted(p["rank"] for p in passages)
            seen: set[str] = set()
            spans = []
            for p in passages:
                assert p["document_id"] == job["document_id"] and p["name"] == "faults.md"
                assert data[p["start"] : p["end"]] == p["text"]
                assert p["n_tokens"] == count(p["text"])
                assert p["lines"][0] == data.count("\n", 0, p["start"]) + 1
                assert not seen & set(p["chunk_ids"])
                seen |= set(p["chunk_ids"])
                spans.append((p["start"], p["end"]))
            spans.sort()
            assert all(a_end < b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))
            if budget == 5000:  # everything fits: every chunk of the document is handed over
                assert len(seen) == len(
                    client.get(f"/v1/documents/{job['document_id']}/chunks").json()["chunks"]
                )
        too_big = client.post("/v1/query", json={"text": "x", "budget_tokens": 10**9})
        assert too_big.status_code == 400 and "max_budget_tokens" in too_big.json()["detail"]
        assert client.post("/v1/query", json={"text": "x", "budget_tokens": 0}).status_code == 422
        plain = client.post("/v1/query", json={"text": "fault", "k": 2}).json()
        assert plain["passages"] is None and plain["tokens"] is None
