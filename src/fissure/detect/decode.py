"""Bytes → text: UTF-8 first, UTF-16/32 with a BOM, else a recorded single-byte fallback.

A BOM makes fissure trust UTF-16/32. Without one (Windows tools write such UTF-16), the text
is full of NUL bytes, which is also what most binary files look like, and guessing wrong
would index noise: :func:`unmarked_encoding` reads it only when its NULs fall in the pattern
of UTF-16/32 text and it decodes into text, and the guess is recorded.
"""

from __future__ import annotations

import codecs
import unicodedata
from typing import Any

from fissure.errors import InputError

# Longest BOMs first: the UTF-32-LE BOM starts with the UTF-16-LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Control bytes that never occur in real text (everything below 0x20 except
# tab, LF, VT, FF, CR and ESC; plus DEL).
_CONTROL = bytes(b for b in range(0x20) if b not in b"\t\n\x0b\x0c\r\x1b") + b"\x7f"

# Above these shares of a sample the bytes are "mostly undecodable": a legacy-encoded
# text has a few accented letters per line, not one odd byte in three.
_MAX_CONTROL_SHARE = 0.05
_MAX_INVALID_SHARE = 0.30
_SAMPLE = 1 << 16

# BOM-less UTF-16/32 (see unmarked_encoding): how much is sampled, and the shares of its
# characters that decide. Real text has NUL high bytes wherever it has an ASCII letter, digit,
# space or line break; binary has NULs on both byte parities, or in pairs (U+0000).
_UNMARKED_SAMPLE = 8192
_UNMARKED = ("utf-32-le", "utf-32-be", "utf-16-le", "utf-16-be")
_MIN_LATIN1_SHARE = 0.05  # characters in U+0000–U+00FF: their high bytes are the NULs
_MIN_LATIN1 = 4  # and at least this many: in a few random bytes one NUL is a large share
_MAX_LOW_NULS = 0.25  # UTF-16 NULs in low bytes (U+xx00) per NUL in a high byte
_MAX_ODD_SHARE = 0.01  # controls, unassigned and private-use characters
_MAX_ASCII_PAIRS = 0.9  # of the characters above U+00FF: two ASCII bytes read as one unit
_TEXT_CONTROLS = frozenset("\t\n\x0b\x0c\r\x1b")
_ASCII_TEXT = frozenset(range(0x20, 0x7F)) | {0x09, 0x0A, 0x0D}


