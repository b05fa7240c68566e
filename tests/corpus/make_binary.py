"""Write the binary samples of the test corpus: PDFs and a small DOCX.

Run ``python tests/corpus/make_binary.py`` to regenerate ``pdf/report.pdf``,
``pdf/handbook.pdf``, ``pdf/budget.pdf`` (printed by headless Chromium from
:data:`BUDGET_HTML`, when Chromium is installed) and ``docx/report.docx`` under this
folder. The tests import :func:`make_pdf`, :func:`make_docx` and :data:`BUDGET_HTML` from
here, so the samples and the tests build files the same way.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tempfile
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
        out.write(b"%010d 00000 n \n" % offsets.get(number, 0))
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


_DEPARTMENTS = [
    ("Health", 412.5, 431.0), ("Education", 388.2, 402.7), ("Transport", 201.9, 188.4),
    ("Housing", 97.3, 104.8), ("Justice", 88.0, 90.1), ("Culture", 31.4, 29.9),
]  # fmt: skip


def _budget_rows() -> str:
    rows = []
    for k in range(1, 61):
        name, a, b = _DEPARTMENTS[k % len(_DEPARTMENTS)]
        a, b = a + k, b + 1.5 * k
        rows.append(
            f"<tr><td>Department {k:02d} ({name})</td><td>{a:.1f}</td><td>{b:.1f}</td>"
            f"<td>{100 * (b - a) / a:+.1f}%</td></tr>"
        )
    return "\n".join(rows)


# A budget report as a city might publish it: sections, a long table that runs over
# pages (Chromium repeats its header row on each), a short one, and two columns of notes.
BUDGET_HTML = f"""<!doctype html><html><head><meta charset="utf-8">
<title>City budget 2024</title><style>
body {{ font-family: serif; font-size: 11pt; }} td, th {{ padding: 3px 10px; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #444; }}
.notes {{ columns: 2; column-gap: 2em; }} .plain td, .plain th {{ border: none; }}
</style></head><body>
<h1>1 City budget 2024</h1>
<p>This report sets out the spending plans of every department for the coming year and
compares them with the year before. All figures are in million euro.</p>
<h2>1.1 Spending by department</h2>
<table><caption>Table 1: Spending by department (million EUR)</caption>
<thead><tr><th>Department</th><th>2023</th><th>2024</th><th>Change</th></tr></thead>
<tbody>{_budget_rows()}</tbody></table>
<h2>1.2 Staff</h2>
<table class="plain"><caption>Table 2: Staff by office</caption>
<tr><th>Office</th><th>Staff</th><th>Vacancies</th></tr>
<tr><td>Harbour</td><td>312</td><td>14</td></tr><tr><td>Old Town</td><td>128</td><td>3</td></tr>
<tr><td>Riverside</td><td>96</td><td>7</td></tr></table>
<h1>2 Notes</h1>
<div class="notes"><p>The first column of notes explains how the figures were gathered:
each department reported its spending in the first week of the year, and the finance
office checked every report against the ledger before it was added here.</p>
<p>The second column of notes lists what changed: two departments merged, one office
moved to the harbour, and the culture budget fell for the second year in a row, as the
council decided in spring.</p></div>
</body></html>
"""


def print_pdf(html: str, out: Path) -> bool:
    """Print ``html`` to ``out`` with headless Chromium (running header and footer on);
    ``False`` when Chromium is not installed."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "budget.html"
        page.write_text(html, encoding="utf-8")
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu",
             "--generate-pdf-document-outline", f"--print-to-pdf={out}", page.as_uri()],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    return True


def main() -> None:
    """Write the corpus PDFs and ``docx/report.docx`` under this script's folder."""
    sys.path.insert(0, str(HERE.parent.parent))  # the repository root, for tests.*
    from tests.pdf_samples import handbook

    (HERE / "pdf").mkdir(exist_ok=True)
    (HERE / "docx").mkdir(exist_ok=True)
    (HERE / "pdf" / "report.pdf").write_bytes(make_pdf(REPORT_PAGES))
    (HERE / "pdf" / "handbook.pdf").write_bytes(handbook())
    if not print_pdf(BUDGET_HTML, HERE / "pdf" / "budget.pdf"):
        print("chromium not installed: pdf/budget.pdf left as it is", file=sys.stderr)
    (HERE / "docx" / "report.docx").write_bytes(make_docx())


if __name__ == "__main__":
    main()
