"""Settings files, presets and their precedence, through the library."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import fissure
from fissure.config import ChunkSettings
from fissure.errors import ConfigError
from fissure.settings import PRESETS, Settings, find_config, load_settings, read_config, resolve
from fissure.settings import presets as presets_module
from fissure.settings.model import SECTIONS, defaults, keys


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository root (so the search stops here) as the working folder."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(folder: Path, text: str, name: str = "fissure.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


LAYERED = """\
preset = "base"

[chunk]
max_tokens = 300
min_tokens = 30

[presets.base.chunk]
max_tokens = 100
min_tokens = 10
overlap_tokens = 5

[presets.named.chunk]
min_tokens = 40
tokenizer = "words"
"""


def test_each_layer_overrides_the_one_below(project: Path) -> None:
    write(project, LAYERED)
    # defaults < the file's default preset < the file's own values
    r = resolve()
    assert r.preset == "base"
    assert (r.settings.chunk.max_tokens, r.settings.chunk.min_tokens) == (300, 30)
    assert r.settings.chunk.overlap_tokens == 5  # only the default preset sets it
    assert r.settings.chunk.tokenizer == "minilm"  # nothing sets it: the default
    assert r.origins["chunk.max_tokens"] == "fissure.toml:4"
    assert r.origins["chunk.overlap_tokens"] == "preset base in fissure.toml:10"
    assert r.origins["chunk.tokenizer"] == "default"
    # ... < a preset named on the command line, which replaces the default preset
    r = resolve("named")
    assert (r.settings.chunk.min_tokens, r.settings.chunk.tokenizer) == (40, "words")
    assert r.settings.chunk.max_tokens == 300  # the file's, under the named preset
    assert r.settings.chunk.overlap_tokens == 0  # the default preset no longer applies
    # ... < flags
    r = resolve(
        "named", flags={"chunk.min_tokens": 50}, flag_names={"chunk.min_tokens": "--min-tokens"}
    )
    assert (
        r.settings.chunk.min_tokens == 50 and r.origins["chunk.min_tokens"] == "flag --min-tokens"
    )


def test_the_built_in_default_preset_is_one_line(project: Path, monkeypatch) -> None:
    assert presets_module.DEFAULT_PRESET is None  # today's defaults stay the defaults
    assert load_settings() == Settings()
    monkeypatch.setattr(presets_module, "DEFAULT_PRESET", "chroma-best")
    s = load_settings()
    assert s.chunk.strategy == "semantic" and s.query.sub_weight == 0.4
    assert load_settings("fast") == Settings()  # fast undoes every key chroma-best sets
    write(project, "[chunk]\nmax_tokens = 200\n")
    r = resolve()  # the built-in default preset sits below the file's values
    assert r.settings.chunk.max_tokens == 200 and r.settings.chunk.min_tokens == 50
    assert r.origins["chunk.min_tokens"] == "preset chroma-best (built-in)"


def test_fast_is_the_defaults_for_every_key_chroma_best_sets() -> None:
    best, fast = PRESETS["chroma-best"], PRESETS["fast"]
    assert {s: set(t) for s, t in fast.items()} == {s: set(t) for s, t in best.items()}
    for section, table in fast.items():
        assert table == {k: defaults(section)[k] for k in table}


def test_chroma_best_is_the_readme_recipe() -> None:
    s = load_settings("chroma-best", use_files=False)
    assert s.chunk == ChunkSettings(
        strategy="semantic",
        tokenizer="cl100k_base",
        max_tokens=140,
        min_tokens=50,
        embed_window_tokens=254,
        embed_window_share=0.8,
        sub_vector_tokens=30,
        dedup=True,
        embed_headings=True,
    )
    assert s.query.sub_weight == 0.4


def test_search_goes_upward_and_stops_at_the_repository_root(project: Path) -> None:
    deep = project / "a" / "b"
    deep.mkdir(parents=True)
    assert find_config(deep) is None
    write(project.parent, "[chunk]\nmax_tokens = 1\n")  # outside the repository: never read
    try:
        assert find_config(deep) is None
        write(project, "[chunk]\nmax_tokens = 99\n", "pyproject.toml")  # no [tool.fissure]
        assert find_config(deep) is None
        write(project / "a", "[tool.fissure.chunk]\nmax_tokens = 77\n", "pyproject.toml")
        assert find_config(deep) == (project / "a" / "pyproject.toml").resolve()
        assert load_settings(start=deep).chunk.max_tokens == 77
        write(project / "a", "[chunk]\nmax_tokens = 66\n")  # fissure.toml wins in a folder
        assert load_settings(start=deep).chunk.max_tokens == 66
        write(deep, "[chunk]\nmax_tokens = 55\n")  # the nearest folder wins
        assert load_settings(start=deep).chunk.max_tokens == 55
    finally:
        (project.parent / "fissure.toml").unlink()


def test_without_a_repository_the_search_reaches_the_filesystem_root(tmp_path: Path) -> None:
    deep = tmp_path / "x" / "y"
    deep.mkdir(parents=True)
    write(tmp_path, "[query]\nk = 9\n")
    assert load_settings(start=deep).query.k == 9


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[chunk]\nmax_token = 3\n",
            "fissure.toml:2: unknown key 'max_token' in [chunk]: did you mean max_tokens?",
        ),
        ("[chunk]\nmax-tokens = 3\n", "write max_tokens (keys use underscores"),
        ("[chunk]\nk = 3\n", "k belongs in [query]"),
        ("max_tokens = 3\n", "fissure.toml:1: unknown key 'max_tokens': put it in a [chunk] table"),
        (
            '[chunk]\nmax_tokens = "many"\n',
            "fissure.toml:2: [chunk] max_tokens: expected an integer or \"none\", got 'many'; "
            "write e.g. max_tokens = 200",
        ),
        ("[chunk]\n\ndedup = 1\n", "fissure.toml:3: [chunk] dedup: expected true or false"),
        ("[query]\nsub_weight = true\n", 'expected a number or "none"'),
        ("[chunk]\nseparators = [1]\n", "expected a list of strings"),
        ("[chnk]\nmax_tokens = 3\n", "unknown key 'chnk': did you mean chunk?"),
        (
            "[presets.p.ingest]\nworkrs = 2\n",
            "fissure.toml:2: unknown key 'workrs' in [presets.p.ingest]: did you mean workers?",
        ),
        ('preset = "nope"\n', "fissure.toml:1: preset = 'nope' names no preset"),
        ("[chunk\n", "fissure.toml is not valid TOML"),
        ('[chunk]\nstrategy = "semantc"\n', "unknown strategy 'semantc'"),
        ("[chunk]\noverlap_tokens = 300\n", "(chunk.overlap_tokens = 300 from fissure.toml:2)"),
        (
            '[ingest]\nengine = "spark"\n',
            "engine 'spark': use local or ray (ingest.engine = \"spark\" from fissure.toml:2)",
        ),
        (
            "[query]\nk = 0\n",
            "k must be a positive integer, got 0 (query.k = 0 from fissure.toml:2)",
        ),
    ],
)
def test_bad_files_name_the_file_the_line_and_the_fix(
    project: Path, text: str, message: str
) -> None:
    write(project, text)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert message in str(caught.value)


def test_a_cross_key_error_names_every_layer_involved(project: Path) -> None:
    write(project, "[chunk]\nmax_tokens = 100\n[presets.p.chunk]\nmin_tokens = 150\n")
    with pytest.raises(
        ConfigError, match="min_tokens .* from preset p in fissure.toml:4"
    ) as caught:
        load_settings("p")
    assert "chunk.max_tokens = 100 from fissure.toml:2" in str(caught.value)


def test_unknown_preset_and_contradictions(project: Path) -> None:
    with pytest.raises(ConfigError, match="no preset 'bset': use one of chroma-best, fast"):
        load_settings("bset")
    with pytest.raises(ConfigError, match="contradict"):
        resolve(config="x.toml", use_files=False)
    with pytest.raises(ConfigError, match="cannot read settings file"):
        load_settings(config=project / "missing.toml")
    write(project, "[project]\nname = 'x'\n", "pyproject.toml")
    with pytest.raises(ConfigError, match=r"no \[tool.fissure\] table"):
        load_settings(config=project / "pyproject.toml")


def test_none_sets_an_optional_key_back(project: Path) -> None:
    write(
        project,
        'preset = "chroma-best"\n[chunk]\nsub_vector_tokens = "none"\n'
        '[query]\nsub_weight = "none"\n',
    )
    s = load_settings()
    assert s.chunk.sub_vector_tokens is None and s.query.sub_weight is None
    assert s.chunk.embed_window_tokens == 254  # the rest of the preset holds


def test_every_key_of_every_section_reads_back_from_a_file(project: Path) -> None:
    """A file that sets every key to its default gives the defaults: the model, the file
    reader and the TOML writer agree on every key's type."""
    from fissure.settings.model import toml_value

    lines = []
    for section in SECTIONS:
        lines.append(f"[{section}]")
        lines += [f"{k} = {toml_value(v)}" for k, v in defaults(section).items()]
    write(project, "\n".join(lines) + "\n")
    r = resolve()
    assert r.settings == Settings()
    assert all(origin.startswith("fissure.toml:") for origin in r.origins.values())
    assert len(r.origins) == sum(len(keys(s)) for s in SECTIONS)


