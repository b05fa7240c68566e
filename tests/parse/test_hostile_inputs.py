"""Inputs built to hurt: each must finish quickly with a Document or a clear InputError."""

import time

import pytest
from tree_checks import assert_valid_tree

from fissure.errors import InputError
from fissure.parse import registry

TEN_MB_LINE = b"x" * 10_000_000

HOSTILE = {
    "empty.md": b"",
    "empty.json": b"",
    "empty.py": b"",
    "empty.ipynb": b"",
    "deep.json": b"[" * 10_000 + b"]" * 10_000,
    "deep-object.json": b'{"k":' * 10_000 + b"0" + b"}" * 10_000,
    "deep-unclosed.json": b"[" * 10_000,
    "deep.yaml": b"[" * 10_000 + b"]" * 10_000,
    "deep.ipynb": b"[" * 10_000 + b"]" * 10_000,
    "unclosed-fence.md": b"# T\n\n```python\n# not a heading\n" + b"x = 1\n" * 1000,
    "syntax-error.py": b"def f(:\n    return\nclass C\n",
    "deep-parens.py": b"x = " + b"(" * 10_000 + b")" * 10_000 + b"\n",
    "deep-quotes.md": b">" * 10_000 + b" deep\n",
    "deep-lists.md": b"\n".join(b"  " * i + b"- item" for i in range(1_000)),
    "brackets.md": b"[" * 50_000 + b"](" * 10_000,
    "bad-utf8.md": b"# Caf\xe9\n\nna\xefve text\n",
    "bad-utf8.py": b"# caf\xe9\nx = 1\n",
    "line.md": TEN_MB_LINE,
    "line.txt": TEN_MB_LINE,
    "line.py": b"x = '" + TEN_MB_LINE + b"'\n",
    "line.json": b'["' + TEN_MB_LINE + b'"]',
    "line.csv": TEN_MB_LINE,
    "line.rst": TEN_MB_LINE,
    "bad.ipynb": b'{"cells": 3, "nbformat": 4}',
    "bad.yaml": b"a: [b, {c\n",
    "evil.yaml": b"a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c, *c]\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_finishes_with_a_document(name):
    started = time.perf_counter()
    document = registry.parse(HOSTILE[name], name)
    elapsed = time.perf_counter() - started
    assert_valid_tree(document)
    assert elapsed < 10, f"{name} took {elapsed:.1f}s"


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("binary.md", bytes(range(256)) * 64),
        ("nul.txt", b"text\x00with a NUL"),
        ("noise.md", bytes((i * 73 + 41) % 256 for i in range(4096)).replace(b"\x00", b"\x01")),
        ("elf.py", b"\x7fELF\x02\x01\x01" + b"\x00" * 64),
    ],
)
def test_binary_posing_as_text_is_a_clear_input_error(name, data):
    with pytest.raises(InputError) as caught:
        registry.parse(data, name)
    message = str(caught.value)
    assert "binary" in message or "not text" in message or "no parser" in message


def test_syntax_error_and_bad_utf8_are_recorded():
    assert "fallback" in registry.parse(HOSTILE["syntax-error.py"], "s.py").metadata
    document = registry.parse(HOSTILE["bad-utf8.md"], "b.md")
    assert document.metadata["encoding"] == "cp1252"
    assert document.blocks[0].title == "Café"
