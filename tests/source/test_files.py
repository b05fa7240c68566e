"""Walking folders: sorted, hidden and ignored entries skipped, size limit reported, and
every hostile entry (pipes, devices, links out, loops, odd names) a skip or a bounded read."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fissure.errors import InputError
from fissure.source import files, iter_files
from fissure.source.names import is_text, path_bytes, path_name
from fissure.source.read import Skipped, read_file
from tests.hostile import walk_cases


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def test_gitignore_hidden_and_caches(tmp_path):
    _tree(
        tmp_path,
        {
            ".gitignore": "build/\n*.tmp\n!keep.tmp\n",
            "a.txt": "a",
            "b.tmp": "b",
            "keep.tmp": "k",
            "build/out.txt": "o",
            ".git/config": "c",
            "__pycache__/x.pyc": "p",
            "sub/.gitignore": "*.log\n",
            "sub/c.log": "c",
            "sub/d.txt": "d",
            "sub/deeper/e.log": "e",
            "other/f.log": "f",
        },
    )
    found = [f.path.relative_to(tmp_path).as_posix() for f in iter_files([tmp_path])]
    assert found == ["a.txt", "keep.tmp", "other/f.log", "sub/d.txt"]


def test_size_limit_is_a_skip_with_a_reason(tmp_path):
    _tree(tmp_path, {"small.txt": "x", "big.txt": "y" * 100})
    found = {f.path.name: f.skip for f in iter_files([tmp_path], max_bytes=10)}
    assert found["small.txt"] is None
    assert "over the 10-byte limit" in found["big.txt"]


def test_missing_path_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        list(iter_files([tmp_path / "nope"]))


# --- the safe walk (issue 13): every hostile entry is a skip with a reason or a file ---


def _walk(root: Path, **kw: object) -> dict[str, str | None]:
    return {
        os.fsdecode(f.path.relative_to(root)): f.skip
        for f in iter_files([root], **kw)  # type: ignore[arg-type]
    }


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A folder outside pytest's tmp_path: pytest cleans those with shutil.rmtree, which
    recurses once per level and would fail on a deep tree left by an interrupted test."""
    folder = Path(tempfile.mkdtemp(prefix="fissure-walk-"))
    yield folder
    walk_cases.remove_tree(folder)


@pytest.mark.parametrize("case", sorted(walk_cases.CASES))
def test_hostile_entries_never_end_the_walk(scratch: Path, case: str) -> None:
    root = scratch / "root"
    expect = walk_cases.CASES[case](root)
    started = time.monotonic()
    _check_case(root, expect, _walk(root))
    assert time.monotonic() - started < 20


def _check_case(root: Path, expect: str, found: dict[str, str | None]) -> None:
    assert found.get("good_one.md", "missing") is None and found["good_two.txt"] is None
    for name, skip in found.items():
        if skip is None:  # what the walk lets through, a bounded read takes
            try:
                data = read_file(root / name, root=str(root.resolve()))
            except Skipped as exc:  # the growing log may grow while this reads it
                assert expect.startswith("bounded") and "limit" in str(exc), exc
                continue
            assert b"root:x:0:0" not in data
    if expect.startswith("skip"):
        assert any(skip for skip in found.values()), found
    if expect.startswith(("chunks", "ignored")):
        assert all(skip is None for name, skip in found.items() if name != ".gitignore")


