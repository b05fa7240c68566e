"""Tables that real reports print and the finder used to reject or misread, one test per
structure: dot leaders, nil cells, a column of years, a title row padded with empty
cells, a first row of figures, a header over two rows; a table that is not found keeps
each row's label with its values; no row becomes a heading.

A header printed cell by cell, column numbers under a heading, figures with a scale
word, figures set tight and a header of class bounds set tight over its columns came
from the ICDAR reports of ``bench.pdf_external``; words as far apart as those figures, a
justified line's space, from the TeX manuals of ``bench.pdf_eval``. Each PDF is built here
(``tests/pdfgen.py``) with the one structure under test.
"""

from __future__ import annotations

import re

import pytest
from tests.pdf_samples import LEFT, LEFT_COLUMN, RIGHT_COLUMN, columns_around_table, ruled_table
from tests.pdfgen import Page, Pdf, text_width
from tree_checks import walk

from fissure import Chunker
from fissure.parse import pdf, pdf_tables
from fissure.types import Block, Document


def tables(doc: Document) -> list[Block]:
    return [b for b in walk(doc.blocks) if b.kind == "table"]


def rows_of(doc: Document, table: Block) -> list[str]:
    return [doc.text[r.start : r.end] for r in table.children if r.kind == "row"]


def headings(doc: Document) -> list[str]:
    return [b.title or "" for b in walk(doc.blocks) if b.kind == "section"]


def opening(page: Page, title: str) -> None:
    page.text(LEFT, 720, title, font="bold", size=14)
    page.text(LEFT, 690, "The figures below are as reported to the board for each year.")


def draw(page: Page, y: float, rows: list[list[str]], xs: list[float], **style: str) -> None:
    for k, row in enumerate(rows):
        for x, cell in zip(xs, row, strict=True):
            if cell:
                page.text(x, y - 15 * k, cell, size=10, **style)


def single(rows: list[list[str]], xs: list[float], title: str = "Results", **style: str) -> bytes:
    doc = Pdf()
    page = doc.page()
    opening(page, title)
    draw(page, 660, rows, xs, **style)
    return doc.to_bytes()


def test_dot_leaders_join_labels_to_figures_and_nil_cells_stay() -> None:
    labels = ["", "Revenue", "Cost of sales", "Other income", "Net income"]
    values = [["2023", "2024"], ["1,234", "1,456"], ["(812)", "(901)"], ["...", "12"],
              ["422", "567"]]  # fmt: skip
    rows = [[f"{label} {'.' * (40 - len(label))}" if label else "", *v]
            for label, v in zip(labels, values, strict=True)]  # fmt: skip
    doc = pdf.parse(single(rows, [LEFT, 330, 430]), source="leaders.pdf")
    (table,) = tables(doc)
    assert rows_of(doc, table) == [
        " | 2023 | 2024",
        "Revenue | 1,234 | 1,456",
        "Cost of sales | (812) | (901)",
        "Other income | ... | 12",
        "Net income | 422 | 567",
    ]
    header, *body = (r for r in table.children if r.kind == "row")
    assert header.metadata.get("header") and not any(r.metadata.get("header") for r in body)


def test_a_table_of_contents_is_still_no_table() -> None:
    entries = [("1 Introduction", "3"), ("2 Usage", "7"), ("3 Limits", "12"), ("4 Index", "19")]
    rows = [[f"{t} {'.' * 50}", p] for t, p in entries]
    doc = pdf.parse(single(rows, [LEFT, 480], title="Contents"), source="toc.pdf")
    assert not tables(doc)
    assert "1 Introduction" in doc.text


YEARS = [["Year", "Revenue", "Cost"], ["2019", "4.1", "3.2"], ["2020", "4.0", "3.5"],
         ["2021", "4.2", "3.9"], ["2022", "4.6", "4.1"]]  # fmt: skip


def test_a_first_column_of_years_is_a_table_not_a_code_listing() -> None:
    body = YEARS[1:]  # no header row: the first column counts up like line numbers
    doc = pdf.parse(single(body, [LEFT, 200, 330]), source="years.pdf")
    (table,) = tables(doc)
    assert rows_of(doc, table) == [" | ".join(r) for r in body]


@pytest.mark.parametrize("find_tables", [True, False])
def test_bold_rows_of_figures_never_become_headings(find_tables: bool) -> None:
    rows = [*YEARS, ["Total assets", "12,345", "9,876"]]
    doc = pdf.parse(single(rows, [LEFT, 200, 330], font="bold"), source="bold.pdf",
                    tables=find_tables)  # fmt: skip
    assert headings(doc) == ["Results"]
    chunks = Chunker(max_tokens=64).chunk_document(doc)
    assert all(c.headings in ((), ("Results",)) for c in chunks)


def test_a_title_row_padded_with_empty_cells_is_the_title_not_a_row() -> None:
    rows = [["Table 7 Staff and offices by region", "", "", ""],
            ["Region", "Staff", "Offices", "Sites"], ["North", "120", "4", "9"],
            ["South", "80", "3", "7"], ["East", "45", "2", "5"]]  # fmt: skip
    doc = Pdf()
    page = doc.page()
    opening(page, "Regions")
    ruled_table(page, 660, rows, [LEFT + 6, LEFT + 186, LEFT + 276, LEFT + 366, LEFT + 456])
    parsed = pdf.parse(doc.to_bytes(), source="titled.pdf")
    (table,) = tables(parsed)
    assert table.title == "Table 7 Staff and offices by region"
    assert rows_of(parsed, table)[0] == "Region | Staff | Offices | Sites"
    assert "|  |" not in parsed.text


