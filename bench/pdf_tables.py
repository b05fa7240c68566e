"""Table structure on PDFs with external truth: fissure, pdfplumber, camelot.

Usage (data: ``python -m bench.pdf_tables_data``, once; camelot in ``bench/.venv-pdf``)::

    python -m bench.pdf_tables [--data DIR] [--only ID,ID] [--systems a;b]

Truth: the ICDAR 2013 Table Competition annotations (see :mod:`bench.pdf_tables_data`),
one expected table per manifest entry, a grid of cell strings (a spanning cell's text at
its first slot). Systems, each asked for every table on the page the table is on:

- ``fissure``: ``fissure.parse.pdf.parse`` (defaults); the ``row`` blocks of each
  ``table`` block whose ``metadata["page"]`` is that page, cells split on ``" | "``;
- ``pdfplumber``: ``page.extract_tables()`` with its defaults;
- ``camelot-lattice`` / ``camelot-stream``: ``camelot.read_pdf(path, pages=N,
  flavor=...)``, each table's ``df``; run by this file in ``bench/.venv-pdf`` (``--peer``).

Scoring. Cell text is normalised (NFKC, lower case, runs of white space to one space,
trimmed); empty cells do not count. A predicted table is aligned to the expected one in
two monotone steps (dynamic programming, like a diff): rows first, maximising the summed
Dice overlap of the rows' bags of cell texts; then columns, maximising the number of
aligned rows in which the two columns hold the same text. A predicted cell is a true
positive when its aligned row and column exist and the expected cell there has the same
text. Cell precision = TP / predicted non-empty cells, recall = TP / expected non-empty
cells, F1 their harmonic mean. Of the tables a system returns on the page, the one with
the best F1 (ties: the best bag-of-cells Dice) is scored; none: F1 = TEDS = 0. TEDS
(``docling-metrics-table``, content mode) compares the two grids as HTML tables without
spans (no system here reports spans), clamped to [0, 1]. A table is *found* when its
best F1 is 0.5 or more.
"""

from __future__ import annotations

import argparse
import html
import json
import subprocess
import sys
import time
import traceback
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = Path("/work/shared/datasets/pdf-tables")
PEER_VENV = ROOT / "bench" / ".venv-pdf"
RESULTS = ROOT / "bench" / "results"
CACHE = ROOT / "bench" / ".cache" / "pdf_tables"
SYSTEMS = ["fissure", "pdfplumber", "camelot-lattice", "camelot-stream"]
KINDS = ["ruled", "borderless", "dot-leaders", "multi-row-header"]
Grid = list[list[str]]


# ----------------------------------------------------------------------------- scoring


def norm(text: Any) -> str:
    """NFKC, lower case, white space collapsed; ``None`` is the empty cell."""
    return " ".join(unicodedata.normalize("NFKC", str(text or "")).lower().split())


def normalised(table: Grid) -> Grid:
    """The table's cells normalised, rows padded to one width."""
    width = max((len(r) for r in table), default=0)
    return [[norm(c) for c in row] + [""] * (width - len(row)) for row in table]


def dice(a: list[str], b: list[str]) -> float:
    """Dice overlap of two bags of non-empty strings."""
    ca, cb = Counter(x for x in a if x), Counter(x for x in b if x)
    total = sum(ca.values()) + sum(cb.values())
    return 2 * sum((ca & cb).values()) / total if total else 0.0


