"""Tables on PDF pages: ruled grids through pdfplumber's table finder, tables without rules
from the aligned words pdfium has read.

pdfplumber (MIT, on pdfminer.six, MIT) reads a page again in pure Python, about fifty
times slower than pdfium, so it runs only on pages whose ruling lines make a grid (found
through pdfium without parsing anything again), where its ``lines`` strategy finds the
cells. A table without rules is a run of aligned lines (:mod:`.pdf_runs`; runs that lie
within one another's rows, drawn in two passes, are one table): each line is a row, cut
into cells at the middles of the channels that run down its body, a phrase of a header
line going whole into one column, with no second reading of the page. Every cell's text
is pdfium's words inside it, as the prose around it is read. A result counts as a table
only with two rows and two columns at least and most cells filled, and not when it is a
table of contents (leaders running to page numbers and nothing else), a list set with tab
stops or a numbered code listing (a column of years is none).

Each table's rows become lines of cells joined by `` | ``. In a table of figures the
header is every row above the first row of figures (none when the first row holds
figures; a row that counts 1, 2, 3 … names columns, it holds none), kept as printed
and joined column by column in the context of the chunks that continue the table,
with the header lines pdfium read apart from the aligned rows (a header printed cell by
cell); in other tables it is the first row (two when the first has merged cells). A
first row with one filled cell over three columns or more is the table's title, after a
caption line ("Table 3: …", with the lines under it) just above the table or, where
pdfium set it after the table, just below it. A line inside a table's box whose words
the table has not read stays text: no word is lost. The thresholds are the constants
below.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from fissure.parse.captions import caption_title
from fissure.parse.pdf_layout import HYPHEN, Line
from fissure.parse.pdf_runs import MIN_ROWS, column_edges, phrases

_LEADER = re.compile(r"\.{4,}|(?:\. ){3,}")
_NIL = re.compile(r"(?:\.{1,3}|…|-|–|—|x|n/?a|\*)", re.IGNORECASE)  # a cell meaning "none"
_PAGE_NUMBER = re.compile(r"\d{1,4}|[ivxlcdm]{1,6}", re.IGNORECASE)
_YEAR = re.compile(r"(?:1[89]|20)\d\d")
_DIGIT = re.compile(r"\d")
_NUMBER = re.compile(r"[-+−(]?[$€£¥]?\s?\d[\d,.\s]*%?\)?")
_SCALED = re.compile(r"[$€£¥]?\d[\d,.]*\s?(?:thousand|million|billion|trillion|mn|bn)", re.I)
_MAX_HEADER_ROWS = 12  # printed lines a header may take, its words stacked over narrow columns
_TITLE_WORDS = 2  # words of a title row's one cell where it is not the first
_CAPTION_LINES = 5  # printed lines a caption above a table may take, units line included
_WORDS = re.compile(r"[^\W_]+")  # letters and digits: what a line must not lose
_MARKER = re.compile(r"(?:\d{1,3}|[a-zA-Z]|[ivxIVX]+)[.)]|[•◦▪●∙·*–-]")

__all__ = ["Table", "place", "split_at_grids", "tables_on"]

_SNAP = 3.0  # points: edges this close meet (pdfplumber's own snap tolerance)
_HEAD_GAP = 1.0  # font sizes: a header line above a table is this close over the next
_PROSE_WIDTH = 0.5  # of a table's width: a line above it this wide is prose, not header
_HEAD_WORDS = 8  # words: a phrase above a table this long is prose, not a header cell
_CAPTION_GAP = 0.45  # font sizes: a line this close under a caption goes on with it
_ALIGN = 2.0  # points: word starts this close are one column edge


@dataclass(slots=True)
class Table:
    """A table found on a page: its box (top-down points), rows of cells and title."""

    x0: float
    top: float
    x1: float
    bottom: float
    rows: list[list[str]]
    header: int = 1
    title: str | None = None
    stacked: bool = False  # header rows stacked over the figures: one header, joined


def tables_on(
    found_grids: list[Any], regions: list[list[Line]], lines: Sequence[Line]
) -> list[Table]:
    """Tables on a page: the grids its rules make (``found_grids``, from
    :func:`~fissure.parse.pdf_rules.grids` on a page whose rules make a grid); in each
    region of aligned lines, the table those lines make, one row a line, cut into cells at
    the white channels that run down them. A cell's text is the page's words (``lines``,
    read by pdfium, as the prose around the table is) whose middle lies in the cell."""
    found: list[Table] = []
    for t in found_grids:
        table = _table(t.bbox, _texts(t, lines))
        if table is not None and not _partial(table, _inside(lines, table)):
            found.append(table)
    apart = _drawn_apart(regions)
    claimed = {id(ln) for region in apart for ln in region}
    for region in apart:
        if any(_across(ln, t) for t in found for ln in region):
            continue  # rows of a ruled table already found
        table = _aligned(region, lines, claimed)
        if table is not None and not _list_like(table) and not _contents(table):
            found.append(_without_leaders(table))
    return found


def split_at_grids(lines: list[Line], found_grids: list[Any]) -> list[Line]:
    """The page's lines with each one that runs through two grids of rules or more (ruled
    tables side by side, whose rows pdfium reads as one line) split where it passes from
    one grid to the next, so that each table reads its own part of the line; a line in
    one grid at most is left as it is. ``found_grids``: as for :func:`tables_on`."""
    boxes = [t.bbox for t in found_grids]
    if len(boxes) < 2:
        return lines
    out: list[Line] = []
    for line in lines:
        where = [_box_of(w, line, boxes) for w in line.words]
        if line.role != "text" or len({k for k in where if k is not None}) < 2:
            out.append(line)
            continue
        start = 0
        for k in range(1, len(where) + 1):
            if k == len(where) or where[k] != where[start]:
                out.append(replace(line, words=line.words[start:k]))
                start = k
    return out


def _box_of(word: Any, line: Line, boxes: list[tuple[float, ...]]) -> int | None:
    """Which of the boxes holds a word of a line (its middle), if any."""
    x, y = (word.x0 + word.x1) / 2, (line.top + line.bottom) / 2
    return next(
        (
            k
            for k, (x0, top, x1, bottom) in enumerate(boxes)
            if x0 <= x <= x1 and top <= y <= bottom
        ),
        None,
    )


def _drawn_apart(regions: list[list[Line]]) -> list[list[Line]]:
    """The regions with those that lie within another's rows joined to it, top to bottom:
    a table whose rows were drawn in two passes (pdfium reads the later pass after the rest
    of the page) is one table, not a table with a hole that the other's rows fall into."""
    out: list[list[Line]] = []
    for region in regions:
        top, bottom = min(ln.top for ln in region), max(ln.bottom for ln in region)
        x0, x1 = min(ln.x0 for ln in region), max(ln.x1 for ln in region)
        for k, other in enumerate(out):
            o_top, o_bottom = min(ln.top for ln in other), max(ln.bottom for ln in other)
            within = o_top < top < o_bottom or top < o_top < bottom
            across = x0 < max(ln.x1 for ln in other) and min(ln.x0 for ln in other) < x1
            if other[0].page == region[0].page and within and across:
                out[k] = sorted(other + region, key=lambda ln: (ln.top, ln.x0))
                break
        else:
            out.append(region)
    return out