def test_a_first_row_of_figures_is_no_header() -> None:
    rows = [["North", "120", "4"], ["South", "80", "3"], ["East", "45", "2"], ["West", "51", "6"]]
    rows = rows * 10  # long enough to be cut
    doc = pdf.parse(single(rows, [LEFT, 200, 330]), source="headless.pdf")
    (table,) = tables(doc)
    assert table.children and not any(r.metadata.get("header") for r in table.children)
    chunks = Chunker(max_tokens=24, tokenizer="words").chunk_document(doc)
    inside = [c for c in chunks if table.start < c.start < table.end]
    assert inside and not any(c.context and "North" in c.context for c in inside)


def test_a_header_over_two_rows_is_joined_into_one_in_the_context() -> None:
    rows = [["", "2023", "2024"], ["Region", "$m", "$m"], ["North", "120", "130"],
            ["South", "80", "85"], ["East", "45", "40"]] * 1  # fmt: skip
    rows += [[f"Area {k}", str(100 + k), str(200 + k)] for k in range(40)]
    doc = pdf.parse(single(rows, [LEFT, 200, 330]), source="two-row-header.pdf")
    (table,) = tables(doc)
    assert rows_of(doc, table)[:3] == [" | 2023 | 2024", "Region | $m | $m", "North | 120 | 130"]
    assert [bool(r.metadata.get("header")) for r in table.children][:4] == [
        True,
        True,
        False,
        False,
    ]
    chunks = Chunker(max_tokens=40, tokenizer="words").chunk_document(doc)
    later = [c for c in chunks if c.start > doc.text.index("Area 5")]
    assert later and all(c.context.endswith("Region | 2023 $m | 2024 $m") for c in later)


def test_a_header_stacked_over_many_lines_is_joined_column_by_column() -> None:
    """Narrow columns stack a header's words over many printed lines ("American" /
    "Indian/" / "Alaska" / "Native"); every line above the first figures is the header."""
    asian = ["Asian/", "Native", "Hawaiian/", "Other", "Pacific", "Islander"]
    later = (
        ["", "", "American", "Indian/", "Alaska", "Native"],
        ["Two", "or", "more", "races", "", ""],
    )
    stacked = [["", "", a, b, c] for a, b, c in zip(asian, *later, strict=True)]
    body = [[str(y), f"{1000 + k:,}", str(500 + k), str(200 + k), str(k)]
            for k, y in enumerate(range(1970, 2010))]  # fmt: skip
    rows = [*stacked, ["Year", "Total", "", "", ""], *body]
    doc = pdf.parse(single(rows, [LEFT, 150, 250, 350, 450]), source="stacked.pdf")
    (table,) = tables(doc)
    assert table.metadata.get("header_rows") == 7
    chunks = Chunker(max_tokens=60, tokenizer="words").chunk_document(doc)
    after = [c for c in chunks if c.start > doc.text.index("1990")]
    joined = (
        "Year | Total | Asian/ Native Hawaiian/ Other Pacific Islander | "
        "American Indian/ Alaska Native | Two or more races"
    )
    assert after and all(c.context.endswith(joined) for c in after)


def test_label_rows_above_the_first_figures_belong_to_the_body() -> None:
    rows = [["", "2023", "2024"], ["Assets", "", ""], ["Cash", "1,234", "1,456"],
            ["Loans", "8,050", "8,120"], ["Total assets", "9,284", "9,576"]]  # fmt: skip
    doc = pdf.parse(single(rows, [LEFT, 200, 330]), source="statement.pdf")
    (table,) = tables(doc)
    assert rows_of(doc, table)[:2] == [" | 2023 | 2024", "Assets |  | "]
    assert [bool(r.metadata.get("header")) for r in table.children] == [True] + [False] * 4


def test_a_table_that_is_not_found_keeps_each_label_with_its_values() -> None:
    """Two columns of prose around an unruled table whose middle gap lies on the gutter:
    read as a table, or without the table finder, each row is one line, label first."""
    rows = [["Region", "Staff", "Offices", "Sites"], ["North", "120", "4", "9"],
            ["South", "80", "3", "7"], ["East", "45", "2", "5"]]  # fmt: skip
    data = columns_around_table(rows, [LEFT, LEFT + 150, 340, 460], ruled=False)
    for find in (True, False):
        parsed = pdf.parse(data, source="columns.pdf", tables=find)
        lines = parsed.text.split("\n")
        for row in rows:
            assert " ".join(row) in lines or " | ".join(row) in lines, (find, row)
        assert parsed.text.index(LEFT_COLUMN[3]) < parsed.text.index(RIGHT_COLUMN[0])


