"""The rest of the API over HTTP: events, deletes, server-read sources, several API
processes, retention, metrics and the default MiniLM embedder end to end."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import httpx
from bench.service import children, cmdline

from fissure.embed.load import AUTO, resolve, spec_of_model
from fissure.store import ChromaStore, Manifest
from tests.serve.server import Server, upload, wait_jobs


def _events(
    server: Server, params: dict[str, str], headers: dict[str, str], until: str, job_id: str
) -> list[tuple[int, dict[str, object]]]:
    """Read the event stream until ``job_id`` reaches state ``until``."""
    found: list[tuple[int, dict[str, object]]] = []
    seq = 0
    with httpx.stream(
        "GET",
        server.url + "/v1/events",
        params=params,
        headers=headers,
        timeout=httpx.Timeout(30, read=30),
    ) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        for line in stream.iter_lines():
            if line.startswith("id: "):
                seq = int(line[4:])
            elif line.startswith("data: "):
                event = json.loads(line[6:])
                found.append((seq, event))
                if event["job_id"] == job_id and event["state"] == until:
                    return found
    return found


def test_events_stream_and_resume_from_last_event_id(server: Server) -> None:
    with server.client() as client:
        answer = upload(client, [("evented.md", b"# Events\n\nServer-sent events.\n")]).json()
    job = answer["jobs"][0]
    seen = _events(server, {"after": str(answer["events_after"])}, {}, "done", job["id"])
    mine = [(seq, e["state"]) for seq, e in seen if e["job_id"] == job["id"]]
    assert [state for _, state in mine] == ["queued", "running", "done"]
    assert [seq for seq, _ in seen] == sorted({seq for seq, _ in seen})
    running = next(seq for seq, state in mine if state == "running")
    resumed = _events(server, {}, {"Last-Event-ID": str(running)}, "done", job["id"])
    assert [(e["job_id"], e["state"]) for _, e in resumed][0] == (job["id"], "done")


def test_delete_removes_chunks_manifest_rows_and_jobs(server: Server) -> None:
    with server.client() as client:
        job = upload(client, [("doomed.md", b"# Doomed\n\nThis document will be deleted.\n")])
        job = job.json()["jobs"][0]
        wait_jobs(client, [job["id"]])
        doc = job["document_id"]
        chunks = client.get(f"/v1/documents/{doc}/chunks").json()["chunks"]
        assert chunks
        gone = client.delete(f"/v1/documents/{doc}")
        assert gone.status_code == 200 and gone.json() == {"document_id": doc, "deleted": True}
        assert client.get(f"/v1/documents/{doc}").status_code == 404
        assert client.get(f"/v1/jobs/{job['id']}").status_code == 404
        assert client.delete(f"/v1/documents/{doc}").status_code == 404
        hits = client.post("/v1/query", json={"text": "doomed deleted", "k": 50}).json()["hits"]
        assert doc not in {h["document_id"] for h in hits}
        again = upload(client, [("doomed.md", b"# Doomed\n\nThis document will be deleted.\n")])
        assert again.json()["jobs"][0]["created_now"] and again.json()["jobs"][0]["id"] != job["id"]


def test_a_folder_under_an_allowed_root_is_one_job_per_file(server: Server) -> None:
    root = server.store.parent / "allowed" / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# A\n\nFirst file.\n")
    (root / "sub" / "b.py").write_text("def b():\n    return 'b'\n")
    (root / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    (root / "escape.md").symlink_to("/etc/hostname")
    with server.client() as client:
        answer = client.post("/v1/documents", json={"source": str(root)})
        assert answer.status_code == 202, answer.text
        body = answer.json()
        assert sorted(j["name"] for j in body["jobs"]) == ["a.md", "sub/b.py"]
        reasons = {s["name"]: s["reason"] for s in body["skipped"]}
        assert set(reasons) == {"pic.png", "escape.md"} and "no parser" in reasons["pic.png"]
        assert {j["origin"] for j in body["jobs"]} == {f"file:{root}/a.md", f"file:{root}/sub/b.py"}
        done = wait_jobs(client, [j["id"] for j in body["jobs"]])
        assert {j["state"] for j in done.values()} == {"done"}
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        subprocess.run(["git", "-C", str(root), "add", "a.md"], check=True)
        subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "-c",
                "user.email=t@t",
                "-c",
                "user.name=t",
                "commit",
                "-qm",
                "one",
            ],
            check=True,
        )
        from_git = client.post("/v1/documents", json={"source": f"git:{root}@HEAD"}).json()
        assert [j["name"] for j in from_git["jobs"]] == ["a.md"]
        assert not from_git["jobs"][0]["created_now"]  # the same bytes: the same document
        for refused in ("/etc", "git:/etc@HEAD", "relative/path", "github:python/cpython"):
            answer = client.post("/v1/documents", json={"source": refused})
            assert answer.status_code == 403, (refused, answer.text)
        assert client.post("/v1/documents", json={"src": "x"}).status_code == 422


def test_metrics_cover_the_issue_list(server: Server) -> None:
    with server.client() as client:
        upload(client, [("metric.md", b"# M\n\nMeasured.\n")])
        text = client.get("/metrics").text
    for name in (
        "fissure_queue_depth",
        'fissure_jobs{state="done"}',
        "fissure_accept_seconds_bucket",
        "fissure_documents_per_second",
        "fissure_chunks_per_second",
        "fissure_embedding_batch_texts_bucket",
        "fissure_worker_restarts_total",
        "fissure_documents_total",
        "fissure_chunks_total",
        "fissure_spool_bytes",
    ):
        assert name in text, name


def test_several_api_processes_answer_from_the_database(tmp_path: Path) -> None:
    with Server(tmp_path / "store", ["--api-workers", "3"]) as server:
        with server.client() as client:
            ids = []
            for i in range(12):
                answer = upload(client, [(f"m{i}.md", f"# Doc {i}\n\nWords {i}.\n".encode())])
                assert answer.status_code == 202
                ids.append(answer.json()["jobs"][0]["id"])
            done = wait_jobs(client, ids)
        assert {j["state"] for j in done.values()} == {"done"}
        pages = set()
        for _ in range(12):  # fresh connections, so the kernel spreads them over the processes
            listing = httpx.get(server.url + "/v1/jobs", params={"limit": 100}).json()["jobs"]
            pages.add(tuple((j["id"], j["state"]) for j in listing))
        assert len(pages) == 1 and len(next(iter(pages))) == 12
        assert len(_uvicorn_workers(server)) == 3


def _uvicorn_workers(server: Server) -> list[int]:
    """uvicorn's worker processes (multiprocessing spawns them; its resource tracker too)."""
    return [p for p in children(server.pids()["server"][0]) if "spawn_main" in cmdline(p)]


