"""UTF-16 and UTF-32 without a byte-order mark are text; binary is still refused (issue 33).

Windows tools write UTF-16 without a BOM. Its bytes are full of NULs, as binary is, so these
tests pin both sides: such text is chunked exactly as its UTF-8 twin, and the binary that
the NUL check exists for still gets the same refusal.
"""

import codecs
import io
import os
import random
import zipfile
from pathlib import Path

import pytest

import fissure
from fissure.detect import decode, detect, is_textual
from fissure.detect.decode import unmarked_encoding
from fissure.errors import InputError
from fissure.parse import parse

ENCODINGS = ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"]

MARKDOWN = """# Fault lines

Rocks break along planes of weakness. A fault is such a plane, where the two sides have
moved past each other; the San Andreas fault is the best known.

## Mixed languages

Les failles se forment là où la croûte cède. Die Erdkruste bricht an Schwächezonen.
Разлом — это трещина в земной коре. Το ρήγμα είναι μια ρωγμή. 断层是地壳中的断裂面，
两侧的岩块发生了相对位移。断層は地殻の割れ目である。단층은 지각의 균열이다. 🌋 ⛰️

## Measuring

- A seismograph records the shaking.
- The moment magnitude says how much energy was released.

```text
M = (2/3) * log10(M0) - 10.7
```
"""

PLAIN = "\n\n".join(
    f"Paragraph {i}: the crust gives way along old faults — à la façon d'une vitre, "
    f"comme un verre fêlé. Grüße, Ωμέγα, Ёж, 地震 {i}."
    for i in range(40)
)


def _chunker() -> fissure.Chunker:
    return fissure.Chunker(max_tokens=120, tokenizer="chars")


def _shape(chunks: list[fissure.Chunk]) -> list[tuple[object, ...]]:
    """What must match between a file and its UTF-8 twin (the ids hash the path)."""
    return [(c.text, c.start, c.end, c.index, c.lines, c.headings) for c in chunks]


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize(("name", "text"), [("notes.md", MARKDOWN), ("notes.txt", PLAIN)])
def test_unmarked_text_chunks_as_its_utf8_twin(tmp_path, encoding, name, text):
    data = text.encode(encoding)
    assert not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    path = _write(tmp_path, name, data)
    twin = _write(tmp_path, "twin-" + name, text.encode())

    chunks = _chunker().chunk_file(path)

    assert len(chunks) > 1
    assert _shape(chunks) == _shape(_chunker().chunk_file(twin))
    assert all(text[c.start : c.end] == c.text for c in chunks)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_unmarked_markdown_keeps_its_headings_and_exact_offsets(tmp_path, encoding):
    path = _write(tmp_path, "faults.md", MARKDOWN.encode(encoding))
    chunks = fissure.chunk(path, max_tokens=120, tokenizer="chars")
    document = parse(path.read_bytes(), str(path))  # what ingest's workers call
    assert document.text == MARKDOWN
    assert document.mime == "text/markdown"
    assert document.metadata["encoding"] == encoding
    assert "no byte-order mark" in document.metadata["encoding_fallback"]
    assert all(document.text[c.start : c.end] == c.text for c in chunks)
    headings = {h for c in chunks for h in c.headings}
    assert {"Fault lines", "Mixed languages", "Measuring"} <= headings


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_decode_reads_unmarked_text_and_records_the_guess(encoding):
    text, meta = decode(PLAIN.encode(encoding))
    assert text == PLAIN
    assert meta["encoding"] == encoding and "bom" not in meta
    assert meta["fallback"].startswith("no byte-order mark")
    assert fissure.chunk(PLAIN.encode(encoding), max_tokens=200, tokenizer="chars") == (
        fissure.chunk(PLAIN.encode(), max_tokens=200, tokenizer="chars")
    )


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_unmarked_text_decodes_as_its_bom_twin(encoding):
    data = MARKDOWN.encode(encoding)
    bom = codecs.BOM_UTF32_LE if encoding == "utf-32-le" else codecs.BOM_UTF32_BE
    if encoding.startswith("utf-16"):
        bom = codecs.BOM_UTF16_LE if encoding == "utf-16-le" else codecs.BOM_UTF16_BE
    assert decode(data)[0] == decode(bom + data)[0] == MARKDOWN


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_the_limit_cjk_prose_without_a_bom_is_still_refused(tmp_path, encoding):
    """Chinese prose has NUL high bytes only at its line breaks, and NUL low bytes at
    characters such as 一 (U+4E00): too little to tell it from binary. With a BOM it is read."""
    prose = "一个人在路上走着，他想起了很久以前的事情。那时候他还年轻，一切都是新的。\n" * 20
    with pytest.raises(InputError, match="NUL bytes"):
        fissure.chunk(_write(tmp_path, "prose.txt", prose.encode(encoding)))
    marked = codecs.BOM_UTF16_LE if encoding == "utf-16-le" else codecs.BOM_UTF16_BE
    assert decode(marked + prose.encode(encoding))[0] == prose


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_unmarked_markdown_without_an_extension_is_sniffed_as_markdown(encoding):
    detection = detect(MARKDOWN.encode(encoding), "README")
    assert detection.mime == "text/markdown", detection


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_tiny_and_split_surrogate_samples(encoding):
    assert decode("ok\r\n".encode(encoding))[0] == "ok\r\n"
    with pytest.raises(InputError, match="NUL bytes"):
        decode("a".encode(encoding))  # one NUL is too little evidence (random bytes have it)
    # an astral character straddles the 8 KiB sample's end; the rest decodes whole
    text = "x" * 4095 + "🌋 end\n"
    assert decode(text.encode(encoding))[0] == text