def test_cell_text_is_the_page_text_not_letter_spaced() -> None:
    """Figures set with character spacing: pdfplumber reads ``1 2 0 4``, pdfium ``1204``,
    as in the prose; the cells take pdfium's words."""
    rows = [["Region", "Staff", "Offices"], ["North", "1204", "4"], ["South", "8050", "3"],
            ["East", "4512", "2"]]  # fmt: skip
    doc = Pdf()
    page = doc.page()
    opening(page, "Staff")
    for k, (label, staff, offices) in enumerate(rows):
        y = 660 - 15 * k
        page.text(LEFT, y, label, size=10)
        page.text(330, y, offices, size=10)
        page.ops.append(b"BT /F1 10 Tf 3.2 Tc 200 %d Td (%s) Tj ET" % (y, staff.encode()))
    parsed = pdf.parse(doc.to_bytes(), source="spaced.pdf")
    (table,) = tables(parsed)
    assert rows_of(parsed, table) == [" | ".join(r) for r in rows]


def test_a_ruled_box_whose_body_rows_have_no_rules_is_one_row_a_line() -> None:
    """A grid of a box, column rules and a rule under the header, but none between the
    body rows: pdfplumber sees one tall cell per column; with a cell left empty its lines
    no longer pair up by count, yet each printed line is a row."""
    rows = [["Region", "Staff", "Offices"], ["North", "120", "4"], ["South", "80", ""],
            ["East", "45", "2"], ["West", "51", "6"]]  # fmt: skip
    xs = [LEFT + 6, LEFT + 156, LEFT + 256, LEFT + 356]
    doc = Pdf()
    page = doc.page()
    opening(page, "Regions")
    draw(page, 660, rows, xs[:3])
    bottom = 660 - 15 * len(rows) + 8
    for y in (674, 655, bottom):
        page.rule(xs[0] - 6, y, xs[-1], y)
    for x in xs:
        page.rule(x - 6, 674, x - 6, bottom)
    parsed = pdf.parse(doc.to_bytes(), source="boxed.pdf")
    (table,) = tables(parsed)
    assert rows_of(parsed, table) == [" | ".join(r) for r in rows]


def test_a_label_wrapped_over_two_lines_stays_with_its_figures() -> None:
    rows = [["", "2023", "2024"], ["Net cash from operating", "", ""],
            ["activities", "1,234", "1,456"], ["Capital spending on new", "(312)", "(290)"],
            ["plant", "", ""], ["Dividends paid", "(80)", "(85)"]]  # fmt: skip
    doc = pdf.parse(single(rows, [LEFT, 250, 350]), source="wrapped.pdf")
    (table,) = tables(doc)
    assert rows_of(doc, table) == [
        " | 2023 | 2024",
        "Net cash from operating activities | 1,234 | 1,456",
        "Capital spending on new plant | (312) | (290)",
        "Dividends paid | (80) | (85)",
    ]


def two_passes() -> bytes:
    """A table whose header and later rows are drawn first, a note under it next, and its
    first rows of figures last (pdfium reads them after the note), as report software
    that fills a template does."""
    xs = [LEFT, 200, 300, 400]
    doc = Pdf()
    page = doc.page()
    opening(page, "Enrolment")
    draw(page, 660, [["Year", "Total", "Public", "Private"]], xs)
    later = [[str(y), f"{50 + k},{100 + k}", f"{40 + k},{200 + k}", f"{9 + k},{300 + k}"]
             for k, y in enumerate(range(2011, 2016))]  # fmt: skip
    draw(page, 660 - 15 * 6, later, xs)
    page.text(LEFT, 660 - 15 * 12, "NOTE: Detail may not sum to totals because of rounding.")
    first = [[str(y), f"{10 + k},{400 + k}", f"{20 + k},{500 + k}", f"{30 + k},{600 + k}"]
             for k, y in enumerate(range(1996, 2001))]  # fmt: skip
    draw(page, 660 - 15, first, xs)
    return doc.to_bytes()


def words(text: str) -> list[str]:
    return sorted(re.findall(r"[^\W_]+", text))


def test_a_table_drawn_in_two_passes_is_one_table_in_printed_order() -> None:
    data = two_passes()
    doc = pdf.parse(data, source="two-passes.pdf")
    (table,) = tables(doc)
    years = [row.split(" | ")[0] for row in rows_of(doc, table)]
    assert years == ["Year", *map(str, range(1996, 2001)), *map(str, range(2011, 2016))]
    assert words(doc.text) == words(pdf.parse(data, source="p.pdf", tables=False).text)


def test_lines_inside_a_table_that_it_did_not_read_stay_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the join, the rows drawn last fall inside the box of the table made of the
    others; they stay lines of text (each row on one line) and no word is lost."""
    monkeypatch.setattr(pdf_tables, "_drawn_apart", lambda regions: regions)
    data = two_passes()
    doc = pdf.parse(data, source="two-passes.pdf")
    assert words(doc.text) == words(pdf.parse(data, source="p.pdf", tables=False).text)
    assert "1996 10,400 20,500 30,600" in doc.text  # each row still on one line


def test_a_header_cell_spanning_columns_does_not_join_them() -> None:
    """ "Race/ethnicity" printed across the columns under it closes no channel: the
    columns are cut where the body's figures leave white space."""
    xs = [LEFT, 170, 250, 330, 410]
    doc = Pdf()
    page = doc.page()
    opening(page, "Enrolment by race")
    draw(page, 660, [["Year", "Total"]], xs[:2])
    page.text(268, 660, "Race/ethnicity", size=10)
    body = [[str(y), f"{40 + k},{100 + k}", f"{20 + k},{200 + k}", f"{8 + k},{300 + k}",
             f"{6 + k},{400 + k}"] for k, y in enumerate(range(2001, 2006))]  # fmt: skip
    draw(page, 645, [["", "", "White", "Black", "Hispanic"], *body], xs)
    parsed = pdf.parse(doc.to_bytes(), source="spanning.pdf")
    (table,) = tables(parsed)
    rows = rows_of(parsed, table)
    assert "2001 | 40,100 | 20,200 | 8,300 | 6,400" in rows
    assert all(len(r.split(" | ")) == 5 for r in rows)