def _inside(lines: Sequence[Line], table: Table) -> list[Line]:
    """The lines of text that sit in the table's rows and overlap its columns."""
    return [ln for ln in lines if ln.role == "text" and _across(ln, table)]


def _partial(table: Table, inside: list[Line]) -> bool:
    """Whether a table holds only part of its rows (``inside``, from :func:`_inside`), the
    words of one of them running on outside its box: rules around the figures, not around
    the labels, or a column the finder missed."""
    return any(_sticks_out(ln, table) for ln in inside)


def _aligned(lines: list[Line], page: Sequence[Line], claimed: set[int]) -> Table | None:
    """The table a run of aligned lines makes: a row per line, cut into cells at the
    middles of the channels that run down its body (from :func:`_first_figures` on), so
    that a header cell spanning columns ("Race/ethnicity" over "White" …) closes none. Each
    phrase of a line (words closer than a channel is wide) goes whole into the column of
    its middle; in the body a channel always parts two phrases. The header is the run's
    lines above the body with the page's lines it left out (:func:`_loose_head`; the
    lines of every run are ``claimed``), a row per printed line (pieces of one line that
    pdfium read apart make one row)."""
    first = _first_figures(lines)
    loose = [] if first is None else _loose_head(lines, first, page, claimed)
    body = lines[first:] if first is not None else lines
    edges = sorted(column_edges(body))
    head = _printed_rows([*lines[: first or 0], *loose])
    rows: list[list[Any]] = [_cells(row, edges) for row in head]
    # The header: the rows above the body up to one with its label alone ("Assets").
    named = next((k for k, row in enumerate(rows) if not any(row[1:])), len(rows))
    rows += [_cells([line], edges) for line in body]
    every = [*lines, *loose]
    box = (min(ln.x0 for ln in every), min(ln.top for ln in every),
           max(ln.x1 for ln in every), max(ln.bottom for ln in every))  # fmt: skip
    return _table(box, _wrapped_labels(rows), named)


