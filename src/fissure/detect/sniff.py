"""Decide a document's MIME type from its name and its first bytes, and say why.

Order matters and is the whole policy: a caller's override wins; binary signatures beat the
file name (a PDF named ``.txt`` is still a PDF, and a binary named ``.md`` must not be indexed
as Markdown); then the extension; then, for files without a known extension, a shebang and
a few content signals.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import PurePosixPath

from fissure.detect import mimes
from fissure.detect.decode import bom_encoding, unmarked_encoding
from fissure.types import Detection

_HEAD = 8192
# Past this size content sniffing does not try to parse a whole candidate JSON file.
_JSON_PROBE_LIMIT = 5_000_000

_SIGNATURES: tuple[tuple[bytes, str, str], ...] = (
    (b"\x7fELF", "application/x-executable", "ELF"),
    (b"\x89PNG\r\n\x1a\n", "image/png", "PNG"),
    (b"\xff\xd8\xff", "image/jpeg", "JPEG"),
    (b"GIF87a", "image/gif", "GIF"),
    (b"GIF89a", "image/gif", "GIF"),
    (b"\x1f\x8b", "application/gzip", "gzip"),
)

_MD_SIGNALS = {
    "heading": re.compile(r"^#{1,6}[ \t]+\S", re.M),
    "fence": re.compile(r"^ {0,3}(?:```|~~~)", re.M),
    "link": re.compile(r"\[[^\]\n]+\]\([^)\s]+\)"),
    "list": re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\S", re.M),
    "emphasis": re.compile(r"\*\*[^*\n]+\*\*|`[^`\n]+`"),
    "table": re.compile(r"^\|.*\|[ \t]*\n\|[ \t:|-]+\|", re.M),
}
_RST_DIRECTIVE = re.compile(r"^\.\. [\w:-]+::", re.M)
_RST_TITLE = re.compile(r"^[^\s].*\n([=\-~^\"'`#*+:.])\1{3,}[ \t]*$", re.M)
_SHEBANG = re.compile(r"#![ \t]*(\S+)(?:[ \t]+(\S+))?")


def suffix_of(source: str) -> str:
    """The lower-cased extension of a path or URL (``""`` if none)."""
    if "://" in source:
        source = re.split(r"[?#]", source.split("://", 1)[1], maxsplit=1)[0]
    name = PurePosixPath(source.replace("\\", "/")).name
    return PurePosixPath(name).suffix.lower()


def detect(data: bytes, source: str, mime: str | None = None) -> Detection:
    """Detect what a document is.

    Args:
        data: The document's bytes (only the first few KiB are examined, except that
            extension-less JSON is parsed to confirm it).
        source: Its path or URI; the extension is the main evidence for text formats.
        mime: A caller's override; it wins, after normalisation (aliases such as
            ``text/x-markdown`` map to fissure's names).

    Returns:
        The MIME type and a short human-readable reason.
    """
    if mime:
        return Detection(mimes.normalize(mime), f"given by the caller ({mime})")
    suffix = suffix_of(source)
    encoding = _text_encoding(data[:_HEAD])
    found = _by_signature(data, suffix, encoding)
    if found is not None:
        return found
    named = mimes.EXTENSIONS.get(suffix)
    if named is not None:
        return Detection(named, f"extension {suffix}")
    head = data[:_HEAD].decode(encoding or "utf-8", "replace")
    unknown = f"unknown extension {suffix}; " if suffix else "no extension; "
    found = _by_shebang(head) or _by_content(data, head)
    if found is not None:
        return Detection(found.mime, unknown + found.reason)
    if head.count("\ufffd") > 0.3 * max(len(head), 1):
        return Detection(mimes.BINARY, unknown + "mostly bytes that are not UTF-8")
    return Detection(mimes.PLAIN, unknown + "no format signals; plain text")


def _text_encoding(head: bytes) -> str | None:
    """The encoding a BOM names or, without one, that NUL bytes in a UTF-16/32 pattern show."""
    found = bom_encoding(head)
    if found is None and b"\x00" in head:
        found = unmarked_encoding(head)
    return found


def _by_signature(data: bytes, suffix: str, encoding: str | None) -> Detection | None:
    head = data[:_HEAD]
    if b"%PDF-" in head[:1024]:
        return Detection(mimes.PDF, "signature %PDF")
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        if suffix == ".docx":
            return Detection(mimes.DOCX, "zip container named .docx")
        if _zip_has(data, "word/document.xml"):
            return Detection(mimes.DOCX, "zip container holding word/document.xml")
        return Detection(mimes.ZIP, "signature PK (zip archive)")
    for signature, mime, name in _SIGNATURES:
        if head.startswith(signature):
            return Detection(mime, f"signature {name}")
    if encoding in (None, "utf-8") and b"\x00" in head:
        named = f" (named {suffix})" if suffix else ""
        return Detection(mimes.BINARY, f"NUL bytes in the first {_HEAD} bytes{named}")
    return None


def _zip_has(data: bytes, member: str) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return member in archive.namelist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return False


def _by_shebang(head: str) -> Detection | None:
    match = _SHEBANG.match(head.lstrip("\ufeff"))
    if match is None:
        return None
    program = match.group(1).rsplit("/", 1)[-1]
    if program == "env" and match.group(2):
        program = match.group(2)
    name = re.sub(r"[\d.]+$", "", program)  # python3.12 → python
    found = mimes.INTERPRETERS.get(name)
    return Detection(found, f"shebang names {program}") if found else None


def _by_content(data: bytes, head: str) -> Detection | None:
    stripped = head.lstrip("\ufeff \t\r\n")
    if stripped[:1] in ("{", "["):
        found = _json_kind(data)
        if found is not None:
            return found
    lower = stripped[:1024].lower()
    if lower.startswith("<?xml"):
        return Detection(mimes.XML, "content starts with <?xml")
    if lower.startswith(("<!doctype html", "<html")) or "<body" in lower or "<head" in lower:
        return Detection(mimes.HTML, "content has HTML markup")
    if stripped.startswith("%YAML"):
        return Detection(mimes.YAML, "content starts with %YAML")
    signals = [name for name, pattern in _MD_SIGNALS.items() if pattern.search(head)]
    if len(signals) >= 2:
        return Detection(mimes.MARKDOWN, "content has Markdown " + ", ".join(signals))
    if _RST_DIRECTIVE.search(head) or (_RST_TITLE.search(head) and not signals):
        return Detection(mimes.RST, "content has reStructuredText titles or directives")
    return None


def _json_kind(data: bytes) -> Detection | None:
    if len(data) > _JSON_PROBE_LIMIT:
        return Detection(mimes.JSON, "content starts like JSON (too large to confirm)")
    try:
        value = json.loads(data)
    except RecursionError:
        return Detection(mimes.JSON, "content is JSON (too deeply nested to confirm)")
    except ValueError:
        return None
    if isinstance(value, dict) and "cells" in value and "nbformat" in value:
        return Detection(mimes.NOTEBOOK, "content is JSON with notebook cells")
    return Detection(mimes.JSON, "content is JSON")
