"""Files and folders on disk."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from fissure.errors import InputError

_SKIP_DIRS = frozenset({"__pycache__", "node_modules", ".venv", "venv"})


def iter_files(paths: list[Path]) -> Iterator[Path]:
    """Every file named, and every file under every folder named, in sorted order.

    Hidden folders (``.git`` …) and caches (``__pycache__``, ``node_modules``) are skipped.

    Raises:
        InputError: A path does not exist.
    """
    for path in paths:
        if path.is_file():
            yield path
        elif path.is_dir():
            yield from _walk(path)
        else:
            raise InputError(f"no such file or folder: {path}")


def _walk(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(folder) / name