def test_the_reasons_say_what_was_skipped(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for build in (walk_cases.build_fifo, walk_cases.build_socket, walk_cases.build_dev_zero,
                  walk_cases.build_passwd, walk_cases.build_dangling, walk_cases.build_link_loop,
                  walk_cases.build_dir_outside):  # fmt: skip
        build(root)
    found = _walk(root)
    assert "named pipe" in found["pipe.md"]
    assert "socket" in found["agent.sock.txt"]
    assert "outside the folder" in found["zero.txt"] and "/dev/zero" in found["zero.txt"]
    assert "outside the folder" in found["passwd.txt"]
    assert "--follow-outside-links" in found["passwd.txt"]
    assert "outside the folder" in found["environ.txt"] and "outside" in found["etc"]
    assert "dangling link (to missing.md" in found["gone.md"]
    assert "link loop" in found["self.md"] and "link loop" in found["ping.md"]
    assert "link loop" in found["sub/up"]
    assert len([n for n in found if n.startswith("etc/")]) == 0


def test_follow_outside_links_reads_them_but_still_no_devices(tmp_path: Path) -> None:
    root = tmp_path / "root"
    walk_cases.build_passwd(root)
    walk_cases.build_dev_zero(root)
    found = _walk(root, follow_outside_links=True)
    assert found["passwd.txt"] is None and found["environ.txt"] is None
    assert "character device" in found["zero.txt"]
    data = read_file(root / "environ.txt", root=str(root.resolve()), follow_outside_links=True,
                     max_bytes=1 << 20)  # fmt: skip
    assert isinstance(data, bytes)  # /proc says 0 bytes; the read is bounded, not stat-ed
    with pytest.raises(Skipped, match="outside the folder"):
        read_file(root / "passwd.txt", root=str(root.resolve()))


def test_links_inside_are_followed_and_each_folder_walked_once(tmp_path: Path) -> None:
    root = tmp_path / "root"
    walk_cases.build_link_inside(root)
    (root / "again").symlink_to("shortcut", target_is_directory=True)
    found = _walk(root)
    assert found["alias.md"] is None and found["notes/inside.md"] is None
    assert not [n for n in found if n.startswith(("shortcut/", "again/"))]  # no copies


def test_a_folder_only_reachable_by_a_link_is_walked_under_the_link(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / ".hidden" / "docs").mkdir(parents=True)
    (root / ".hidden" / "docs" / "a.md").write_text("a")
    (root / "docs").symlink_to(".hidden/docs", target_is_directory=True)
    assert _walk(root) == {"docs/a.md": None}


def test_a_tree_deeper_than_the_recursion_limit(scratch: Path) -> None:
    root = scratch / "root"
    walk_cases.build_deep(root, depth=sys.getrecursionlimit() + 200)
    found = _walk(root)
    bottom = [n for n in found if n.endswith("bottom.md")]
    assert len(bottom) == 1 and found[bottom[0]] is None


def test_a_file_that_vanishes_or_turns_into_a_pipe_after_the_listing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    walk_cases.build_link_inside(root)
    files = list(iter_files([root]))
    (root / "good_one.md").unlink()
    os.mkfifo(root / "good_one.md")  # swapped in after the listing: must not block
    (root / "good_two.txt").unlink()
    (root / "notes" / "inside.md").unlink()
    (root / "notes" / "inside.md").symlink_to("/etc/passwd")
    reasons = {}
    for f in files:
        try:
            read_file(f.path, root=f.root)
        except Skipped as exc:
            reasons[f.path.name] = str(exc)
    assert "named pipe" in reasons["good_one.md"]
    assert "vanished" in reasons["good_two.txt"]
    assert "outside the folder" in reasons["inside.md"]


def test_a_folder_swapped_for_a_link_while_reading(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "passwd").write_text("harmless")
    real = str(root.resolve())
    resolved = os.path.realpath

    def racing(path, *, strict=False):  # the check sees the folder; then it becomes a link
        answer = resolved(path, strict=strict)
        if str(path).endswith("passwd") and (root / "sub").is_dir():
            (root / "sub").rename(root / "was-sub")
            (root / "sub").symlink_to("/etc", target_is_directory=True)
        return answer

    monkeypatch.setattr(os.path, "realpath", racing)
    with pytest.raises(Skipped, match="outside the folder"):
        read_file(root / "sub" / "passwd", root=real)


def test_reads_are_bounded_whatever_stat_says(tmp_path: Path) -> None:
    path = tmp_path / "grows.log"
    path.write_bytes(b"x" * 1000)
    assert read_file(path, max_bytes=1000) == b"x" * 1000
    os.truncate(path, 3 << 30)  # sparse: no disk
    with pytest.raises(Skipped, match="over the 1,000-byte limit"):
        read_file(path, max_bytes=1000)


def test_permission_denied_is_a_skip(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "root"
    walk_cases.build_link_inside(root)
    scandir = os.scandir

    def refuse(path):
        if str(path).endswith("notes"):
            raise PermissionError(13, "Permission denied")
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refuse)
    found = _walk(root)
    assert "cannot list this folder: Permission denied" in found["notes"]
    assert found["good_one.md"] is None
    opened = os.open

    def no_read(path, flags, *args):
        if str(path).endswith("good_two.txt"):
            raise PermissionError(13, "Permission denied")
        return opened(path, flags, *args)

    monkeypatch.setattr(os, "open", no_read)
    with pytest.raises(Skipped, match="Permission denied"):
        read_file(root / "good_two.txt")


def test_deeper_gitignore_files_decide_first(tmp_path: Path) -> None:
    _tree(tmp_path, {
        ".gitignore": "*.log\nsecret*\n", "a.log": "", "sub/.gitignore": "!keep.log\n",
        "sub/keep.log": "", "sub/other.log": "", "sub/secret.md": "",
    })  # fmt: skip
    assert sorted(_walk(tmp_path)) == ["sub/keep.log"]


def test_a_huge_or_odd_gitignore_is_cut_and_reported(tmp_path: Path) -> None:
    root = tmp_path / "root"
    walk_cases.build_gitignore_huge(root)
    found = _walk(root)
    assert "secret.md" not in found  # the first rules still apply
    assert "only its first" in found[".gitignore"] and "262,144-byte limit" in found[".gitignore"]
    other = tmp_path / "other"
    other.mkdir()
    os.mkfifo(other / ".gitignore")
    (other / "a.md").write_text("a")
    found = _walk(other)
    assert "named pipe" in found[".gitignore"] and found["a.md"] is None


def test_too_many_rules_in_force_are_cut(tmp_path: Path) -> None:
    rules = "\n".join(f"*.x{i}" for i in range(files.MAX_IGNORE_RULES - 5))
    deeper = "\n".join(f"*.y{i}" for i in range(10)) + "\nlate.md\n"
    _tree(tmp_path, {".gitignore": rules, "sub/.gitignore": deeper, "sub/late.md": "",
                     "sub/a.y1": ""})  # fmt: skip
    found = _walk(tmp_path)
    assert "only its first 5 apply" in found["sub/.gitignore"]
    assert found["sub/late.md"] is None and "sub/a.y1" not in found


def test_names_that_are_not_utf8_are_walked_and_read(tmp_path: Path) -> None:
    root = tmp_path / "root"
    walk_cases.build_non_utf8(root)
    found = list(iter_files([root]))
    odd = [f for f in found if not is_text(os.fspath(f.path))]
    assert len(odd) == 2 and all(f.skip is None for f in odd)
    for f in odd:
        name = path_name(f.path)
        assert is_text(name) and name.startswith("file://")
        assert read_file(os.fsdecode(path_bytes(name)), root=f.root).strip()
