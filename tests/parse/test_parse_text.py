"""parse_text: text another library already decoded, parsed by its format, never altered."""

from __future__ import annotations

from pathlib import Path

import pytest

from fissure.parse import parse, parse_text

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
# Not the fuzzers' finds (mutated files, replayed by tests/hostile/test_fuzz.py).
FILES = sorted(
    p for p in CORPUS.rglob("*") if p.is_file() and "fuzz" not in p.relative_to(CORPUS).parts
)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_same_structure_as_the_file_or_plain_text_that_says_why(path: Path) -> None:
    from_file = parse(path.read_bytes(), str(path))
    document = parse_text(from_file.text, str(path))
    assert document.text == from_file.text
    if document.metadata.get("fallback") and not from_file.metadata.get("fallback"):
        # Formats whose parser extracts text (or reads bytes) cannot reparse their output.
        assert from_file.mime in ("text/html", "application/pdf", "application/x-ipynb+json",
                                  "application/vnd.openxmlformats-officedocument"
                                  ".wordprocessingml.document"), from_file.mime  # fmt: skip
        assert "parsed as plain text" in document.metadata["fallback"]
    else:
        assert document.blocks == from_file.blocks and document.mime == from_file.mime


def test_mime_overrides_the_extension() -> None:
    text = "# Title\n\nBody.\n"
    assert parse_text(text, "notes.txt").blocks != parse_text(text, "n.txt", "text/markdown").blocks
    assert parse_text(text, "<text>", "text/markdown").mime == "text/markdown"


def test_html_source_text_is_not_rewritten() -> None:
    html = "<html><body><h1>T</h1><p>x</p></body></html>"
    document = parse_text(html, "page.html")
    assert document.text == html and "extracts text" in document.metadata["fallback"]
