"""``fissure serve`` reads the same layered settings as ``fissure ingest``: built-in
defaults, a preset, ``fissure.toml`` and the flags, in that order, for chunking, the embedder
and the per-document limits, and hands them to the engine's parsing pool."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fissure.cli import app
from fissure.embed.load import AUTO, resolve
from fissure.serve import supervisor
from fissure.serve.pools import open_pool
from fissure.serve.settings import ServiceSettings
from fissure.settings.presets import PRESETS


def _served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *flags: str) -> ServiceSettings:
    """The settings ``fissure serve FLAGS`` would start the service with (run in tmp_path)."""
    seen: list[ServiceSettings] = []
    monkeypatch.setattr(supervisor, "serve", seen.append)
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(app, ["serve", "--store", str(tmp_path / "s"), *flags])
    assert out.exit_code == 0, out.output
    (settings,) = seen
    return settings


def test_the_settings_file_chunks_and_limits_the_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()  # the settings search stops here
    (tmp_path / "fissure.toml").write_text(
        '[chunk]\nmax_tokens = 120\nmin_tokens = 20\ntokenizer = "words"\n'
        '[ingest]\nembedder = "hashing"\ntimeout = 33.0\ntimeout_per_mb = 2.5\n'
        "memory_mb = 900\nmax_inflate_mb = 64\n",
        encoding="utf-8",
    )
    s = _served(tmp_path, monkeypatch)
    assert (s.chunk.max_tokens, s.chunk.min_tokens, s.chunk.tokenizer) == (120, 20, "words")
    assert (s.embedder, s.timeout, s.timeout_per_mb, s.memory_mb, s.max_inflate_mb) == (
        "hashing", 33.0, 2.5, 900, 64)  # fmt: skip
    # The parsing pool runs those limits (a pool never started costs nothing).
    limits = open_pool(s).limits
    assert (limits.timeout, limits.timeout_per_mb, limits.memory_mb, limits.max_inflate_mb) == (
        33.0, 2.5, 900, 64)  # fmt: skip
    # A flag beats the file; the settings travel to the engine process unchanged.
    s = _served(tmp_path, monkeypatch, "--max-tokens", "80", "--timeout-per-mb", "0")
    assert (s.chunk.max_tokens, s.chunk.min_tokens, s.timeout_per_mb) == (80, 20, 0.0)
    assert ServiceSettings.from_json(s.to_json()) == s
    # --no-config: the built-in defaults, as before there was a file.
    s = _served(tmp_path, monkeypatch, "--no-config")
    assert s.chunk == ServiceSettings().chunk and s.embedder == resolve(AUTO)
    assert (s.timeout, s.timeout_per_mb, s.memory_mb, s.max_inflate_mb) == (120.0, 10.0, 4096, 256)


def test_a_preset_chunks_the_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    s = _served(tmp_path, monkeypatch, "--preset", "chroma-best")
    for key, value in PRESETS["chroma-best"]["chunk"].items():
        assert getattr(s.chunk, key) == value, key
