"""THE routing table: MIME type → parser. One explicit table, in this one file.

Entries name their parser by dotted path (``"fissure.parse.markdown:parse"``) so a format's
module, and its dependencies, load only when a document of that format arrives. Two parser
signatures exist: text parsers take ``(text: str, *, source: str)`` and binary parsers take
``(data: bytes, *, source: str)``; a route may also ask for ``mime=`` (the code parser
serves many languages). Every fallback is loud: it is recorded in
``Document.metadata["fallback"]``, and a parser that raises never crashes a run.

Add a format with one call::

    from fissure.parse.registry import register

    def parse_toml(text: str, *, source: str) -> Document: ...

    register("application/toml", parse_toml)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from fissure.detect import decode, detect, is_textual, normalize
from fissure.detect import mimes as m
from fissure.errors import ConfigError, InputError
from fissure.parse import text as plain
from fissure.types import Detection, Document

Parser = Callable[..., Document]


@dataclass(frozen=True, slots=True)
class Route:
    """How one MIME type is parsed.

    Attributes:
        target: The parser, or its dotted path ``"package.module:function"``.
        binary: The parser takes the raw bytes instead of decoded text.
        pass_mime: The parser also takes ``mime=`` (one parser for several formats).
    """

    target: str | Parser
    binary: bool = False
    pass_mime: bool = False

    def load(self) -> Parser:
        """The parser function, importing its module on first use."""
        if not isinstance(self.target, str):
            return self.target
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


_CODE = Route("fissure.parse.code:parse", pass_mime=True)

_ROUTES: dict[str, Route] = {
    m.PLAIN: Route("fissure.parse.text:parse"),
    m.MARKDOWN: Route("fissure.parse.markdown:parse"),
    m.PYTHON: Route("fissure.parse.python:parse"),
    m.RST: Route("fissure.parse.rst:parse"),
    m.JSON: Route("fissure.parse.data:parse_json"),
    m.YAML: Route("fissure.parse.data:parse_yaml"),
    m.CSV: Route("fissure.parse.csv:parse"),
    m.TSV: Route("fissure.parse.csv:parse"),
    m.NOTEBOOK: Route("fissure.parse.notebook:parse"),
    m.HTML: Route("fissure.parse.html:parse"),
    m.PDF: Route("fissure.parse.pdf:parse", binary=True),
    m.DOCX: Route("fissure.parse.docx:parse", binary=True),
    **{mime: _CODE for mime in m.CODE.values()},
}


def register(mime: str, parser: str | Parser, *, binary: bool = False) -> None:
    """Route a MIME type to a parser, replacing any existing route.

    Args:
        mime: The MIME type, e.g. ``"application/toml"`` (normalised: lower case, no
            parameters, aliases resolved). Make :func:`fissure.detect.detect` produce it by
            passing ``mime=`` to :func:`parse`, or extend
            ``fissure.detect.mimes.EXTENSIONS``.
        parser: ``parse(text, *, source) -> Document``, or with ``binary=True``
            ``parse(data, *, source) -> Document``; or the dotted path
            ``"package.module:function"`` of one, imported on first use.
        binary: The parser takes raw bytes rather than decoded text.
    """
    _ROUTES[normalize(mime)] = Route(parser, binary=binary)


def parser_for(mime: str) -> Route | None:
    """The route for a MIME type, or ``None`` when documents of it are parsed as plain text
    (if they are text) or refused (if they are not)."""
    return _ROUTES.get(normalize(mime))


def parse(data: bytes, source: str, mime: str | None = None) -> Document:
    """Detect, decode and parse a document.

    Args:
        data: The document's bytes.
        source: Its path or URI (the extension is evidence for detection).
        mime: Overrides detection.

    Returns:
        The parsed document. Its metadata records ``detection`` (why this MIME type),
        ``encoding`` (with ``encoding_fallback`` when it was not UTF-8) and ``fallback``
        whenever a coarser parser had to stand in.

    Raises:
        InputError: The document is binary with no parser for its type, or its parser
            failed and its bytes are not text either.
    """
    detection = detect(data, source, mime)
    route = _ROUTES.get(detection.mime)
    meta: dict[str, Any] = {"detection": detection.reason}
    if route is not None and route.binary:
        document = _run_binary(route, data, source, detection.mime, meta)
    else:
        _refuse_unparsed(route, detection, source)
        try:
            text, encoding = decode_for(detection.mime, data)
        except InputError as exc:
            raise InputError(f"{source}: {exc}") from None
        meta["encoding"] = encoding["encoding"]
        if "fallback" in encoding:
            meta["encoding_fallback"] = encoding["fallback"]
        document = _parse_decoded(route, text, source, detection.mime, meta)
    return replace(document, mime=detection.mime, metadata={**document.metadata, **meta})


def parse_as_file(text: str, source: str = "<text>", mime: str | None = None) -> Document:
    """Parse a string as :func:`parse` parses a file named ``source`` that holds its UTF-8
    bytes: the same detection (``mime``, else the extension, else the content) and the
    same parser, so both give the same document.

    The string is not decoded again (a leading BOM stays, a PEP 263 coding line is not
    obeyed). ``document.text == text`` except where the parser extracts text (HTML,
    notebooks), as it does from a file; :func:`parse_text` keeps ``text`` always.

    Raises:
        InputError: The format is parsed from bytes (PDF, DOCX): pass those instead; or the
            string is binary (NUL characters) with no parser for it.
    """
    detection = detect(text.encode("utf-8", "surrogatepass"), source, mime)
    route = _ROUTES.get(detection.mime)
    if route is not None and route.binary:
        raise InputError(
            f"{source} is {detection.mime} ({detection.reason}), which is parsed from its "
            "bytes, not from a str: pass the file to Chunker.chunk_file, or its bytes to "
            "fissure.chunk(data, source=...)"
        )
    _refuse_unparsed(route, detection, source)
    meta: dict[str, Any] = {"detection": detection.reason}
    document = _parse_decoded(route, text, source, detection.mime, meta)
    return replace(document, mime=detection.mime, metadata={**document.metadata, **meta})


def known_mime(mime: str) -> str:
    """``mime`` normalised (:func:`fissure.detect.normalize`) when fissure knows it: it has
    a route, or detection can give it (``application/xml``, parsed as plain text).

    Raises:
        ConfigError: fissure does not know ``mime``; the message lists the types it does.
    """
    name = normalize(mime)
    known = {*_ROUTES, *m.EXTENSIONS.values()}
    if name not in known:
        raise ConfigError(
            f"unknown mime {mime!r}: use one of {', '.join(sorted(known))} (or an alias "
            "such as text/x-markdown), or add a parser with fissure.parse.register"
        )
    return name


def parse_text(text: str, source: str = "<text>", mime: str | None = None) -> Document:
    """Parse text that is already decoded (another library loaded it) by its format.

    The format is detected as for :func:`parse` (the source's extension, the content;
    ``mime`` overrides). Only a parser that indexes the text itself is used — Markdown,
    code, reStructuredText, JSON, YAML, CSV, plain text — so ``document.text == text``
    always; a format whose parser extracts text (HTML, notebooks) or reads bytes (PDF,
    DOCX) is parsed as plain text, and ``metadata["fallback"]`` says so.
    """
    detection = detect(text.encode("utf-8", "surrogatepass"), source, mime)
    route = _ROUTES.get(detection.mime)
    meta: dict[str, Any] = {"detection": detection.reason}
    document = None
    if route is None:
        meta["fallback"] = f"no parser for {detection.mime}; parsed as plain text"
    elif route.binary:
        meta["fallback"] = f"{detection.mime} is parsed from its bytes; parsed as plain text"
    else:
        document = _run_text(route, text, source, detection.mime, meta)
        if document.text != text:  # the parser extracts text (HTML, notebooks)
            meta["fallback"] = f"the {detection.mime} parser extracts text; parsed as plain text"
            document = None
    if document is None:
        document = plain.parse(text, source=source)
    return replace(document, mime=detection.mime, metadata={**document.metadata, **meta})


def _refuse_unparsed(route: Route | None, detection: Detection, source: str) -> None:
    """Raise when a document is not text and no parser reads its type."""
    if route is None and not is_textual(detection.mime):
        raise InputError(
            f"{source} is {detection.mime} ({detection.reason}) and fissure has no parser "
            "for it; pass mime= if it is really text, or add a parser with "
            "fissure.parse.registry.register"
        )


def _parse_decoded(
    route: Route | None, text: str, source: str, mime: str, meta: dict[str, Any]
) -> Document:
    """A text document by its route; without one, plain text, and ``meta`` says so."""
    if route is None:
        meta["fallback"] = f"no parser for {mime}; parsed as plain text"
        return plain.parse(text, source=source)
    return _run_text(route, text, source, mime, meta)


def _run_text(route: Route, text: str, source: str, mime: str, meta: dict[str, Any]) -> Document:
    try:
        parser = route.load()
        if route.pass_mime:
            return parser(text, source=source, mime=mime)
        return parser(text, source=source)
    except MemoryError:  # the document's memory cap: a limit, not a malformed file
        raise
    except Exception as exc:  # a malformed file must never crash a run; say why instead
        meta["fallback"] = f"{_describe(route, exc)}; parsed as plain text"
        return plain.parse(text, source=source)


def _run_binary(
    route: Route, data: bytes, source: str, mime: str, meta: dict[str, Any]
) -> Document:
    """A binary format's parser. When it fails there is no text to fall back to: its
    bytes (PDF syntax, a zip archive) would only be chunked as junk, so the failure is
    the answer."""
    try:
        parser = route.load()
        if route.pass_mime:
            return parser(data, source=source, mime=mime)
        return parser(data, source=source)
    except (InputError, MemoryError):
        raise
    except Exception as exc:
        raise InputError(f"{source}: {_describe(route, exc)}") from None


def decode_for(mime: str, data: bytes) -> tuple[str, dict[str, str]]:
    """Decode text; Python source honours its PEP 263 coding declaration."""
    if mime == m.PYTHON and data[:2] != b"\xef\xbb" and b"coding" in data[:400]:
        import io
        import tokenize

        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            if encoding not in ("utf-8", "utf-8-sig"):
                return data.decode(encoding), {"encoding": encoding}
        except (SyntaxError, LookupError, UnicodeDecodeError):
            pass  # a wrong declaration: decode as any other text
    return decode(data)


def _describe(route: Route, exc: Exception) -> str:
    name = route.target if isinstance(route.target, str) else _name(route.target)
    if isinstance(exc, ImportError):
        return f"parser {name} is not available ({type(exc).__name__}: {exc})"
    message = str(exc).splitlines()[0][:300] if str(exc) else ""
    return f"parser {name} failed ({type(exc).__name__}: {message})"


def _name(parser: Parser) -> str:
    return f"{getattr(parser, '__module__', '?')}:{getattr(parser, '__qualname__', parser)}"
