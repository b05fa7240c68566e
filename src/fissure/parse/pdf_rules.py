"""What a PDF page draws besides text: rules that may make a table's grid, and images.

:func:`graphics` looks at every path's and image's bounds, through pdfium, on every page:
cheap enough to tell a page whose rules make a grid (three horizontal edges each crossed
by three vertical ones) and how much of it is image (a scan). On a page whose rules make a
grid, :func:`rules` reads the paths' segments (through pdfium again, with the matrices of
the forms they sit in) as horizontal and vertical edges, and :func:`grids` finds the
tables' cells from them with pdfplumber's own table algorithm (snap and join the edges,
their crossings, the cells, the tables of touching cells), so that no page is read a
second time by pdfminer.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

from fissure.parse.pdf_frame import Frame, frame_of

__all__ = ["Graphics", "graphics", "grids", "ruled", "rules"]

_RULES = 3  # edges each way (crossing) before a page may hold a ruled table
_MAX_EDGES = 2000
_SNAP = 3.0  # points: edges this close meet (pdfplumber's own snap tolerance)
_THIN = 2.0  # points: a path thinner than this in one direction is a rule
_LONG = 8.0
_MAX_OBJECTS = 20000  # a page with more objects is not searched for rules
_MAX_SEGMENTS = 50000  # path segments read on one page, at most
_MIN_EDGE = 3.0  # points: a shorter edge is no rule (pdfplumber's edge_min_length)
_NARROW = 12.0  # points: no column this narrow lies between a rule's end and a border
_ON_LINE = 1.0  # points: a filled area's side this close to a rule's line carries it on
_LEVEL = 1.0  # points: a segment this close to level (or plumb) is a rule
_IDENTITY = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
_SHAPE = 5  # segments: a boxed path with more may be a whole grid drawn as one path

Matrix = tuple[float, float, float, float, float, float]
Edge = dict[str, Any]  # pdfplumber's edge: x0, x1, top, bottom, width, height, orientation


@dataclass(frozen=True, slots=True)
class Graphics:
    """What a page draws besides text: whether its rules could make a table, and how much
    of it is image."""

    ruled: bool
    image_share: float
    paths: int = 0  # path objects drawn (rules among them, perhaps in small pieces)


def graphics(page: Any) -> Graphics:
    """Look at a page's paths and images (into forms): ``ruled`` when its rules and box
    edges make a grid of two by two cells at least, that is three horizontal edges each
    crossed by three vertical ones (a box around a listing has two of each), or when one
    path's segments do (a grid drawn as one path)."""
    import pypdfium2.raw as pdfium_c

    left, bottom, right, top = page.get_mediabox()
    area = max((right - left) * (top - bottom), 1.0)
    across: list[tuple[float, float, float]] = []  # x0, x1, y
    down: list[tuple[float, float, float]] = []  # y0, y1, x
    image = 0.0
    box = [ctypes.c_float() for _ in range(4)]
    refs = [ctypes.byref(b) for b in box]
    count = pdfium_c.FPDFPage_CountObjects(page.raw)
    todo = [pdfium_c.FPDFPage_GetObject(page.raw, k) for k in _indexes(count)]
    seen = paths = 0
    drawn_grid = False
    while todo and seen < _MAX_OBJECTS:
        obj = todo.pop()
        seen += 1
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind == pdfium_c.FPDF_PAGEOBJ_FORM:
            n = pdfium_c.FPDFFormObj_CountObjects(obj)
            todo.extend(pdfium_c.FPDFFormObj_GetObject(obj, k) for k in _indexes(n))
            continue
        if kind not in (pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_IMAGE):
            continue
        if not pdfium_c.FPDFPageObj_GetBounds(obj, *refs):
            continue
        x0, y0, x1, y1 = (b.value for b in box)
        if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            image += max(x1 - x0, 0.0) * max(y1 - y0, 0.0)
            continue
        paths += 1
        _edges(x0, y0, x1, y1, across, down)
        if x1 - x0 > _LONG and y1 - y0 > _LONG and not drawn_grid:
            # A box drawn as one path may be a whole grid: its segments tell.
            drawn_grid = pdfium_c.FPDFPath_CountSegments(obj) > _SHAPE and _grid_path(obj)
    return Graphics(drawn_grid or _grid(across, down), min(image / area, 1.0), paths)


def _grid_path(obj: Any) -> bool:
    """Whether one path's own segments make a grid (in the path's own coordinates: a
    grid is one whichever way up)."""
    segments = _segments(obj, _IDENTITY, [2000])
    return _grid_of([e for a, b in segments if (e := _edge(*a, *b)) is not None])


