"""The public API: settings validation, files, empty and binary input, metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

import fissure
from fissure import Chunker, ChunkSettings, ConfigError, InputError

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"strategy": "magic"}, "unknown strategy"),
        ({"max_tokens": 0}, "positive integer"),
        ({"max_tokens": -5}, "positive integer"),
        ({"max_tokens": 100, "overlap_tokens": 100}, "overlap_tokens"),
        ({"max_tokens": 100, "min_tokens": 150}, "min_tokens"),
        ({"overlap_tokens": -1}, ">= 0"),
        ({"tokenizer": "nope"}, "unknown tokenizer"),
        ({"strategy": "fixed", "language": "python"}, "recursive"),
        ({"strategy": "recursive", "language": "cobol"}, "no separator preset"),
        ({"max_tokens": 2, "tokenizer": "cl100k_base"}, "too small"),
    ],
)
def test_invalid_settings_fail_at_construction(fields, message):
    with pytest.raises(ConfigError, match=message):
        Chunker(**fields).chunk("some text")


def test_settings_object_and_defaults():
    settings = ChunkSettings(strategy="sentence", tokenizer="chars")
    assert settings.budget == 1000
    assert ChunkSettings().budget == 254
    assert ChunkSettings(tokenizer="cl100k_base").budget == 512
    assert Chunker(settings).settings is settings


def test_a_sizer_given_by_name_is_the_tokenizer_setting():
    by_name = Chunker(sizer="chars", max_tokens=40)
    assert by_name.settings.tokenizer == "chars" and by_name.sizer.name == "chars"
    text = "One sentence here. " * 30
    chunks = by_name.chunk(text)
    assert [c.text for c in chunks] == [
        c.text for c in Chunker(tokenizer="chars", max_tokens=40).chunk(text)
    ]
    assert all(len(c.text) <= 40 and text[c.start : c.end] == c.text for c in chunks)
    with pytest.raises(ConfigError, match="unknown tokenizer"):
        Chunker(sizer="nope")


def test_chunk_function_reads_paths_and_treats_strings_as_text():
    path = SAMPLES / "tremors.txt"
    from_path = fissure.chunk(path, max_tokens=60)
    from_text = fissure.chunk(path.read_text(encoding="utf-8"), max_tokens=60)
    assert [c.text for c in from_path] == [c.text for c in from_text]
    assert from_path[0].source == str(path)
    assert fissure.chunk(str(path))[0].text == str(path)  # a string is text, never a path


def test_binary_and_missing_files_raise_input_error(tmp_path):
    binary = tmp_path / "image.md"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(InputError, match="binary"):
        Chunker().chunk_file(binary)
    with pytest.raises(InputError, match="cannot read"):
        Chunker().chunk_file(tmp_path / "missing.txt")


def test_chunk_fields_lines_ids_and_cut_reasons():
    text = (SAMPLES / "tremors.txt").read_text(encoding="utf-8")
    chunks = Chunker(max_tokens=80, tokenizer="minilm").chunk(text, source="tremors.txt")
    assert len(chunks) > 2
    for c in chunks:
        first, last = c.lines
        assert first == text.count("\n", 0, c.start) + 1
        assert last == text.count("\n", 0, c.end - 1) + 1
        assert c.chunk_id == fissure.Chunk.make_id(c.doc_id, c.start, c.end, c.text)
        assert c.metadata["cut"] in {"paragraph", "line", "sentence", "word", "end"}
    assert chunks[-1].metadata["cut"] == "end"
    # Paragraph boundaries are preferred: the first chunk ends at the first paragraph.
    assert chunks[0].text.endswith("three days and destroyed most of the city.")


def test_min_tokens_merges_small_pieces():
    text = "Intro.\n\n" + "A long paragraph with many words in it. " * 6 + "\n\nEnd."
    plain = Chunker(max_tokens=120, tokenizer="words").chunk(text)
    merged = Chunker(max_tokens=120, min_tokens=5, tokenizer="words").chunk(text)
    assert len(merged) < len(plain) or len(plain) == 1
    assert all(c.n_tokens >= 5 for c in merged) or len(merged) == 1


def test_overlap_extends_backwards_to_word_starts():
    text = " ".join(f"word{i}" for i in range(200))
    chunks = Chunker(max_tokens=30, overlap_tokens=5, tokenizer="words").chunk(text)
    for prev, cur in zip(chunks, chunks[1:], strict=False):
        assert cur.start < prev.end  # overlaps
        assert text[cur.start - 1] == " "  # begins at a word
        assert len(text[cur.start : prev.end].split()) <= 5


def test_recursive_presets_prefer_definitions():
    code = (SAMPLES / "seismograph.py").read_text(encoding="utf-8")
    chunks = Chunker(
        strategy="recursive", language="python", max_tokens=200, tokenizer="cl100k_base"
    ).chunk(code)
    starts = [c.text.split()[0] for c in chunks]
    assert any(s in ("class", "def") for s in starts[1:])


def test_fixed_windows_are_full_and_flat():
    text = "abcdefghij" * 100
    chunks = Chunker(strategy="fixed", max_tokens=64, tokenizer="chars").chunk(text)
    assert [len(c.text) for c in chunks[:-1]] == [64] * (len(chunks) - 1)
    assert "".join(c.text for c in chunks) == text


@pytest.mark.parametrize("strategy", ["structural", "recursive", "sentence"])
def test_prepended_context_counts_inside_the_budget(strategy):
    chunker = Chunker(strategy=strategy, max_tokens=60, prepend_context=True)
    chunks = chunker.chunk_file(SAMPLES / "seismograph.py")
    assert chunks
    for c in chunks:
        embedded = c.embedding_text()
        assert chunker.sizer.count(embedded) <= 60
        if "context_tokens" in c.metadata:
            assert embedded == f"{c.context}\n{c.text}"
            assert c.n_tokens + c.metadata["context_tokens"] <= 60
    assert any("context_tokens" in c.metadata for c in chunks)
    assert any(c.entity == "Detector.detect" for c in chunks)


def test_bytes_are_decoded_and_binary_bytes_refused():
    assert [c.text for c in fissure.chunk("café au lait".encode())] == ["café au lait"]
    assert [c.text for c in fissure.chunk("naïve".encode("cp1252"))] == ["naïve"]
    assert fissure.chunk(b"") == []
    with pytest.raises(InputError, match="not text|NUL"):
        fissure.chunk(b"\x00\x01\x02binary\xff" * 10)
    with pytest.raises(TypeError, match="takes text as str"):
        fissure.Chunker().chunk(b"raw bytes")  # type: ignore[arg-type]
