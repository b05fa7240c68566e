import pytest

from fissure.errors import InputError
from fissure.parse import registry
from fissure.types import Block, Document


def test_routes_by_detected_mime_and_records_why():
    document = registry.parse(b"# Title\n\nbody\n", "notes.md")
    assert document.mime == "text/markdown"
    assert document.metadata["detection"] == "extension .md"
    assert document.metadata["encoding"] == "utf-8"
    assert "fallback" not in document.metadata
    assert document.blocks[0].title == "Title"


def test_caller_override_wins():
    document = registry.parse(b"a: 1\n", "notes.txt", mime="text/x-yaml")
    assert document.mime == "application/yaml"
    assert document.blocks[0].title == "a"


def test_table_has_every_required_route():
    expected = {
        "text/markdown": "fissure.parse.markdown:parse",
        "text/x-python": "fissure.parse.python:parse",
        "text/html": "fissure.parse.html:parse",
        "application/pdf": "fissure.parse.pdf:parse",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document": (
            "fissure.parse.docx:parse"
        ),
        "application/x-ipynb+json": "fissure.parse.notebook:parse",
        "text/x-rst": "fissure.parse.rst:parse",
        "application/json": "fissure.parse.data:parse_json",
        "application/yaml": "fissure.parse.data:parse_yaml",
        "text/csv": "fissure.parse.csv:parse",
        "text/plain": "fissure.parse.text:parse",
    }
    for mime, target in expected.items():
        assert registry.parser_for(mime).target == target, mime
    assert registry.parser_for("application/pdf").binary
    for lang in ("javascript", "typescript", "tsx", "go", "rust", "java", "c", "c++", "ruby",
                 "php", "sh", "csharp"):  # fmt: skip
        route = registry.parser_for(f"text/x-{lang}")
        assert route.target == "fissure.parse.code:parse" and route.pass_mime
    assert registry.parser_for("text/X-Markdown; charset=utf-8").target.endswith("markdown:parse")
    assert registry.parser_for("application/toml") is None


def test_unknown_text_format_falls_back_loudly():
    document = registry.parse(b"<?xml version='1.0'?>\n<a>\n\n<b/></a>", "feed")
    assert document.mime == "application/xml"
    assert document.metadata["fallback"] == "no parser for application/xml; parsed as plain text"
    assert len(document.blocks) == 2


def test_a_failing_parser_falls_back_to_plain_text():
    document = registry.parse(b'{"a": [1, 2', "broken.json")
    assert document.mime == "application/json"
    assert document.metadata["fallback"].startswith("parser fissure.parse.data:parse_json failed")
    assert document.text == '{"a": [1, 2'


def test_a_missing_parser_module_falls_back(monkeypatch):
    monkeypatch.setitem(registry._ROUTES, "text/x-go", registry.Route("fissure.parse.nope:parse"))
    document = registry.parse(b"package main\n", "main.go")
    assert "not available (ModuleNotFoundError" in document.metadata["fallback"]


def test_binary_without_parser_is_a_clear_input_error():
    with pytest.raises(InputError, match="no parser for it"):
        registry.parse(b"\x89PNG\r\n\x1a\n\x00\x00", "picture.md")


def test_binary_parser_failure_on_non_text_is_an_input_error(monkeypatch):
    def explode(data: bytes, *, source: str) -> Document:
        raise RuntimeError("boom")

    monkeypatch.setitem(registry._ROUTES, "application/pdf", registry.Route(explode, binary=True))
    with pytest.raises(InputError, match="boom"):
        registry.parse(b"%PDF-1.7\n\x00\x01\x02binary", "x.pdf")


def test_register_adds_a_format_with_one_call(monkeypatch):
    monkeypatch.setattr(registry, "_ROUTES", dict(registry._ROUTES))

    def parse_toml(text: str, *, source: str) -> Document:
        blocks = (Block("table", 0, len(text), 1, "tool"),)
        return Document.from_text(text, source=source, mime="application/toml", blocks=blocks)

    registry.register("application/toml", parse_toml)
    document = registry.parse(b"[tool]\nx = 1\n", "pyproject.toml", mime="application/toml")
    assert document.blocks[0].title == "tool"
    assert registry.parser_for("application/toml").load() is parse_toml


def test_register_a_binary_parser_by_dotted_path(monkeypatch):
    monkeypatch.setattr(registry, "_ROUTES", dict(registry._ROUTES))
    registry.register("application/x-thing", "fissure.parse.text:parse", binary=True)
    route = registry.parser_for("application/x-thing")
    assert route.binary and route.load().__name__ == "parse"


def test_non_utf8_text_records_the_encoding_fallback():
    document = registry.parse("café au lait\n".encode("cp1252"), "menu.txt")
    assert document.text == "café au lait\n"
    assert document.metadata["encoding"] == "cp1252"
    assert "not valid UTF-8" in document.metadata["encoding_fallback"]
