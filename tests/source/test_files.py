"""Walking folders: sorted, hidden and ignored entries skipped, size limit reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from fissure.errors import InputError
from fissure.source import iter_files


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def test_gitignore_hidden_and_caches(tmp_path):
    _tree(tmp_path, {
        ".gitignore": "build/\n*.tmp\n!keep.tmp\n",
        "a.txt": "a", "b.tmp": "b", "keep.tmp": "k",
        "build/out.txt": "o", ".git/config": "c", "__pycache__/x.pyc": "p",
        "sub/.gitignore": "*.log\n", "sub/c.log": "c", "sub/d.txt": "d",
        "sub/deeper/e.log": "e", "other/f.log": "f",
    })
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