def test_a_caption_over_several_lines_with_a_units_line_titles_the_table() -> None:
    """A caption of three lines and "[In thousands]" above the table: each chunk that
    continues the table carries that title in its context."""
    xs = [LEFT, 200, 300]
    doc = Pdf()
    page = doc.page()
    page.text(
        LEFT, 732, "Table 7. Actual and projected numbers for teachers in public and", size=10
    )
    page.text(LEFT, 720, "private elementary and secondary schools, by control of school:", size=10)
    page.text(LEFT, 708, "Fall 1996 through fall 2021", size=10)
    page.text(250, 696, "[In thousands]", size=10)
    body = [[str(y), f"{3000 + y % 100},{y % 7}", f"{400 + y % 50}"] for y in range(1970, 2010)]
    rows = [["Year", "Public", "Private"], *body]
    draw(page, 676, rows, xs)
    parsed = pdf.parse(doc.to_bytes(), source="caption.pdf")
    (table,) = tables(parsed)
    assert table.title is not None and table.title.startswith("Table 7. Actual")
    assert "[In thousands]" in parsed.text
    chunks = [c for c in Chunker(max_tokens=120).chunk_document(parsed) if "| " in c.text]
    assert len(chunks) > 2
    assert all(c.context and "Table 7. Actual" in c.context for c in chunks[1:])


def plumb_rules(data: bytes) -> list[float]:
    """Where the first page's vertical rules stand, as the table finder sees them."""
    import pypdfium2 as pdfium

    from fissure.parse.pdf_rules import rules

    document = pdfium.PdfDocument(data)
    try:
        edges = rules(document[0])
    finally:
        document.close()
    return sorted({round(e["x0"]) for e in edges if e["orientation"] == "v"})


def shade(page: Page, x: float, y: float, width: float, height: float) -> None:
    """A grey area, filled and not stroked."""
    page.ops.append(b"0.8 g %.2f %.2f %.2f %.2f re f 0 g" % (x, y, width, height))


def test_shaded_cells_inside_a_ruled_grid_are_no_rules() -> None:
    """Grey backgrounds drawn inset in a ruled grid's cells (a report's "significant"
    cells, in runs down a column) would cut a narrow empty column on either side of every
    shaded column; inside a grid of rules they are backgrounds, not rules."""
    xs = [LEFT, 260, 330, 400, 470]
    rows = [["Measure", "Age 4", "K", "1", "3"]]
    rows += [[f"Outcome {k}", "0.2", "NA", "", ""] for k in range(1, 9)]
    doc = Pdf()
    page = doc.page()
    for k in range(1, len(rows)):
        shade(page, xs[1] - 1, 672 - 18 * (k + 1) + 2, 60, 14)
    ruled_table(page, 660, rows, [*xs, 540])
    assert plumb_rules(doc.to_bytes()) == [round(x - 6) for x in [*xs, 540]]


def test_bands_of_colour_without_rules_draw_the_table() -> None:
    """A table drawn only by shaded bands, one a row, keeps the bands' edges as rules."""
    doc = Pdf()
    page = doc.page()
    for k in range(6):
        shade(page, LEFT, 600 - 20 * k, 400, 16)
    for k in range(6):
        page.text(LEFT + 4, 604 - 20 * k, f"Row {k}", size=10)
    assert plumb_rules(doc.to_bytes()) == [round(LEFT), round(LEFT + 400)]


def test_shaded_header_cells_carry_the_column_rules_up_through_the_header() -> None:
    """A browser's table continued on a new page: the header row repeated as shaded cells
    side by side inside the table's border, the rules between columns drawn only from the
    header down. The shaded cells' sides carry the column rules on, so the header is a row
    of three cells and not one cell (then taken for a caption and the next row for the
    header)."""
    xs = [LEFT, 260, 400, 540]
    rows = [["Architecture", "ABI name", "Clobbered"]]
    rows += [[f"arch{k}", f"abi{k}", f"r{k}, x{k}"] for k in range(1, 7)]
    doc = Pdf()
    page = doc.page()
    top, height = 672.0, 18.0
    for x0, x1 in zip(xs, xs[1:], strict=False):  # the header's cells, filled and not stroked
        shade(page, x0 - 6, top - height, x1 - x0, height)
    page.rule(xs[0] - 6, top, xs[-1] - 6, top)
    for k in range(1, len(rows) + 1):
        page.rule(xs[0] - 6, top - k * height, xs[-1] - 6, top - k * height)
    for x in xs:
        upper = top if x in (xs[0], xs[-1]) else top - height  # the border runs to the top
        page.rule(x - 6, upper, x - 6, top - height * len(rows))
    for k, row in enumerate(rows):
        for x, cell in zip(xs, row, strict=False):
            page.text(x, top - 12 - k * height, cell, size=10)
    plumb = plumb_rules(doc.to_bytes())
    assert [round(x - 6) for x in xs[1:3]] == [x for x in plumb if 100 < x < 500]
    parsed = pdf.parse(doc.to_bytes(), source="continued.pdf")
    (table,) = tables(parsed)
    header = [b for b in table.children if b.metadata.get("header")]
    assert [parsed.text[b.start : b.end] for b in header] == ["Architecture | ABI name | Clobbered"]
    assert rows_of(parsed, table)[1:3] == ["arch1 | abi1 | r1, x1", "arch2 | abi2 | r2, x2"]


