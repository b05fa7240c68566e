"""DOCX → text with sections by heading style, paragraphs, lists and tables.

python-docx reads the body in order. Paragraphs styled ``Title`` or ``Heading 1`` …
``Heading 9`` (or a style based on one) start nested ``section`` blocks; list paragraphs
(a ``List …`` style or Word numbering) become ``item``\\s of a ``list``; tables become
``table`` blocks with one ``row`` per row, cells joined by `` | ``. Headers, footers,
comments and footnotes are not part of the text.
"""

from __future__ import annotations

import html
import io
import re
import zipfile
from enum import IntEnum
from typing import Any

from fissure import limits
from fissure.errors import InputError
from fissure.parse.archive import check_zip
from fissure.parse.captions import caption_title
from fissure.parse.outline import LINE_GAP, Outline
from fissure.types import Document

__all__ = ["DocxLevel", "parse"]


class DocxLevel(IntEnum):
    """Rank of the boundary in front of a DOCX block; lower is stronger."""

    TITLE = 0
    HEADING_1 = 1
    HEADING_2 = 2
    HEADING_3 = 3
    HEADING_4 = 4
    HEADING_5 = 5
    HEADING_6 = 6
    HEADING_7 = 7
    HEADING_8 = 8
    HEADING_9 = 9
    BLOCK = 10  # paragraph, list, table
    LINE = 11  # list item, table row


_HEADING = re.compile(r"heading ([1-9])")
_MAX_STYLE_CHAIN = 16  # based-on chains are short; this guards against cycles


def parse(data: bytes, *, source: str, mime: str = "") -> Document:
    """Extract a DOCX file's text and its section structure.

    Args:
        data: The file's bytes.
        source: Path or URI, recorded on the Document.
        mime: Recorded on the Document (default: the DOCX MIME type).

    Returns:
        A Document whose blocks are ``section`` (title = heading text, first child the
        ``heading``), ``paragraph``, ``list`` (``item`` children) and ``table`` (``row``
        children). ``metadata["title"]`` is the document title property when set;
        ``metadata["warnings"]`` names tables that could not be read.

    Degrade, never drop: where python-docx cannot open the file or reading its structure
    fails, the paragraphs of ``word/document.xml`` are read as they stand (also when the
    XML is cut short), one ``paragraph`` block each, and ``metadata["fallback"]`` (and
    each block's ``docx_fallback``) says why.

    Raises:
        InputError: The bytes hold no DOCX text at all.
        LimitError: The archive would inflate past the limits (see
            :func:`fissure.parse.archive.check_zip`).
    """
    import docx

    mime = mime or "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    data = bytes(data)
    check_zip(data, kind="DOCX", source=source)
    try:
        document = docx.Document(io.BytesIO(data))
        content = list(document.iter_inner_content())
        text, blocks, writer = _structured(content)
    except MemoryError:
        raise
    except Exception as exc:  # zip, XML and package errors, or ours: degrade to its text
        return _plain(data, source, mime, exc)
    metadata: dict[str, Any] = {}
    title = (document.core_properties.title or "").strip()
    if title:
        metadata["title"] = title
    if writer.warnings:
        metadata["warnings"] = writer.warnings
    if writer.out.capped:
        metadata["fallback"] = f"over {limits.MAX_BLOCKS:,} blocks: the rest has none"
    return Document.from_text(text, source=source, mime=mime, blocks=blocks, metadata=metadata)


def _structured(content: list[Any]) -> tuple[str, tuple[Any, ...], _Writer]:
    """The text and blocks of the body's items, in order."""
    writer = _Writer()
    captions = _captions(content)
    taken = set(captions.values())
    for k, item in enumerate(content):
        if hasattr(item, "rows"):
            writer.table(item, content[captions[k]] if k in captions else None)
        elif k not in taken:
            writer.paragraph(item)
    text, blocks = writer.out.finish()
    return text, blocks, writer


# The body's words, paragraph ends, tabs and breaks, read from the XML as it stands (also
# when it is cut short or python-docx refuses the package).
_RUN = re.compile(rb"<w:t(?:\s[^>]*)?>([^<]*)</w:t>|(</w:p>)|(<w:tab/>)|(<w:br/>|<w:cr/>)")


