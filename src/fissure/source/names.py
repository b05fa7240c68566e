"""Document names: stored losslessly as text, printed escaped.

On POSIX a file name is bytes. Python hands names that are not UTF-8 over as ``str`` with
lone surrogates (``os.fsdecode``'s ``surrogateescape``), which no UTF-8 store, JSON line or
terminal takes. Every layer (source ids, the manifest, Chroma metadata, JSONL) therefore
gets one text form of a path, :func:`path_name`:

- a path that is valid UTF-8 is written as itself, so every existing id stays the same;
- any other path is written as a ``file://`` URI (RFC 8089) of its absolute path in which
  ``%`` and every byte that is not UTF-8 is percent-encoded, and nothing else:
  ``/share/caf\\xe9.txt`` becomes ``file:///share/caf%E9.txt``.

A path as ``str(Path)`` never starts with ``file://`` (paths do not hold ``//``), so the
two forms cannot be confused, and :func:`path_bytes` turns either back into the exact
bytes to open. Names are printed through :func:`printable`, which escapes control and
format characters (ANSI escapes, newlines, bidirectional overrides) so that a name cannot
drive the terminal or forge output lines.
"""

from __future__ import annotations

import os
import unicodedata
from urllib.parse import unquote_to_bytes

URI = "file://"
# Unicode categories never written raw: controls, format characters (bidi overrides,
# zero-width marks), lone surrogates, private use, line and paragraph separators.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def is_text(name: str) -> bool:
    """Whether ``name`` can be stored as UTF-8 as it is (no lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def path_name(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> str:
    """The text a path is stored and reported under (see the module docstring)."""
    raw = os.fspath(path)
    text = os.fsdecode(raw)
    if is_text(text):
        return text
    # Absolute, but not normalised (abspath would drop "/./" and resolve "..", so two
    # spellings of one path would share a name and the bytes would not come back).
    data = os.fsencode(raw)
    absolute = os.fsdecode(data if data.startswith(b"/") else os.getcwdb() + b"/" + data)
    return URI + "".join(_escape_char(c) for c in absolute)


def _escape_char(c: str) -> str:
    if c == "%":
        return "%25"
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"%{code - 0xDC00:02X}"
    if 0xD800 <= code <= 0xDFFF:  # any other lone surrogate: its surrogatepass bytes
        return "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))
    return c


def text_name(name: str) -> str:
    """``name`` if it is storable text, else its lossless ``file://`` form."""
    return name if is_text(name) else path_name(name)


def path_bytes(name: str) -> bytes:
    """The exact bytes of the path a stored name stands for (to open it again)."""
    if name.startswith(URI):
        return unquote_to_bytes(name[len(URI) :])
    return os.fsencode(name)


def printable(text: str) -> str:
    """``text`` safe to print: control and format characters escaped as ``\\n``,
    ``\\x1b``, ``\\u202e`` …; a byte that was not UTF-8 as ``\\xe9``."""
    if text.isprintable():
        return text
    return "".join(_shown(c) for c in text)


def _shown(c: str) -> str:
    if c in _NAMED:
        return _NAMED[c]
    if unicodedata.category(c) not in _HIDDEN:
        return c
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