@pytest.mark.parametrize("rotate_key", [True, False], ids=["rotate-90", "no-rotate-key"])
def test_a_table_printed_sideways_is_read_upright(rotate_key: bool) -> None:
    """A landscape table drawn up a portrait page (the page says ``/Rotate 90``, or not):
    its words are placed in the frame where they stand upright, so its rows are rows and
    not columns read backwards."""
    rows = [["Topic", "Enquiries", "Share"]]
    rows += [[f"Topic number {k}", f"{k * 137}", f"{k}.5%"] for k in range(1, 9)]
    xs = [LEFT, 360, 520, 700]

    def design(turned: bool) -> bytes:
        doc = Pdf(width=792, height=612)
        page = doc.page()
        page.turned, page.rotate_key = turned, rotate_key
        page.text(LEFT, 560, "Enquiries by topic", font="bold", size=14)
        ruled_table(page, 520, rows, xs)
        return doc.to_bytes()

    upright = pdf.parse(design(False), source="upright.pdf")
    turned = pdf.parse(design(True), source="turned.pdf")
    (table,) = tables(turned)
    assert rows_of(turned, table) == rows_of(upright, tables(upright)[0])
    assert rows_of(turned, table)[:2] == [
        "Topic | Enquiries | Share",
        "Topic number 1 | 137 | 1.5%",
    ]
    assert turned.text == upright.text


def test_rules_that_end_without_a_border_close_the_table_there() -> None:
    """A report's table ruled between its rows across its whole width and between its
    value columns, with no border at its sides: the rules' ends make the sides, so that
    the first column (the labels) and the last are cells of the table. Two rows are too
    few for a table without rules: without its sides it was not found at all."""
    xs = [LEFT, 260, 330, 400, 470, 540]
    rows = [["", "2001", "2002", "2003", "2004"]]
    rows += [["Persons in training", "29 300", "25 800", "33 300", "33 500"]]
    doc = Pdf()
    page = doc.page()
    opening(page, "Participants")
    top, height = 612.0, 18.0
    for k in range(len(rows) + 1):  # the first rule (above the header) leaves the label out
        page.rule((xs[1] if k == 0 else xs[0]) - 6, top - k * height, xs[-1], top - k * height)
    for x in xs[1:-1]:
        page.rule(x - 6, top, x - 6, top - height * len(rows))
    for k, row in enumerate(rows):
        for x, cell in zip(xs, row, strict=False):
            page.text(x, top - 12 - k * height, cell, size=10)
    parsed = pdf.parse(doc.to_bytes(), source="open.pdf")
    (table,) = tables(parsed)
    assert rows_of(parsed, table) == [" | ".join(r) for r in rows]


def test_a_lone_column_rule_leaves_a_table_to_its_white_space() -> None:
    """Three rules across (top, under the header, bottom) and one rule after the label
    column: the value columns are set apart by white space only, and the rules' ends do
    not make the table a grid whose one value cell holds all its columns."""
    xs = [LEFT, 250, 330, 410]
    rows = [["Correct answers", "Freq.", "Percent", "Cum."]]
    rows += [[f"{k}", f"{k * 300 + 138}", f"{k * 10 + 6}.9", f"{k * 20 + 6}.9"] for k in range(4)]
    doc = Pdf()
    page = doc.page()
    opening(page, "Financial literacy")
    top, height = 612.0, 16.0
    for k in (0, 1, len(rows)):
        page.rule(LEFT - 6, top - k * height, 470, top - k * height)
    page.rule(xs[1] - 12, top, xs[1] - 12, top - height * len(rows))
    for k, row in enumerate(rows):
        for x, cell in zip(xs, row, strict=False):
            page.text(x, top - 12 - k * height, cell, size=10)
    parsed = pdf.parse(doc.to_bytes(), source="lone.pdf")
    (table,) = tables(parsed)
    assert rows_of(parsed, table)[:2] == [
        "Correct answers | Freq. | Percent | Cum.",
        "0 | 138 | 6.9 | 6.9",
    ]


def test_a_line_s_background_inside_a_cell_does_not_carry_a_rule_through_it() -> None:
    """A label cell over two header rows, each of its lines on its own background a point
    or two inside the cell: the rule between the header rows (drawn from the second
    column on) is not carried on through the label by the backgrounds' edges."""
    xs = [LEFT, 200, 300, 400, 500]
    doc = Pdf()
    page = doc.page()
    top, height = 672.0, 14.0
    for k in (0, 2, 3, 4, 5):
        page.rule(xs[0] - 6, top - k * height, xs[-1] - 6, top - k * height)
    page.rule(xs[1] - 6, top - height, xs[-1] - 6, top - height)  # between the header rows
    for x in xs:
        page.rule(x - 6, top, x - 6, top - 5 * height)
    width = xs[1] - xs[0] - 2  # from a point inside the border to a point before the rule
    shade(page, xs[0] - 5, top - height + 2 - 10, width, 10)  # the label's two lines
    shade(page, xs[0] - 5, top - height - 8 - 10, width, 10)
    level = [e for e in _rules_of(doc.to_bytes()) if e["orientation"] == "h"]
    between = [e for e in level if abs(e["top"] - (792 - top + height)) <= 1]
    assert [round(e["x0"]) for e in between] == [xs[1] - 6]