def _cells(printed: list[Line], edges: list[float]) -> list[str]:
    """One row's cells: each phrase of ``printed`` (one printed line, perhaps in pieces)
    in the column of its middle."""
    cells: list[list[str]] = [[] for _ in range(len(edges) + 1)]
    for line in printed:
        for x0, x1, words in phrases(line):
            cells[bisect_left(edges, (x0 + x1) / 2)] += words
    return [" ".join(c) for c in cells]


def _printed_rows(lines: list[Line]) -> list[list[Line]]:
    """Lines grouped by baseline (:func:`_baselines`), top to bottom: pdfium may read a
    header row's cells as separate lines."""
    rows: list[list[Line]] = []
    for base, line in _baselines(lines):
        if base == len(rows):
            rows.append([])
        rows[base].append(line)
    return rows


def _loose_head(
    region: list[Line], first: int, lines: Sequence[Line], claimed: set[int]
) -> list[Line]:
    """Header lines of a region's table that the aligned run left out: lines of text in no
    region, starting within the table's width (a last column's header may run on past
    its figures), above its first row of figures: between the run's lines, or above them
    while each is close over the next (a gap under :data:`_HEAD_GAP` font sizes), up to
    a caption (its lines set close under it stay its own, :func:`_without_caption_tail`)
    or a line of prose (wider than :data:`_PROSE_WIDTH` of the table, or a phrase of more
    than :data:`_HEAD_WORDS` words).
    pdfium reads a header printed cell by cell ("Fall enrollment" / "(in thousands)"
    over each column) as short lines that make no aligned run, and without them the
    header would name none of its columns. ``first``: the region's first row of figures."""
    x0, x1 = min(ln.x0 for ln in region), max(ln.x1 for ln in region)
    body_top, reach = region[first].top, region[0].top
    loose = [ln for ln in lines if ln.role == "text" and id(ln) not in claimed
             and (ln.top + ln.bottom) / 2 < body_top and ln.x0 >= x0 - _SNAP
             and ln.x0 < x1]  # fmt: skip
    out = []
    for line in sorted(loose, key=lambda ln: -ln.bottom):
        if line.top >= reach:  # among the run's own header lines
            out.append(line)
            continue
        if caption_title(line.text) is not None:
            return _without_caption_tail(out, line, region[0].top)
        if reach - line.bottom > _HEAD_GAP * line.size:
            break
        wide = line.x1 - line.x0 > _PROSE_WIDTH * (x1 - x0)
        if wide or any(len(words) > _HEAD_WORDS for _, _, words in phrases(line)):
            break  # prose, or the rest of a caption
        out.append(line)
        reach = min(reach, line.top)
    return out


