"""The JobQueue contract, run against every implementation in ``QUEUES``: the embedded
SQLite queue in a test folder, and the PostgreSQL queue on a real server (``pg_dsn``), each
test in a schema of its own so that tests sharing the server never meet.
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from fissure.errors import InputError
from fissure.serve.jobs import Completion, NewJob, QueueFull, Reason
from fissure.serve.queue import JobQueue
from fissure.serve.sqlite_queue import SQLiteQueue

Factory = Callable[..., JobQueue]


def _sqlite(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., JobQueue]:
    return lambda **options: SQLiteQueue(tmp_path, **options)


def _postgres(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., JobQueue]:
    pytest.importorskip("psycopg_pool", reason="pip install 'fissure[postgres]'")
    import psycopg
    from psycopg import conninfo

    from fissure.serve.pg_queue import PostgresQueue

    dsn = request.getfixturevalue("pg_dsn")
    schema = "q" + uuid.uuid4().hex[:16]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    scoped = conninfo.make_conninfo(dsn, options=f"-c search_path={schema}")
    return lambda **options: PostgresQueue(scoped, **options)


QUEUES: dict[str, Callable[[pytest.FixtureRequest, Path], Factory]] = {
    "sqlite": _sqlite,
    "postgres": _postgres,
}


@pytest.fixture(params=sorted(QUEUES))
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    """Opens queues on one shared database (as several processes would)."""
    opened: list[JobQueue] = []
    opener = QUEUES[request.param](request, tmp_path)

    def factory(**options: Any) -> JobQueue:
        options.setdefault("backoff_seconds", 0.2)
        queue = opener(**options)
        opened.append(queue)
        return queue

    yield factory
    for queue in opened:
        queue.close()


def job(n: int, namespace: str = "a", size: int = 10) -> NewJob:
    digest = hashlib.sha256(str(n).encode()).hexdigest()
    return NewJob(namespace, f"{digest[:32]}-stamp", f"doc{n}.md", digest, size)


BOOM = Reason("parse", "Timeout", "took too long")


def test_submit_is_idempotent_per_namespace_and_document(make: Factory) -> None:
    q = make()
    first = q.submit([job(1), job(2)])
    assert [s.created for s in first] == [True, True]
    again = q.submit([job(1), job(1, namespace="b")])
    assert again[0].job.id == first[0].job.id and not again[0].created
    assert again[1].created and again[1].job.id != first[0].job.id
    assert q.counts().by_state == {"queued": 3}
    assert q.counts("a").by_state == {"queued": 2}


def test_concurrent_submitters_make_one_job(make: Factory) -> None:
    queues = [make() for _ in range(4)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: queues[i % 4].submit([job(7)])[0], range(32)))
    assert len({r.job.id for r in results}) == 1
    assert sum(r.created for r in results) == 1


def test_each_job_is_leased_to_one_worker(make: Factory) -> None:
    q = make()
    q.submit([job(i) for i in range(60)])
    workers = [make() for _ in range(3)]
    got: dict[str, list[str]] = {f"w{i}": [] for i in range(3)}

    def work(i: int) -> None:
        while leased := workers[i].lease(f"w{i}", 4, 30):
            got[f"w{i}"].extend(j.id for j in leased)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for ids in got.values() for i in ids]
    assert len(every) == len(set(every)) == 60
    assert q.counts().by_state == {"running": 60}


def test_a_lease_that_expires_moves_the_job_to_another_worker(make: Factory) -> None:
    q = make()
    q.submit([job(1)])
    (held,) = q.lease("old", 1, 2.0)  # long enough that a loaded machine still sees it held
    assert held.attempts == 1 and held.state == "running"
    assert q.lease("new", 1, 30) == []
    time.sleep(2.2)
    (taken,) = q.lease("new", 1, 30)
    assert taken.id == held.id and taken.attempts == 2
    # The old worker lost it: it can neither renew, complete nor fail it.
    assert q.renew("old", [held.id], 30) == []
    assert q.complete("old", [Completion(held.id, 3)]) == 0
    assert q.fail("old", held.id, BOOM, retryable=False) is None
    assert q.renew("new", [held.id], 30) == [held.id]
    assert q.complete("new", [Completion(held.id, 3)]) == 1
    done = q.get("a", held.id)
    assert done is not None and done.state == "done" and done.chunks == 3


def test_retries_back_off_then_end_in_the_dlq(make: Factory) -> None:
    q = make(max_attempts=3, backoff_seconds=0.2)
    q.submit([job(1)])
    waits = []
    for attempt in (1, 2):
        (held,) = q.lease("w", 1, 30)
        assert held.attempts == attempt
        after = q.fail("w", held.id, BOOM, retryable=True)
        assert after is not None and after.state == "queued" and after.not_before is not None
        waits.append(after.not_before - after.updated)
        assert q.lease("w", 1, 30) == []  # not before the backoff
        time.sleep(waits[-1] + 0.05)
    assert waits[1] == pytest.approx(2 * waits[0], rel=0.01)
    (held,) = q.lease("w", 1, 30)
    final = q.fail("w", held.id, BOOM, retryable=True)
    assert final is not None and final.state == "failed" and final.attempts == 3
    assert (final.error_stage, final.error_type, final.error_message) == (
        "parse",
        "Timeout",
        "took too long",
    )
    record = q.document("a", held.document_id)
    assert record is not None and record.state == "failed"


def test_a_permanent_failure_goes_to_the_dlq_at_once(make: Factory) -> None:
    q = make(max_attempts=5)
    q.submit([job(1)])
    (held,) = q.lease("w", 1, 30)
    why = Reason("parse", "InputError", "not a readable PDF", "Traceback …")
    after = q.fail("w", held.id, why, retryable=False)
    assert after is not None and after.state == "failed" and after.attempts == 1
    page = q.list_jobs("a", "failed", None, 10)
    assert [j.id for j in page.jobs] == [held.id]


def test_an_expired_last_attempt_is_a_dead_letter(make: Factory) -> None:
    q = make(max_attempts=1)
    q.submit([job(1)])
    (held,) = q.lease("w", 1, 0.1)
    time.sleep(0.2)
    assert q.lease("w2", 1, 30) == []
    dead = q.get("a", held.id)
    assert dead is not None and dead.state == "failed" and dead.error_type == "LeaseExpired"


def test_release_gives_back_a_workers_jobs(make: Factory) -> None:
    q = make(max_attempts=2)
    q.submit([job(1), job(2)])
    first = q.lease("w", 2, 30)
    assert q.release("w") == 2
    assert {j.state for j in q.list_jobs("a", None, None, 10).jobs} == {"queued"}
    second = q.lease("w", 2, 30)
    assert {j.id for j in second} == {j.id for j in first}
    assert q.release("w") == 2  # out of attempts now: both are dead letters
    assert q.counts().by_state == {"failed": 2}


def test_complete_stores_the_document_record(make: Factory) -> None:
    q = make()
    (submitted,) = q.submit([job(1, size=123)])
    assert q.document("a", submitted.job.document_id).state == "queued"  # type: ignore[union-attr]
    (held,) = q.lease("w", 1, 30)
    q.complete("w", [Completion(held.id, 4)])
    record = q.document("a", held.document_id)
    assert record is not None
    assert (record.state, record.chunks, record.size, record.job_id) == ("done", 4, 123, held.id)
    assert q.finished_since(time.time() - 60) == (1, 4)


def test_listing_pages_through_every_job_once(make: Factory) -> None:
    q = make()
    q.submit([job(i) for i in range(25)])
    q.submit([job(i, namespace="b") for i in range(5)])
    seen, cursor = [], None
    while True:
        page = q.list_jobs("a", None, cursor, 7)
        seen.extend(j.id for j in page.jobs)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert len(seen) == len(set(seen)) == 25
    held = q.lease("w", 3, 30)
    running = q.list_jobs("a", "running", None, 100).jobs
    assert {j.id for j in running} == {j.id for j in held}
    with pytest.raises(InputError, match="cursor"):
        q.list_jobs("a", None, "not-a-cursor", 10)


def test_events_follow_every_change_in_order(make: Factory) -> None:
    q = make()
    q.submit([job(1)])
    (held,) = q.lease("w", 1, 30)
    q.complete("w", [Completion(held.id, 2)])
    events = q.events("a", 0, 100)
    assert [e.state for e in events] == ["queued", "running", "done"]
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    assert q.events("a", events[0].seq, 100) == events[1:]
    assert q.last_event("a") == events[-1].seq
    assert q.events("b", 0, 100) == [] and q.last_event("b") == 0


def test_no_read_crosses_a_namespace(make: Factory) -> None:
    q = make()
    (mine,) = q.submit([job(1, namespace="a")])
    (held,) = q.lease("w", 1, 30)
    q.fail("w", held.id, BOOM, retryable=False)
    doc = mine.job.document_id
    assert q.get("b", mine.job.id) is None
    assert q.list_jobs("b", None, None, 100).jobs == []
    assert q.events("b", 0, 100) == []
    assert q.document("b", doc) is None
    assert q.retry("b", mine.job.id) is None
    assert q.delete_failed("b", mine.job.id) is False
    assert q.forget_document("b", doc) is False
    assert q.get("a", mine.job.id) is not None and q.document("a", doc) is not None


def test_dead_letters_can_be_retried_and_deleted(make: Factory) -> None:
    q = make(max_attempts=1)
    q.submit([job(1), job(2)])
    for held in q.lease("w", 2, 30):
        q.fail("w", held.id, BOOM, retryable=True)
    one, two = q.list_jobs("a", "failed", None, 10).jobs
    again = q.retry("a", one.id)
    assert again is not None and again.state == "queued" and again.attempts == 0
    assert q.retry("a", one.id) is None  # only dead letters
    assert q.delete_failed("a", two.id) and q.get("a", two.id) is None
    assert q.document("a", two.document_id) is None
    (held,) = q.lease("w", 5, 30)
    assert held.id == one.id


def test_purge_keeps_documents_and_what_is_still_needed(make: Factory) -> None:
    q = make(max_attempts=1)
    q.submit([job(1, size=5), job(2, size=7), job(3, size=11)])
    one, two, three = q.lease("w", 3, 30)
    q.complete("w", [Completion(one.id, 2)])
    q.fail("w", two.id, BOOM, retryable=False)
    assert q.counts().spool_bytes == 23
    cutoff = time.time() + 1
    assert q.referenced([one.digest, two.digest, three.digest]) == {
        one.digest,
        two.digest,
        three.digest,
    }
    q.purge(done_before=0, failed_before=0, spool_before=cutoff)  # only the bytes of done jobs
    assert q.referenced([one.digest, two.digest]) == {two.digest}
    assert q.counts().spool_bytes == 18
    q.purge(done_before=cutoff, failed_before=cutoff, spool_before=cutoff)
    assert q.get("a", one.id) is None and q.get("a", two.id) is None
    assert q.get("a", three.id) is not None  # still running
    assert q.events("a", 0, 100) == []
    record = q.document("a", one.document_id)
    assert record is not None and record.state == "done" and record.chunks == 2
    assert q.document("a", two.document_id) is None
    # The stored document sent again: a job that is done at once, nothing to redo.
    (again,) = q.submit([job(1, size=5)])
    assert again.created and again.job.state == "done" and again.job.chunks == 2
    assert q.lease("w", 5, 30) == []


def _bytes(n: int) -> bytes:
    return f"the bytes of document {n}\n".encode()


def test_bytes_stored_with_a_job_live_as_long_as_a_spooled_job_names_them(make: Factory) -> None:
    q, other = make(), make()  # two processes on one database
    one, two = job(1), job(2)
    blobs = {one.digest: _bytes(1), two.digest: _bytes(2), "f" * 64: b"no job names these"}
    first = q.submit([one, two], blobs)
    assert other.blobs([one.digest, two.digest, "f" * 64, "e" * 64]) == {
        one.digest: _bytes(1), two.digest: _bytes(2)}  # fmt: skip
    # The same document again, and in another namespace: one copy, kept for both.
    (again,) = q.submit([one], {one.digest: b"not stored: the job existed"})
    assert not again.created and q.blobs([one.digest]) == {one.digest: _bytes(1)}
    q.submit([job(1, namespace="b")], {one.digest: _bytes(1)})
    jobs = q.lease("w", 3, 30)
    assert {j.digest for j in jobs} == {one.digest, two.digest}
    q.complete("w", [Completion(j.id, 1) for j in jobs if j.namespace == "a"])
    cutoff = time.time() + 1
    q.purge(done_before=0, failed_before=0, spool_before=cutoff)  # done in namespace a only
    assert set(q.blobs([one.digest, two.digest])) == {one.digest}  # b's job still needs it
    assert q.forget_document("b", first[0].job.document_id)
    assert q.blobs([one.digest]) == {}  # the last job naming them went
    # A document stored already gets a job done at once: no bytes kept for it.
    q.purge(done_before=cutoff, failed_before=cutoff, spool_before=cutoff)
    (done,) = q.submit([job(2)], {two.digest: _bytes(2)})
    assert done.created and done.job.state == "done" and q.blobs([two.digest]) == {}


def test_a_follower_of_events_misses_none_while_many_write(make: Factory) -> None:
    """Events are numbered in commit order: a reader polling ``events(after=last seen)``
    while several writers commit at once ends up with every event, once each."""
    writers = [make() for _ in range(4)]
    reader = make()
    seen: list[int] = []
    stop = threading.Event()

    def follow() -> None:
        cursor = 0
        while True:
            done = stop.is_set()  # read before polling: the last poll follows every commit
            for event in reader.events("a", cursor, 1000):
                seen.append(event.seq)
                cursor = event.seq
            if done:
                return

    def write(w: int) -> None:
        q = writers[w]
        for i in range(15):
            q.submit([job(100 * w + i)])
            for held in q.lease(f"w{w}", 2, 30):
                q.complete(f"w{w}", [Completion(held.id, 1)])

    follower = threading.Thread(target=follow)
    follower.start()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, range(4)))
    stop.set()
    follower.join()
    every = [e.seq for e in reader.events("a", 0, 10_000)]
    assert len(every) >= 4 * 15 * 2  # each job at least queued and running
    assert seen == every  # nothing skipped, nothing twice, in order


def test_a_bounded_submission_is_admitted_or_refused_whole(make: Factory) -> None:
    """Only the jobs a submission queues count against the bound; one that would pass it
    adds nothing, not even its first jobs; a job done at once or one that existed is free."""
    q = make()
    q.submit([job(1), job(2)], max_waiting=3)
    with pytest.raises(QueueFull, match="max_queued") as full:
        q.submit([job(3), job(4)], {job(3).digest: b"three"}, max_waiting=3)
    assert (full.value.waiting, full.value.adding, full.value.most) == (2, 2, 3)
    assert q.counts().waiting == 2 and q.blobs([job(3).digest]) == {}
    assert q.document("a", job(3).document_id) is None and len(q.events("a", 0, 100)) == 2
    (again, three) = q.submit([job(1), job(3)], max_waiting=3)  # job 1 exists: only 3 counts
    assert not again.created and three.created and q.counts().waiting == 3
    (held,) = q.lease("w", 1, 30)  # running still counts as waiting
    with pytest.raises(QueueFull):
        q.submit([job(5)], max_waiting=3)
    q.complete("w", [Completion(held.id, 1)])
    assert q.submit([job(5)], max_waiting=3)[0].created  # the finished one made room
    assert q.submit([job(6)])[0].created  # no bound: no count


def test_bounded_submitters_never_overshoot(make: Factory) -> None:
    """Many queues on one database (several processes) submitting at once: exactly the
    bound is admitted, every other submission refused, none lost."""
    queues = [make() for _ in range(4)]

    def one(i: int) -> bool:
        try:
            queues[i % 4].submit([job(1000 + i)], max_waiting=10)
        except QueueFull:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        admitted = sum(pool.map(one, range(40)))
    assert admitted == 10
    assert queues[0].counts().by_state == {"queued": 10}


def test_queued_age_is_how_long_the_oldest_queued_job_has_waited(make: Factory) -> None:
    q = make()
    assert q.queued_age() == 0.0
    q.submit([job(1)])
    time.sleep(0.3)
    before = time.time()
    q.submit([job(2)])
    assert 0.25 <= q.queued_age() < 30
    q.lease("w", 1, 30)  # the oldest leaves the queue: job 2 is the oldest now
    assert q.queued_age() <= time.time() - before + 0.05
    q.lease("w", 1, 30)
    assert q.queued_age() == 0.0
