"""PDF streams checked before pdfium reads the file: a small PDF must not inflate to gigabytes.

pdfium inflates a page's content stream whole when it extracts text, so a 5 MB file whose
one Flate stream holds 2 GB of spaces takes 2 GB and more. :func:`check_streams` finds
every stream in the raw bytes, and inflates the ones text extraction reads (content, form
XObjects, fonts, object streams; not images, which text extraction never decodes)
block by block without keeping the output, counting: past the document's inflate limit
(:attr:`fissure.limits.Limits.max_inflate_mb`), or past a bomb's ratio, the file is refused
before pdfium opens it. Streams it cannot read (encrypted, damaged, filters other than
Flate behind ASCII85/ASCIIHex) are left to pdfium and to the worker's memory cap.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib

from fissure import limits

_STREAM = re.compile(rb"stream(?:\r\n|\n|\r)")
_IMAGE = re.compile(rb"/Subtype\s*/Image\b")
_FILTERS = re.compile(rb"/Filter\s*(\[[^\]]*\]|/[A-Za-z0-9]+)")
_NAME = re.compile(rb"/([A-Za-z0-9]+)")
_DICT_REACH = 8192  # how far back from ``stream`` its dictionary may start
_BLOCK = 1 << 16
_OUT = 1 << 20


def check_streams(data: bytes, *, source: str) -> None:
    """Refuse a PDF whose streams would inflate past the limits.

    Args:
        data: The PDF's bytes.
        source: Its path or URI, for messages.

    Raises:
        LimitError: One stream past the ratio, or all of them together past
            ``max_inflate_mb``.
    """
    cap = limits.current().inflate_bytes
    total = 0
    for match in _STREAM.finditer(data):
        begin = match.end()
        head = data[max(0, match.start() - _DICT_REACH) : match.start()]
        obj = head.rfind(b"obj")
        if obj < 0 or not head.rstrip().endswith(b">>"):
            continue  # the word "stream" inside other content, not a stream
        dictionary = head[obj:]
        filters = _filters(dictionary)
        if "FlateDecode" not in filters or _IMAGE.search(dictionary):
            continue
        end = data.find(b"endstream", begin)
        raw = data[begin : end if end >= 0 else len(data)]
        what = f"{source}: PDF: stream object {_number(head, obj)}"
        total += _inflated(raw, filters, what, cap - total)


def _filters(dictionary: bytes) -> list[str]:
    found = _FILTERS.search(dictionary)
    if not found:
        return []
    return [n.decode("ascii") for n in _NAME.findall(found.group(1))]


def _number(head: bytes, obj: int) -> str:
    words = head[max(0, obj - 24) : obj].split()
    return " ".join(w.decode("ascii", "replace") for w in words[-2:]) or "?"


def _inflated(raw: bytes, filters: list[str], what: str, room: int) -> int:
    """The stream's inflated size, counted without keeping it; raises past the limits."""
    flate = filters.index("FlateDecode")
    for name in filters[:flate]:  # text encodings in front of the compression
        decoded = _decode_text(name, raw)
        if decoded is None:
            return 0
        raw = decoded
    inflater = zlib.decompressobj()
    size = 0
    try:
        for at in range(0, len(raw), _BLOCK):
            pending = raw[at : at + _BLOCK]
            while pending:
                size += len(inflater.decompress(pending, _OUT))
                pending = inflater.unconsumed_tail
                _check(size, len(raw), what, room)
            if inflater.eof:
                break
    except zlib.error:
        pass  # damaged or encrypted: what inflated so far is counted, pdfium decides the rest
    return size


def _check(size: int, stored: int, what: str, room: int) -> None:
    if size > room:
        raise limits.inflate_error(f"{what} (with the streams before it)", size, stored)
    if limits.current().is_bomb(size, stored):
        raise limits.inflate_error(what, size, stored)


def _decode_text(name: str, raw: bytes) -> bytes | None:
    try:
        if name in ("ASCII85Decode", "A85"):
            body = raw.strip()
            body = body[: body.find(b"~>")] if b"~>" in body else body
            return base64.a85decode(body.removeprefix(b"<~"), ignorechars=b" \t\r\n\f\x00")
        if name in ("ASCIIHexDecode", "AHx"):
            body = b"".join(raw.split(b">", 1)[0].split())
            return binascii.unhexlify(body + b"0" * (len(body) % 2))
    except (ValueError, binascii.Error):
        return None
    return None