def _grid_of(edges: list[Edge]) -> bool:
    """:func:`_grid` over edges in pdfplumber's form."""
    across = [(e["x0"], e["x1"], e["top"]) for e in edges if e["orientation"] == "h"]
    down = [(e["top"], e["bottom"], e["x0"]) for e in edges if e["orientation"] == "v"]
    return _grid(across, down)


def _edges(
    x0: float, y0: float, x1: float, y1: float,
    across: list[tuple[float, float, float]], down: list[tuple[float, float, float]],
) -> None:  # fmt: skip
    """A path's rule (thin) or the four edges of its box."""
    w, h = x1 - x0, y1 - y0
    if len(across) + len(down) > _MAX_EDGES:
        return
    if h < _THIN and w > _LONG:
        across.append((x0, x1, (y0 + y1) / 2))
    elif w < _THIN and h > _LONG:
        down.append((y0, y1, (x0 + x1) / 2))
    elif w > _LONG and h > _LONG:
        across += [(x0, x1, y0), (x0, x1, y1)]
        down += [(y0, y1, x0), (y0, y1, x1)]


def _grid(across: list[tuple[float, float, float]], down: list[tuple[float, float, float]]) -> bool:
    """Whether three horizontal edges are each crossed by three vertical ones."""
    if len(across) < _RULES or len(down) < _RULES:
        return False
    crossed = 0
    for x0, x1, y in across:
        xs = {
            round(x)
            for y0, y1, x in down
            if x0 - _SNAP <= x <= x1 + _SNAP and y0 - _SNAP <= y <= y1 + _SNAP
        }
        if len(xs) >= _RULES:
            crossed += 1
            if crossed >= _RULES:
                return True
    return False


def _indexes(n: int) -> range:
    return range(min(max(n, 0), _MAX_OBJECTS))


def ruled(edges: list[Edge]) -> bool:
    """Whether edges (from :func:`rules`, snapped and joined) make a grid: three
    horizontal ones each crossed by three vertical ones."""
    return _grid_of(edges)


def rules(page: Any, frame: Frame | None = None) -> list[Edge]:
    """The page's straight, level or plumb path segments as pdfplumber edges (top-down
    points in the page's reading frame, as the page's words are: unturned by default),
    snapped and joined as pdfplumber's table finder does (once: :func:`ruled` and
    :func:`grids` take them so)."""
    import pypdfium2.raw as pdfium_c
    from pdfplumber.table import merge_edges

    place = (frame or frame_of(page)).point
    matrix = pdfium_c.FS_MATRIX()
    count = pdfium_c.FPDFPage_CountObjects(page.raw)
    todo = [(pdfium_c.FPDFPage_GetObject(page.raw, k), _IDENTITY) for k in _indexes(count)]
    edges: list[Edge] = []
    areas: list[list[Edge]] = []  # each filled area's edges: rules unless in one grid cell
    budget = [_MAX_SEGMENTS]
    while todo and len(edges) + sum(map(len, areas)) < _MAX_EDGES and budget[0] > 0:
        obj, outer = todo.pop()
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind not in (pdfium_c.FPDF_PAGEOBJ_FORM, pdfium_c.FPDF_PAGEOBJ_PATH):
            continue
        own = _IDENTITY
        if pdfium_c.FPDFPageObj_GetMatrix(obj, ctypes.byref(matrix)):
            m = matrix
            own = (m.a, m.b, m.c, m.d, m.e, m.f)
        placed = _compose(outer, own)
        if kind == pdfium_c.FPDF_PAGEOBJ_FORM:
            n = pdfium_c.FPDFFormObj_CountObjects(obj)
            todo.extend((pdfium_c.FPDFFormObj_GetObject(obj, k), placed) for k in _indexes(n))
            continue
        found = edges
        if _shading(obj):
            found = []
            areas.append(found)
        for a, b in _segments(obj, placed, budget):
            edge = _edge(*place(*a), *place(*b))
            if edge is not None:
                found.append(edge)
    merged = merge_edges(edges, _SNAP, _SNAP, _SNAP, _SNAP)
    areas = [area for area in areas if area]
    if areas:
        cells = [c for t in grids(merged) for c in t.cells] if ruled(merged) else []
        kept = []
        for area in areas:
            if not any(_inside(_box(area), c) for c in cells):
                kept.extend(area)  # no grid around it: its edges may be all that draws it
                continue
            for e in area:  # on the rule's own line: it must not move the rule it carries on
                rule = next((r for r in merged if _carries_on(e, r)), None)
                if rule is not None:
                    kept.append(_moved(e, rule))
        if kept:
            merged = merge_edges(edges + kept, _SNAP, _SNAP, _SNAP, _SNAP)
    return merged + _open_sides(merged, "h") + _open_sides(merged, "v")