def _png() -> bytes:
    rows = os.urandom(2000)
    return b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x02" + rows


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.txt", "hello " * 200)
        archive.writestr("more.txt", MARKDOWN)
    return buffer.getvalue()


def _scattered_nuls() -> bytes:
    rng = random.Random(33)
    data = bytearray(PLAIN.encode())
    for _ in range(40):
        data[rng.randrange(len(data))] = 0
    return bytes(data)


def _elf() -> bytes:
    return b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"\x02\x00\x3e\x00" + os.urandom(3000)


def _mostly_control_utf16() -> bytes:
    """UTF-16-LE whose characters are controls and private-use code points, not text."""
    return ("".join(chr(c) for c in range(1, 32)) * 20 + "\ue000\ue001" * 100).encode("utf-16-le")


def _unmarked_utf16_with_binary_tail() -> bytes:
    return "# Title\nsome text\n".encode("utf-16-le") + os.urandom(4000)


def _ascii_records() -> bytes:
    """8-bit text records padded with one NUL, always at an odd offset."""
    return b"".join(b"record %04d: plain text\x00" % i for i in range(300))


BINARY = {
    "png": _png,
    "zip": _zip,
    "urandom": lambda: os.urandom(8192) + b"\x00",
    "elf": _elf,
    "scattered-nuls": _scattered_nuls,
    "mostly-control-utf16": _mostly_control_utf16,
    "utf16-then-binary": _unmarked_utf16_with_binary_tail,
    "ascii-records": _ascii_records,
}


@pytest.mark.parametrize("kind", sorted(BINARY))
@pytest.mark.parametrize("name", ["blob.txt", "blob.md", "blob"])
def test_binary_files_are_still_refused(tmp_path, kind, name):
    data = BINARY[kind]()
    path = _write(tmp_path, name, data)
    assert not is_textual(detect(data, name).mime)
    with pytest.raises(InputError, match=r"is (application|image)/[\w.+-]+ \(|NUL bytes"):
        fissure.chunk(path)
    with pytest.raises(InputError, match=r"is (application|image)/[\w.+-]+ \(|NUL bytes"):
        parse(data, str(path))


@pytest.mark.parametrize("kind", sorted(BINARY))
def test_binary_bytes_are_still_refused_by_decode_with_the_same_message(kind):
    data = BINARY[kind]()
    assert unmarked_encoding(data) is None
    with pytest.raises(InputError, match=r"NUL bytes \(first at byte \d+\), so they are binary"):
        decode(data)
