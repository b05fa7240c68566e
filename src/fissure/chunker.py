"""The public entry points: :class:`Chunker` and :func:`chunk`."""

from __future__ import annotations

import contextlib
import os
import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from fissure import limits as bounds
from fissure._compiled import twin
from fissure.config import ChunkSettings
from fissure.embed.protocol import Embedder
from fissure.embed.window import heading_line
from fissure.errors import ConfigError, InputError
from fissure.limits import Limits
from fissure.size import Ruler, Sizer, as_sizer
from fissure.size.textindex import line_numbers
from fissure.split.runs import Piece
from fissure.split.semantic import Trace
from fissure.split.strategies import split_spans
from fissure.split.tables import TableHeads, has_tables, table_spans
from fissure.types import CHUNK_FIELDS, Block, Chunk, Document

_chunks = twin("fissure._chunks")  # the compiled loop for documents without a Block tree
_build_plain: Any = None if _chunks is None else _chunks.build_plain
_make: Any = None if _chunks is None else _chunks.make  # one Chunk, from C


# Texts shorter than this are split without the memory cap (see trace_document).
_GUARD_CHARS = 256 * 1024


@dataclass(frozen=True, slots=True)
class Traced:
    """Chunks, and the semantic trace behind them (``None`` for other strategies)."""

    chunks: list[Chunk]
    trace: Trace | None