def _rules_of(data: bytes) -> list[dict]:
    import pypdfium2 as pdfium

    from fissure.parse.pdf_rules import rules

    document = pdfium.PdfDocument(data)
    try:
        return rules(document[0])
    finally:
        document.close()


def test_a_typewritten_report_s_table_is_a_table() -> None:
    """A report set in a monospaced font throughout (typed, then printed to PDF): its
    monospaced lines are not code, so its table of figures is found as a table."""
    doc = Pdf()
    page = doc.page()
    page.text(LEFT, 720, "APPENDIX A", font="mono", size=11)
    page.text(LEFT, 700, "Table A.1: Census population by age groups", font="mono", size=11)
    y = page.lines(
        LEFT,
        670,
        [
            "The population figures below are taken from the census of the year",
            "and are used to weigh the survey results for each of the age groups.",
            "They are shown as a proportion of the total and as counts of persons.",
        ],
        font="mono",
        size=11,
    )
    rows = [["Age groups", "Proportion", "Total"]]
    rows += [
        [f"{10 * k} - {10 * k + 9} years", f"0.{k}{k + 3}5", f"{k},{k}33,692"] for k in range(9)
    ]
    for k, row in enumerate(rows):
        for x, cell in zip([LEFT, 260, 400], row, strict=True):
            page.text(x, y - 20 - 15 * k, cell, font="mono", size=11)
    page.lines(
        LEFT,
        y - 40 - 15 * len(rows),
        [
            "Source: the census bureau, by the survey's own tabulation of its data.",
            "The proportions add up to one over the age groups of the whole table.",
            "",
            "The weights were checked against the counts of the year before, and",
            "no age group moved by more than a hundredth of its share from it, so",
            "that the weighting of the survey stays as it was in the earlier round.",
        ],
        font="mono",
        size=11,
    )
    parsed = pdf.parse(doc.to_bytes(), source="typed.pdf")
    (table,) = tables(parsed)
    assert rows_of(parsed, table)[:2] == [
        "Age groups | Proportion | Total",
        "0 - 9 years | 0.035 | 0,033,692",
    ]
    assert parsed.metadata["typewritten"] is True


def test_ruled_tables_side_by_side_are_each_read() -> None:
    """Two ruled tables side by side, their rows on the same baselines (pdfium reads a row
    of both as one line): each table reads its own half of every line."""
    doc = Pdf()
    page = doc.page()
    opening(page, "Enquiries by country")
    left = [["Topic A", "Enquiries"]] + [[f"Country {k}", f"{300 - 7 * k}"] for k in range(8)]
    right = [["Topic B", "Enquiries"]] + [[f"Nation {k}", f"{200 - 5 * k}"] for k in range(8)]
    top, height, xs = 652.0, 18.0, [LEFT, 170, 240, 256, 380, 450]
    for k in range(len(left) + 1):
        page.rule(xs[0] - 6, top - k * height, xs[2] - 6, top - k * height)
        page.rule(xs[3] - 6, top - k * height, xs[5] - 6, top - k * height)
    for x in xs:
        page.rule(x - 6, top, x - 6, top - height * len(left))
    for k in range(len(left)):  # a row of both tables drawn together: label, figure, label, figure
        for x, cell in zip(xs, [*left[k], "", *right[k]], strict=False):
            if cell:
                page.text(x, top - 12 - k * height, cell, size=10)
    parsed = pdf.parse(doc.to_bytes(), source="side.pdf")
    found = tables(parsed)
    assert [rows_of(parsed, t)[:2] for t in found] == [
        ["Topic A | Enquiries", "Country 0 | 300"],
        ["Topic B | Enquiries", "Nation 0 | 200"],
    ]


def loose_header_table(caption_step: float) -> bytes:
    """A table whose header is drawn cell by cell after its rows (pdfium reads each cell
    as a line of its own, in no aligned run), under a caption of three lines; the header
    starts ``caption_step`` points under the caption's last line."""
    doc = Pdf()
    page = doc.page()
    opening(page, "Spending")
    top = 640.0
    for k, line in enumerate(["Table 18. Spending per pupil in fall enrollment: School years",
                              "through 2021-22", "[In thousands]"]):  # fmt: skip
        page.text(LEFT, top - 11 * k, line, size=10)
    head = top - 22 - caption_step
    xs = [LEFT, 190, 290, 390]
    for k in range(30):
        cells = [f"{1990 + k}-{91 + k:02d}", f"{45000 + 37 * k:,}", f"{375 + k}.5",
                 f"{8200 + 41 * k:,}"]  # fmt: skip
        for x, cell in zip(xs, cells, strict=True):
            page.text(x, head - 27 - 12 * k, cell, size=10)
    page.text(LEFT, head - 12, "School year", size=10)
    cells = [("Fall enrollment", "(in thousands)"), ("Total", "(in billions)"),
             ("Per pupil", "in fall enrollment")]  # fmt: skip
    for x, (upper, lower) in zip(xs[1:], cells, strict=True):
        page.text(x, head, upper, size=10)
        page.text(x, head - 12, lower, size=10)
    return doc.to_bytes()


