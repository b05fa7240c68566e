"""Bytes → text: UTF-8 first, UTF-16/32 with a BOM, else a recorded single-byte fallback.

Only a BOM makes fissure trust UTF-16/32: without one, UTF-16 looks like text full of NUL
bytes, which is also what most binary files look like, and guessing wrong would index noise.
"""

from __future__ import annotations

import codecs
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


def bom_encoding(data: bytes) -> str | None:
    """The encoding named by a byte-order mark at the start of ``data``, if any."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    return None


def decode(data: bytes) -> tuple[str, dict[str, Any]]:
    """Decode document bytes to text, recording how.

    UTF-8 is tried first (a UTF-8 BOM is stripped and recorded); a UTF-16/32 BOM selects that
    encoding; anything else that still looks like text is decoded as cp1252 (or latin-1 for
    the five bytes cp1252 leaves undefined) and the fallback is recorded.

    Args:
        data: The raw bytes of a document.

    Returns:
        The text and a metadata dict: ``{"encoding": ...}``, plus ``"bom": True`` when a BOM
        was stripped and ``"fallback": "<why>"`` when the bytes were not UTF-8.

    Raises:
        InputError: The bytes contain NUL bytes (without a UTF-16/32 BOM) or are mostly not
            text.
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
