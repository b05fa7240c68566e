"""git:PATH@REV sources: read through git at a revision, no checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fissure.errors import InputError
from fissure.ingest import open_source
from fissure.source.git import GitSource
from tests.ingest.conftest import assert_same_store, run, snapshot


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(repo), "PATH": "/usr/bin:/bin"}  # fmt: skip
    done = subprocess.run(["git", "-C", str(repo), *args], env=env, check=True,
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "a.md").write_text("# A\n\n" + "alpha words " * 40)
    (root / "pkg").mkdir()
    (root / "pkg" / "b.py").write_text("def b():\n    return 'b'\n")
    (root / ".hidden.md").write_text("# hidden\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    _git(root, "tag", "v1")
    (root / "a.md").write_text("# A, second\n\n" + "changed words " * 40)
    (root / "c.txt").write_text("new file " * 20)
    (root / "pkg" / "b.py").unlink()
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "two")
    (root / "a.md").write_text("uncommitted: never read")
    return root


def test_scan_lists_blobs_at_the_revision(repo: Path) -> None:
    source = GitSource(repo, "v1")
    items = {Path(i.source).name: i for i in source.scan()}
    assert set(items) == {"a.md", "b.py"}
    assert items["a.md"].source == f"git:{repo.resolve()}/a.md"
    assert items["a.md"].digest == _git(repo, "rev-parse", "v1:a.md")
    data = dict((i.source, d) for i, d in source.fetch(list(items.values())))
    assert data[items["a.md"].source] == b"# A\n\n" + b"alpha words " * 40


def test_head_is_the_default_and_worktree_changes_are_ignored(repo: Path) -> None:
    source = open_source(f"git:{repo}")
    items = list(source.scan())
    assert sorted(Path(i.source).name for i in items) == ["a.md", "c.txt"]
    ((_, data),) = [(i, d) for i, d in source.fetch(items) if i.source.endswith("a.md")]
    assert isinstance(data, bytes) and data.startswith(b"# A, second")


def test_moving_between_revisions_is_incremental(repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    first = run(f"git:{repo}@v1", store)
    assert first.processed == 2 and first.failures == []
    second = run(f"git:{repo}@main", store)
    assert (second.processed, second.removed, second.unchanged) == (2, 1, 0)
    fresh = tmp_path / "fresh"
    run(f"git:{repo}@main", fresh)
    assert_same_store(snapshot(store), snapshot(fresh))


def test_bad_revision_and_path_say_so(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="nope"):
        GitSource(repo, "nope")
    with pytest.raises(InputError):
        GitSource(tmp_path / "missing")
