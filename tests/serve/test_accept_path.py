"""The accept path's parts, without a server: uploads become durable and queued in group
commits, a refused request leaves nothing behind, and queue writers across processes wait
on one advisory lock instead of SQLite's sleeping busy handler."""

from __future__ import annotations

import asyncio
import fcntl
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fissure.errors import StoreError
from fissure.serve.commits import GroupCommit
from fissure.serve.jobs import NewJob
from fissure.serve.spool import IN_MEMORY, Incoming, Spool
from fissure.serve.sqlite_db import LOCKNAME
from fissure.serve.sqlite_queue import SQLiteQueue
from fissure.serve.uploads import MultipartFiles, Refused


def incoming(spool: Spool, data: bytes) -> Incoming:
    upload = spool.incoming(1 << 20)
    upload.write(data)
    upload.complete()
    return upload


def new_job(namespace: str, upload: Incoming) -> NewJob:
    done = upload.complete()
    return NewJob(namespace, f"{done.digest[:32]}-stamp", "f.txt", done.digest, done.size)


def stored(queue: SQLiteQueue, spool: Spool, digest: str) -> bytes:
    """The bytes a worker reads for ``digest``: from the queue, else from a spool file."""
    return queue.blobs([digest]).get(digest) or spool.read(digest)


def test_concurrent_uploads_share_commits_and_each_gets_its_own_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool, queue = Spool(tmp_path / "spool"), SQLiteQueue(tmp_path)
    texts = [f"document {i}\n".encode() * (50 if i % 8 else IN_MEMORY // 8) for i in range(40)]
    uploads = [spool.incoming(1 << 22) for _ in texts]
    for upload, text in zip(uploads, texts, strict=True):
        for at in range(0, len(text), 65536):
            upload.write(text[at : at + 65536])
        upload.complete()
    assert all(not spool.path(u.complete().digest).exists() for u in uploads)  # not yet durable
    commits: list[int] = []
    real = queue.submit

    def counted(jobs: list[NewJob], blobs: dict[str, bytes], **options: Any) -> list:
        commits.append(len(jobs))
        return real(jobs, blobs, **options)

    monkeypatch.setattr(queue, "submit", counted)

    async def everyone() -> list[tuple[list, int]]:
        group = GroupCommit(queue)
        namespaces = ["a" if i % 2 else "b" for i in range(len(uploads))]
        pairs = zip(namespaces, uploads, strict=True)
        return await asyncio.gather(*(group.submit(ns, [new_job(ns, u)], [u]) for ns, u in pairs))

    answers = asyncio.run(everyone())
    assert sum(commits) == 40 and len(commits) < 40  # uploads that arrive together commit together
    for text, upload, (submitted, after) in zip(texts, uploads, answers, strict=True):
        (one,) = submitted
        assert one.created and one.job.digest == upload.complete().digest
        assert stored(queue, spool, one.job.digest) == text  # durable under its hash
        # Small uploads are in the queue's transaction; only the large ones are files.
        assert spool.path(one.job.digest).exists() == (len(text) > IN_MEMORY)
        events = queue.events(one.job.namespace, after, 1000)
        assert one.job.id in {e.job_id for e in events}  # a stream after `after` sees it
    assert queue.counts().by_state == {"queued": 40}
    assert list(spool.tmp.iterdir()) == []
    queue.close()


def test_a_file_the_disk_refuses_fails_only_its_own_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool, queue = Spool(tmp_path / "spool"), SQLiteQueue(tmp_path)
    good = [incoming(spool, f"good {i}".encode()) for i in range(5)]
    bad = incoming(spool, b"bad" * IN_MEMORY)  # too big for memory: a file

    def broken() -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bad, "finish", broken)

    async def everyone() -> list[object]:
        commits = GroupCommit(queue)
        calls = [commits.submit("a", [new_job("a", u)], [u]) for u in [*good, bad]]
        return await asyncio.gather(*calls, return_exceptions=True)

    *fine, refused = asyncio.run(everyone())
    assert isinstance(refused, OSError)
    assert all(not isinstance(f, BaseException) for f in fine)
    assert queue.counts().by_state == {"queued": 5}
    assert queue.document("a", new_job("a", bad).document_id) is None
    assert list(spool.tmp.iterdir()) == []  # the refused upload's partial file is gone
    queue.close()


def test_a_full_queue_refuses_the_batch_and_keeps_nothing_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database that cannot grow (here: SQLite's page limit, as a full disk would) fails
    the transaction: every request in it gets a StoreError, no job and no bytes remain, and
    the queue takes uploads again once it has room."""
    spool, queue = Spool(tmp_path / "spool"), SQLiteQueue(tmp_path)
    (pages,) = queue._db.conn().execute("PRAGMA page_count").fetchone()
    limit = [pages]  # the database may not grow past its size now
    opened = queue._db.conn

    def limited() -> sqlite3.Connection:  # the limit is per connection: set on each use
        conn = opened()
        conn.execute(f"PRAGMA max_page_count = {limit[0]}")
        return conn

    monkeypatch.setattr(queue._db, "conn", limited)

    async def everyone(uploads: list[Incoming]) -> list[object]:
        commits = GroupCommit(queue)
        calls = [commits.submit("a", [new_job("a", u)], [u]) for u in uploads]
        return await asyncio.gather(*calls, return_exceptions=True)

    full = [incoming(spool, os.urandom(8000) + bytes([i])) for i in range(20)]
    answers = asyncio.run(everyone(full))
    assert all(isinstance(a, StoreError) for a in answers), answers
    assert "full" in str(answers[0])
    limit[0] = 1 << 30
    assert queue.counts().by_state == {}
    assert queue.blobs([u.complete().digest for u in full]) == {}
    again = [incoming(spool, os.urandom(8000)) for _ in range(3)]
    assert not any(isinstance(a, BaseException) for a in asyncio.run(everyone(again)))
    assert queue.counts().by_state == {"queued": 3}
    queue.close()


def _body(parts: list[tuple[str, bytes]]) -> tuple[str, list[bytes]]:
    boundary = "b0undary"
    chunks = []
    for name, data in parts:
        chunks.append(f'--{boundary}\r\nContent-Disposition: form-data; name="files"; '
                      f'filename="{name}"\r\n\r\n'.encode() + data + b"\r\n")  # fmt: skip
    chunks.append(f"--{boundary}--\r\n".encode())
    return f"multipart/form-data; boundary={boundary}", chunks


def test_a_request_refused_part_way_leaves_nothing_in_the_spool(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    elf = b"\x7fELF\x02\x01\x01" + bytes(200)
    big = b"# fine\n\n" + b"a line of text\n" * (IN_MEMORY // 10)  # spills to a file
    kind, chunks = _body([("a.md", big), ("prog", elf)])
    parser = MultipartFiles(spool, kind, max_file_bytes=1 << 20, max_request_bytes=1 << 22,
                            max_files=10)  # fmt: skip

    async def stream():  # type: ignore[no-untyped-def]
        for chunk in chunks:
            for at in range(0, len(chunk), 65536):  # as a server receives it
                yield chunk[at : at + 65536]
            assert chunk is chunks[-1] or any(spool.tmp.iterdir())  # the big file is on disk

    with pytest.raises(Refused) as refused:
        asyncio.run(parser.read(stream()))
    assert refused.value.status == 415
    assert list(spool.tmp.iterdir()) == []
    assert [p for p in spool.objects.rglob("*") if p.is_file()] == []


def test_queue_writers_wait_on_the_cross_process_lock(tmp_path: Path) -> None:
    queue = SQLiteQueue(tmp_path)
    spool = Spool(tmp_path / "spool")
    job = new_job("a", incoming(spool, b"locked out"))
    holder = os.open(tmp_path / LOCKNAME, os.O_RDWR | os.O_CREAT)  # another "process"
    fcntl.flock(holder, fcntl.LOCK_EX)
    done = threading.Event()
    writer = threading.Thread(target=lambda: (queue.submit([job]), done.set()))
    writer.start()
    try:
        assert not done.wait(0.5), "a queue write went ahead while another writer held the lock"
    finally:
        fcntl.flock(holder, fcntl.LOCK_UN)
        os.close(holder)
    started = time.monotonic()
    assert done.wait(30)
    assert time.monotonic() - started < 5
    writer.join()
    assert queue.counts().by_state == {"queued": 1}
    queue.close()


@pytest.mark.parametrize("size", [10, IN_MEMORY, IN_MEMORY + 1, 3 * IN_MEMORY + 17])
def test_an_upload_in_memory_or_on_disk_is_spooled_whole_once(tmp_path: Path, size: int) -> None:
    spool = Spool(tmp_path / "spool")
    data = os.urandom(size)
    first = spool.incoming(1 << 22)
    for at in range(0, size, 4096):
        first.write(data[at : at + 4096])
    assert (any(spool.tmp.iterdir())) == (size > IN_MEMORY)  # only a big one is streamed
    done = first.finish()
    assert spool.read(done.digest) == data and done.size == size
    again = spool.put(data)  # the same bytes once more: one file, kept
    assert again == done
    assert [p for p in spool.objects.rglob("*") if p.is_file()] == [spool.path(done.digest)]
    assert list(spool.tmp.iterdir()) == []


def test_the_engines_queue_copies_the_log_into_the_database_outside_the_uploads(
    tmp_path: Path,
) -> None:
    """Uploads' commits leave the checkpoint to the engine's queue (a thread, every second,
    outside the writer lock): the rows reach the database file with no upload doing it,
    and the engine's own commits do not wait for the disk."""
    api = SQLiteQueue(tmp_path)
    engine = SQLiteQueue(tmp_path, worker=True)
    assert api._db.conn().execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
    assert engine._db.conn().execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL
    before = api.path.stat().st_size
    spool = Spool(tmp_path / "spool")
    uploads = [incoming(spool, os.urandom(3000)) for _ in range(60)]
    api.submit([new_job("a", u) for u in uploads],
               {u.complete().digest: u.held() or b"" for u in uploads})  # fmt: skip
    deadline = time.monotonic() + 30
    while api.path.stat().st_size < before + 60 * 3000 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert api.path.stat().st_size >= before + 60 * 3000  # checkpointed by the engine's thread
    assert len(engine.blobs([u.complete().digest for u in uploads])) == 60
    engine.close()
    api.close()


def test_an_api_process_puts_what_startup_built_out_of_the_collectors_reach() -> None:
    """A full collection over FastAPI's and pydantic's objects took ~60 ms with the
    interpreter held: every upload in flight waited (the closed-loop p99 at 120 ms)."""
    import gc

    from fastapi import FastAPI

    from fissure.serve.app import _frozen_startup

    async def frozen_while_serving() -> int:
        async with _frozen_startup(FastAPI()):
            return gc.get_freeze_count()

    gc.unfreeze()
    try:
        assert gc.get_freeze_count() == 0
        assert asyncio.run(frozen_while_serving()) > 10_000  # the modules imported so far
    finally:
        gc.unfreeze()
