"""Turning a request into spooled files, without reading any of it whole into memory.

A multipart body is parsed as it streams in (``python-multipart``'s push parser): each part
of the field ``files`` goes straight into the spool, hashed and counted, and the request is
refused the moment a file, the body or the number of files is over its limit. The files are
made durable later, together with their job rows (:mod:`fissure.serve.commits`). Only the
first bytes of each file are sniffed here (binary without a parser → 415); parsing,
including of archive and XML formats, happens in the engine's workers under their limits.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from python_multipart.multipart import MultipartParser, parse_options_header

from fissure.detect import detect, is_textual
from fissure.detect import mimes as m
from fissure.errors import FissureError
from fissure.parse.registry import parser_for
from fissure.serve.jobs import safe_name
from fissure.serve.spool import Incoming, Spool, Spooled, TooLarge
from fissure.source.protocol import Item

FIELD = "files"


class Refused(FissureError):
    """A request the API turns down, with its HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Received:
    """One file of a request: its sanitised name, what it is in the spool, and, while it is
    not durable yet, the upload that :meth:`Incoming.finish` makes durable (``None`` once it
    is)."""

    name: str
    spooled: Spooled
    pending: Incoming | None = None


def unsupported(head: bytes, name: str) -> str | None:
    """Why a file cannot be parsed, judged from its first bytes and name; ``None`` if it may.

    A zip container passes when its first entries look like a DOCX (``[Content_Types].xml``,
    ``word/``) or its name ends in ``.docx``: the workers look inside, under their limits.
    """
    found = detect(head, name)
    if found.mime == m.ZIP and (b"[Content_Types].xml" in head or b"word/" in head):
        return None
    if parser_for(found.mime) is not None or is_textual(found.mime):
        return None
    return (
        f"{name} is {found.mime} ({found.reason}); fissure has no parser for it: send "
        "text, Markdown, code, HTML, PDF, DOCX or a notebook"
    )


@dataclass
class _Part:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    name: str = ""
    filename: str | None = None
    incoming: Incoming | None = None


class MultipartFiles:
    """Streams a ``multipart/form-data`` body into the spool.

    Args:
        spool: Where the files go.
        content_type: The request's Content-Type (it carries the boundary).
        max_file_bytes: Largest file.
        max_request_bytes: Largest body.
        max_files: Most files.

    Raises:
        Refused: 400 when the body is not multipart with a boundary.
    """

    def __init__(
        self,
        spool: Spool,
        content_type: str,
        *,
        max_file_bytes: int,
        max_request_bytes: int,
        max_files: int,
    ) -> None:
        _, params = parse_options_header(content_type)
        boundary = params.get(b"boundary")
        if not boundary:
            raise Refused(400, "multipart/form-data without a boundary: send files as a form")
        self.spool = spool
        self.max_file_bytes = max_file_bytes
        self.max_request_bytes = max_request_bytes
        self.max_files = max_files
        self.received: list[Received] = []
        self._finished: list[tuple[str, Incoming]] = []
        self._part = _Part()
        self._header = (b"", b"")
        self._total = 0
        try:
            self._parser = MultipartParser(
                boundary,
                {
                    "on_part_begin": self._begin,
                    "on_header_field": self._field,
                    "on_header_value": self._value,
                    "on_header_end": self._header_end,
                    "on_headers_finished": self._headers_done,
                    "on_part_data": self._data,
                    "on_part_end": self._end,
                },
            )
        except Exception as exc:  # a boundary python-multipart will not take
            raise Refused(400, f"bad multipart boundary: {exc}") from None

    async def read(self, stream: AsyncIterator[bytes]) -> list[Received]:
        """Consume the body; returns the files, whole in the spool but not durable yet
        (each :attr:`Received.pending` is finished when its job is committed).

        Raises:
            Refused: 413 over a limit, 400 for a malformed body or no files; every file of
                the request is then dropped (nothing is queued).
        """
        try:
            async for data in stream:
                self._total += len(data)
                if self._total > self.max_request_bytes:
                    raise Refused(
                        413,
                        f"the request is over the {self.max_request_bytes:,}-"
                        "byte limit (max_request_bytes)",
                    )
                self._parser.write(data)
                self._settle()
            self._parser.finalize()
            self._settle()
        except TooLarge as exc:
            self._abort()
            name = self._part.filename or "a file"
            raise Refused(413, f"{name}: {exc} (max_file_bytes)") from None
        except Refused:
            self._abort()
            raise
        except Exception as exc:  # python-multipart's parse errors
            self._abort()
            raise Refused(400, f"malformed multipart body: {exc}") from None
        if self._part.incoming is not None:
            self._abort()
            raise Refused(400, "the multipart body ended inside a file")
        if not self.received:
            raise Refused(400, f"no files: send them in the form field {FIELD!r}")
        return self.received

    def _settle(self) -> None:
        """Judge the files that ended by their first bytes (415 for one without a parser)."""
        while self._finished:
            name, incoming = self._finished.pop(0)
            spooled = incoming.complete()
            self.received.append(Received(name, spooled, incoming))
            why = unsupported(spooled.head, name)
            if why is not None:
                raise Refused(415, why)

    def _abort(self) -> None:
        for _, incoming in self._finished:
            incoming.discard()
        self._finished.clear()
        for got in self.received:
            if got.pending is not None:
                got.pending.discard()
        self.received.clear()
        if self._part.incoming is not None:
            self._part.incoming.discard()
            self._part.incoming = None

    def _begin(self) -> None:
        self._part = _Part()

    def _field(self, data: bytes, start: int, end: int) -> None:
        self._header = (self._header[0] + data[start:end], self._header[1])

    def _value(self, data: bytes, start: int, end: int) -> None:
        self._header = (self._header[0], self._header[1] + data[start:end])

    def _header_end(self) -> None:
        name, value = self._header
        self._part.headers[name.strip().lower()] = value.strip()
        self._header = (b"", b"")

    def _headers_done(self) -> None:
        _, options = parse_options_header(self._part.headers.get(b"content-disposition", b""))
        self._part.name = options.get(b"name", b"").decode("utf-8", "replace")
        filename = options.get(b"filename")
        if self._part.name != FIELD:
            return  # other form fields are ignored
        if len(self.received) + len(self._finished) >= self.max_files:
            raise Refused(413, f"more than {self.max_files} files in one request (max_files)")
        self._part.filename = filename.decode("utf-8", "replace") if filename is not None else ""
        self._part.incoming = self.spool.incoming(self.max_file_bytes)

    def _data(self, data: bytes, start: int, end: int) -> None:
        if self._part.incoming is not None:
            self._part.incoming.write(data[start:end])

    def _end(self) -> None:
        incoming = self._part.incoming
        if incoming is None:
            return
        self._part.incoming = None
        self._finished.append((safe_name(self._part.filename), incoming))