def _without_caption_tail(head: list[Line], caption: Line, top: float) -> list[Line]:
    """``head`` without the lines above ``top`` that go on from the caption: each set
    close under the one before (a gap of at most :data:`_CAPTION_GAP` font sizes, as the
    lines of one paragraph are), the rest of its title or a unit line ("[In thousands]");
    the column headers start after a wider gap."""
    tail, bottom = set(), caption.bottom
    for line in sorted((ln for ln in head if ln.top < top), key=lambda ln: ln.top):
        if line.top - bottom > _CAPTION_GAP * line.size:
            break
        tail.add(id(line))
        bottom = max(bottom, line.bottom)
    return [ln for ln in head if id(ln) not in tail]


def _first_figures(lines: list[Line]) -> int | None:
    """The first line that holds a figure after its first word (column numbers are no
    figures, see :func:`_counting`) and lines up with the rows under it, when at least
    :data:`MIN_ROWS` lines start there; else ``None``. A line with words among its figures
    that close a channel running down all the lines under it is a header's: the bounds of
    classes set over their columns ("Less than $10,000– $15,000– … $55,000"), and so is
    each line under it with words among its figures (the upper bounds, "14,999 … or
    more"). A row of figures alone is the body's, however wide its figures."""
    headed = False
    for k, line in enumerate(lines):
        rest = [w.text for w in line.words[1:]]
        numbers = [t for t in rest if _NUMBER.fullmatch(t) and not _YEAR.fullmatch(t)]
        if not numbers or _counting(numbers):  # column numbers 1, 2, 3 … are a header's
            continue
        if len(lines) - k < MIN_ROWS:
            return None
        worded = any(not _DIGIT.search(" ".join(w)) for _, _, w in phrases(line)[1:])
        if worded and not headed:
            below = lines[k + 1 :]
            edges = column_edges(below) if len(below) >= MIN_ROWS else []
            headed = len(column_edges([line, *below])) < len(edges)
        if not (worded and headed):
            return k
    return None


def _wrapped_labels(rows: list[list[str]]) -> list[list[str]]:
    """Rows with a label wrapped over two printed lines made one: a line with its label
    alone joins the row after it when that row's label goes on in lower case ("Net cash
    from operating" / "activities 1,234"), or the row before when its own does."""
    out: list[list[str]] = []
    k = 0
    while k < len(rows):
        row = rows[k]
        alone = bool(row[0]) and not any(row[1:])
        if alone and k + 1 < len(rows) and rows[k + 1][0][:1].islower():
            out.append([f"{row[0]} {rows[k + 1][0]}", *rows[k + 1][1:]])
            k += 2
            continue
        if alone and out and row[0][:1].islower() and any(out[-1][1:]):
            out[-1][0] = f"{out[-1][0]} {row[0]}"
        else:
            out.append(row)
        k += 1
    return out


def _texts(found: Any, lines: Sequence[Line]) -> list[list[str | None]]:
    """The text of each cell of a pdfplumber table, from pdfium's words: the words whose
    middle lies in the cell, a printed line per line of the cell (``None`` for a cell
    that a merged cell covers). A ruled row that holds several rows without rules between
    them (see :func:`_unruled_rows`) is one row per printed line."""
    x0, top, x1, bottom = found.bbox
    inside = [ln for ln in lines if ln.role == "text" and ln.top < bottom and ln.bottom > top]
    words = [(w, k) for k, ln in _baselines(inside) for w in ln.words
             if x0 <= (w.x0 + w.x1) / 2 <= x1]  # fmt: skip
    if not words:
        return []
    rows: list[list[str | None]] = []
    for row in found.rows:
        cells = [None if box is None else _cell(box, words) for box in row.cells]
        if _unruled_rows(cells):
            for base in sorted({b for c in cells if c for b in c}):
                rows.append([" ".join(c.get(base, [])) if c else "" for c in cells])
        else:
            rows.append([None if c is None else _lines(c) for c in cells])
    return [[None if c is None else c.replace(HYPHEN, "-") for c in r] for r in rows]


