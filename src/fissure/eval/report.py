"""Reports of an evaluation: a rich table, JSON, Markdown and (with matplotlib) a PNG plot.

All functions take the JSON-ready summaries of :meth:`StrategyResult.summary`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

Summary = dict[str, Any]


def _pm(stat: Sequence[float] | None) -> str:
    return "–" if stat is None else f"{stat[0]:.1f} ± {stat[1]:.1f}"


def settings_of(summary: Summary) -> list[str]:
    """The retrieval settings scored (``k=5``, ``k=10``, ``min``, ``budget=N``), in order."""
    names = [m.split("/")[0] for m in summary["metrics"] if "/" in m]
    return list(dict.fromkeys(names))


def _size(summary: Summary) -> str:
    size = "–" if summary["size"] is None else str(summary["size"])
    return f"{size} (~{summary['mean_tokens']:.0f})"


def token_rows(summaries: Sequence[Summary], setting: str) -> list[list[str]]:
    """Rows of the report-style table for one setting."""
    rows = []
    for s in summaries:
        m = s["metrics"]
        rows.append(
            [
                s["strategy"],
                _size(s),
                "–" if s["overlap"] is None else str(s["overlap"]),
                str(s["chunks"]),
                _pm(m.get(f"{setting}/recall")),
                _pm(m.get(f"{setting}/precision")),
                _pm(m.get("omega")),
                _pm(m.get(f"{setting}/iou")),
            ]
        )
    return rows


TOKEN_HEADER = ["Strategy", "Size (mean)", "Overlap", "Chunks", "Recall", "Precision",
                "Precision Ω", "IoU"]  # fmt: skip


def print_table(summaries: Sequence[Summary], setting: str, console: Console | None = None) -> None:
    """Print the report-style table (mean ± std ×100) for ``setting`` with rich."""
    table = Table(title=f"Retrieval, {setting} (mean ± std, %)")
    for i, name in enumerate(TOKEN_HEADER):
        table.add_column(name, justify="left" if i == 0 else "right", no_wrap=i == 0)
    for row in token_rows(summaries, setting):
        table.add_row(*row)
    (console or Console()).print(table)


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def _ranking_rows(summaries: Sequence[Summary]) -> tuple[list[str], list[list[str]]]:
    names = [n for n in summaries[0]["metrics"] if "/" not in n and n != "omega"]
    rows = [
        [s["strategy"], *(_pm(s["metrics"].get(n)) for n in names),
         f"{s.get('damage', 0.0):.1f}", str(s.get("unlocated", 0))]
        for s in summaries
    ]  # fmt: skip
    return ["Strategy", *names, "damage %", "unlocated"], rows


def _corpus_rows(summaries: Sequence[Summary], metric: str) -> tuple[list[str], list[list[str]]]:
    corpora = list(summaries[0]["per_corpus"])
    rows = [
        [s["strategy"], *(f"{s['per_corpus'][c].get(metric, 0.0):.1f}" for c in corpora)]
        for s in summaries
    ]
    return ["Strategy", *corpora], rows


def markdown(summaries: Sequence[Summary], meta: dict[str, Any]) -> str:
    """A Markdown report: one table per setting, ranking metrics, per-corpus recall."""
    out = [f"# Retrieval evaluation: {meta.get('dataset', '')}", ""]
    out += [f"- {key}: {value}" for key, value in meta.items()]
    if not summaries:
        return "\n".join(out) + "\n"
    for setting in settings_of(summaries[0]):
        out += ["", f"## {setting} (mean ± population std over questions, ×100)", ""]
        out += _md_table(TOKEN_HEADER, token_rows(summaries, setting))
    header, rows = _ranking_rows(summaries)
    out += ["", "## Chunk-level ranking (relevant = shares a character with an excerpt)", ""]
    out += _md_table(header, rows)
    setting = settings_of(summaries[0])[0]
    header, rows = _corpus_rows(summaries, f"{setting}/recall")
    out += ["", f"## Recall per corpus, {setting}", ""]
    out += _md_table(header, rows)
    return "\n".join(out) + "\n"


def plot(summaries: Sequence[Summary], setting: str, path: Path) -> bool:
    """Recall vs IoU per strategy, and per-corpus recall bars, as a PNG.

    Returns:
        ``False`` (and writes nothing) when matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    for s in summaries:
        m = s["metrics"]
        left.scatter(m[f"{setting}/iou"][0], m[f"{setting}/recall"][0], s=40)
        left.annotate(
            s["strategy"], (m[f"{setting}/iou"][0], m[f"{setting}/recall"][0]), fontsize=7
        )
    left.set_xlabel("IoU (%)")
    left.set_ylabel("Recall (%)")
    left.set_title(f"Recall vs IoU, {setting}")
    corpora = list(summaries[0]["per_corpus"])
    width = 0.8 / max(1, len(summaries))
    for i, s in enumerate(summaries):
        values = [s["per_corpus"][c].get(f"{setting}/recall", 0.0) for c in corpora]
        right.bar([x + i * width for x in range(len(corpora))], values, width, label=s["strategy"])
    right.set_xticks([x + 0.4 - width / 2 for x in range(len(corpora))], corpora, rotation=20)
    right.set_ylabel("Recall (%)")
    right.set_title(f"Recall per corpus, {setting}")
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def write_reports(
    summaries: Sequence[Summary], meta: dict[str, Any], out_dir: Path, setting: str
) -> list[Path]:
    """Write ``eval.json``, ``eval.md`` and, with matplotlib, ``eval.png`` into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / "eval.json", out_dir / "eval.md"]
    payload = {"meta": meta, "results": list(summaries)}
    written[0].write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    written[1].write_text(markdown(summaries, meta), encoding="utf-8")
    png = out_dir / "eval.png"
    if summaries and plot(summaries, setting, png):
        written.append(png)
    return written