@pytest.mark.parametrize("caption_step", [17.0, 40.0])
def test_a_header_read_cell_by_cell_is_the_header_not_paragraphs(caption_step: float) -> None:
    """Each header cell on lines of its own, out of reading order ("Fall enrollment" /
    "(in thousands)"): taken into the table's header rows, joined column by column in
    the context of later chunks, and the
    caption's lines set close under it (the rest of its title, a unit line) stay in the
    title, whether the header starts just under them or farther down."""
    doc = pdf.parse(loose_header_table(caption_step), source="loose-header.pdf")
    (table,) = tables(doc)
    header = ("School year | Fall enrollment (in thousands) | Total (in billions) | "
              "Per pupil in fall enrollment")  # fmt: skip
    assert rows_of(doc, table)[:3] == [
        " | Fall enrollment | Total | Per pupil",
        "School year | (in thousands) | (in billions) | in fall enrollment",
        "1990-91 | 45,000 | 375.5 | 8,200",
    ]
    assert table.title is not None and table.title.endswith("through 2021-22 [In thousands]")
    assert "Fall enrollment\n" not in doc.text and "\n(in billions)" not in doc.text
    chunks = Chunker(max_tokens=60, tokenizer="words").chunk_document(doc)
    later = [c for c in chunks if c.start > doc.text.index("2005-")]
    assert later and all(c.context.endswith(header) for c in later)


def test_column_numbers_under_a_heading_are_the_header() -> None:
    """A row that counts 1, 2, 3 … under "Lead time (years)" names the columns: it is the
    header (not a first row of figures), carried with the title into later chunks."""
    rows = [["", "", "Lead time (years)", "", ""], ["Statistic", "1", "2", "3", "4"]]
    rows += [[f"Series {k}", f"{k % 9}.{k % 7}", f"{k % 8}.3", f"{k % 5}.9", f"{k % 6}.1"]
             for k in range(40)]  # fmt: skip
    doc = pdf.parse(single(rows, [LEFT, 200, 260, 320, 380]), source="lead-time.pdf")
    (table,) = tables(doc)
    assert table.metadata.get("header_rows") != 0
    assert rows_of(doc, table)[0] == "Statistic | 1 | 2 | 3 | 4"
    chunks = Chunker(max_tokens=40, tokenizer="words").chunk_document(doc)
    later = [c for c in chunks if c.start > doc.text.index("Series 20")]
    assert later and all(c.context.endswith("Statistic | 1 | 2 | 3 | 4") for c in later)
    assert all("Lead time (years)" in c.context for c in later)


def test_a_figure_with_a_scale_word_is_a_figure_not_a_header() -> None:
    """A figure with a scale word ("100 million") in the first row of figures: the row is
    the body's, not a third header row."""
    rows = [["", "to air", "to water"], ["", "kg/year", "kg/year"],
            ["Carbon dioxide (CO2)", "100 million", "-"], ["Methane (CH4)", "100 000", "-"],
            ["Nitrous oxide (N2O)", "10 000", "-"], ["Ammonia (NH3)", "10 000", "50"]]  # fmt: skip
    doc = pdf.parse(single(rows, [LEFT, 250, 350]), source="thresholds.pdf")
    (table,) = tables(doc)
    header = [r.metadata.get("header", False) for r in table.children if r.kind == "row"]
    assert header[:3] == [True, True, False]


def test_a_caption_read_as_the_first_row_is_the_title() -> None:
    """A caption set over the columns ("Table A.3: Overall interview | and | …", as a
    typewritten report spaces it), with a line of its own under it: the table's title,
    not its header, so the header is the row that names the columns."""
    rows = [["Table A.3: Overall", "interview", "and", "response"],
            ["NHANES III, 1988-94", "", "", ""], ["Status", "Sample", "Percent", "Weighted"],
            ["", "size", "", "percent"]]  # fmt: skip
    rows += [[f"Group {k}", str(3900 + 17 * k), f"{k}.4", f"{k}.8"] for k in range(30)]
    doc = pdf.parse(single(rows, [LEFT, 200, 300, 400]), source="caption-row.pdf")
    (table,) = tables(doc)
    assert table.title == "Table A.3: Overall interview and response NHANES III, 1988-94"
    assert rows_of(doc, table)[:2] == [
        "Status | Sample | Percent | Weighted",
        " | size |  | percent",
    ]
    chunks = Chunker(max_tokens=40, tokenizer="words").chunk_document(doc)
    later = [c for c in chunks if c.start > doc.text.index("Group 20")]
    assert later and all(c.context.endswith("Status | Sample size | Percent | Weighted percent")
                         for c in later)  # fmt: skip