def _unruled_rows(cells: list[dict[int, list[str]] | None]) -> bool:
    """Whether a ruled row's cells are several rows without rules between them: its first
    column holds a line for each of them (the most lines of any column), and another
    column holds several lines too. A row whose label is one line and whose other cells
    wrap is one row."""
    heights = [len(c) if c else 0 for c in cells]
    if not heights or heights[0] < 2 or heights[0] < max(heights):
        return False
    return sum(1 for h in heights[1:] if h > 1) >= 1


def _lines(cell: dict[int, list[str]]) -> str:
    return "\n".join(" ".join(words) for _, words in sorted(cell.items()))


def _baselines(lines: list[Line]) -> list[tuple[int, Line]]:
    """Each line with the rank of its baseline (lines whose middles are within two points
    of each other share one: pdfium may read a row's cells as separate lines)."""
    ranked: list[tuple[int, Line]] = []
    rank, last = -1, None
    for line in sorted(lines, key=lambda ln: (ln.top + ln.bottom) / 2):
        middle = (line.top + line.bottom) / 2
        if last is None or middle - last > 2.0:
            rank += 1
        ranked.append((rank, line))
        last = middle
    return ranked


def _cell(
    box: tuple[float, float, float, float], words: list[tuple[Any, int]]
) -> dict[int, list[str]]:
    """The words inside a cell's box, by baseline."""
    found: dict[int, list[str]] = {}
    for w, base in words:
        if box[0] <= (w.x0 + w.x1) / 2 <= box[2] and box[1] <= (w.top + w.bottom) / 2 <= box[3]:
            found.setdefault(base, []).append(w.text)
    return found


def _contents(table: Table) -> bool:
    """A table of contents: dot leaders run to page numbers, and nothing else is in the
    rows (a title, perhaps a number in front, and the page)."""
    if not any(_LEADER.search(c) for r in table.rows for c in r):
        return False
    filled = [[c for c in r if c] for r in table.rows]
    return all(len(r) <= 3 and _PAGE_NUMBER.fullmatch(r[-1]) for r in filled if len(r) > 1)


def _without_leaders(table: Table) -> Table:
    """The table with the dot leaders that join its labels to their values taken out."""
    for row in table.rows:
        for k, cell in enumerate(row):
            if _LEADER.search(cell) and not _NIL.fullmatch(cell):
                row[k] = " ".join(_LEADER.sub(" ", cell).split())
    return table


def _list_like(table: Table) -> bool:
    """A numbered or bulleted list set with tab stops: its first column is only markers."""
    first = [row[0] for row in table.rows]
    return all(_MARKER.fullmatch(c) for c in first if c) and len(table.rows[0]) == 2