def _open_sides(edges: list[Edge], way: str) -> list[Edge]:
    """The sides a table leaves open, drawn where its rules end: many reports rule a
    table's rows (or columns) across its whole width but draw no border at its sides
    (or at its top and bottom), and without one a grid has no cells in its first and last
    columns. Of the ``way`` rules (``h``: horizontal) that a rule of the other way
    meets, those that end on one line make a side there, between two of them that two
    rules of the other way meet both (so that a page's running rules, which no column
    rule meets, are never joined to a table, and a table ruled only after its first
    column, its other columns set apart by white space, stays for the finder of tables
    without rules), unless a rule is drawn there already."""
    other = [e for e in edges if e["orientation"] != way]
    meets = _meets if way == "h" else lambda v, h: _meets(h, v)
    met: dict[int, frozenset[int]] = {}  # a rule's id -> the rules of the other way it meets
    mine: list[Edge] = []
    for rule in edges:
        if rule["orientation"] == way:
            met[id(rule)] = frozenset(k for k, r in enumerate(other) if meets(rule, r))
            if met[id(rule)]:
                mine.append(rule)
    at, ends = ("top", ("x0", "x1")) if way == "h" else ("x0", ("top", "bottom"))
    out: list[Edge] = []
    for end in ends:
        mine.sort(key=lambda e: e[end])
        group: list[Edge] = []
        for e in [*mine, None]:
            if e is not None and (not group or e[end] - group[-1][end] <= _SNAP):
                group.append(e)
                continue
            out.extend(_sides(sorted(group, key=lambda g: g[at]), end, other, met, way))
            group = [e] if e is not None else []
    return out


def _sides(
    line: list[Edge], end: str, other: list[Edge], met: dict[int, frozenset[int]], way: str
) -> list[Edge]:
    """Sides at ``end`` between rules ending on one line (:func:`_open_sides`; ``met``: the
    rules of ``other`` each one meets), each run of them one edge at one place (the ends'
    mean), so that the cells beside it share it."""
    if len(line) < 2:
        return []
    pos = sum(e[end] for e in line) / len(line)
    across = "x0" if way == "h" else "top"  # where a rule of the other way lies
    at = "top" if way == "h" else "x0"
    runs: list[list[float]] = []
    for a, b in zip(line, line[1:], strict=False):
        both = [other[k] for k in met[id(a)] & met[id(b)]]
        if len(both) < 2 or any(abs(r[across] - pos) <= _NARROW for r in both):
            continue  # too few rules hold the two together, or the side is drawn (or
            # the rules only overrun a border drawn just inside their ends)
        if runs and runs[-1][1] == a[at]:
            runs[-1][1] = b[at]
        else:
            runs.append([a[at], b[at]])
    sides = (_edge(pos, a, pos, b) if way == "h" else _edge(a, pos, b, pos) for a, b in runs)
    return [side for side in sides if side is not None]


def _meets(h: Edge, v: Edge) -> bool:
    """Whether a horizontal and a vertical edge cross or touch, give or take a snap."""
    return (
        h["x0"] - _SNAP <= v["x0"] <= h["x1"] + _SNAP
        and v["top"] - _SNAP <= h["top"] <= v["bottom"] + _SNAP
    )


def _carries_on(edge: Edge, rule: Edge) -> bool:
    """Whether an edge runs on from a rule: the same orientation, on the rule's very line
    (within a point: a cell's background meets the border drawn around it, where the
    background of a line of text inside a cell sits a little off the rules), and touching
    or overlapping it along its length, give or take a snap."""
    if edge["orientation"] != rule["orientation"]:
        return False
    at, lo, hi = ("x0", "top", "bottom") if edge["orientation"] == "v" else ("top", "x0", "x1")
    return (
        abs(edge[at] - rule[at]) <= _ON_LINE
        and edge[lo] <= rule[hi] + _SNAP
        and rule[lo] <= edge[hi] + _SNAP
    )


def _moved(edge: Edge, rule: Edge) -> Edge:
    """``edge`` moved onto the line of ``rule`` (same orientation)."""
    if edge["orientation"] == "v":
        return {**edge, "x0": rule["x0"], "x1": rule["x0"]}
    return {**edge, "top": rule["top"], "bottom": rule["top"], "doctop": rule["top"]}


def _box(edges: list[Edge]) -> tuple[float, float, float, float]:
    """The box (x0, top, x1, bottom) around edges."""
    return (
        min(e["x0"] for e in edges),
        min(e["top"] for e in edges),
        max(e["x1"] for e in edges),
        max(e["bottom"] for e in edges),
    )