def allowed(spec: str, roots: Sequence[Path], github: bool) -> None:
    """Check that the server may read ``spec``.

    Raises:
        Refused: 403 naming what the operator allows.
    """
    if spec.startswith("github:"):
        if not github:
            raise Refused(403, "this server does not read GitHub sources (allow_github)")
        return
    path = spec[len("git:") :].rsplit("@", 1)[0] if spec.startswith("git:") else spec
    if not path or not Path(path).is_absolute():
        raise Refused(403, f"{spec!r}: name an absolute path under an allowed root")
    where = Path(path).resolve()
    if not any(where.is_relative_to(r.resolve()) for r in roots):
        allowed_roots = ", ".join(str(r) for r in roots) or "none (allowed_roots is empty)"
        raise Refused(403, f"{spec!r} is not under a root this server reads: {allowed_roots}")


def read_source(
    spec: str, spool: Spool, roots: Sequence[Path], max_file_bytes: int, max_files: int
) -> tuple[list[tuple[Received, str]], list[tuple[str, str]]]:
    """Read a source the server may read into the spool: ``(file, origin)`` pairs, and the
    ``(name, reason)`` of every file left out (too large, unreadable, no parser, a link out
    of the allowed roots).

    Raises:
        Refused: 413 when the source has more than ``max_files`` files.
        InputError: The source cannot be opened.
    """
    from fissure.ingest import open_source

    source = open_source(spec, max_bytes=max_file_bytes)
    items = [_inside(i, roots) if source.origin.startswith("file:") else i for i in source.scan()]
    if len(items) > max_files:
        raise Refused(
            413,
            f"{spec} has {len(items)} files; at most {max_files} per request "
            "(max_files): name a smaller folder",
        )
    prefix = source.origin.removeprefix("file:")
    skipped = [(safe_name(_relative(i.source, prefix)), i.skip) for i in items if i.skip]
    files = []
    for item, data in source.fetch([i for i in items if not i.skip]):
        name = safe_name(_relative(item.source, prefix))
        if isinstance(data, Exception):
            skipped.append((name, str(data) or type(data).__name__))
            continue
        why = unsupported(data[:8192], name)
        if why is not None:
            skipped.append((name, why))
            continue
        files.append((Received(name, spool.put(data)), f"{source.origin}/{name}"))
    return files, skipped


def _inside(item: Item, roots: Sequence[Path]) -> Item:
    """The item, or it marked skipped when it resolves out of every root (a symlink)."""
    where = Path(item.ref).resolve()
    if any(where.is_relative_to(r.resolve()) for r in roots):
        return item
    return replace(item, skip="a link out of the allowed roots")


def _relative(source: str, prefix: str) -> str:
    if source.startswith(prefix + "/"):
        return source[len(prefix) + 1 :]
    return source.rsplit("/", 1)[-1]