class Chunker:
    """Splits documents with one set of validated settings.

    Build it once and reuse it: the tokenizer is loaded at construction and its counts
    are cached across documents.

    Args:
        settings: A :class:`ChunkSettings`; or pass its fields as keywords.
        sizer: A ready :class:`~fissure.size.Sizer` to use instead of ``settings.tokenizer``,
            or a tokenizer name or path, which replaces that setting (as ``tokenizer=``).
        embedder: For ``semantic``/``hybrid``: a ready embedder, or a spec string that
            replaces ``settings.embedder`` (the keyword is shared with that setting).
        limits: Bounds on each document (:class:`~fissure.limits.Limits`): here the
            memory cap (growth of this process while a document is parsed and split,
            4096 MiB by default; ``Limits(memory_mb=None)`` for none; a text under 256 K
            characters is split without it, as it needs little) and the inflate limit of
            compressed formats. A breach raises
            :class:`~fissure.errors.LimitError`. The time limit needs a worker process:
            ``fissure chunk`` and ``fissure ingest`` enforce it.

    Raises:
        ConfigError: The settings cannot work (the message says how to fix them).

    Example:
        >>> chunker = Chunker(strategy="recursive", max_tokens=200, tokenizer="chars")
        >>> [c.text for c in chunker.chunk("One.\\n\\nTwo.")]
        ['One.\\n\\nTwo.']
    """

    def __init__(
        self,
        settings: ChunkSettings | None = None,
        *,
        sizer: Sizer | str | None = None,
        embedder: Embedder | str | None = None,
        limits: Limits | None = None,
        **fields: Any,
    ) -> None:
        self.limits = limits or bounds.DEFAULT_LIMITS
        if isinstance(embedder, str):
            fields["embedder"], embedder = embedder, None
        if isinstance(sizer, str):
            fields["tokenizer"], sizer = sizer, None
        base = settings or ChunkSettings()
        self.settings = replace(base, **fields) if fields else base
        self.sizer = sizer or as_sizer(self.settings.tokenizer)
        self.embedder = embedder
        if self.settings.semantic and embedder is None:
            from fissure.embed import load_embedder

            self.embedder = load_embedder(self.settings.embedder)
        check_budget(self.settings, self.sizer)

    def chunk(self, text: str, *, source: str = "<text>", mime: str | None = None) -> list[Chunk]:
        """Chunk a string of text, parsed by its format as a file would be.

        Args:
            text: The text. A ``str`` only: PDF and DOCX are parsed from their bytes, so pass
                the file to :meth:`chunk_file` or its bytes to :func:`fissure.chunk`.
            source: The document's name, as a path names a file: each chunk's ``source``,
                the start of its ``context``, and the evidence for its format. With a name
                or ``mime``, the format is detected as for a file of that name holding
                ``text`` in UTF-8 (:func:`fissure.parse.parse_as_file`): ``mime``, else the
                extension, else the content (a shebang, JSON, HTML, Markdown signals), and
                that file would give the same chunks. The default ``"<text>"`` names no
                file: without ``mime`` the text is split as plain text, with no detection.
            mime: The format, over the extension: ``"text/markdown"``,
                ``"text/x-python"``, ``"text/html"``, ``"application/json"``, … (aliases
                such as ``"text/x-markdown"`` too).

        Offsets index the parsed document's text, which is ``text`` except for formats
        whose parser extracts the text (HTML, notebooks), as from a file.

        Raises:
            TypeError: ``text`` is not a ``str`` (bytes: use :func:`fissure.chunk`, which
                decodes them, or :meth:`chunk_file`).
            ConfigError: ``mime`` is not a type fissure knows (the message lists them).
            InputError: The format is parsed from bytes (PDF, DOCX), or the text is binary.

        Example:
            >>> chunker = Chunker(max_tokens=200, tokenizer="chars")
            >>> [c.headings for c in chunker.chunk("# Faults\\n\\nA fracture.", source="a.md")]
            [('Faults',)]
        """
        if not isinstance(text, str):
            raise TypeError(
                f"Chunker.chunk takes text as str, not {type(text).__name__}: decode bytes "
                "first (fissure.chunk(data) does), or pass a file to chunk_file"
            )
        if source == "<text>" and mime is None:
            return self.chunk_document(Document.from_text(text, source=source))
        from fissure.parse.registry import known_mime, parse_as_file

        if mime is not None:
            known_mime(mime)
        # Parsing, like splitting, takes memory in proportion to the text (trace_document).
        with contextlib.nullcontext() if len(text) < _GUARD_CHARS else self.guarded(source):
            return self.chunk_document(parse_as_file(text, source, mime))

    def chunk_document(self, document: Document) -> list[Chunk]:
        """Chunk a parsed document (its Block tree guides ``structural`` and ``hybrid``)."""
        return self.trace_document(document).chunks

    def trace_document(self, document: Document) -> Traced:
        """Chunk a document and keep what the cut selection saw (for ``semantic`` and
        ``hybrid``: atoms, distances, threshold), e.g. to visualise it."""
        if _blank(document.text):
            return Traced([], None)
        # Splitting takes memory in proportion to the text: a short one needs no cap (and
        # setting one costs more than chunking it).
        small = len(document.text) < _GUARD_CHARS
        with contextlib.nullcontext() if small else self.guarded(document.source):
            ruler = Ruler(document.text, self.sizer)
            strategy = self.settings.strategy
            blocks = document.blocks if strategy in ("structural", "hybrid") else ()
            place = self._placer(document)  # one per document: it walks the Block tree
            reserve = self._reserve(place)
            split = split_spans(self.settings, ruler, blocks, self.embedder, reserve)
            chunks = self._build(document, ruler, split.spans, split.pieces, place)
            return Traced(chunks, split.trace)

    @contextlib.contextmanager
    def guarded(self, source: str) -> Iterator[None]:
        """Run the block under this chunker's limits: the memory cap and the limits that
        parsers read (:func:`fissure.limits.current`); a breach raises
        :class:`~fissure.errors.LimitError`."""
        with (
            bounds.using(self.limits),
            bounds.memory_cap(self.limits.memory_mb, source, flag="Limits(memory_mb=…)"),
        ):
            yield

    def _reserve(self, place: _Placer | None) -> Callable[[int], int] | None:
        """Tokens that a chunk starting at a position must leave for what is embedded in
        front of it: the context line with ``prepend_context``, the headings line with
        ``embed_headings``, and always, for a chunk that continues a table, the context
        with the table's header row. ``None`` when none applies. ``place`` is the
        document's :meth:`_placer`."""
        prepend = self.settings.prepend_context
        headed = self.settings.embed_headings and place is not None and bool(place.blocks)
        if not (prepend or headed) and (place is None or place.tables is None):
            return None
        assert place is not None  # prepend_context on a document without blocks
        count = self.sizer.count
        # Without a line for every chunk only a position inside a table can owe a context
        # (its header row): elsewhere the answer is 0 without looking the position up.
        every = prepend or headed
        tables = [] if every else table_spans(place.blocks)
        firsts = [start for start, _ in tables]

        def reserve(position: int) -> int:
            if not every:
                k = bisect_right(firsts, position) - 1
                if k < 0 or position >= tables[k][1]:
                    return 0
            headings, *_, context, pinned = place(position, position + 1, {})
            if context and pinned:
                context = self._table_context(context)
            extra = count(context + "\n") if context and (prepend or pinned) else 0
            return extra + (count(heading_line(headings)) if headed and headings else 0)

        return reserve

    def _table_context(self, context: str) -> str:
        """A table chunk's context: the table's title (the breadcrumb's last) and its header
        row. With ``prepend_context`` the whole line (file › breadcrumb) comes first, as on
        every other chunk, while that takes at most half the budget. Else the title and
        header while they take at most half, else the header alone (still dropped later if
        even that is too long). The file name and the outer sections were only noise in
        the vector: on PDFs from other projects' test corpora (``bench.pdf_external``),
        title and header alone found a cell with its header for 0.671 of the questions
        against 0.637 with the whole line."""
        half = (self.settings.budget - self.settings.overlap_tokens) // 2
        crumb, _, header = context.rpartition("\n")
        short = f"{crumb.rpartition(' › ')[2]}\n{header}"
        whole = (context,) if self.settings.prepend_context else ()
        for candidate in (*whole, short, header):
            if candidate.strip() and self.sizer.count(candidate + "\n") <= half:
                return candidate.strip("\n")
        return context

    def _placer(self, document: Document) -> _Placer | None:
        """Where chunks sit in the document's Block tree; table headers are carried only
        by the strategies that keep tables whole."""
        if not document.blocks and not self.settings.prepend_context:
            return None
        tables = None
        if self.settings.strategy in ("structural", "hybrid") and has_tables(document.blocks):
            tables = TableHeads(document.text, document.blocks)
        return _Placer(document.text, document.blocks, _name(document.source), tables)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Only where to cut: the ``(start, end)`` of each chunk of ``text``.

        The same cuts as :meth:`chunk` without building Chunk objects; ``text[s:e]`` is
        each chunk's text.
        """
        if _blank(text):
            return []
        return split_spans(self.settings, Ruler(text, self.sizer), (), self.embedder).spans

    def chunk_file(self, path: str | os.PathLike[str], *, mime: str | None = None) -> list[Chunk]:
        """Read, detect, parse and chunk a file (``mime`` overrides detection).

        Raises:
            InputError: The file cannot be read, or is binary with no parser.
            LimitError: The file went past this chunker's ``limits``.
        """
        with self.guarded(str(path)):
            return self.chunk_document(load_document(path, mime=mime))

    def _build(
        self,
        document: Document,
        ruler: Ruler,
        spans: list[tuple[int, int]],
        pieces: list[Piece],
        placer: _Placer | None,
    ) -> list[Chunk]:
        if not spans:
            return []
        text, doc_id, source = document.text, document.id, document.source
        lines = line_numbers(text, spans)
        name = _name(source)
        fallback = document.metadata.get("fallback")
        strategy = self.settings.strategy
        place = placer if document.blocks else None
        if place is None and _build_plain is not None and not self.settings.prepend_context:
            return _build_plain(  # type: ignore[no-any-return]
                Chunk,
                CHUNK_FIELDS,
                text,
                spans,
                pieces,
                lines,
                doc_id,
                strategy,
                source,
                name,
                fallback,
                ruler.count,
            )
        plain: _Place = ((), None, None, None, name, False)
        chunks = []
        last = len(pieces) - 1
        for i, (s, e) in enumerate(spans):
            piece = pieces[i]
            if i < last:
                after = pieces[i + 1]
                meta: dict[str, Any] = {"cut": after.cut.name}
                if after.reason:
                    meta["reason"] = after.reason
            else:
                meta = {"cut": "end"}
            if piece.oversize:
                meta["oversize"] = piece.oversize
            if fallback:
                meta["fallback"] = fallback
            headings, entity, page, cell, context, pinned = place(s, e, meta) if place else plain
            if context and pinned:
                context = self._table_context(context)
            size = piece.size if piece.start == s and piece.end == e else ruler.count(s, e)
            self._count_lines(meta, size, headings, context, pinned)
            values = (text[s:e], s, e, doc_id, i, size, lines[i], strategy, source, headings,
                      entity, page, cell, context, meta)  # fmt: skip
            chunks.append(Chunk(*values) if _make is None else _make(Chunk, CHUNK_FIELDS, values))
        return chunks

    def _count_lines(
        self,
        meta: dict[str, Any],
        size: int,
        headings: tuple[str, ...],
        context: str | None,
        pinned: bool,
    ) -> None:
        """Say in ``meta`` which lines embedded in front of a chunk of ``size`` tokens were
        counted in its budget: ``context_tokens`` (the context, with ``prepend_context`` or
        a table's header row), ``headings_tokens`` (the headings line, with
        ``embed_headings``); or, where one does not fit, ``context_dropped`` /
        ``headings_dropped`` and why (that line is then not embedded)."""
        budget, overlap = self.settings.budget, self.settings.overlap_tokens
        if context and (pinned or self.settings.prepend_context):
            extra = self.sizer.count(context + "\n")
            if size + extra <= budget:
                meta["context_tokens"] = extra
                size += extra
            else:
                meta["context_dropped"] = _why_dropped("context", extra, budget - overlap)
        if headings and self.settings.embed_headings:
            extra = self.sizer.count(heading_line(headings))
            if size + extra <= budget:
                meta["headings_tokens"] = extra
            else:
                meta["headings_dropped"] = _why_dropped("headings line", extra, budget - overlap)


def _why_dropped(line: str, extra: int, room: int) -> str:
    if 2 * extra > room:
        return f"{line} over half the budget"
    return "no room beside a unit that fills the budget"


def check_budget(settings: ChunkSettings, sizer: Sizer) -> None:
    """Raise :class:`ConfigError` when ``settings`` budget is too small for ``sizer`` (the
    check :class:`Chunker` makes when it is built)."""
    if settings.budget < sizer.min_budget:
        raise ConfigError(
            f"max_tokens={settings.budget} is too small for {sizer.name}: one "
            f"character can take {sizer.min_budget} tokens; use at least that"
        )


def _blank(text: str) -> bool:
    """Whether ``text`` has nothing but whitespace (without copying it, as strip would)."""
    return not text or text.isspace()


# Block facts worth carrying onto the chunks inside the block.
_BLOCK_KEYS = frozenset({"lang", "path", "header", "warnings", "pdf_fallback", "docx_fallback"})
_NONE: dict[str, Any] = {}  # no block facts to carry (only ever read)


# headings, entity, page, cell, context, and whether the context must be embedded.
_Place = tuple[tuple[str, ...], str | None, int | None, int | None, str | None, bool]
# What the chunks in one block share: headings, entity, context (without a table header),
# page, cell, and the block facts carried onto them.
_Facts = tuple[tuple[str, ...], str | None, str | None, Any, Any, dict[str, Any]]


class _Placer:
    """Where a chunk sits in the Block tree: breadcrumb, entity, page, cell, context.

    Every chunk carries these, so each is bounded (:mod:`fissure.limits`): a title to
    ``MAX_HEADING_CHARS``, the breadcrumb to ``MAX_HEADINGS`` titles, an entity name to
    ``MAX_ENTITY_CHARS``; one chunk's metadata stays a few KB whatever the document holds
    (a JSON document with 30 levels of 10 KB keys would otherwise copy 300 KB onto each of
    its chunks). Chunks in the same block share one breadcrumb.

    With ``tables``, a chunk that starts inside a table after its header row gets the
    breadcrumb and that row as its context, which must then be embedded (``pinned``); so
    does a chunk that holds a table's header stacked over several printed lines (the
    header joined column by column, which its lines do not spell), where it fits.
    """

    def __init__(
        self,
        text: str,
        blocks: Sequence[Block],
        name: str | None,
        tables: TableHeads | None = None,
    ) -> None:
        self.text = text
        self.blocks = blocks
        self.name = name
        self.tables = tables
        self.starts_of: dict[int, list[int]] = {}
        self.places: dict[int, _Facts] = {}  # by the innermost block's identity

    def __call__(self, start: int, end: int, meta: dict[str, Any]) -> _Place:
        if not self.blocks:
            return (), None, None, None, self.name, False
        trail = _trail(self.text, self.blocks, start, end, self.starts_of)
        if not trail:
            return (), None, None, None, self.name, False
        innermost = trail[-1]
        facts = self.places.get(id(innermost))
        if facts is None:
            facts = self.places[id(innermost)] = self._place(trail)
        headings, entity, context, page, cell, carried = facts
        meta["block"] = innermost.kind
        if carried:
            meta.update(carried)
        if self.tables is None:
            return headings, entity, page, cell, context, False
        header = self._header(trail, start, end)
        if header:
            context = f"{context}\n{header}" if context else header
        return headings, entity, page, cell, context, header is not None

    def _place(self, trail: list[Block]) -> _Facts:
        """What every chunk whose trail is ``trail`` carries; the trail is the path to its
        innermost block, so this is worked out once per block."""
        titles = [b.title for b in trail if b.title and b.kind != "heading"]
        if len(titles) > bounds.MAX_HEADINGS:  # the outermost two and the innermost ones
            keep = bounds.MAX_HEADINGS - 3
            titles = [*titles[:2], "…", *titles[-keep:]]
        headings = tuple([_short(t, bounds.MAX_HEADING_CHARS) for t in titles])
        entity = _inherited(trail, "entity")
        if isinstance(entity, str):
            entity = _short(entity, bounds.MAX_ENTITY_CHARS)
        context = " › ".join([x for x in (self.name, *headings) if x]) or None
        page, cell = _inherited(trail, "page"), _inherited(trail, "cell")
        own = trail[-1].metadata
        carried = {k: _short(v, bounds.MAX_META_CHARS)
                   for k, v in own.items() if k in _BLOCK_KEYS} if own else _NONE  # fmt: skip
        return headings, entity, context, page, cell, carried

    def _header(self, trail: list[Block], start: int, end: int) -> str | None:
        if self.tables is None:
            return None
        for block in reversed(trail):
            if block.kind == "table":
                return self.tables.line_for(block, start)
        return self.tables.stacked_inside(start, end)


def _short(value: Any, limit: int) -> Any:
    """A string cut to ``limit`` characters (the last one an ellipsis); others as they are."""
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    return value


@lru_cache(maxsize=4096)
def _name(source: str) -> str | None:
    return Path(source).name if source != "<text>" else None


# Two letters in a row: words, not markers; a jupytext cell marker ("# %% [markdown]")
# is a marker even though it spells its cell type.
_WORDY = re.compile(r"^[ \t]*# %%(?: \[\w+\])?[ \t]*$|([^\W\d_]{2,})", re.M)


def _trail(
    text: str, blocks: Sequence[Block], start: int, end: int, starts_of: dict[int, list[int]]
) -> list[Block]:
    """The chain of nested blocks where a chunk ``[start, end)`` sits, outermost first.

    At each depth this is the block containing ``start``; when ``start`` lies in a gap
    between blocks and only punctuation or markers stand before the next block inside the
    chunk (a comma between JSON keys, a ``# %%`` cell marker), the chain ends with that
    block. ``starts_of`` caches each sibling list's start offsets (keyed by
    identity), so a document with many blocks is searched by bisection.
    """
    trail: list[Block] = []
    level = blocks
    while level:
        starts = starts_of.get(id(level))
        if starts is None:
            starts = starts_of[id(level)] = [b.start for b in level]
        k = bisect_right(starts, start) - 1
        if k < 0 or level[k].end <= start:
            # In a gap: when only punctuation and markers stand before the next block in
            # the chunk (",\n", "# %%"), the chunk is about that block.
            k += 1
            if k < len(level) and level[k].start < end and not _wordy(text, start, level[k].start):
                trail.append(level[k])
            break
        trail.append(level[k])
        level = level[k].children
    return trail


def _wordy(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` holds a word outside cell-marker lines."""
    return any(m.group(1) for m in _WORDY.finditer(text, start, end))


