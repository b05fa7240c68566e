"""Files and folders on disk.

A folder is walked in sorted order. Hidden entries and caches are skipped, ``.gitignore``
files are honoured (each applies below its own folder, as git does), and files over a
size limit are reported as skipped rather than read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from fissure.errors import InputError

_SKIP_DIRS = frozenset({"__pycache__", "node_modules", ".venv", "venv"})
DEFAULT_MAX_BYTES = 20_000_000


@dataclass(frozen=True, slots=True)
class Found:
    """A file to read, or one skipped with its reason (``skip`` is then set)."""

    path: Path
    skip: str | None = None


def iter_files(paths: list[Path], *, max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[Found]:
    """Every file named, and every file under every folder named.

    Args:
        paths: Files and folders.
        max_bytes: Files larger than this are yielded with a ``skip`` reason.

    Raises:
        InputError: A path does not exist.
    """
    for path in paths:
        if path.is_file():
            yield _check(path, max_bytes)
        elif path.is_dir():
            yield from _walk(path, max_bytes)
        else:
            raise InputError(f"no such file or folder: {path}")


def _check(path: Path, max_bytes: int) -> Found:
    size = path.stat().st_size
    if size > max_bytes:
        return Found(path, f"{size:,} bytes is over the {max_bytes:,}-byte limit (--max-bytes)")
    return Found(path)


def _walk(root: Path, max_bytes: int) -> Iterator[Found]:
    rules: dict[str, list[tuple[str, pathspec.PathSpec]]] = {}
    for folder, dirs, files in os.walk(root):
        inherited = rules.get(folder, [])
        ignore = Path(folder) / ".gitignore"
        if ignore.is_file():
            lines = ignore.read_text("utf-8", "replace").splitlines()
            spec = pathspec.GitIgnoreSpec.from_lines(lines)
            inherited = [*inherited, (folder, spec)]
        kept = []
        for d in sorted(dirs):
            full = os.path.join(folder, d)
            if d.startswith(".") or d in _SKIP_DIRS or _ignored(full, inherited, is_dir=True):
                continue
            rules[full] = inherited
            kept.append(d)
        dirs[:] = kept
        for name in sorted(files):
            full = os.path.join(folder, name)
            if name.startswith(".") or _ignored(full, inherited, is_dir=False):
                continue
            yield _check(Path(full), max_bytes)


def _ignored(path: str, rules: list[tuple[str, pathspec.PathSpec]], *, is_dir: bool) -> bool:
    for base, spec in rules:
        rel = os.path.relpath(path, base).replace(os.sep, "/")
        if spec.match_file(rel + "/" if is_dir else rel):
            return True
    return False
