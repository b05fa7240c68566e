"""A small PDF writer for tests: positioned text in four standard fonts, ruling lines,
bookmarks and image-only (scanned) pages.

No PDF library that writes text is installed (reportlab is not), so the tests write PDF
syntax themselves, as ``tests/corpus/make_binary.py`` does; pdfium and pdfminer then read
the files like any other. Coordinates are PDF points from the bottom-left corner.

Example:
    >>> pdf = Pdf()
    >>> page = pdf.page()
    >>> page.text(72, 720, "1 Introduction", font="bold", size=16)
    >>> pdf.bookmark("1 Introduction", page=0, y=740)
    >>> data = pdf.to_bytes()
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

from tests.corpus.make_binary import write_pdf

FONTS = {
    "regular": "Helvetica",
    "bold": "Helvetica-Bold",
    "mono": "Courier",
    "serif": "Times-Roman",
}
_NAMES = {name: f"F{i}" for i, name in enumerate(FONTS, start=1)}
# Codes 1 and 2 of every font are the fi and fl ligatures (a /Differences encoding).
_LIGATURES = {"\ufb01": b"\x01", "\ufb02": b"\x02"}
# Helvetica's widths (per 1000 em) for the characters the tests use; others count 556.
_NARROW = {" ": 278, "i": 222, "l": 222, "j": 222, "t": 278, "f": 278, "r": 333, ".": 278}
_NARROW |= {",": 278, ":": 278, "|": 260, "I": 278, "-": 333, "(": 333, ")": 333}
_WIDE = {"m": 833, "w": 722, "M": 833, "W": 944}


def text_width(text: str, size: float, font: str = "regular") -> float:
    """Approximate width in points (exact for Courier; close for Helvetica)."""
    if font == "mono":
        return 0.6 * size * len(text)
    units = sum(_NARROW.get(ch, _WIDE.get(ch, 556)) for ch in text)
    return units * size / 1000


@dataclass
class Page:
    """One page's content stream, built by calls in drawing order."""

    ops: list[bytes] = field(default_factory=list)
    image: tuple[bytes, int, int] | None = None  # deflated grey pixels, width, height
    # Drawn sideways: the content runs up a portrait page (a landscape table in a report),
    # and with ``rotate_key`` the page says ``/Rotate 90`` so that a viewer shows it upright.
    turned: bool = False
    rotate_key: bool = True

    def text(self, x: float, y: float, text: str, *, font: str = "regular", size: float = 11):
        """Draw one run of text with its baseline starting at ``(x, y)``."""
        self.ops.append(
            b"BT /%s %.2f Tf %.2f %.2f Td %s Tj ET"
            % (_NAMES[font].encode(), size, x, y, _literal(text))
        )

    def lines(
        self,
        x: float,
        y: float,
        lines: list[str],
        *,
        font: str = "regular",
        size: float = 11,
        leading: float | None = None,
    ) -> float:
        """Draw lines downwards from baseline ``y``; the baseline after the last one."""
        step = leading or size * 1.25
        for line in lines:
            self.text(x, y, line, font=font, size=size)
            y -= step
        return y

    def rule(self, x0: float, y0: float, x1: float, y1: float, *, width: float = 0.6) -> None:
        """Stroke a straight line."""
        self.ops.append(b"%.2f w %.2f %.2f m %.2f %.2f l S" % (width, x0, y0, x1, y1))


@dataclass
class _Mark:
    title: str
    page: int
    y: float
    level: int