def _inherited(trail: list[Block], key: str) -> Any:
    for block in reversed(trail):
        metadata = block.metadata
        if key in metadata:
            return metadata[key]
    return None


def load_document(path: str | os.PathLike[str], *, mime: str | None = None) -> Document:
    """Read a file and parse it by its detected format (``mime`` overrides detection).

    Raises:
        InputError: The file cannot be read, or is binary with no parser.
    """
    from fissure.parse import parse

    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {p}: {exc.strerror or exc}") from exc
    return parse(data, str(p), mime)


def chunk(
    text_or_path: str | bytes | os.PathLike[str],
    *,
    source: str | None = None,
    mime: str | None = None,
    **settings: Any,
) -> list[Chunk]:
    """Chunk a string, raw bytes, or a file when given a ``pathlib.Path`` (strings are
    always text, never a path).

    A string is chunked by :meth:`Chunker.chunk`: with ``source`` or ``mime`` its format
    is detected as a file's, else it is plain text. Bytes with ``source`` or ``mime`` are
    parsed exactly as a file of that name (PDF and DOCX too); without either they are
    decoded as files are (UTF-8, a BOM's encoding, else cp1252) and chunked as plain text.
    Other keyword arguments are :class:`~fissure.config.ChunkSettings` fields.

    Args:
        text_or_path: The text, the document's bytes, or a path to read.
        source: The name of a string or bytes (see :meth:`Chunker.chunk`); its extension
            picks the format. A path names itself: ``source`` with one is a ``TypeError``.
        mime: The format, over the extension and the content (``"text/markdown"``,
            ``"text/x-python"``, ``"text/html"``, ``"application/json"``, …).

    Raises:
        ConfigError: A setting cannot work, or ``mime`` is not a type fissure knows.
        InputError: The file cannot be read, or the file or bytes are binary.
    """
    if mime is not None:
        from fissure.parse.registry import known_mime

        known_mime(mime)
    chunker = Chunker(**settings)
    if isinstance(text_or_path, os.PathLike):
        if source is not None:
            raise TypeError("fissure.chunk: a path is its own source; pass source= with text")
        return chunker.chunk_file(text_or_path, mime=mime)
    if isinstance(text_or_path, bytes | bytearray):
        data = bytes(text_or_path)
        if source is None and mime is None:
            from fissure.detect.decode import decode

            return chunker.chunk_document(Document.from_text(decode(data)[0], source="<bytes>"))
        from fissure.parse import parse

        name = source or "<bytes>"
        with chunker.guarded(name):  # as chunk_file: a binary format's parser is bounded
            return chunker.chunk_document(parse(data, name, mime))
    return chunker.chunk(text_or_path, source=source or "<text>", mime=mime)