def bom_encoding(data: bytes) -> str | None:
    """The encoding named by a byte-order mark at the start of ``data``, if any."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    return None


def unmarked_encoding(data: bytes) -> str | None:
    """The UTF-32 or UTF-16 encoding of BOM-less text, when its first 8 KiB show it.

    The sample must have NUL bytes, decode strictly (an astral character split at its end
    is fine) and read as text: at most 1% of its characters are controls (besides tab,
    line breaks and ESC), unassigned or private use, and at least 5% (and at least 4) are
    in U+0000–U+00FF, whose high bytes are the NULs. For UTF-16 the NULs must also sit
    almost only in high bytes (odd offsets for little-endian, even for big-endian): NULs in
    low bytes, from U+xx00 characters, at most a quarter as many. And its characters above
    U+00FF must not be nearly all two ASCII bytes read as one code unit: such bytes are
    8-bit text with stray NULs, which a UTF-16 decoder would read as CJK.

    The limit: text almost without characters from U+0000–U+00FF (Chinese or Japanese
    prose, where only line breaks give NUL high bytes) is not recognised and is refused as
    binary; saved with a BOM or as UTF-8 it is read.

    Args:
        data: Document bytes without a byte-order mark.

    Returns:
        ``"utf-32-le"``, ``"utf-32-be"``, ``"utf-16-le"`` or ``"utf-16-be"``; ``None`` when
        the bytes do not show one of them beyond doubt.
    """
    sample = data[:_UNMARKED_SAMPLE]
    if b"\x00" not in sample:
        return None
    for encoding in _UNMARKED:
        if encoding.startswith("utf-16") and not _nuls_in_high_bytes(sample, encoding):
            continue  # the cheap test first: it turns away most binary
        try:
            text = codecs.getincrementaldecoder(encoding)().decode(sample, final=False)
        except UnicodeDecodeError:
            continue
        if _reads_as_text(text):
            return encoding
    return None


def _nuls_in_high_bytes(sample: bytes, encoding: str) -> bool:
    units = sample[: len(sample) // 2 * 2]
    high, low = (units[1::2], units[0::2]) if encoding == "utf-16-le" else (units[::2], units[1::2])
    high_nuls = high.count(0)
    enough = high_nuls >= max(_MIN_LATIN1, _MIN_LATIN1_SHARE * len(high))
    return enough and low.count(0) <= _MAX_LOW_NULS * high_nuls


def _reads_as_text(text: str) -> bool:
    latin1 = len(text.encode("latin-1", "ignore"))
    if latin1 < max(_MIN_LATIN1, _MIN_LATIN1_SHARE * len(text)):
        return False
    odd = sum(1 for char in text if not char.isprintable() and _is_odd(char))
    if odd > _MAX_ODD_SHARE * len(text):
        return False
    above = len(text) - latin1
    pairs = sum(1 for char in text if "\u0909" <= char <= "\u7e7e" and _is_ascii_pair(char))
    return not above or pairs < _MAX_ASCII_PAIRS * above


def _is_odd(char: str) -> bool:
    return char not in _TEXT_CONTROLS and unicodedata.category(char) in ("Cc", "Cn", "Co", "Cs")


def _is_ascii_pair(char: str) -> bool:
    return ord(char) >> 8 in _ASCII_TEXT and ord(char) & 0xFF in _ASCII_TEXT


def decode(data: bytes) -> tuple[str, dict[str, Any]]:
    """Decode document bytes to text, recording how.

    UTF-8 is tried first (a UTF-8 BOM is stripped and recorded); a UTF-16/32 BOM selects that
    encoding; bytes with NULs but no BOM are read as UTF-16/32 when :func:`unmarked_encoding`
    recognises them, and that guess is recorded as the fallback; anything else that still
    looks like text is decoded as cp1252 (or latin-1 for the five bytes cp1252 leaves
    undefined) and the fallback is recorded.

    Args:
        data: The raw bytes of a document.

    Returns:
        The text and a metadata dict: ``{"encoding": ...}``, plus ``"bom": True`` when a BOM
        was stripped and ``"fallback": "<why>"`` when the bytes were not UTF-8 and had no BOM.

    Raises:
        InputError: The bytes contain NUL bytes (without a UTF-16/32 BOM, and not in the
            pattern of UTF-16/32 text) or are mostly not text.
    """
    encoding = bom_encoding(data)
    if encoding is not None and encoding != "utf-8":
        bom_length = 4 if encoding.startswith("utf-32") else 2
        try:
            text = data[bom_length:].decode(encoding)
        except UnicodeDecodeError as exc:
            raise InputError(
                f"the bytes start with a {encoding} byte-order mark but are not valid "
                f"{encoding} ({exc.reason} at byte {exc.start + bom_length}); re-save the "
                "file in UTF-8"
            ) from None
        return text, {"encoding": encoding, "bom": True}
    unmarked = unmarked_encoding(data) if encoding is None else None
    if unmarked is not None:
        return _decode_unmarked(data, unmarked)
    if b"\x00" in data:
        raise InputError(
            f"the bytes contain NUL bytes (first at byte {data.index(0)}), so they are binary, "
            "not text; if this is UTF-16 text without a byte-order mark, decode it yourself "
            "and pass the text to Document.from_text"
        )
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[3:] if bom else data
    meta: dict[str, Any] = {"encoding": "utf-8", "bom": True} if bom else {"encoding": "utf-8"}
    try:
        return body.decode("utf-8"), meta
    except UnicodeDecodeError as exc:
        first_bad = exc.start + (3 if bom else 0)
    _refuse_if_not_text(body)
    try:
        text, encoding = body.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        text, encoding = body.decode("latin-1"), "latin-1"
    return text, {
        "encoding": encoding,
        "fallback": f"not valid UTF-8 (first bad byte at {first_bad}); decoded as {encoding}",
    }


def _decode_unmarked(data: bytes, encoding: str) -> tuple[str, dict[str, Any]]:
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"the bytes look like {encoding} text without a byte-order mark but are not "
            f"valid {encoding} ({exc.reason} at byte {exc.start}); re-save the file in UTF-8"
        ) from None
    why = f"no byte-order mark; its NUL bytes and a clean decode say {encoding}"
    return text, {"encoding": encoding, "fallback": why}


def _refuse_if_not_text(data: bytes) -> None:
    sample = data[:_SAMPLE]
    if not sample:
        return
    controls = len(sample) - len(sample.translate(None, _CONTROL))
    invalid = sample.decode("utf-8", "replace").count("\ufffd")
    if controls > _MAX_CONTROL_SHARE * len(sample) or invalid > _MAX_INVALID_SHARE * len(sample):
        raise InputError(
            f"the bytes are mostly not text ({controls} control bytes and {invalid} bytes "
            f"that are not UTF-8 in the first {len(sample)}); pass a text file, or register "
            "a binary parser for this format with fissure.parse.registry.register"
        )
