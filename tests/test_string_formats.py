"""Strings keep their format: ``source=`` and ``mime=`` route a string as a file is routed.

A string named ``x.md`` (or given ``mime="text/markdown"``) is detected and parsed as a file
``x.md`` holding the same text, so both give the same chunks; with neither the string is
plain text, as it always was (issue 34, item 3).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import fissure
from fissure import Chunk, Chunker, ConfigError, Document, InputError
from fissure.parse import parse_as_file
from tests.chunk_checks import assert_chunk_invariants

CORPUS = Path(__file__).resolve().parent / "corpus"

MARKDOWN = (
    "# Fault lines\n\nA fault is a fracture.\n\n## Creep\n\n- slow slip\n- no quakes\n\n"
    "See [USGS](https://usgs.gov) for **more**.\n"
)
PYTHON = (
    '"""Quakes."""\n\n\ndef magnitude(amplitude):\n    """Richter."""\n    return amplitude\n\n\n'
    "class Event:\n    def energy(self):\n        return 10 ** 4.8\n"
)

# Text formats whose parser indexes the text itself, and those that extract it.
KEPT = {
    "guide.md": CORPUS / "markdown" / "guide.md",
    "pathlike.py": CORPUS / "python" / "pathlike.py",
    "manual.rst": CORPUS / "rst" / "manual.rst",
    "config.json": CORPUS / "data" / "config.json",
    "compose.yaml": CORPUS / "data" / "compose.yaml",
    "cities.csv": CORPUS / "csv" / "cities.csv",
    "server.go": CORPUS / "code" / "server.go",
    "notes.txt": CORPUS / "text" / "notes.txt",
}
EXTRACTED = {
    "guide.html": CORPUS / "html" / "guide.html",
    "analysis.ipynb": CORPUS / "notebook" / "analysis.ipynb",
}
# Names without an extension: the content decides, for a string as for a file.
SNIFFED = {"README": MARKDOWN, "settings": '{"quake": {"depth": 10, "scale": "ML"}}\n'}

# What Chunker(tokenizer="chars", max_tokens=40).chunk(MARKDOWN) gave before strings could
# name their format: plain text, no headings.
PLAIN_SPANS = [(0, 37), (39, 72), (74, 106), (107, 116)]
PLAIN_CUTS = ["paragraph", "paragraph", "word", "end"]


def _chunker() -> Chunker:
    return Chunker(tokenizer="words", max_tokens=40)


def _view(chunks: list[Chunk]) -> list[tuple[Any, ...]]:
    """Everything a chunk says except its source and ids (a file's path names it)."""
    return [(c.text, c.start, c.end, c.index, c.lines, c.n_tokens, c.headings, c.entity,
             c.page, c.cell, c.context, c.strategy, c.metadata) for c in chunks]  # fmt: skip


def _as_file(tmp_path: Path, name: str, text: str, mime: str | None = None) -> list[Chunk]:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return _chunker().chunk_file(path, mime=mime)


def test_a_markdown_string_named_md_gets_its_headings():
    chunks = Chunker(tokenizer="chars", max_tokens=40).chunk(MARKDOWN, source="x.md")
    assert [c.headings for c in chunks][:2] == [("Fault lines",), ("Fault lines", "Creep")]
    assert {c.source for c in chunks} == {"x.md"}
    assert chunks[0].context == "x.md › Fault lines"
    top = fissure.chunk(MARKDOWN, source="x.md", tokenizer="chars", max_tokens=40)
    assert _view(top) == _view(chunks)


@pytest.mark.parametrize(
    "mime", ["text/markdown", "text/x-markdown", "Text/Markdown; charset=utf-8"]
)
def test_mime_markdown_gives_headings_and_wins_over_the_extension(mime):
    chunker = Chunker(tokenizer="chars", max_tokens=40)
    unnamed = chunker.chunk(MARKDOWN, mime=mime)
    assert unnamed[0].headings == ("Fault lines",) and unnamed[0].source == "<text>"
    assert unnamed[0].context == "Fault lines"  # "<text>" names no file: no name in front
    named = chunker.chunk(MARKDOWN, source="notes.txt", mime=mime)
    assert named[1].headings == ("Fault lines", "Creep")
    top = fissure.chunk(MARKDOWN, mime=mime, tokenizer="chars", max_tokens=40)
    assert _view(top) == _view(unnamed)


def test_a_python_string_named_py_gets_entity_names():
    chunker = Chunker(tokenizer="chars", max_tokens=50)
    chunks = chunker.chunk(PYTHON, source="m.py")
    assert [c.entity for c in chunks] == [None, "magnitude", "Event", "Event.energy"]
    assert chunks[-1].context == "m.py › Event › energy"
    by_mime = chunker.chunk(PYTHON, mime="text/x-python")
    assert [c.entity for c in by_mime] == [c.entity for c in chunks]


@pytest.mark.parametrize("name", sorted(KEPT))
def test_a_string_gives_the_chunks_of_a_file_with_its_name_and_text(tmp_path, name):
    text = KEPT[name].read_text(encoding="utf-8")
    chunker = _chunker()
    chunks = chunker.chunk(text, source=name)
    assert _view(chunks) == _view(_as_file(tmp_path, name, text))
    document = parse_as_file(text, name)
    assert document.text == text
    assert all(text[c.start : c.end] == c.text for c in chunks)
    assert_chunk_invariants(document, chunker, chunks)
    assert any("block" in c.metadata for c in chunks), name  # parsed: it has blocks


@pytest.mark.parametrize("name", sorted(EXTRACTED))
def test_formats_that_extract_text_do_so_from_a_string_as_from_a_file(tmp_path, name):
    text = EXTRACTED[name].read_text(encoding="utf-8")
    chunker = _chunker()
    chunks = chunker.chunk(text, source=name)
    assert _view(chunks) == _view(_as_file(tmp_path, name, text))
    document = parse_as_file(text, name)
    assert document.text != text and "fallback" not in document.metadata
    assert_chunk_invariants(document, chunker, chunks)  # offsets index the extracted text
    assert any(c.headings for c in chunks)


@pytest.mark.parametrize("name", sorted(SNIFFED))
def test_a_name_without_extension_is_sniffed_as_a_file_is(tmp_path, name):
    text = SNIFFED[name]
    chunks = _chunker().chunk(text, source=name)
    assert _view(chunks) == _view(_as_file(tmp_path, name, text))
    assert any(c.headings for c in chunks)


@pytest.mark.parametrize(
    ("name", "mime"),
    [("doc", "text/markdown"), ("doc", "text/x-python"), ("doc", "text/html"),
     ("doc", "application/json"), ("data.txt", "application/yaml"),
     ("table", "text/csv"), ("manual", "text/x-rst")],
)  # fmt: skip
def test_a_string_with_mime_gives_the_chunks_of_a_file_with_that_mime(tmp_path, name, mime):
    source = {"text/markdown": KEPT["guide.md"], "text/x-python": KEPT["pathlike.py"],
              "text/html": EXTRACTED["guide.html"], "application/json": KEPT["config.json"],
              "application/yaml": KEPT["compose.yaml"], "text/csv": KEPT["cities.csv"],
              "text/x-rst": KEPT["manual.rst"]}[mime]  # fmt: skip
    text = source.read_text(encoding="utf-8")
    chunks = _chunker().chunk(text, source=name, mime=mime)
    assert _view(chunks) == _view(_as_file(tmp_path, name, text, mime=mime))
    assert parse_as_file(text, name, mime).mime == mime


def test_parse_as_file_is_parse_of_the_utf8_bytes():
    from fissure.parse import parse

    for name, path in {**KEPT, **EXTRACTED}.items():
        text = path.read_text(encoding="utf-8")
        from_string, from_bytes = parse_as_file(text, name), parse(text.encode(), name)
        assert from_string.text == from_bytes.text, name
        assert from_string.blocks == from_bytes.blocks, name
        assert from_string.mime == from_bytes.mime, name
        assert from_string.metadata["detection"] == from_bytes.metadata["detection"], name


@pytest.mark.parametrize("mime", ["text/x-cobol", "markdown", "application/msword", ""])
def test_an_unknown_mime_is_a_config_error_that_lists_the_known_ones(mime):
    with pytest.raises(ConfigError, match="unknown mime") as caught:
        Chunker(tokenizer="chars").chunk("text", mime=mime)
    message = str(caught.value)
    assert all(known in message for known in ("text/markdown", "text/x-python", "text/html"))
    with pytest.raises(ConfigError, match="unknown mime"):
        fissure.chunk("text", mime=mime, tokenizer="chars")
    with pytest.raises(ConfigError, match="unknown mime"):
        fissure.chunk(b"text", source="a.txt", mime=mime, tokenizer="chars")


def test_without_source_or_mime_a_string_is_plain_text_as_before():
    chunker = Chunker(tokenizer="chars", max_tokens=40)
    expected = chunker.chunk_document(Document.from_text(MARKDOWN))
    for chunks in (
        chunker.chunk(MARKDOWN),
        chunker.chunk(MARKDOWN, source="<text>", mime=None),
        fissure.chunk(MARKDOWN, source=None, mime=None, tokenizer="chars", max_tokens=40),
    ):
        assert [(c.start, c.end) for c in chunks] == PLAIN_SPANS
        assert [c.metadata["cut"] for c in chunks] == PLAIN_CUTS
        assert all(c.headings == () and c.source == "<text>" for c in chunks)
        assert _view(chunks) == _view(expected)


def test_bytes_with_a_name_are_parsed_as_the_file(tmp_path):
    data = KEPT["guide.md"].read_bytes()
    chunks = fissure.chunk(data, source="guide.md", tokenizer="words", max_tokens=40)
    assert _view(chunks) == _view(_as_file(tmp_path, "guide.md", data.decode()))
    assert chunks[0].source == "guide.md"
    for binary in (CORPUS / "docx" / "report.docx", CORPUS / "pdf" / "report.pdf"):
        copy = tmp_path / binary.name
        copy.write_bytes(binary.read_bytes())
        from_bytes = fissure.chunk(
            binary.read_bytes(), source=binary.name, tokenizer="words", max_tokens=40
        )
        assert _view(from_bytes) == _view(_chunker().chunk_file(copy)), binary.name
        assert from_bytes and from_bytes[0].source == binary.name
    plain = fissure.chunk(data, mime=None, tokenizer="words", max_tokens=40)  # as before
    assert all(c.headings == () and c.source == "<bytes>" for c in plain)


@pytest.mark.parametrize(("source", "mime"), [("report.pdf", None), ("<text>", "application/pdf")])
def test_a_string_cannot_hold_a_format_parsed_from_bytes(source, mime):
    with pytest.raises(InputError, match="parsed from its bytes"):
        _chunker().chunk("%PDF-1.4 not really", source=source, mime=mime)


def test_a_path_names_itself_and_takes_mime(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text(MARKDOWN, encoding="utf-8")
    with pytest.raises(TypeError, match="its own source"):
        fissure.chunk(path, source="other.md")
    chunks = fissure.chunk(path, mime="text/markdown", tokenizer="chars", max_tokens=40)
    assert chunks[0].headings == ("Fault lines",) and chunks[0].source == str(path)
