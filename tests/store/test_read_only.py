"""A store that cannot be written (issue 33): on a read-only bind mount and on a full disk,
``query``, ``status`` and ``dlq list`` answer as on the writable store; ``ingest`` fails
with one line, never a traceback; nothing is lost, and after space is freed a re-run
converges. Real mounts (root needed; skipped with the reason where mounting is refused).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fissure.cli import app
from fissure.embed.hashing import HashingEmbedder
from fissure.store.chroma import ChromaStore
from fissure.store.chroma_reader import ReadOnlyChroma
from fissure.store.open import open_store

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
INGEST = ["--embedder", "hashing", "--workers", "1", "--max-tokens", "24", "--no-progress"]
QUESTIONS = ["knead the dough", "igneous granite rock", "return dough twice"]


def _docs(folder: Path) -> Path:
    folder.mkdir()
    (folder / "bread.md").write_text(
        "# Bread\n\n## Dough\n\nKnead the dough and let it rise for an hour.\n\n## Baking\n\n"
        "Bake the loaf in a hot oven until the crust is brown and it sounds hollow.\n"
    )
    (folder / "rocks.txt").write_text(
        "Granite is an igneous rock.\n\nShale is sedimentary.\n\nMarble is metamorphic.\n"
    )
    (folder / "code.py").write_text("def knead(dough):\n    return dough * 2\n")
    (folder / "noise.txt").write_bytes(bytes(range(256)) * 4)  # a dead letter
    return folder


def _ingest(docs: Path, store: Path) -> int:
    return runner.invoke(app, ["ingest", str(docs), "--store", str(store), *INGEST]).exit_code


def _reads(store: Path) -> dict[str, Any]:
    """What every read command answers (exit status and output), the store's name aside."""
    out: dict[str, Any] = {}
    for mode in ("hybrid", "dense", "lexical"):
        for q in QUESTIONS:
            got = runner.invoke(app, ["query", q, "-k", "3", "--mode", mode, "--json",
                                      "--store", str(store)])  # fmt: skip
            assert got.exit_code == 0, got.output
            out[f"{mode}:{q}"] = json.loads(got.stdout)
    where = runner.invoke(app, ["query", "dough", "--where", "index=0", "--json", "--store",
                                str(store)])  # fmt: skip
    assert where.exit_code == 0, where.output
    out["where"] = json.loads(where.stdout)
    status = runner.invoke(app, ["status", "--json", "--check", "--store", str(store)])
    assert status.exit_code == 0, status.output
    report = json.loads(status.stdout)
    report.pop("store")
    out["status"] = report
    dlq = runner.invoke(app, ["dlq", "list", "--json", "--store", str(store)])
    assert dlq.exit_code == 0, dlq.output
    out["dlq"] = [json.loads(line) for line in dlq.stdout.splitlines()]
    return out


