"""Zip-based formats (DOCX and other Office Open XML) checked before anything parses them.

A zip member can inflate a thousand times its stored size, and XML can declare entities
that expand exponentially (billion laughs). :func:`check_zip` refuses an archive before
the parser opens it when it has too many members, when a member declares more than the
document's inflate limit (:attr:`fissure.limits.Limits.max_inflate_mb`) or a bomb's
compression ratio, or when its XML carries a document type declaration (Office XML never
does; it is how entity expansion attacks start). Then every member is inflated once,
streamed and counted, so a header that lies about its size is caught too (``zipfile``
never returns more than the declared size, so the declared sizes bound what the parser
reads).
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib

from fissure import limits
from fissure.errors import InputError, LimitError

_BLOCK = 1 << 20
# A DTD may only appear in the prolog, before the root element.
_DOCTYPE = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.I)
_ROOT = re.compile(rb"<[A-Za-z_]")
_XML_NAMES = (".xml", ".rels", ".vml")


def check_zip(data: bytes, *, kind: str, source: str) -> None:
    """Refuse a zip archive that would inflate past the limits.

    Args:
        data: The archive's bytes.
        kind: The format, for messages (``"DOCX"``).
        source: The document's path or URI, for messages.

    Raises:
        LimitError: Too many members, a member past the inflate limit or ratio (declared or
            real), or XML with a document type declaration.
        InputError: The bytes are not a readable zip archive.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InputError(
            f"{source}: not a readable {kind} file (the zip container is damaged: {exc}); "
            "re-save it from its application"
        ) from None
    with archive:
        members = archive.infolist()
        if len(members) > limits.MAX_ENTRIES:
            raise LimitError(
                f"{source}: {kind}: {len(members)} members in the archive; the limit is "
                f"{limits.MAX_ENTRIES} (a document has a few dozen)"
            )
        cap = limits.current().inflate_bytes
        declared = 0
        for info in members:
            declared += info.file_size
            _check_size(source, kind, info.filename, info.file_size, info.compress_size, cap=cap)
            if declared > cap:
                raise limits.inflate_error(f"{source}: {kind}: the archive", declared, len(data))
        total = 0
        for info in members:
            total += _inflate(archive, info, source, kind, cap - total)


def _check_size(source: str, kind: str, name: str, size: int, stored: int, *, cap: int) -> None:
    if size > cap or limits.current().is_bomb(size, stored):
        raise limits.inflate_error(f"{source}: {kind}: {name}", size, stored)


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: str, kind: str,
             room: int) -> int:  # fmt: skip
    """Inflate one member block by block; its real size (at most ``room``)."""
    what = f"{source}: {kind}: {info.filename}"
    size = 0
    head = b"" if info.filename.lower().endswith(_XML_NAMES) else None
    try:
        with archive.open(info) as member:
            while block := member.read(_BLOCK):
                if head is not None and len(head) < 65536:
                    head += block[:65536]
                    _check_prolog(head, what)
                size += len(block)
                if size > room:
                    raise limits.inflate_error(what, size, info.compress_size)
                _check_size(source, kind, info.filename, size, info.compress_size, cap=room)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
        raise InputError(
            f"{what} cannot be inflated ({type(exc).__name__}: {exc}); the file is damaged "
            "or encrypted: re-save it from its application"
        ) from None
    return size


def _check_prolog(head: bytes, what: str) -> None:
    root = _ROOT.search(head)
    prolog = head[: root.start()] if root else head
    if _DOCTYPE.search(prolog):
        raise LimitError(
            f"{what} declares a DTD (<!DOCTYPE> or <!ENTITY>): Office XML never does, and "
            "entity declarations are how XML expansion attacks (billion laughs) start; refused"
        )