def _table(
    bbox: tuple[float, float, float, float], rows: list[list[Any]], head: int = 0
) -> Table | None:
    """A found grid as a table, or ``None`` when it is not one (too small, mostly empty,
    a numbered code listing). ``head``: rows known to be the header (an aligned table's
    lines above its first row of figures), whatever figures they hold."""
    spans = [any(c is None for c in row) for row in rows]
    split: list[tuple[list[str], bool]] = []
    lead = 0  # the ``head`` rows, counted in the rows kept
    for k, (row, spanned) in enumerate(zip(rows, spans, strict=True)):
        split += [(r, spanned) for r in _sub_rows(row)]
        if k + 1 == head:
            lead = sum(1 for r, _ in split if any(r))
    kept = [(r, s) for r, s in split if any(r)]
    width = max((len(r) for r, _ in kept), default=0)
    used = [k for k in range(width) if any(k < len(r) and r[k] for r, _ in kept)]
    if len(used) < width:  # rules drawn double (a thin box) make empty columns between them
        kept = [([r[k] if k < len(r) else "" for k in used], s) for r, s in kept]
    if len(kept) < 2 or len(used) < 2:
        return None
    before = len(kept)
    title, kept = _title_rows(kept)
    cells = [c for r, _ in kept for c in r]
    if sum(1 for c in cells if c) < 0.5 * len(cells) or _numbered_lines(kept):
        return None
    rows = [r for r, _ in kept]
    header = _header(kept)
    lead -= before - len(kept)  # the title's rows
    if header < lead <= _MAX_HEADER_ROWS and lead < len(rows):
        header = lead
    x0, top, x1, bottom = bbox
    stacked = header > 1 and any(_figures(r) for r in rows)
    return Table(x0, top, x1, bottom, rows, header, title, stacked)


def _title_rows(
    kept: list[tuple[list[str], bool]],
) -> tuple[str | None, list[tuple[list[str], bool]]]:
    """The table's title and the rows after it: a first row with one filled cell over
    three columns or more (padded with empty cells), the first or a phrase of
    :data:`_TITLE_WORDS` words at least, or a caption ("Table A.3: …") that
    the finder took in as a row, cut into cells, with the rows of one cell under it (the
    rest of its lines)."""
    filled = [c for c in kept[0][0] if c] if kept else []
    # A title starts the row or is a phrase; one word over a value column ("Percent")
    # heads that column.
    titled = len(filled) == 1 and (bool(kept[0][0][0]) or len(filled[0].split()) >= _TITLE_WORDS)
    if len(kept) > 3 and len(kept[0][0]) >= 3 and titled:
        return filled[0], kept[1:]
    if len(kept) > 3 and caption_title(" ".join(filled)) is not None:
        lines, k = [" ".join(filled)], 1
        while k < len(kept) - 2 and sum(1 for c in kept[k][0] if c) == 1:
            lines.append(next(c for c in kept[k][0] if c))
            k += 1
        return " ".join(lines), kept[k:]
    return None, kept


def _header(kept: list[tuple[list[str], bool]]) -> int:
    """How many header rows lead the rows (kept as printed: a chunk's context joins them
    column by column, see :mod:`fissure.split.tables`).

    In a table of figures the header is the rows above the first row of figures that
    name the value columns — none when the first row holds figures already, and a row
    with its label alone ("Assets") is the body's; a table without figures has its first
    row (two when the first has merged cells) as its header."""
    rows = [r for r, _ in kept]
    figures = [_figures(r) for r in rows]
    if not any(figures):
        return 2 if kept[0][1] and len(kept) > 2 else 1
    lead = 0
    while not figures[lead] and any(rows[lead][1:]):
        lead += 1
    return lead if lead <= _MAX_HEADER_ROWS else 1


def _figures(row: list[str]) -> bool:
    """Whether a row holds figures in its value columns (years alone are headings, and so
    are the column numbers 1, 2, 3 … under a heading such as "Lead time (years)")."""
    values = [c for c in row[1:] if c]
    numbers = [c for c in values if _NUMBER.fullmatch(c) or _SCALED.fullmatch(c)]
    if not numbers or all(_YEAR.fullmatch(c) for c in numbers):
        return False
    return not _counting(numbers)


def _counting(numbers: list[str]) -> bool:
    """Whether the figures count 1, 2, 3 … (three at least): column numbers, perhaps after
    named columns ("PK", "K", 1, 2 …)."""
    if len(numbers) < 3 or not all(v.isdigit() for v in numbers):
        return False
    start = int(numbers[0])
    return [int(v) for v in numbers] == list(range(start, start + len(numbers)))


