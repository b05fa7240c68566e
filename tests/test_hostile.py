"""Hostile files through the whole pipeline: ``Chunker.chunk_file`` on files written to disk.

Each file must come back within a fixed time either as chunks that keep every invariant
(``tests/chunk_checks.py``) or as a clear :class:`fissure.InputError`; any other exception
fails the test. The bound is generous (the machine is shared); ``--durations`` shows the
real times. The 10 MB single lines are sized with ``chars`` (cheap to re-measure for the
invariants); the MiniLM sizer handles one 1 MB line here, and the parsers' own tests take
10 MB through every parser.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from fissure import Chunker, InputError
from fissure.chunker import load_document
from tests.chunk_checks import assert_chunk_invariants, corpus_maker
from tests.conftest import get_sizer

CORPUS = Path(__file__).resolve().parent / "corpus"
BOUND_S = 60.0


def _pdf() -> bytes:
    """A valid 12-page PDF (bigger than the corpus one, so cuts land inside pages)."""
    maker = corpus_maker()
    pages = [
        [["Section heading"], [f"Body text about quarter {i}."], *maker.REPORT_PAGES[i % 2]]
        for i in range(12)
    ]
    return maker.make_pdf(pages)


def _garble(data: bytes, share: float, seed: int) -> bytes:
    rng = random.Random(seed)
    out = bytearray(data)
    for _ in range(int(len(out) * share)):
        out[rng.randrange(16, len(out))] = rng.randrange(256)
    return bytes(out)


PDF = _pdf()
TEN_MB = b"x" * 10_000_000

HOSTILE: dict[str, bytes] = {
    "valid.pdf": PDF,
    "truncated-header.pdf": PDF[:20],
    "truncated-half.pdf": PDF[: len(PDF) // 2],
    "truncated-tail.pdf": PDF[: len(PDF) - 40],
    "garbled-2pc.pdf": _garble(PDF, 0.02, 1),
    "garbled-20pc.pdf": _garble(PDF, 0.20, 2),
    "bad-startxref.pdf": PDF.replace(b"startxref\n", b"startxref\n999999"),
    "header-then-noise.pdf": b"%PDF-1.7\n" + random.Random(3).randbytes(4096),
    "corpus-cut.pdf": (CORPUS / "pdf" / "report.pdf").read_bytes()[:700],
    "invalid-utf8.md": b"# Caf\xe9\n\n\xff\xfe broken \xc3\x28 bytes \xed\xa0\x80 here\n" * 50,
    "invalid-utf8.txt": bytes(range(0x80, 0x100)) * 40 + b"\nplain tail\n",
    "invalid-utf8.py": b"def f():\n    return '\xe9\xff'\n",
    "binary.md": bytes(range(256)) * 64,
    "png.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + random.Random(4).randbytes(2048),
    "unclosed-fence.md": b"# Title\n\n```python\n# not a heading\n" + b"x = 1\n" * 2000,
    "syntax-error.py": b"def f(:\n    return\nclass C\n    pass\n" * 100,
    "unbalanced.py": b"def f():\n    x = (1, [2, {3\n" + b"    y = 4\n" * 500,
    "tabs-and-spaces.py": b"def f():\n\tif x:\n        return 1\n",
    "nested.html": b"<div>" * 10_000 + b"deep text" + b"</div>" * 10_000,
    "nested-unclosed.html": b"<html><body>" + b"<section><p>x " * 10_000,
    "nested.json": b"[" * 10_000 + b"1" + b"]" * 10_000,
    "nested-object.json": b'{"k":' * 10_000 + b'"v"' + b"}" * 10_000,
    "nested-unclosed.json": b'{"a": [' * 10_000,
    "line.txt": TEN_MB,
    "line.md": TEN_MB,
    "empty.md": b"",
    "empty.txt": b"",
    "empty.py": b"",
    "empty.json": b"",
    "empty.pdf": b"",
    "blank.md": b" \n\t\n\r\n",
}
# Sized by characters: re-measuring every chunk with a tokenizer for the invariants would
# dominate the test, not the chunking.
CHARS = {"line.txt", "line.md"}


def _chunker(name: str) -> Chunker:
    tokenizer = "chars" if name in CHARS else "minilm"
    budget = 2000 if name in CHARS else 96
    return Chunker(strategy="structural", max_tokens=budget, sizer=get_sizer(tokenizer))


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_file_gives_chunks_or_input_error(name: str, tmp_path: Path):
    path = tmp_path / name
    path.write_bytes(HOSTILE[name])
    chunker = _chunker(name)
    started = time.perf_counter()
    try:
        chunks = chunker.chunk_file(path)
    except InputError as exc:
        elapsed = time.perf_counter() - started
        assert str(exc), name
        assert elapsed < BOUND_S, f"{name}: InputError after {elapsed:.1f}s"
        return
    elapsed = time.perf_counter() - started
    assert elapsed < BOUND_S, f"{name}: {elapsed:.1f}s"
    assert_chunk_invariants(load_document(path), chunker, chunks)
    if HOSTILE[name].strip():
        assert chunks or name.endswith(".pdf"), f"{name}: text but no chunks"


@pytest.mark.parametrize(
    "name", ["binary.md", "png.md", "garbled-20pc.pdf", "header-then-noise.pdf"]
)
def test_unreadable_files_are_input_errors(name: str, tmp_path: Path):
    path = tmp_path / name
    path.write_bytes(HOSTILE[name])
    with pytest.raises(InputError):
        _chunker(name).chunk_file(path)


def test_fallbacks_are_recorded(tmp_path: Path):
    for name in ("syntax-error.py", "unbalanced.py"):
        (tmp_path / name).write_bytes(HOSTILE[name])
        document = load_document(tmp_path / name)
        assert "fallback" in document.metadata, name
        chunks = _chunker(name).chunk_file(tmp_path / name)
        assert chunks and all("fallback" in c.metadata for c in chunks), name


def test_one_megabyte_line_with_minilm(tmp_path: Path):
    """A single 1 MB line of short words, sized by the real MiniLM word-piece counter."""
    path = tmp_path / "line-words.md"
    path.write_bytes(b"fault slip " * 100_000)
    chunker = _chunker("line-words.md")
    started = time.perf_counter()
    chunks = chunker.chunk_file(path)
    assert time.perf_counter() - started < BOUND_S
    assert_chunk_invariants(load_document(path), chunker, chunks)
    assert len(chunks) > 100


# ----------------------------------------------------------------------------- known bugs


@pytest.mark.parametrize("name", ["truncated-tail.pdf", "truncated-half.pdf", "garbled-2pc.pdf"])
def test_damaged_pdf_is_not_chunked_as_pdf_syntax(name: str, tmp_path: Path):
    path = tmp_path / name
    path.write_bytes(HOSTILE[name])
    try:
        chunks = _chunker(name).chunk_file(path)
    except InputError:
        return
    assert not any("%PDF-" in c.text or " 0 obj" in c.text for c in chunks)


def test_undecodable_file_error_names_the_file(tmp_path: Path):
    path = tmp_path / "latin.txt"
    path.write_bytes(HOSTILE["invalid-utf8.txt"])
    with pytest.raises(InputError, match="latin.txt"):
        _chunker("latin.txt").chunk_file(path)


def test_seamless_run_is_chunked_with_linear_work():
    from fissure import Sizer

    sizer = Sizer.tiktoken("cl100k_base")
    counted = [0]
    raw = sizer._fn

    def count(text: str) -> int:
        counted[0] += len(text)
        return raw(text)

    sizer._fn = count
    n = 400_000
    chunks = Chunker(strategy="structural", max_tokens=512, sizer=sizer).chunk("x" * n)
    assert len(chunks) > 50
    # Linear work tokenizes each character a bounded number of times (today: ~100 at
    # 400 KB, ~200 at 800 KB, growing with the length).
    assert counted[0] < 25 * n, counted[0] / n


def test_python_coding_declaration_is_honoured(tmp_path: Path):
    path = tmp_path / "koi8.py"
    path.write_bytes('# -*- coding: koi8-r -*-\ns = "Поезд прибывает"\n'.encode("koi8-r"))
    assert "Поезд" in _chunker("koi8.py").chunk_file(path)[0].text