class Pdf:
    """A document of :class:`Page`\\s and bookmarks, written by :meth:`to_bytes`."""

    def __init__(self, width: float = 612, height: float = 792) -> None:
        self.width, self.height = width, height
        self.pages: list[Page] = []
        self.marks: list[_Mark] = []

    def page(self) -> Page:
        """A new, empty page at the end."""
        self.pages.append(Page())
        return self.pages[-1]

    def scan(self, gray: bytes, width: int, height: int) -> None:
        """A page that is one 8-bit grey image covering the page, as a scanner makes it."""
        page = self.page()
        page.image = (zlib.compress(gray), width, height)

    def bookmark(self, title: str, *, page: int, y: float, level: int = 0) -> None:
        """An outline entry (``level`` 0 is top-level) pointing at ``y`` on ``page``."""
        self.marks.append(_Mark(title, page, y, level))

    def to_bytes(self) -> bytes:
        """The PDF file."""
        objects: dict[int, bytes] = {}
        font_ids = {name: 3 + i for i, name in enumerate(FONTS)}
        encoding_id = 3 + len(FONTS)
        objects[encoding_id] = (
            b"<< /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [1 /fi /fl] >>"
        )
        for name, base in FONTS.items():
            objects[font_ids[name]] = (
                b"<< /Type /Font /Subtype /Type1 /BaseFont /%s /Encoding %d 0 R >>"
                % (base.encode(), encoding_id)
            )
        fonts = b" ".join(b"/%s %d 0 R" % (_NAMES[n].encode(), font_ids[n]) for n in FONTS)
        next_id = encoding_id + 1
        page_ids = []
        for page in self.pages:
            page_id, content_id = next_id, next_id + 1
            next_id += 2
            page_ids.append(page_id)
            stream = b"\n".join(page.ops)
            xobject = b""
            if page.image is not None:
                pixels, w, h = page.image
                image_id, next_id = next_id, next_id + 1
                objects[image_id] = (
                    b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace "
                    b"/DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>"
                    b"\nstream\n" % (w, h, len(pixels)) + pixels + b"\nendstream"
                )
                xobject = b" /XObject << /Im1 %d 0 R >>" % image_id
                stream = b"q %.2f 0 0 %.2f 0 0 cm /Im1 Do Q\n" % (self.width, self.height) + stream
            box, rotate = (self.width, self.height), b""
            if page.turned:  # (X, Y) of the design -> (height - Y, X) on the portrait page
                box = (self.height, self.width)
                stream = b"q 0 1 -1 0 %.2f 0 cm\n" % self.height + stream + b"\nQ"
                rotate = b" /Rotate 90" if page.rotate_key else b""
            objects[page_id] = (
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f]%s /Resources << "
                b"/Font << %s >>%s >> /Contents %d 0 R >>"
                % (*box, rotate, fonts, xobject, content_id)
            )
            objects[content_id] = (
                b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
            )
        catalog = b"<< /Type /Catalog /Pages 2 0 R"
        if self.marks:
            outline_id = next_id
            objects.update(_outline(self.marks, outline_id, page_ids))
            catalog += b" /Outlines %d 0 R /PageMode /UseOutlines" % outline_id
        objects[1] = catalog + b" >>"
        kids = b" ".join(b"%d 0 R" % p for p in page_ids)
        objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_ids))
        return write_pdf(objects)


def _outline(marks: list[_Mark], root: int, page_ids: list[int]) -> dict[int, bytes]:
    """Outline objects: a tree built from the flat, levelled list."""
    ids = [root + 1 + i for i in range(len(marks))]
    parent: list[int] = []
    stack: list[tuple[int, int]] = [(-1, root)]  # (level, object id)
    for mark, oid in zip(marks, ids, strict=True):
        while stack[-1][0] >= mark.level:
            stack.pop()
        parent.append(stack[-1][1])
        stack.append((mark.level, oid))
    children: dict[int, list[int]] = {}
    for oid, pid in zip(ids, parent, strict=True):
        children.setdefault(pid, []).append(oid)
    out: dict[int, bytes] = {}
    kids = children.get(root, [])
    out[root] = b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>" % (
        kids[0], kids[-1], len(marks))  # fmt: skip
    for mark, oid, pid in zip(marks, ids, parent, strict=True):
        siblings = children[pid]
        k = siblings.index(oid)
        entry = b"<< /Title %s /Parent %d 0 R /Dest [%d 0 R /XYZ 0 %.2f 0]" % (
            _literal(mark.title), pid, page_ids[mark.page], mark.y)  # fmt: skip
        if k:
            entry += b" /Prev %d 0 R" % siblings[k - 1]
        if k + 1 < len(siblings):
            entry += b" /Next %d 0 R" % siblings[k + 1]
        own = children.get(oid, [])
        if own:
            entry += b" /First %d 0 R /Last %d 0 R /Count %d" % (own[0], own[-1], len(own))
        out[oid] = entry + b" >>"
    return out


def _literal(text: str) -> bytes:
    raw = b"".join(_LIGATURES.get(ch) or ch.encode("cp1252") for ch in text)
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"
