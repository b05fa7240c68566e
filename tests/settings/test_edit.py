"""Writing a preset into a settings file: the rest of the file kept, byte for byte."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fissure.errors import ConfigError
from fissure.settings import load_settings, read_config
from fissure.settings.edit import target_file, write_preset

PRESET = {"chunk": {"strategy": "fixed", "max_tokens": 120, "embed_window_tokens": None},
          "query": {"k": 4, "mode": "dense"}}  # fmt: skip
FILE = """\
# shared by the team
preset = "chroma-best"   # our default

[store]
path = "idx"

[presets.tuned.chunk]   # an older run
max_tokens = 999

[presets.tuned.query]
k = 1

[presets.keep.chunk]
min_tokens = 7

[query]
k = 9
"""


def test_replaces_the_preset_in_place_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "fissure.toml"
    path.write_text(FILE, encoding="utf-8")
    os.chmod(path, 0o640)
    write_preset(path, "tuned", PRESET, "chosen by a test\nsecond line")
    text = path.read_text(encoding="utf-8")
    head, tail = FILE.split("[presets.tuned.chunk]")[0], FILE.split("[presets.keep.chunk]")[1]
    assert text.startswith(head) and text.endswith("[presets.keep.chunk]" + tail)
    assert "max_tokens = 999" not in text and "# chosen by a test\n# second line\n" in text
    assert 'embed_window_tokens = "none"' in text  # None, as TOML writes it
    assert (path.stat().st_mode & 0o777) == 0o640
    config = read_config(path)
    assert config.presets["tuned"] == {"chunk": {"strategy": "fixed", "max_tokens": 120,
                                                 "embed_window_tokens": None},
                                       "query": {"k": 4, "mode": "dense"}}  # fmt: skip
    assert config.presets["keep"] == {"chunk": {"min_tokens": 7}}
    assert config.values == {"store": {"path": "idx"}, "query": {"k": 9}}
    s = load_settings("tuned", config=path)
    got = (s.chunk.strategy, s.chunk.max_tokens, s.query.k, s.store.path)
    assert got == ("fixed", 120, 4, "idx")


def test_creates_a_file_and_writes_into_pyproject(tmp_path: Path) -> None:
    new = tmp_path / "a" / "fissure.toml"
    write_preset(new, "tuned", PRESET)
    assert read_config(new).presets["tuned"]["query"] == {"k": 4, "mode": "dense"}
    project = tmp_path / "pyproject.toml"
    project.write_text('[project]\nname = "x"\n\n[tool.fissure.store]\npath = "p"\n', "utf-8")
    write_preset(project, "tuned", PRESET)
    text = project.read_text(encoding="utf-8")
    assert text.startswith('[project]\nname = "x"\n')
    assert "[tool.fissure.presets.tuned.chunk]" in text
    assert read_config(project).presets["tuned"]["chunk"]["max_tokens"] == 120


def test_target_is_the_file_in_force_or_a_new_one(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "docs"
    sub.mkdir()
    assert target_file(start=sub) == sub / "fissure.toml"
    (tmp_path / "fissure.toml").write_text("", encoding="utf-8")
    assert target_file(start=sub) == tmp_path / "fissure.toml"
    assert target_file(Path("other.toml"), start=sub) == Path("other.toml")


def test_a_bad_file_or_preset_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "fissure.toml"
    path.write_text("[store\npath = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        write_preset(path, "tuned", PRESET)
    assert path.read_text(encoding="utf-8") == "[store\npath = 1\n"
    path.write_text(FILE, encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown key 'bogus'"):
        write_preset(path, "tuned", {"chunk": {"bogus": 1}})
    assert path.read_text(encoding="utf-8") == FILE  # put back as it was
    with pytest.raises(ConfigError, match="preset name"):
        write_preset(path, "no spaces", PRESET)
    assert not list(tmp_path.glob(".fissure.toml.*"))  # no temporary file left
