from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from fissure.embed import files
from fissure.errors import ConfigError


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("FISSURE_CACHE_DIR", str(tmp_path / "x"))
    assert files.cache_dir() == tmp_path / "x"
    monkeypatch.delenv("FISSURE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert files.cache_dir() == tmp_path / "fissure"


def test_verification_is_cached_until_the_file_changes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    monkeypatch.setenv("FISSURE_CACHE_DIR", str(tmp_path / "cache"))
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights")
    good = hashlib.sha256(b"weights").hexdigest()
    files.verify_sha256(weights, good)

    def no_rehash(path: Path) -> str:
        raise AssertionError("re-hashed an unchanged file")

    monkeypatch.setattr(files, "file_sha256", no_rehash)
    files.verify_sha256(weights, good)  # answered from the record
    monkeypatch.undo()
    monkeypatch.setenv("FISSURE_CACHE_DIR", str(tmp_path / "cache"))

    weights.write_bytes(b"tampered weights")
    with pytest.raises(ConfigError, match="sha256"):
        files.verify_sha256(weights, good)


def test_missing_weights_are_a_config_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="not found"):
        files.verify_sha256(tmp_path / "model.safetensors", "0" * 64)