def _sub_rows(row: list[Any]) -> list[list[str]]:
    """A row's cells; when every filled cell holds the same number of lines (a table
    ruled only above and below, whose rows pdfplumber cannot tell apart), one row each."""
    cells = [(c or "").split("\n") for c in row]
    heights = {len(c) for c in cells if any(x.strip() for x in c)}
    if len(heights) == 1 and (k := heights.pop()) > 1 and all(len(c) in (1, k) for c in cells):
        return [[" ".join(c[i].split()) if len(c) == k else "" for c in cells] for i in range(k)]
    return [[" ".join(c.split()) for c in (x or "" for x in row)]]


def _numbered_lines(rows: list[tuple[list[str], bool]]) -> bool:
    """A code listing with line numbers: the first column counts 1, 2, 3 …"""
    first = [r[0] for r, _ in rows]
    if not all(c.isdigit() for c in first) or all(_YEAR.fullmatch(c) for c in first):
        return False  # a column of years counts up too
    numbers = [int(c) for c in first]
    return all(b == a + 1 for a, b in zip(numbers, numbers[1:], strict=False))


def place(lines: list[Line], tables: list[Table]) -> None:
    """Put each table in the flow of ``lines``: the first line inside its box that the
    table has read becomes the table (``role = "table"``), the others it has read leave the
    text; a caption next to it becomes its title. A line inside the box whose words the
    table does not hold (a header line the finder left out, rows of another table) stays
    text, so that no word is lost. A table whose rows run on outside its box (a column the
    finder missed) is dropped and its lines stay text: better plain text than a cut table."""
    for table in tables:
        inside = _inside(lines, table)
        if not inside or _partial(table, inside):
            continue
        read = _read(table, inside)
        if not read:
            continue
        caption = _caption(lines, table, read)  # before a title row's text: both are kept
        table.title = " ".join(t for t in (caption, table.title) if t) or None
        read[0].role, read[0].table = "table", table
        for line in read[1:]:
            line.role = "covered"


def _read(table: Table, inside: list[Line]) -> list[Line]:
    """The lines of ``inside`` whose every word (letters and digits) the table's cells and
    title hold, each word counted once."""
    cells = " ".join(c for row in table.rows for c in row)
    held = Counter(_WORDS.findall(f"{table.title or ''} {cells}"))
    read = []
    for line in inside:
        need = Counter(_WORDS.findall(line.text))
        if not need - held:
            held -= need
            read.append(line)
    return read


def _across(line: Line, table: Table) -> bool:
    """Whether the line sits in the table's rows and overlaps its columns."""
    middle = (line.top + line.bottom) / 2
    within = table.top - 1 <= middle <= table.bottom + 1
    return within and line.x1 > table.x0 and line.x0 < table.x1


def _sticks_out(line: Line, table: Table) -> bool:
    return any(w.x0 < table.x0 - _SNAP or w.x1 > table.x1 + _SNAP for w in line.words)


def _caption(lines: list[Line], table: Table, read: list[Line]) -> str | None:
    """A caption just above the table: a line that starts like one (:func:`caption_title`)
    up to :data:`_CAPTION_LINES` lines up, each line close under the one above, taken with
    the lines under it (the rest of its title, a unit line such as "[In thousands]"); else
    a caption line just below the table. The lines used leave the text."""
    first = lines.index(read[0])
    last = lines.index(read[-1])
    under = table.top
    for k in range(first - 1, max(first - 1 - _CAPTION_LINES, -1), -1):
        line = lines[k]
        if line.role != "text" or under - line.bottom > 3 * line.size:
            break
        if caption_title(line.text) is not None:
            taken = [ln for ln in lines[k:first] if ln.role == "text"]
            for ln in taken:
                ln.role = "covered"
            return " ".join(ln.text for ln in taken)
        under = min(under, line.top)
    for k in range(last + 1, min(last + 3, len(lines))):
        line = lines[k]
        if line.role != "text" or line.top - table.bottom > 3 * line.size:
            break
        if caption_title(line.text) is not None:
            line.role = "covered"
            return line.text
    return None
