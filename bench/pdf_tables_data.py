"""Table-structure data for ``bench.pdf_tables``: PDFs and their expected tables.

Usage (after the agent's ``fetch`` of ``github:camelot-dev/camelot`` and, for the
cross-check, ``github:tabulapdf/tabula-java``)::

    python -m bench.pdf_tables_data [--mirrors /work/.mirror] [--out DIR]

Source: the ICDAR 2013 Table Competition data set (Göbel et al., EU and US government
documents, hand-annotated cell structure), as shipped in camelot's test files
(``tests/files/tabula/icdar2013-dataset``). For each document ``X.pdf`` the annotation
``X-str.xml`` lists each table's cells with their start/end row and column, text and
bounding box. Kept: tables whose annotation is one region on one page and whose PDF is in
the mirror (``us-011b``/``us-031b``/``us-035b`` are second annotations of a document and
have no PDF of their own). The expected table is the cell grid: a spanning cell's text at
its first row and column, the other slots it covers empty.

camelot's ``tests/data.py`` and tabula-java's expected CSVs were read but not used: they
are each tool's own regression output, not an independent truth, and would favour it.

Kinds (several may apply), decided from the PDF itself with pdfplumber, inside the union
of the annotated cell boxes padded by 4 pt:

- ``ruled``: at least 3 vertical and 3 horizontal rules: positions where rule segments
  (lines or rectangle edges, often one per cell) cover half the table's height or width
  or more: the printed grid a lattice reader follows;
- ``borderless``: not ruled;
- ``dot-leaders``: the printed text in the box holds a run of five or more dots;
- ``multi-row-header``: the annotation has a cell in its first row that spans several
  columns or rows (a group header over sub-headers).

Writes ``OUT/pdfs/*.pdf``, ``OUT/tables/<id>.json`` (``{"rows": [[cell, ...], ...]}``)
and ``OUT/manifest.json`` (per table: id, pdf, page, kinds, source repo, commit, paths,
license).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

OUT = Path("/work/shared/datasets/pdf-tables")
MIRRORS = Path("/work/.mirror")
CAMELOT = "camelot-dev/camelot"
ICDAR = "tests/files/tabula/icdar2013-dataset"
LICENSE = (
    "camelot repository: MIT; the ICDAR 2013 Table Competition data inside it is "
    "published by its organisers for research and evaluation (no licence file of its own)"
)
DOTS = re.compile(r"(?:\.\s?){5,}|…{2,}")
PAD = 4.0


def git(repo: str, *args: str, mirrors: Path = MIRRORS) -> bytes:
    """Run git on a fetched bare mirror (``owner+name/repo``)."""
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, check=True
    ).stdout


def icdar_pairs(mirrors: Path) -> list[tuple[str, str]]:
    """(pdf path, structure xml path) for each ICDAR document with both in the mirror."""
    names = git(CAMELOT, "ls-tree", "-r", "--name-only", "HEAD", ICDAR, mirrors=mirrors)
    paths = set(names.decode().splitlines())
    pairs = []
    for path in sorted(paths):
        if path.endswith("-str.xml") and path.replace("-str.xml", ".pdf") in paths:
            pairs.append((path.replace("-str.xml", ".pdf"), path))
    return pairs


def parse_structure(xml: bytes) -> list[dict[str, Any]]:
    """The one-region tables of an ICDAR ``-str.xml``: page, grid rows and cell boxes."""
    tables = []
    for table in ET.fromstring(xml).iter("table"):
        regions = table.findall("region")
        if len(regions) != 1:
            continue
        cells = []
        for cell in regions[0].iter("cell"):
            r0, c0 = int(cell.get("start-row")), int(cell.get("start-col"))
            r1 = int(cell.get("end-row", r0))
            c1 = int(cell.get("end-col", c0))
            box = cell.find("bounding-box")
            bbox = [_number(box.get(k)) for k in ("x1", "y1", "x2", "y2")]
            text = " ".join((cell.findtext("content") or "").split())
            cells.append({"r": (r0, r1), "c": (c0, c1), "bbox": bbox, "text": text})
        if cells:
            tables.append({"page": int(regions[0].get("page")), "cells": cells})
    return tables


def _number(text: str) -> float:
    """A coordinate; the annotation has a few typos ('26ß')."""
    return float(re.sub(r"[^0-9.\-]", "", text))


def grid(cells: list[dict[str, Any]]) -> list[list[str]]:
    """Rows of cell strings; a spanning cell's text at its top-left slot only."""
    rows = max(c["r"][1] for c in cells) + 1
    cols = max(c["c"][1] for c in cells) + 1
    out = [[""] * cols for _ in range(rows)]
    for cell in cells:
        r, c = cell["r"][0], cell["c"][0]
        out[r][c] = " ".join(filter(None, [out[r][c], cell["text"]]))
    return out


def table_box(cells: list[dict[str, Any]], height: float) -> tuple[float, ...]:
    """The cells' union as pdfplumber's (x0, top, x1, bottom), padded; ICDAR's y is up."""
    x0 = min(c["bbox"][0] for c in cells) - PAD
    x1 = max(c["bbox"][2] for c in cells) + PAD
    top = height - max(c["bbox"][3] for c in cells) - PAD
    bottom = height - min(c["bbox"][1] for c in cells) + PAD
    return (x0, top, x1, bottom)