def test_finished_jobs_and_bytes_are_purged_but_documents_stay(tmp_path: Path) -> None:
    options = [
        "--retention-seconds",
        "1",
        "--spool-retention-seconds",
        "1",
        "--purge-interval-seconds",
        "1",
    ]
    data = b"# Kept\n\nThe document stays after its job is purged.\n"
    with Server(tmp_path / "store", options) as server, server.client() as client:
        job = upload(client, [("kept.md", data)]).json()["jobs"][0]
        wait_jobs(client, [job["id"]])
        deadline = time.monotonic() + 30
        while client.get(f"/v1/jobs/{job['id']}").status_code != 404:
            assert time.monotonic() < deadline, "the finished job was never purged"
            time.sleep(0.5)
        while list((server.store / "spool" / "objects").rglob("*/*")):
            assert time.monotonic() < deadline, "the spooled bytes were never purged"
            time.sleep(0.5)
        record = client.get(f"/v1/documents/{job['document_id']}").json()
        assert record["state"] == "done" and record["chunks"] >= 1
        assert client.get(f"/v1/documents/{job['document_id']}/chunks").json()["chunks"]
        again = upload(client, [("kept.md", data)]).json()["jobs"][0]
        assert again["created_now"] and again["state"] == "done"
        assert again["chunks"] == record["chunks"]


def test_the_default_minilm_embedder_end_to_end(tmp_path: Path) -> None:
    docs = {
        "cats.md": b"# Cats\n\nKittens purr and chase mice around the barn.\n",
        "stars.md": b"# Astronomy\n\nTelescopes reveal distant galaxies and nebulae.\n",
        "bread.md": b"# Baking\n\nKnead the dough, let it rise, then bake the loaf.\n",
    }
    with Server(tmp_path / "store", ["--embedder", AUTO]) as server, server.client() as c:
        jobs = upload(c, list(docs.items())).json()["jobs"]
        wait_jobs(c, [j["id"] for j in jobs])
        by_name = {j["name"]: j["document_id"] for j in jobs}
        for question, name in (
            ("feline pets", "cats.md"),
            ("outer space", "stars.md"),
            ("making a sourdough", "bread.md"),
        ):
            hits = c.post("/v1/query", json={"text": question, "k": 3}).json()["hits"]
            assert hits[0]["document_id"] == by_name[name], (question, hits)
            assert hits[0]["score"] > hits[1]["score"]
    manifest = Manifest(tmp_path / "store")
    # The default is this machine's fastest MiniLM variant, recorded as that variant.
    assert spec_of_model(manifest.get_meta("model")) == resolve(AUTO) != AUTO
    assert manifest.get_meta("dim") == "384"
    manifest.close()
    assert ChromaStore(tmp_path / "store" / "chroma").count() == 3


def test_leases_are_renewed_while_a_document_takes_longer_than_one(tmp_path: Path) -> None:
    """Each document takes 3 s to parse with a 1 s lease: renewal keeps every job with the
    engine that holds it, so none is leased twice (one attempt each)."""
    env = {"FISSURE_PLUGINS": "tests.ingest.helpers,tests.serve.plugins"}
    options = ["--lease-seconds", "1", "--workers", "2", "--recycle-after", "1"]
    with Server(tmp_path / "store", options, env=env) as server, server.client() as client:
        files = [(f"slow{i}.slow", f"slow words {i}".encode()) for i in range(4)]
        jobs = upload(client, files).json()["jobs"]
        done = wait_jobs(client, [j["id"] for j in jobs])
        metrics = client.get("/metrics").text
    assert {(j["state"], j["attempts"]) for j in done.values()} == {("done", 1)}
    recycled = [line for line in metrics.splitlines() if 'kind="recycled"' in line]
    assert recycled and float(recycled[0].split()[-1]) >= 2  # a parser per document
