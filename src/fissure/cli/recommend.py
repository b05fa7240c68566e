"""``fissure recommend``: survey a corpus and advise strategy, budget and overlap."""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fissure.cli.options import Sample, Seed, json_option
from fissure.cli.output import fail, human_bytes, print_json
from fissure.errors import FissureError

if TYPE_CHECKING:
    from fissure.plan import Survey


def recommend(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (walked recursively).")],
    sample: Sample = 200,
    seed: Seed = 0,
    as_json: Annotated[
        bool,
        json_option(
            "Print one JSON object: files, bytes, sampled, skipped, formats, kind, shares, "
            "advice (setting, value, reason, measured, evidence) and the command to run."
        ),
    ] = False,
) -> None:
    """Recommend a strategy, budget and overlap for a corpus, with reasons and figures.

    Samples the corpus, reports its formats, sizes and structure (headings, code entities,
    tables, pages per document), and gives each setting with its reason, what was measured
    on the sample, and the committed benchmark figure behind it.

    Exit status: 0 advised, 2 an error (no such path, nothing readable).
    """
    from fissure.plan import recommend as advise
    from fissure.plan import survey

    try:
        found = survey(paths, sample=sample, seed=seed)
        advice = advise(found)
    except FissureError as exc:
        fail(str(exc))
    target = " ".join(str(p) for p in paths)
    if as_json:
        payload = {"files": found.files, "bytes": found.total_bytes,
                   "sampled": len(found.profiles), "skipped": len(found.skipped),
                   "formats": _formats(found), **advice.to_dict(),
                   "command": advice.command(target)}  # fmt: skip
        print_json(payload)
        return
    _print_survey(found, target)
    typer.echo(
        f"kind: {advice.kind} ("
        + ", ".join(f"{k} {v:.0%}" for k, v in advice.shares.items())
        + " of sampled bytes)\n"
    )
    for a in advice.advice:
        typer.echo(f"{a.setting}: {a.value}")
        typer.echo(f"  why: {a.reason}")
        if a.measured:
            typer.echo(f"  on your sample: {a.measured}")
        for e in a.evidence:
            typer.echo(f"  measured: {e.figure} ({e.source})")
    typer.echo(f"\nrun: {advice.command(target)}")


def _formats(found: Survey) -> dict[str, dict[str, float]]:
    """Per format: files, bytes, and mean headings, code entities, tables, pages per file."""
    groups = defaultdict(list)
    for p in found.profiles:
        groups[p.mime].append(p)
    out = {}
    for mime, ps in sorted(groups.items(), key=lambda kv: -sum(p.n_bytes for p in kv[1])):
        out[mime] = {"files": len(ps), "bytes": sum(p.n_bytes for p in ps),
                     **{f"{k}_per_doc": round(statistics.fmean(getattr(p, k) for p in ps), 2)
                        for k in ("headings", "entities", "tables", "pages")}}  # fmt: skip
    return out


def _print_survey(s: Survey, target: str) -> None:
    from rich.console import Console
    from rich.table import Table

    scope = "every file" if s.complete else "a random sample"
    typer.echo(f"corpus: {target}: {s.files} files, {human_bytes(s.total_bytes)}; parsed "
               f"{len(s.profiles)} ({scope}), {len(s.skipped)} unreadable")  # fmt: skip
    table = Table(show_edge=False, pad_edge=False)
    for name in ("format", "files", "bytes", "headings/doc", "entities/doc", "tables/doc",
                 "pages/doc"):  # fmt: skip
        table.add_column(name, justify="left" if name == "format" else "right")
    for mime, row in _formats(s).items():
        table.add_row(mime, str(row["files"]), human_bytes(int(row["bytes"])),
                      *(f"{row[k + '_per_doc']:.1f}" for k in
                        ("headings", "entities", "tables", "pages")))  # fmt: skip
    Console(highlight=False, width=120).print(table)
    sizes = [p.n_chars for p in s.profiles]
    if sizes:
        typer.echo(f"document size: median {statistics.median(sizes):,.0f} characters, "
                   f"min {min(sizes):,}, max {max(sizes):,}")  # fmt: skip