def rules(page: Any, box: tuple[float, ...]) -> tuple[int, int]:
    """Vertical and horizontal rules in ``box``: positions (3 pt apart) where rule segments
    (lines, rectangle edges; often one per cell) cover half the box's height or width."""
    x0, top, x1, bottom = box
    spans: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for e in visible_edges(page):  # each segment clipped to the box
        if e["orientation"] == "v" and x0 <= e["x0"] <= x1:
            part = (max(e["top"], top), min(e["bottom"], bottom))
            spans.setdefault(("v", round(e["x0"] / 3)), []).append(part)
        elif e["orientation"] == "h" and top <= e["top"] <= bottom:
            part = (max(e["x0"], x0), min(e["x1"], x1))
            spans.setdefault(("h", round(e["top"] / 3)), []).append(part)
    need = {"v": (bottom - top) / 2, "h": (x1 - x0) / 2}
    found = [axis for (axis, _), parts in spans.items() if _covered(parts) >= need[axis]]
    return found.count("v"), found.count("h")


def visible_edges(page: Any) -> list[dict[str, Any]]:
    """Edges that print as rules: stroked lines and rectangles in a colour other than
    white, and thin filled bars (2 pt or less); not the invisible boxes some producers
    draw around each cell."""
    from pdfplumber.utils import line_to_edge, rect_to_edges

    edges = []
    for rect in page.rects:
        stroked = rect["stroke"] and not _white(rect["stroking_color"])
        thin = min(rect["width"], rect["height"]) <= 2
        bar = rect["fill"] and thin and not _white(rect["non_stroking_color"])
        if stroked or bar:
            edges += rect_to_edges(rect)
    for line in page.lines:
        if not _white(line["stroking_color"]):
            edges.append(line_to_edge(line))
    return edges


def _white(color: Any) -> bool:
    """Whether a pdfplumber colour is (near) white: gray/RGB all high, CMYK all low."""
    if not isinstance(color, (tuple, list)) or not color:
        return False
    values = [v for v in color if isinstance(v, (int, float))]
    if len(values) == 4:
        return all(v <= 0.05 for v in values)
    return bool(values) and all(v >= 0.95 for v in values)


def _covered(parts: list[tuple[float, float]]) -> float:
    """Length of the union of intervals."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(parts):
        if b > end and b > a:
            total += b - max(a, end)
            end = b
    return total


def kinds(page: Any, table: dict[str, Any]) -> list[str]:
    """The kind tags of one annotated table (see the module docstring)."""
    box = table_box(table["cells"], float(page.height))
    clipped = (max(box[0], 0), max(box[1], 0), min(box[2], page.width), min(box[3], page.height))
    vertical, horizontal = rules(page, clipped)
    tags = ["ruled" if vertical >= 3 and horizontal >= 3 else "borderless"]
    if DOTS.search(page.crop(clipped).extract_text() or ""):
        tags.append("dot-leaders")
    if any(c["r"][0] == 0 and (c["c"][1] > c["c"][0] or c["r"][1] > 0) for c in table["cells"]):
        tags.append("multi-row-header")
    return tags


def collect(mirrors: Path, out: Path) -> list[dict[str, Any]]:
    """Copy the PDFs, write each expected table and return the manifest's entries."""
    import pdfplumber

    commit = git(CAMELOT, "rev-parse", "HEAD", mirrors=mirrors).decode().strip()
    (out / "pdfs").mkdir(parents=True, exist_ok=True)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    entries = []
    for pdf_path, xml_path in icdar_pairs(mirrors):
        name = Path(pdf_path).name
        (out / "pdfs" / name).write_bytes(git(CAMELOT, "show", f"HEAD:{pdf_path}", mirrors=mirrors))
        tables = parse_structure(git(CAMELOT, "show", f"HEAD:{xml_path}", mirrors=mirrors))
        with pdfplumber.open(out / "pdfs" / name) as document:
            for k, table in enumerate(tables, 1):
                page = document.pages[table["page"] - 1]
                rows = grid(table["cells"])
                table_id = f"{Path(name).stem}-t{k}"
                (out / "tables" / f"{table_id}.json").write_text(
                    json.dumps({"rows": rows}, ensure_ascii=False), encoding="utf-8"
                )
                entries.append({
                    "id": table_id, "pdf": f"pdfs/{name}", "page": table["page"],
                    "kinds": kinds(page, table), "rows": len(rows), "cols": len(rows[0]),
                    "table": f"tables/{table_id}.json", "source_repo": CAMELOT,
                    "commit": commit, "path": pdf_path, "truth_path": xml_path,
                    "license": LICENSE,
                })  # fmt: skip
    return entries


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.pdf_tables_data", description=__doc__)
    parser.add_argument("--mirrors", type=Path, default=MIRRORS)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    entries = collect(args.mirrors, args.out)
    manifest = {
        "source": "ICDAR 2013 Table Competition (camelot-dev/camelot test files)",
        "tables": entries,
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    counts: dict[str, int] = {}
    for entry in entries:
        for kind in entry["kinds"]:
            counts[kind] = counts.get(kind, 0) + 1
    print(f"{len(entries)} tables from {len({e['pdf'] for e in entries})} PDFs: {counts}")


if __name__ == "__main__":
    main()