def _timeless(reads: dict[str, Any]) -> dict[str, Any]:
    """``reads`` without the times of runs and failures (two runs differ in those)."""
    status = reads["status"]
    sources = [{k: v for k, v in s.items() if k != "last_run"} for s in status["sources"]]
    dlq = [{k: v for k, v in d.items() if k != "time"} for d in reads["dlq"]]
    return {**reads, "status": {**status, "sources": sources}, "dlq": dlq}


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def _fissure(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command line in a fresh process, as a user runs it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1", "COLUMNS": "300"}
    return subprocess.run([sys.executable, "-m", "fissure", *args], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip


def _one_error_line(out: subprocess.CompletedProcess[str], says: str) -> None:
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr, out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and says in errors[0], out.stderr


@pytest.fixture
def mount() -> Iterator[object]:
    """``mount(*args)``: run ``mount``, unmounted again at the end (skip where refused)."""
    points: list[str] = []

    def run(*args: str) -> None:
        done = subprocess.run(["mount", *args], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount here (mount {' '.join(args)}: {done.stderr.strip()}); "
                        "these tests need root with CAP_SYS_ADMIN")  # fmt: skip
        if args[-1] not in points:
            points.append(args[-1])

    if os.geteuid() != 0:
        pytest.skip("mounting needs root")
    yield run
    for point in reversed(points):
        # Lazily where a file is still open there (this process's Chroma client keeps its
        # database open): detached now, released when the last file closes.
        if subprocess.run(["umount", point], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", point], capture_output=True)


def test_a_read_only_mount_answers_reads_and_refuses_writes(tmp_path: Path, mount) -> None:
    docs = _docs(tmp_path / "docs")
    src, dst = tmp_path / "store", tmp_path / "ro"
    assert _ingest(docs, src) == 1  # done, with the noise file as a dead letter
    before = _files(src)
    dst.mkdir()
    mount("--bind", str(src), str(dst))
    mount("-o", "remount,bind,ro", str(dst))
    assert not os.access(dst, os.W_OK)

    read_only = _reads(dst)
    (docs / "new.md").write_text("# New\n\nA document the read-only store cannot take.\n")
    _one_error_line(_fissure("ingest", str(docs), "--store", str(dst), *INGEST), "read-only")
    cleared = runner.invoke(app, ["dlq", "clear", "--store", str(dst)])
    assert cleared.exit_code == 2 and "read-only" in cleared.output
    assert _files(src) == before  # not a byte changed, not a file added

    assert _reads(src) == read_only  # the writable store answers the same
    assert read_only["dlq"] and read_only["status"]["dead_letters"] == 1
    hits = read_only["hybrid:knead the dough"]["hits"]
    assert hits and hits[0]["source"].endswith("bread.md")


def _store_on_tmpfs(tmp_path: Path, mount) -> tuple[Path, Path, Path, dict]:
    """A store ingested onto a 16 MiB tmpfs, its answers, and a new document waiting."""
    docs = _docs(tmp_path / "docs")
    disk = tmp_path / "disk"
    disk.mkdir()
    mount("-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk))
    store = disk / "store"
    assert _ingest(docs, store) == 1
    answers = _reads(store)
    assert answers["hybrid:knead the dough"]["hits"]  # stored: only the noise failed
    (docs / "new.md").write_text("# New\n\nKnead a new dough, a document added later.\n")
    return docs, disk, store, answers


def test_a_full_disk_answers_reads_and_an_ingest_converges_after(tmp_path: Path, mount) -> None:
    docs, disk, store, answers = _store_on_tmpfs(tmp_path, mount)
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:  # fill the disk to the last block
        for size in (1 << 16, 512, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, bytes(size)):
                    pass
    finally:
        os.close(fd)
    assert os.statvfs(disk).f_bavail == 0

    assert _reads(store) == answers
    _one_error_line(_fissure("ingest", str(docs), "--store", str(store), *INGEST), "disk is full")
    assert _reads(store) == answers  # the refused run lost nothing

    filler.unlink()
    assert _ingest(docs, store) == 0  # the new document went in; the noise failed before
    clean = tmp_path / "clean"
    assert _ingest(docs, clean) == 1
    assert _timeless(_reads(store)) == _timeless(_reads(clean))  # as a clean run: same hits,
    # documents, chunks and dead letters


def test_opening_read_only_creates_no_files(tmp_path: Path) -> None:
    """The reader writes nothing and makes no file of its own; on a writable folder the
    only new files are SQLite's empty ``-wal`` and its ``-shm`` beside a WAL database
    (which keep a read consistent while an ingest writes; a read-only folder gets none)."""
    docs = _docs(tmp_path / "docs")
    store = tmp_path / "store"
    assert _ingest(docs, store) == 1
    (store / "chroma" / "fissure-exact" / "lock").unlink()  # a reader must not make it
    before = _files(store)
    found, manifest = open_store(store, read_only=True)
    vector = HashingEmbedder().embed(["knead the dough"])[0]
    assert found.count() > 0 and manifest.get_meta("dim") == "256"
    for mode in ("dense", "lexical", "hybrid"):
        assert found.query(vector, 3, None, mode=mode, text="knead the dough")
    assert manifest.failures() and manifest.runs() and list(manifest.documents())
    with pytest.raises(Exception, match="read-only"):
        manifest.set_meta("dim", "1")
    with pytest.raises(Exception, match="read-only"):
        found.delete_sources(["x"])
    manifest.close()
    found.close()
    after = _files(store)
    sidecars = {f"{name}-{end}" for end in ("wal", "shm")
                for name in ("manifest.sqlite3", "chroma/fissure-lexical.sqlite3")}  # fmt: skip
    assert set(after) - set(before) <= sidecars
    assert {k: after[k] for k in before} == before
    assert all((store / s).stat().st_size in (0, 32768) for s in set(after) - set(before))


def test_the_reader_answers_as_chroma_does(tmp_path: Path) -> None:
    """Chroma's own answers and the reader's (which never opens Chroma) are the same:
    hits, scores, texts and metadata, with filters and sentence pieces."""
    docs = _docs(tmp_path / "docs")
    store = tmp_path / "store"
    out = runner.invoke(app, ["ingest", str(docs), "--store", str(store), *INGEST,
                              "--sub-vectors", "8"])  # fmt: skip
    assert out.exit_code == 1, out.output
    reader = ReadOnlyChroma(store / "chroma")
    chroma = ChromaStore(store / "chroma")
    assert reader.count() == chroma.count() > 0
    assert reader.count_pieces() == chroma.count_pieces() > 0
    assert sorted(reader.items()) == sorted(chroma.items())
    assert sorted(reader.pieces()) == sorted(chroma.pieces())
    source = str(docs / "bread.md")
    assert reader.source_items(source) == chroma.source_items(source)
    embed = HashingEmbedder()
    for where in (None, {"source": source}, {"index": 0}, {"source": source, "index": 1},
                  {"strategy": "structural"}, {"index": 99}):  # fmt: skip
        assert sorted(reader.matching(where or {})) == sorted(chroma.matching(where or {}))
        for q in QUESTIONS:
            for mode in ("dense", "lexical", "hybrid"):
                for weight in (None, 0.4):
                    args = {"sub_weight": weight, "mode": mode, "text": q}
                    want = chroma.query(embed.embed([q])[0], 4, where, **args)
                    assert reader.query(embed.embed([q])[0], 4, where, **args) == want
    reader.close()
    chroma.close()


def test_a_write_that_could_fill_the_disk_is_not_started(tmp_path: Path, mount) -> None:
    """chromadb waits forever on a disk that fills under its writer: with a few MiB left,
    an ingest is refused in one line before it writes, and ends."""
    docs, disk, store, answers = _store_on_tmpfs(tmp_path, mount)
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    (disk / "filler").write_bytes(bytes(free - (3 << 20)))  # leave 3 MiB
    _one_error_line(_fissure("ingest", str(docs), "--store", str(store), *INGEST), "disk is full")
    refused = _reads(store)
    assert refused["status"].pop("pending") == 1  # new.md, marked in flight, not stored
    answers["status"].pop("pending")
    assert refused == answers

    (disk / "filler").unlink()
    assert _ingest(docs, store) == 0  # the new document went in
    after = _reads(store)
    assert after["status"]["pending"] == 0
    assert any(h["source"].endswith("new.md") for h in after["hybrid:knead the dough"]["hits"])