def _plain(data: bytes, source: str, mime: str, cause: Exception) -> Document:
    """The document's paragraphs read from ``word/document.xml`` without structure, where
    python-docx or the structured reading failed; refused only when there is no text."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            xml = archive.read("word/document.xml")
    except Exception:
        xml = b""
    parts: list[str] = []
    for m in _RUN.finditer(xml):
        if m.group(1) is not None:
            parts.append(html.unescape(m.group(1).decode("utf-8", "replace")))
        else:
            parts.append("\n\n" if m.group(2) else "\t" if m.group(3) else "\n")
    paragraphs = [" ".join(p.split()) for p in "".join(parts).split("\n\n")]
    text = "\n\n".join(p for p in paragraphs if p)
    why = f"{type(cause).__name__}: {str(cause)[:200]}"
    if not text:
        raise InputError(
            f"{source}: not a readable DOCX file ({why}); check that it is a complete Word "
            ".docx (not .doc) file, or re-save it from Word"
        ) from None
    out = Outline()
    meta = {"docx_fallback": why}
    for paragraph in text.split("\n\n"):
        out.leaf("paragraph", paragraph, level=DocxLevel.BLOCK, metadata=meta)
    written, blocks = out.finish()
    metadata = {"fallback": f"DOCX structure unreadable ({why}); paragraphs read as plain text"}
    return Document.from_text(written, source=source, mime=mime, blocks=blocks, metadata=metadata)


class _Writer:
    """Feeds body items, in order, into an :class:`Outline`."""

    def __init__(self) -> None:
        self.out = Outline()
        self.in_list = False
        self.ordinal = 0
        self.tables = 0
        self.warnings: list[str] = []

    def paragraph(self, paragraph: Any) -> None:
        """Write a heading, list item or plain paragraph."""
        text = paragraph.text.strip()
        if not text:
            return
        style = _style_names(paragraph)
        meta = {"style": getattr(paragraph.style, "name", None) or "Normal"}
        depth = _heading_depth(style)
        level = None if depth is not None else _list_level(paragraph, style)
        if level is not None:
            self._item(text, level, numbered=any("number" in name for name in style))
            return
        self._end_list()
        if depth is not None:
            title = " ".join(text.split())
            self.out.heading(depth, title, level=DocxLevel(depth), metadata=meta)
        else:
            self.out.leaf("paragraph", text, level=DocxLevel.BLOCK, metadata=meta)

    def table(self, table: Any, caption: Any = None) -> None:
        """Write a table: its caption paragraph first (a ``caption`` block, and the table's
        title), then one row per line, cells joined by `` | ``. Rows marked to repeat as
        the header on every page are header rows; without any, the first row is."""
        self._end_list()
        self.tables += 1
        try:
            rows = [(_row_text(row), _repeats(row)) for row in table.rows]
        except MemoryError:
            raise
        except Exception as exc:  # a malformed grid loses the table, not the document
            self.warnings.append(f"table {self.tables}: unreadable ({type(exc).__name__})")
            if caption is not None:
                self.paragraph(caption)
            return
        title = " ".join(caption.text.split()) if caption is not None else None
        meta = {"table": self.tables}
        self.out.open("table", level=DocxLevel.BLOCK, title=title or None, metadata=meta)
        if title:
            self.out.leaf("caption", title, level=DocxLevel.BLOCK, metadata=meta)
        marked = any(repeats for _, repeats in rows)
        for n, (row, repeats) in enumerate(rows):
            header = {"header": True} if repeats or (not marked and n == 0) else {}
            self.out.leaf("row", row, level=DocxLevel.LINE, metadata=header, gap=LINE_GAP)
        self.out.close()

    def _item(self, text: str, level: int, *, numbered: bool) -> None:
        if not self.in_list:
            self.out.open("list", level=DocxLevel.BLOCK)
            self.in_list, self.ordinal = True, 0
        self.ordinal += 1
        bullet = f"{self.ordinal}." if numbered else "-"
        line = "  " * level + f"{bullet} {text}"
        self.out.leaf("item", line, level=DocxLevel.LINE, gap=LINE_GAP)

    def _end_list(self) -> None:
        if self.in_list:
            self.out.close()
            self.in_list = False


def _captions(content: list[Any]) -> dict[int, int]:
    """The position of each table's caption paragraph, by the table's position in
    ``content``: the paragraph just before it when it is styled ``Caption`` or reads like
    one ("Table 3: …"), else the ``Caption``-styled paragraph just after it."""
    found: dict[int, int] = {}
    for k, item in enumerate(content):
        if not hasattr(item, "rows"):
            continue
        if k and (k - 1) not in found.values() and _is_caption(content[k - 1], loose=True):
            found[k] = k - 1
        elif k + 1 < len(content) and _is_caption(content[k + 1], loose=False):
            found[k] = k + 1
    return found


def _is_caption(item: Any, *, loose: bool) -> bool:
    if hasattr(item, "rows") or not getattr(item, "text", "").strip():
        return False
    if "caption" in _style_names(item):
        return True
    return loose and caption_title(item.text) is not None


def _repeats(row: Any) -> bool:
    """Whether Word repeats the row as a header on every page (``w:tblHeader``)."""
    trpr = row._tr.trPr  # python-docx exposes this only through the XML
    if trpr is None:
        return False
    return any(child.tag.endswith("}tblHeader") for child in trpr)


def _style_names(paragraph: Any) -> list[str]:
    """The paragraph's style name and the names of the styles it is based on."""
    names: list[str] = []
    style = paragraph.style
    while style is not None and len(names) < _MAX_STYLE_CHAIN:
        names.append((style.name or "").lower())
        style = style.base_style
    return names or ["normal"]


def _heading_depth(style: list[str]) -> int | None:
    """0 for Title, 1…9 for Heading 1…9, None for everything else."""
    for name in style:
        if name == "title":
            return 0
        match = _HEADING.fullmatch(name)
        if match:
            return int(match.group(1))
    return None


def _list_level(paragraph: Any, style: list[str]) -> int | None:
    """The nesting level of a list paragraph, or None when it is not one."""
    ppr = paragraph._p.pPr  # python-docx exposes numbering only through the XML
    num = ppr.numPr if ppr is not None else None
    if num is not None and num.ilvl is not None and num.ilvl.val is not None:
        return int(num.ilvl.val)
    if num is not None or any(name.startswith("list") for name in style):
        return 0
    return None


def _row_text(row: Any) -> str:
    """Cells of a row joined by `` | ``; a merged cell counts once."""
    cells: list[str] = []
    previous = None
    for cell in row.cells:
        if previous is not None and cell._tc is previous:
            continue
        previous = cell._tc
        cells.append(" ".join(cell.text.split()))
    return " | ".join(cells)