def test_the_python_api_reads_the_same_file_as_the_cli(project: Path) -> None:
    write(
        project,
        '[chunk]\nstrategy = "recursive"\nmax_tokens = 40\ntokenizer = "words"\n'
        "[presets.tiny.chunk]\nmax_tokens = 12\n",
    )
    settings = fissure.load_settings()
    assert settings.chunk == ChunkSettings(strategy="recursive", max_tokens=40, tokenizer="words")
    text = "one two three. " * 30
    via_file = fissure.Chunker(settings.chunk).chunk(text)
    assert via_file == fissure.Chunker(
        strategy="recursive", max_tokens=40, tokenizer="words"
    ).chunk(text)
    tiny = fissure.load_settings("tiny").chunk
    assert tiny == replace(settings.chunk, max_tokens=12)
    assert read_config(project / "fissure.toml").presets == {"tiny": {"chunk": {"max_tokens": 12}}}


def test_chunk_settings_round_trip_through_json() -> None:
    import json

    every = ChunkSettings(
        strategy="recursive",
        separators=("\n\n", ". "),
        max_tokens=90,
        overlap_tokens=9,
        sub_vector_tokens=20,
        dedup=True,
    )
    assert ChunkSettings.from_dict(json.loads(json.dumps(every.to_dict()))) == every
    assert ChunkSettings.from_dict({}) == ChunkSettings()
    with pytest.raises(ConfigError, match="unknown chunk setting"):
        ChunkSettings.from_dict({"max_tokenz": 5})