def _inside(box: tuple[float, float, float, float], cell: tuple[float, ...]) -> bool:
    """Whether a box lies inside a cell of a grid of rules, give or take a snap."""
    x0, top, x1, bottom = cell
    return (
        box[0] >= x0 - _SNAP
        and box[2] <= x1 + _SNAP
        and box[1] >= top - _SNAP
        and box[3] <= bottom + _SNAP
    )


def _shading(obj: Any) -> bool:
    """Whether a path is a filled area without a stroke, wider and taller than a rule: a
    cell's or a row's background. Inside one cell of a grid of rules, only its edges that
    carry on a rule of the grid count (a shaded header cell's side, continuing a column's
    rule up through the header); its other edges, inset from the cell's, would cut narrow
    empty rows and columns into it (a code span's or a marked cell's background). Bands of
    colour without rules around them may be all that draws the table."""
    import pypdfium2.raw as pdfium_c

    fill, stroke = ctypes.c_int(), ctypes.c_int()
    if not pdfium_c.FPDFPath_GetDrawMode(obj, ctypes.byref(fill), ctypes.byref(stroke)):
        return False
    if stroke.value or not fill.value:
        return False
    box = [ctypes.c_float() for _ in range(4)]
    if not pdfium_c.FPDFPageObj_GetBounds(obj, *(ctypes.byref(b) for b in box)):
        return False
    left, bottom, right, top = (b.value for b in box)
    return right - left > _THIN and top - bottom > _THIN


def _segments(
    obj: Any, matrix: Matrix, budget: list[int]
) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """A path's straight segments, in page coordinates (curves are left out)."""
    import pypdfium2.raw as pdfium_c

    n = min(pdfium_c.FPDFPath_CountSegments(obj), budget[0])
    budget[0] -= max(n, 0)
    x, y = ctypes.c_float(), ctypes.c_float()
    out = []
    start = last = None
    for k in range(max(n, 0)):
        segment = pdfium_c.FPDFPath_GetPathSegment(obj, k)
        if not segment or not pdfium_c.FPDFPathSegment_GetPoint(
            segment, ctypes.byref(x), ctypes.byref(y)
        ):
            continue
        point = _apply(matrix, x.value, y.value)
        kind = pdfium_c.FPDFPathSegment_GetType(segment)
        if kind == pdfium_c.FPDF_SEGMENT_LINETO and last is not None:
            out.append((last, point))
        elif kind == pdfium_c.FPDF_SEGMENT_MOVETO:
            start = point
        last = point
        if pdfium_c.FPDFPathSegment_GetClose(segment) and start is not None:
            out.append((point, start))
            last = start
    return out


def _edge(x0: float, top0: float, x1: float, top1: float) -> Edge | None:
    """A segment as a pdfplumber edge, when it is level or plumb and long enough."""
    if abs(top0 - top1) <= _LEVEL and abs(x1 - x0) >= _MIN_EDGE:
        y = (top0 + top1) / 2
        a, b = sorted((x0, x1))
        return {"x0": a, "x1": b, "top": y, "bottom": y, "doctop": y, "width": b - a,
                "height": 0.0, "orientation": "h"}  # fmt: skip
    if abs(x0 - x1) <= _LEVEL and abs(top1 - top0) >= _MIN_EDGE:
        x = (x0 + x1) / 2
        a, b = sorted((top0, top1))
        return {"x0": x, "x1": x, "top": a, "bottom": b, "doctop": a, "width": 0.0,
                "height": b - a, "orientation": "v"}  # fmt: skip
    return None


def _compose(outer: Matrix, inner: Matrix) -> Matrix:
    """The matrix that applies ``inner``, then ``outer``."""
    a, b, c, d, e, f = inner
    A, B, C, D, E, F = outer
    return (a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D,
            e * A + f * C + E, e * B + f * D + F)  # fmt: skip


def _apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    return m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]


def grids(edges: list[Edge]) -> list[Any]:
    """The ruled tables the edges (from :func:`rules`) make, as pdfplumber tables
    (``.bbox``, ``.rows`` of cell boxes; without a page, which only their ``extract`` would
    read), found by pdfplumber's table algorithm with its default tolerances."""
    from pdfplumber.table import (
        Table,
        cells_to_tables,
        edges_to_intersections,
        intersections_to_cells,
    )

    kept = [e for e in edges if max(e["x1"] - e["x0"], e["bottom"] - e["top"]) >= _MIN_EDGE]
    cells = intersections_to_cells(edges_to_intersections(kept, _SNAP, _SNAP))
    return [Table(None, group) for group in cells_to_tables(cells)]  # type: ignore[arg-type]
