import io
import zipfile

import pytest

from fissure.detect import detect, normalize

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def zipped(*names: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.writestr(name, "<xml/>")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("source", "mime"),
    [
        ("README.md", "text/markdown"),
        ("docs/Guide.MARKDOWN", "text/markdown"),
        ("pkg/mod.py", "text/x-python"),
        ("index.htm", "text/html"),
        ("nb.ipynb", "application/x-ipynb+json"),
        ("manual.rst", "text/x-rst"),
        ("data.json", "application/json"),
        ("ci.yml", "application/yaml"),
        ("table.csv", "text/csv"),
        ("notes.txt", "text/plain"),
        ("app.tsx", "text/x-tsx"),
        ("main.go", "text/x-go"),
        ("lib.rs", "text/x-rust"),
        ("Main.java", "text/x-java"),
        ("util.h", "text/x-c"),
        ("vec.hpp", "text/x-c++"),
        ("task.rb", "text/x-ruby"),
        ("index.php", "text/x-php"),
        ("run.sh", "text/x-sh"),
        ("Program.cs", "text/x-csharp"),
        ("web.mjs", "text/x-javascript"),
        ("types.ts", "text/x-typescript"),
        ("https://example.org/raw/guide.md?plain=1#top", "text/markdown"),
        ("C:\\docs\\notes.txt", "text/plain"),
    ],
)
def test_extension_decides_for_text(source, mime):
    detection = detect(b"some text\n", source)
    assert detection.mime == mime
    assert "extension" in detection.reason


@pytest.mark.parametrize(
    ("data", "source", "mime"),
    [
        (b"%PDF-1.7\n...", "report.txt", "application/pdf"),
        (zipped("word/document.xml"), "report.docx", DOCX),
        (zipped("word/document.xml"), "download", DOCX),
        (zipped("xl/workbook.xml"), "book.xlsx", "application/zip"),
        (b"\x7fELF\x02\x01\x01\x00", "tool.md", "application/x-executable"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "pic.md", "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "photo", "image/jpeg"),
        (b"GIF89a\x01\x00", "anim.txt", "image/gif"),
        (b"plain text\x00then NUL", "notes.md", "application/octet-stream"),
    ],
)
def test_binary_signatures_beat_the_name(data, source, mime):
    assert detect(data, source).mime == mime


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (b"#!/usr/bin/env python3\nprint('hi')\n", "text/x-python"),
        (b"#!/usr/bin/python3.12 -u\nprint('hi')\n", "text/x-python"),
        (b"#!/bin/bash\necho hi\n", "text/x-sh"),
        (b"#!/usr/bin/env node\nconsole.log(1)\n", "text/x-javascript"),
        (b'{"a": [1, 2]}', "application/json"),
        (b'{"cells": [], "nbformat": 4, "metadata": {}}', "application/x-ipynb+json"),
        (b"[" * 5000 + b"]" * 5000, "application/json"),
        (b"<!DOCTYPE html><html><body>x</body></html>", "text/html"),
        (b"<?xml version='1.0'?><feed/>", "application/xml"),
        (b"# Title\n\nSome **bold** text and a [link](http://x).\n", "text/markdown"),
        (b"Title\n=====\n\n.. note::\n\n   hi\n", "text/x-rst"),
        (b"%YAML 1.2\n---\na: 1\n", "application/yaml"),
        (b"just some words\nand more\n", "text/plain"),
        (b"{not json", "text/plain"),
    ],
)
def test_content_sniffing_without_an_extension(data, mime):
    detection = detect(data, "README")
    assert detection.mime == mime, detection
    assert detection.reason.startswith("no extension")


def test_shebang_beats_an_unknown_extension():
    detection = detect(b"#!/usr/bin/env python\nx = 1\n", "script.cgi")
    assert detection.mime == "text/x-python"
    assert "unknown extension .cgi" in detection.reason and "shebang" in detection.reason


def test_user_override_wins_and_is_normalised():
    detection = detect(b"%PDF-1.4", "x.pdf", mime="Text/X-Markdown; charset=utf-8")
    assert detection.mime == "text/markdown"
    assert "caller" in detection.reason
    assert normalize("application/x-yaml") == "application/yaml"


def test_utf16_with_bom_is_not_binary():
    data = "hello".encode("utf-16")
    assert detect(data, "notes.txt").mime == "text/plain"


def test_mostly_undecodable_bytes_without_extension_are_binary():
    noise = bytes((i * 73 + 41) % 256 for i in range(4096)).replace(b"\x00", b"\x01")
    assert detect(noise, "blob").mime == "application/octet-stream"
