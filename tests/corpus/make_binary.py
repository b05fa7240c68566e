"""Write the binary samples of the test corpus: a small PDF and a small DOCX.

Run ``python tests/corpus/make_binary.py`` to regenerate ``pdf/report.pdf`` and
``docx/report.docx`` under this folder. The tests import :func:`make_pdf` and
:func:`make_docx` from here, so the samples and the tests build files the same way.
"""

from __future__ import annotations

import io
from pathlib import Path

HERE = Path(__file__).parent

# Each page is a list of paragraphs; each paragraph a list of lines.
REPORT_PAGES = [
    [
        ["Quarterly report"],
        ["Sales rose in every region this quarter.", "The café line sold best."],
        ["Costs stayed flat; margins improved by two points."],
    ],
    [
        ["Outlook"],
        ["We expect steady growth next quarter,", "led by the new espresso blend."],
    ],
]


def _pdf_string(line: str) -> bytes:
    """A PDF literal string in WinAnsi encoding (enough for Latin-1 text)."""
    raw = line.encode("cp1252")
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def _page_stream(paragraphs: list[list[str]]) -> bytes:
    ops = [b"BT", b"/F1 12 Tf", b"72 740 Td", b"14 TL"]
    for i, paragraph in enumerate(paragraphs):
        if i:
            ops.append(b"0 -16 Td")  # an extra gap between paragraphs
        for line in paragraph:
            ops.append(_pdf_string(line) + b" Tj T*")
    ops.append(b"ET")
    return b"\n".join(ops)


def make_pdf(pages: list[list[list[str]]]) -> bytes:
    """A minimal valid PDF with one Helvetica text page per item of ``pages``."""
    n = len(pages)
    page_ids = [4 + 2 * i for i in range(n)]
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids ["
        + b" ".join(b"%d 0 R" % p for p in page_ids)
        + b"] /Count %d >>" % n,
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    }
    for page_id, paragraphs in zip(page_ids, pages, strict=True):
        stream = _page_stream(paragraphs)
        objects[page_id] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (page_id + 1)
        )
        objects[page_id + 1] = (
            b"<< /Length %d >>\nstream\n" % len(stream) + stream + (b"\nendstream")
        )
    return write_pdf(objects)


def write_pdf(objects: dict[int, bytes]) -> bytes:
    """A PDF file of numbered objects (1 is the catalog), with its cross-reference table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = out.tell()
        out.write(b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n")
    xref = out.tell()
    size = max(objects) + 1
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % size)
    for number in range(1, size):
        out.write(b"%010d 00000 n \n" % offsets[number])
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref))
    return out.getvalue()


def make_docx() -> bytes:
    """A small DOCX: title, nested headings, paragraphs, a list and a table."""
    import docx

    document = docx.Document()
    document.core_properties.title = "Field notes"
    document.add_heading("Field notes", level=0)
    document.add_paragraph("Notes from the spring survey of the river café.")
    document.add_heading("Methods", level=1)
    document.add_paragraph("We counted birds at dawn for ten days.")
    document.add_heading("Equipment", level=2)
    document.add_paragraph("Binoculars", style="List Bullet")
    document.add_paragraph("Notebook", style="List Bullet")
    document.add_heading("Results", level=1)
    table = document.add_table(rows=3, cols=2)
    for row, cells in zip(
        table.rows, [("Species", "Count"), ("Heron", "4"), ("Kingfisher", "2")], strict=True
    ):
        for cell, value in zip(row.cells, cells, strict=True):
            cell.text = value
    document.add_paragraph("Herons outnumbered kingfishers two to one.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def main() -> None:
    """Write ``pdf/report.pdf`` and ``docx/report.docx`` under this script's folder."""
    (HERE / "pdf").mkdir(exist_ok=True)
    (HERE / "docx").mkdir(exist_ok=True)
    (HERE / "pdf" / "report.pdf").write_bytes(make_pdf(REPORT_PAGES))
    (HERE / "docx" / "report.docx").write_bytes(make_docx())


if __name__ == "__main__":
    main()
