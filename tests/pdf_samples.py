"""Test PDFs built with :mod:`tests.pdfgen`, each with the facts a test checks.

``handbook()`` is the structured sample: bookmarks, numbered bold headings, a heading
printed over two lines, a bookmark whose title is not printed, running headers, footers
with page numbers, hyphenated words, a ligature, a ruled table with its caption above, an
unruled table with its caption below, and a page in two columns. The committed
``tests/corpus/pdf/handbook.pdf`` is ``handbook(outline=True)``.
"""

from __future__ import annotations

from tests.pdfgen import Page, Pdf, text_width

BODY, LEAD = 11, 14
LEFT, RIGHT = 72, 540
HEADER = "ACME Corp · Field handbook 2024"
# Words that only exist hyphenated in the sample, to tell joins from kept hyphens.
HYPHENATED = ("manage-", "ment", "day-to-", "day", "well-", "known")


def footer(page: Page, number: int, total: int) -> None:
    """The running header and the page-number footer."""
    page.text(LEFT, 760, HEADER, size=8)
    page.text(LEFT + 220, 30, f"Page {number} of {total}", size=8)


def paragraph(page: Page, y: float, lines: list[str], *, size: float = BODY) -> float:
    """Lines of body text; the baseline below them plus a paragraph gap."""
    return page.lines(LEFT, y, lines, size=size, leading=size * 1.27) - size * 0.8


def ruled_table(page: Page, y: float, rows: list[list[str]], xs: list[float]) -> float:
    """A grid: a rule above and below every row and at every column edge (``xs``: where
    each column's text starts, and then the right edge)."""
    height = 18
    top = y + 12
    bottom = top - height * len(rows)
    for k in range(len(rows) + 1):
        page.rule(xs[0] - 6, top - k * height, xs[-1], top - k * height)
    for x in xs:
        page.rule(x - 6, top, x - 6, bottom)
    for k, row in enumerate(rows):
        for x, cell in zip(xs, row, strict=False):
            page.text(x, y - k * height, cell, font="bold" if k == 0 else "regular", size=10)
    return bottom - 24


def unruled_table(page: Page, y: float, rows: list[list[str]], xs: list[float]) -> float:
    """Columns set apart by white space only."""
    for k, row in enumerate(rows):
        for x, cell in zip(xs, row, strict=False):
            page.text(x, y - k * 15, cell, font="bold" if k == 0 else "regular", size=10)
    return y - 15 * len(rows) - 12


RULED_ROWS = [
    ["Quarter", "Revenue", "Cost"],
    ["Q1", "4.1", "3.2"],
    ["Q2", "4.0", "3.5"],
    ["Q3", "4.2", "3.9"],
    ["Q4", "4.6", "4.1"],
]
UNRULED_ROWS = [
    ["Region", "Staff", "Offices"],
    ["North", "120", "4"],
    ["South", "80", "3"],
    ["East", "45", "2"],
]
LEFT_COLUMN = [
    "The left column opens the survey notes and",
    "keeps going for several lines of ordinary",
    "text, long enough to look like a column of",
    "a newsletter printed in two columns.",
]
RIGHT_COLUMN = [
    "The right column starts at the same height",
    "and must be read after the left one is done,",
    "not line by line across the whole page as",
    "the content stream happens to draw it.",
]


