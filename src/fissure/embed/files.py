"""Where fissure keeps its files, and a cached check of model weights against a pinned hash."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from fissure.errors import ConfigError

_VERIFIED = "verified.json"


def cache_dir() -> Path:
    """fissure's cache folder: ``$FISSURE_CACHE_DIR``, else ``$XDG_CACHE_HOME/fissure``,
    else ``~/.cache/fissure``."""
    if env := os.environ.get("FISSURE_CACHE_DIR"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "fissure"


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def verify_sha256(path: Path, expected: str) -> None:
    """Raise unless the file at ``path`` hashes to ``expected``.

    A success is remembered per (path, mtime, size) in the cache folder, so a file that
    has not changed is hashed once, not at every start.

    Raises:
        ConfigError: The file is missing or its hash differs.
    """
    path = Path(path).resolve()
    if not path.is_file():
        raise ConfigError(f"model weights not found: {path} (reinstall the model package)")
    stat = path.stat()
    key = f"{path}|{stat.st_mtime_ns}|{stat.st_size}"
    record = cache_dir() / _VERIFIED
    known = _read_json(record)
    if known.get(key) == expected:
        return
    actual = file_sha256(path)
    if actual != expected:
        raise ConfigError(
            f"model weights {path} have sha256 {actual}, expected {expected}: the file is "
            "corrupt or not the pinned model; reinstall the package that ships it"
        )
    known[key] = expected
    _write_json(record, known)


def _read_json(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: dict[str, str]) -> None:
    """Write atomically; a read-only cache folder only costs a re-hash next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=0, sort_keys=True), "utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