def align(n: int, m: int, sim: Any) -> list[tuple[int, int]]:
    """The monotone pairing of 0..n-1 with 0..m-1 that maximises the summed ``sim(i, j)``
    (pairs of similarity 0 are never kept)."""
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            s = sim(i, j)
            take = best[i + 1][j + 1] + s if s > 0 else -1.0
            best[i][j] = max(take, best[i + 1][j], best[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        s = sim(i, j)
        if s > 0 and best[i][j] == best[i + 1][j + 1] + s:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def cell_scores(pred: Grid, truth: Grid) -> dict[str, float]:
    """Cell precision, recall and F1 of ``pred`` against ``truth`` (both normalised)."""
    rows = align(len(pred), len(truth), lambda i, r: dice(pred[i], truth[r]))
    p_cols, t_cols = len(pred[0]) if pred else 0, len(truth[0]) if truth else 0

    def col_sim(c: int, k: int) -> float:
        return sum(1.0 for i, r in rows if pred[i][c] and pred[i][c] == truth[r][k])

    cols = align(p_cols, t_cols, col_sim)
    tp = sum(col_sim(c, k) for c, k in cols)
    n_pred = sum(1 for row in pred for c in row if c)
    n_truth = sum(1 for row in truth for c in row if c)
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_truth if n_truth else 0.0
    f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
    bag = dice([c for r in pred for c in r], [c for r in truth for c in r])
    return {"precision": precision, "recall": recall, "f1": f1, "bag": bag}


def to_html(table: Grid) -> str:
    """A grid as an HTML table without spans."""
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in table
    )
    return f"<html><body><table>{body}</table></body></html>"


def teds(metric: Any, pred: Grid, truth: Grid) -> float | None:
    """TEDS (content) of the two grids, or ``None`` where the metric is unavailable."""
    if metric is None:
        return None
    from docling_metrics_table import TableMetricHTMLInputSample

    sample = TableMetricHTMLInputSample(id="t", html_a=to_html(truth), html_b=to_html(pred))
    # clamped: the C++ scorer returns a little below 0 for some near-empty matches
    return min(1.0, max(0.0, float(metric.evaluate_sample(sample).teds.teds)))


def teds_metric() -> tuple[Any, str | None]:
    """docling-metrics-table's TEDS scorer, or ``None`` and why not."""
    try:
        from docling_metrics_table import TableMetric
        from docling_metrics_table.docling_metrics_table import TableMetricKind

        return TableMetric([TableMetricKind.TEDS]), None
    except Exception as exc:  # reported in the results, cell F1 still runs
        return None, f"{type(exc).__name__}: {exc}"


def score_table(tables: list[Grid], truth: Grid, metric: Any) -> dict[str, Any]:
    """The best-matching predicted table's scores (see the module docstring)."""
    expected = normalised(truth)
    best, best_grid = None, None
    for table in tables:
        grid = normalised(table)
        s = cell_scores(grid, expected)
        if best is None or (s["f1"], s["bag"]) > (best["f1"], best["bag"]):
            best, best_grid = s, grid
    if best is None or best_grid is None:
        return {"f1": 0.0, "precision": 0.0, "recall": 0.0, "teds": 0.0, "tables": 0}
    out = {k: round(best[k], 4) for k in ("f1", "precision", "recall")}
    value = teds(metric, best_grid, expected)
    out["teds"] = None if value is None else round(value, 4)
    out["tables"] = len(tables)
    out["shape"] = [len(best_grid), len(best_grid[0]) if best_grid else 0]
    return out


# ----------------------------------------------------------------------------- systems

Pages = dict[tuple[str, int], list[Grid]]  # (pdf, page) -> the tables found there


def fissure_tables(path: Path) -> dict[int, list[Grid]]:
    """fissure's tables by page: each ``table`` block's rows on that page."""
    from fissure.parse import pdf

    doc = pdf.parse(path.read_bytes(), source=path.name)
    out: dict[int, list[Grid]] = {}

    def walk(blocks: Any) -> None:
        for block in blocks:
            if block.kind != "table":
                walk(block.children)
                continue
            by_page: dict[int, Grid] = {}
            for row in block.children:
                if row.kind == "row":
                    page = int(row.metadata.get("page", block.metadata.get("page", 0)))
                    by_page.setdefault(page, []).append(doc.text[row.start : row.end].split(" | "))
            for page, rows in by_page.items():
                out.setdefault(page, []).append(rows)

    walk(doc.blocks)
    return out


def pdfplumber_tables(path: Path, pages: set[int]) -> dict[int, list[Grid]]:
    """pdfplumber's ``extract_tables()`` (defaults) on the given pages."""
    import pdfplumber

    with pdfplumber.open(path) as document:
        return {n: document.pages[n - 1].extract_tables() for n in pages}


def camelot_tables(path: Path, pages: set[int], flavor: str) -> dict[int, list[Grid]]:
    """camelot's tables (``flavor`` lattice or stream) on the given pages, each ``df``."""
    import camelot

    out = {}
    for n in sorted(pages):
        found = camelot.read_pdf(str(path), pages=str(n), flavor=flavor)
        out[n] = [t.df.astype(str).values.tolist() for t in found]
    return out


def run_local(system: str, wanted: dict[Path, set[int]]) -> tuple[Pages, dict[str, str]]:
    """Run an in-process system on each PDF; errors by PDF name."""
    pages: Pages = {}
    errors: dict[str, str] = {}
    for path, numbers in wanted.items():
        try:
            if system == "fissure":
                found = fissure_tables(path)
            elif system == "pdfplumber":
                found = pdfplumber_tables(path, numbers)
            else:
                found = camelot_tables(path, numbers, system.split("-")[1])
        except Exception as exc:  # one PDF that fails is reported, not fatal
            errors[path.name] = f"{type(exc).__name__}: {exc}"[:200]
            traceback.print_exc()
            continue
        for n in numbers:
            pages[(path.name, n)] = found.get(n, [])
    return pages, errors


def run_peer(system: str, wanted: dict[Path, set[int]]) -> tuple[Pages | None, Any]:
    """A camelot flavour through ``bench/.venv-pdf`` (this file with ``--peer``)."""
    python = PEER_VENV / "bin" / "python"
    if not python.is_file():
        return None, "not installed (bench/.venv-pdf with camelot-py)"
    CACHE.mkdir(parents=True, exist_ok=True)
    request, out = CACHE / "request.json", CACHE / f"{system}.json"
    request.write_text(json.dumps({str(p): sorted(n) for p, n in wanted.items()}))
    done = subprocess.run(
        [str(python), str(Path(__file__)), "--peer", system, str(request), str(out)],
        capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    if done.returncode != 0:
        return None, (done.stderr.strip().splitlines() or ["failed"])[-1][:200]
    got = json.loads(out.read_text(encoding="utf-8"))
    pages = {
        (name, int(n)): tables for name, by in got["pages"].items() for n, tables in by.items()
    }
    return pages, got["errors"]


def peer_main(system: str, request: Path, out: Path) -> int:
    """``--peer``: run a camelot flavour on the requested pages, in the peers' venv."""
    here = str(Path(__file__).resolve().parent)
    sys.path[:] = [p for p in sys.path if str(Path(p or ".").resolve()) != here]
    wanted = {Path(p): set(n) for p, n in json.loads(request.read_text()).items()}
    pages, errors = run_local(system, wanted)
    by_pdf: dict[str, dict[int, list[Grid]]] = {}
    for (name, n), tables in pages.items():
        by_pdf.setdefault(name, {})[n] = tables
    out.write_text(json.dumps({"pages": by_pdf, "errors": errors}), encoding="utf-8")
    return 0


# ----------------------------------------------------------------------------- report


def summarise(rows: list[dict[str, Any]], system: str) -> dict[str, Any]:
    """Mean F1 and TEDS, found / expected, overall and per kind."""

    def stats(subset: list[dict[str, Any]]) -> dict[str, Any]:
        got = [r["systems"][system] for r in subset]
        teds_values = [g["teds"] for g in got if g.get("teds") is not None]
        return {
            "n": len(got),
            "f1": round(sum(g["f1"] for g in got) / len(got), 4) if got else None,
            "teds": round(sum(teds_values) / len(teds_values), 4) if teds_values else None,
            "found": sum(g["f1"] >= 0.5 for g in got),
        }

    out = {"all": stats(rows)}
    for kind in KINDS:
        out[kind] = stats([r for r in rows if kind in r["kinds"]])
    return out


def _figure(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def render(summary: dict[str, Any], meta: dict[str, Any]) -> str:
    """The results page."""
    lines = [
        "# PDF table structure: fissure, pdfplumber and camelot against ICDAR 2013",
        "",
        f"Generated by `{meta['command']}` on {meta['date']} at commit `{meta['commit']}`. "
        "Method: the docstrings of `bench/pdf_tables.py` and `bench/pdf_tables_data.py`, "
        "docs/eval.md (PDF table structure).",
        "",
        f"- Data: {meta['tables']} tables on {meta['pdfs']} PDFs (ICDAR 2013 Table "
        f"Competition, from camelot's test files at `{meta['data_commit'][:10]}`); "
        f"kinds: {meta['kind_counts']}",
        f"- TEDS: {meta['teds'] or 'docling-metrics-table, content mode, grids without spans'}",
        f"- Load average (uptime) before: {meta['load_before']}; after: {meta['load_after']}",
        "",
        "| system | found / expected | cell F1 | TEDS | " + " | ".join(
            f"{k} F1 | {k} TEDS" for k in KINDS) + " | seconds | errors |",
        "|---|---:|---:|---:|" + "---:|---:|" * len(KINDS) + "---:|---|",
    ]  # fmt: skip
    for name, s in summary.items():
        if "error" in s:
            lines.append(f"| {name} | did not run: {s['error']} |" + " |" * (4 + 2 * len(KINDS)))
            continue
        a = s["all"]
        cells = [f"{a['found']} / {a['n']}", _figure(a["f1"]), _figure(a["teds"])]
        for kind in KINDS:
            k = s[kind]
            cells += [f"{_figure(k['f1'])} (n={k['n']})", _figure(k["teds"])]
        errors = "; ".join(f"{n}: {e}" for n, e in s["errors"].items())[:300] or "none"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {s['seconds']:.0f} | {errors} |")
    lines += ["", "Per table: `pdf-tables.json` (`tables`: F1, precision, recall, TEDS, "
              "tables on the page, shape of the best match)."]  # fmt: skip
    return "\n".join(lines) + "\n"


def shell(*cmd: str) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stdout.strip()


def run_system(name: str, wanted: dict[Path, set[int]]) -> tuple[Pages | None, Any, float]:
    """One system's tables on every wanted page, its errors and its seconds."""
    start = time.perf_counter()
    if name.startswith("camelot"):
        pages, errors = run_peer(name, wanted)
    else:
        pages, errors = run_local(name, wanted)
    return pages, errors, time.perf_counter() - start


def run_meta(
    argv: list[str] | None,
    entries: list[dict[str, Any]],
    pdfs: int,
    teds_error: str | None,
    load_before: str,
) -> dict[str, Any]:
    """The run's command, date, commit, data and load average (after: now)."""
    args = " ".join(sys.argv[1:] if argv is None else argv)
    return {
        "command": f"python -m bench.pdf_tables {args}".strip(),
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "commit": shell("git", "rev-parse", "--short", "HEAD"),
        "tables": len(entries), "pdfs": pdfs,
        "data_commit": entries[0]["commit"] if entries else "",
        "kind_counts": dict(Counter(k for e in entries for k in e["kinds"])),
        "teds": f"unavailable ({teds_error}); cell F1 only" if teds_error else None,
        "load_before": load_before, "load_after": shell("uptime"),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        prog="python -m bench.pdf_tables",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--only", default="", help="table ids, apart by commas (a trial run)")
    parser.add_argument("--systems", default=";".join(SYSTEMS), help="apart by semicolons")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    load_before = shell("uptime")
    manifest = json.loads((args.data / "manifest.json").read_text(encoding="utf-8"))
    entries = manifest["tables"]
    if args.only:
        entries = [e for e in entries if e["id"] in args.only.split(",")]
    wanted: dict[Path, set[int]] = {}
    for e in entries:
        wanted.setdefault(args.data / e["pdf"], set()).add(e["page"])
    metric, teds_error = teds_metric()
    rows = [{"id": e["id"], "kinds": e["kinds"], "systems": {}} for e in entries]
    summary: dict[str, Any] = {}
    for name in [s.strip() for s in args.systems.split(";") if s.strip()]:
        print(f"{name} …", file=sys.stderr, flush=True)
        pages, errors, seconds = run_system(name, wanted)
        if pages is None:
            summary[name] = {"error": errors}
            continue
        for e, row in zip(entries, rows, strict=True):
            truth = json.loads((args.data / e["table"]).read_text(encoding="utf-8"))["rows"]
            found = pages.get((Path(e["pdf"]).name, e["page"]), [])
            row["systems"][name] = score_table(found, truth, metric)
        summary[name] = {**summarise(rows, name), "errors": errors, "seconds": seconds}
    meta = run_meta(argv, entries, len(wanted), teds_error, load_before)
    page = render(summary, meta)
    name = "pdf-tables-trial" if args.only else "pdf-tables"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{name}.md").write_text(page, encoding="utf-8")
    result = {"meta": meta, "summary": summary, "tables": rows}
    (args.out / f"{name}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(page)
    return result


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--peer":
        sys.exit(peer_main(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])))
    main()