def test_a_chunk_that_starts_before_a_stacked_header_carries_it_joined() -> None:
    """A chunk that holds a paragraph and then a table whose header is stacked over two
    printed lines carries the header joined column by column, counted in its budget:
    its own lines spell "to air" and "kg/year" apart."""
    rows = [["", "to air", "to water"], ["", "kg/year", "kg/year"],
            ["Methane (CH4)", "100 000", "-"], ["Nitrous oxide (N2O)", "10 000", "-"],
            ["Ammonia (NH3)", "10 000", "50"]]  # fmt: skip
    doc = pdf.parse(single(rows, [LEFT, 250, 350]), source="thresholds.pdf")
    chunks = Chunker(max_tokens=200, tokenizer="words").chunk_document(doc)
    (chunk,) = [c for c in chunks if "Methane" in c.text]
    table = tables(doc)[0]
    assert chunk.start < table.start
    assert chunk.context.endswith("| to air kg/year | to water kg/year")
    assert "context_tokens" in chunk.metadata


def bounds_table() -> bytes:
    """A table of amounts by class whose header names each class by its bounds, set
    tighter than the columns ("Less than $10,000- $15,000- $30,000-" on one line, over
    three columns, "$55,000" on the same line; the upper bounds and "or more" under it),
    with a lone "Percent" over its column above them (us-002's Table 4)."""
    xs = [LEFT, 230, 290, 350, 410, 470, 530]
    doc = Pdf()
    page = doc.page()
    opening(page, "Borrowing")
    draw(page, 660, [["", "Percent", "", "", "", "", ""]], xs)
    bounds = "Less than $10,000- $15,000- $30,000-"
    pad = round((530 - 350 - text_width(bounds, 10)) / text_width(" ", 10))
    page.text(230, 645, "who", size=10)
    page.text(290, 645, "Average", size=10)
    page.text(350, 645, bounds + " " * pad + "$55,000", size=10)
    uppers = ["Characteristic", "borrowed", "amount", "$10,000", "14,999", "29,999", "or more"]
    draw(page, 630, [uppers], xs)
    body = [
        [
            f"Group {k}",
            f"{30 + k}.4",
            f"{20 + k},100",
            f"1{k % 10}.3",
            f"2{k % 10}.5",
            f"3{k % 10}.0",
            f"4{k % 10}.1",
        ]
        for k in range(30)
    ]
    draw(page, 612, body, xs)
    return doc.to_bytes()


def test_a_header_of_class_bounds_set_tight_over_its_columns_is_the_header() -> None:
    """Header lines whose words close the channels between the body's columns (the bounds
    of each class, with a figure among them) are the header, figures or not: every column
    of figures stays apart, the three lines over them are the header (the lone word over
    a value column is no title), and later chunks carry it joined."""
    doc = pdf.parse(bounds_table(), source="bounds.pdf")
    (table,) = tables(doc)
    rows = rows_of(doc, table)
    assert rows[3:5] == [
        "Group 0 | 30.4 | 20,100 | 10.3 | 20.5 | 30.0 | 40.1",
        "Group 1 | 31.4 | 21,100 | 11.3 | 21.5 | 31.0 | 41.1",
    ]
    header = [r.metadata.get("header", False) for r in table.children if r.kind == "row"]
    assert header[:4] == [True, True, True, False]
    assert headings(doc) == ["Borrowing"]
    chunks = Chunker(max_tokens=60, tokenizer="words").chunk_document(doc)
    later = [c for c in chunks if c.start > doc.text.index("Group 20")]
    assert later and all(
        "Characteristic | Percent who borrowed | Average amount" in c.context
        and c.context.endswith("$55,000 or more")
        for c in later
    )


def apart(rows: list[list[str]], gap: float, label_gap: float = 3, size: float = 10) -> bytes:
    """Rows whose cells follow each other ``gap`` font sizes apart (the first two
    ``label_gap``), each column starting where the widest cell before it ends."""
    widths = [max(text_width(row[k], size) for row in rows) for k in range(len(rows[0]))]
    xs = [
        LEFT + sum(widths[:k]) + (label_gap + (k - 1) * gap) * size if k else LEFT
        for k in range(len(widths))
    ]
    doc = Pdf()
    page = doc.page()
    opening(page, "Spacing")
    for n, row in enumerate(rows):
        for x, w, cell in zip(xs[1:], widths[1:], row[1:], strict=True):  # right-aligned
            page.text(x + w - text_width(cell, size), 660 - 15 * n, cell, size=size)
        page.text(LEFT, 660 - 15 * n, row[0], size=size)
    return doc.to_bytes()


def test_figures_set_tight_part_into_columns_and_words_as_far_apart_do_not() -> None:
    """Half a line's height (0.6 of a 10-point size, the line's box is 11.7 points high)
    between figures is a column's edge (totals set tight: "2,799,250 2,815,544"); as much
    between words, lines deep, is a justified line's space: those lines stay prose."""
    figures = [["Region"] + [f"{2 + k},{799 + 16 * k},{250 + k}" for k in range(3)]]
    figures += [
        [name] + [f"{1 + k},{100 + 7 * n + k},{300 + n}" for k in range(3)]
        for n, name in enumerate(["North", "South", "East", "West"], 1)
    ]
    doc = pdf.parse(apart(figures, 0.6), source="tight.pdf")
    (table,) = tables(doc)
    assert rows_of(doc, table)[1] == "North | 1,107,301 | 2,108,301 | 3,109,301"
    words = [
        ["The cipher", "is keyed"],
        ["Each block", "is mixed"],
        ["The state", "is kept"],
        ["The output", "is final"],
    ]
    doc = pdf.parse(apart(words, 0.6, 0.6), source="justified.pdf")
    assert tables(doc) == []
    assert "The cipher is keyed\nEach block is mixed" in doc.text