def handbook(*, outline: bool = True) -> bytes:
    """The structured sample (see the module docstring); ``outline=False`` leaves out the
    bookmarks, so that headings must come from the layout."""
    pdf = Pdf()
    total = 4
    # Page 1: title, 1 Introduction, 1.1 Scope with hyphenated words.
    p = pdf.page()
    footer(p, 1, total)
    p.text(LEFT, 700, "1 Introduction", font="bold", size=18)
    y = paragraph(p, 670, [
        "This handbook describes the field survey and the manage-",
        "ment of the teams on a day-to-",
        "day basis, as the \ufb01rst chapter of a well-",
        "known series of guides to rough ter-",
        "rain.",
    ])  # fmt: skip
    p.text(LEFT, y - 10, "1.1 Scope", font="bold", size=14)
    y = paragraph(p, y - 36, [
        "The scope covers every region where the teams work and the",
        "equipment they carry from one site to the next, by a well-known",
        "route that runs through twelve counties.",
    ])  # fmt: skip
    p.text(LEFT, y - 4, "Note on safety", font="bold", size=BODY)
    paragraph(p, y - 22, ["Wear boots. Carry water."])
    # Page 2: 2 Usage, a ruled table with its caption above.
    p = pdf.page()
    footer(p, 2, total)
    p.text(LEFT, 700, "2 Usage", font="bold", size=18)
    y = paragraph(p, 670, ["Each team reports its figures every quarter, as below."])
    p.text(LEFT, y - 6, "Table 1: Revenue by quarter", size=10)
    y = ruled_table(p, y - 30, RULED_ROWS, [LEFT + 6, LEFT + 126, LEFT + 246, LEFT + 366])
    y = paragraph(p, y, ["Revenue grew in every quarter of the year."])
    # Page 3: a heading over two lines, an unruled table with its caption below.
    p = pdf.page()
    footer(p, 3, total)
    p.text(LEFT, 700, "2.1 Parsing the reports of", font="bold", size=14)
    p.text(LEFT, 682, "every region", font="bold", size=14)
    y = paragraph(p, 650, ["Staff numbers per region are kept in a plain table."])
    y = unruled_table(p, y - 6, UNRULED_ROWS, [LEFT, LEFT + 160, LEFT + 300])
    p.text(LEFT, y, "Table 2: Staff by region", size=10)
    paragraph(p, y - 30, ["The south gained two offices this year.", "Odd\xa0spacing\xa0 here."])
    # Page 4: two columns, drawn line by line across the page.
    p = pdf.page()
    footer(p, 4, total)
    p.text(LEFT, 700, "3 Survey notes", font="bold", size=18)
    y = 670
    for a, b in zip(LEFT_COLUMN, RIGHT_COLUMN, strict=True):
        p.text(LEFT, y, a, size=BODY)
        p.text(320, y, b, size=BODY)
        y -= 14
    if outline:
        pdf.bookmark("1 Introduction", page=0, y=720)
        pdf.bookmark("1.1 Scope", page=0, y=640, level=1)
        pdf.bookmark("2 Usage", page=1, y=720)
        pdf.bookmark("2.1 Parsing the reports of every region", page=2, y=720, level=1)
        pdf.bookmark("2.2 Unprinted part", page=2, y=530, level=1)  # no such line
        pdf.bookmark("3 Survey notes", page=3, y=720)
    return pdf.to_bytes()


def columns_page(*, interleaved: bool) -> bytes:
    """One page of two columns of text, drawn column by column or line by line."""
    pdf = Pdf()
    p = pdf.page()
    order = (
        [(x, k, t) for k, pair in enumerate(zip(LEFT_COLUMN, RIGHT_COLUMN, strict=True))
         for x, t in zip((LEFT, 320), pair, strict=True)]
        if interleaved
        else [(LEFT, k, t) for k, t in enumerate(LEFT_COLUMN)]
        + [(320, k, t) for k, t in enumerate(RIGHT_COLUMN)]
    )  # fmt: skip
    for x, k, t in order:
        p.text(x, 700 - 14 * k, t, size=BODY)
    return pdf.to_bytes()


def columns_around_table(rows: list[list[str]], xs: list[float], *, ruled: bool) -> bytes:
    """Two columns of text, then a table across the page whose cells leave the gutter
    white (its rows' text does not cross it), then two columns again: the table sits in
    the band that the column reader splits at the gutter."""
    pdf = Pdf()
    page = pdf.page()
    y = 700.0
    for a, b in zip(LEFT_COLUMN * 2, RIGHT_COLUMN * 2, strict=True):
        page.text(LEFT, y, a, size=BODY)
        page.text(320, y, b, size=BODY)
        y -= 14
    (ruled_table if ruled else unruled_table)(page, y - 20, rows, xs)
    y -= 120
    for a, b in zip(LEFT_COLUMN, RIGHT_COLUMN, strict=True):
        page.text(LEFT, y, a, size=BODY)
        page.text(320, y, b, size=BODY)
        y -= 14
    return pdf.to_bytes()


def long_table(
    rows: int, *, ruled: bool, pages: int = 1, continued: bool = False
) -> tuple[bytes, list[list[str]]]:
    """A titled table of ``rows`` body rows over ``pages`` pages, for chunking tests: a
    table with its own caption on each page, or, ``continued``, one table whose caption is
    on the first page only and whose header row is repeated on every page."""
    header = ["Region", "Quarter", "Revenue", "Cost"]
    body = [[f"R{k:03d}", f"Q{k % 4 + 1}", f"{k % 9 + 1}.{k % 7}", f"{k % 5 + 2}.{k % 3}"]
            for k in range(rows)]  # fmt: skip
    xs = [LEFT + 6, LEFT + 96, LEFT + 186, LEFT + 276, LEFT + 366]  # the last: the right edge
    pdf = Pdf()
    per_page = -(-rows // pages)
    for n in range(pages):
        p = pdf.page()
        chunk = body[n * per_page : (n + 1) * per_page]
        if not continued or n == 0:
            title = "Table 3: Figures by region" + ("" if continued else f", part {n + 1}")
            p.text(LEFT, 720, title, size=10)
        draw = ruled_table if ruled else unruled_table
        draw(p, 690, [header, *chunk], xs)
    return pdf.to_bytes(), [header, *body]


def width_of(text: str, size: float = BODY) -> float:
    """How wide a line of body text is printed."""
    return text_width(text, size)
