"""Names: one lossless text form for any path's bytes; printed with controls escaped."""

from __future__ import annotations

import json
import os
import sqlite3

from hypothesis import given
from hypothesis import strategies as st

from fissure.source.names import is_text, path_bytes, path_name, printable, text_name

# Absolute paths of arbitrary bytes (no NUL; "/" only as separators, never doubled).
_segment = st.binary(min_size=1, max_size=12).map(lambda b: b.replace(b"\0", b"x"))
_paths = st.lists(_segment.map(lambda b: b.replace(b"/", b"_")), min_size=1, max_size=4).map(
    lambda parts: b"/" + b"/".join(parts)
)


@given(_paths)
def test_every_path_round_trips_through_its_stored_name(raw: bytes) -> None:
    name = path_name(os.fsdecode(raw))
    assert is_text(name)
    json.dumps(name, ensure_ascii=False).encode("utf-8")  # a JSON line takes it
    sqlite3.connect(":memory:").execute("SELECT ?", (name,)).fetchone()  # so does SQLite
    assert path_bytes(name) == raw
    assert path_name(raw) == name  # bytes or str of the same path: one name


@given(_paths, _paths)
def test_distinct_paths_get_distinct_names(a: bytes, b: bytes) -> None:
    if a != b:
        assert path_name(os.fsdecode(a)) != path_name(os.fsdecode(b))


def test_utf8_names_are_kept_as_they_are() -> None:
    for name in ("/share/a.txt", "docs/100% done.md", "/tmp/x/café ☕.md", "rel/[x].md"):
        assert path_name(name) == name
        assert text_name(name) == name
        assert path_bytes(name) == os.fsencode(name)


def test_a_path_not_utf8_keeps_its_exact_bytes() -> None:
    for raw in (b"/./\x80", b"/a/../b\xff", b"//x\xfe"):  # hypothesis found the first
        assert path_bytes(path_name(os.fsdecode(raw))) == raw


def test_a_name_that_is_not_utf8_becomes_a_file_uri() -> None:
    raw = b"/share/caf\xe9 100%.txt"
    name = path_name(os.fsdecode(raw))
    assert name == "file:///share/caf%E9 100%25.txt"
    assert path_bytes(name) == raw
    assert text_name(os.fsdecode(raw)) == name


def test_printable_escapes_controls_and_keeps_text() -> None:
    assert printable("plain/naïve café.md") == "plain/naïve café.md"
    assert printable("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m"
    assert printable("a\nb\tc\rd") == "a\\nb\\tc\\rd"
    assert printable("evil\u202etxt.exe") == "evil\\u202etxt.exe"  # a bidi override
    assert printable(os.fsdecode(b"caf\xe9")) == "caf\\xe9"
    assert printable("\x9b2J") == "\\x9b2J"  # the one-byte CSI


@given(st.text())
def test_printable_output_has_no_control_characters(text: str) -> None:
    shown = printable(text)
    assert is_text(shown)
    assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in shown)
    assert "\u2028" not in shown and "\u202e" not in shown
