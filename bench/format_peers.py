"""fissure's structural path against the peers' format-aware splitters, in one run.

Usage::

    python -m bench.format_peers                    # what produced the section in formats.md
    python -m bench.format_peers --smoke            # tiny inputs, one repeat (CI, a minute)
    python -m bench.format_peers --only markdown --repeats 3 --out /tmp/peers

Formats and inputs (real files on this machine): Markdown, the Node.js API docs
(``/usr/share/doc/nodejs/api/*.md``, the Rust release notes where they are missing);
Python, stdlib files (``bench.corpora``); HTML, the Rust book's pages. Each system splits
every document at two budgets, 1000 characters and 254 MiniLM tokens (see
``bench/format_systems.py`` for each peer's setup and length hook). fissure's row is
``fissure.parse.parse`` from the file's bytes plus ``Chunker(strategy="structural")
.chunk_document``; peers get the decoded text. Times are process CPU seconds
(``time.process_time``), one thread (``bench.environment.prepare``), median of
``--repeats``; the systems take turns within each repeat so a shared machine's drift hits
them alike. A parse row keeps no result alive from one document to the next (pyromark's
events are walked, not listed), as a splitter's row keeps none of its documents. Every
system is built and warmed on the first document before timing. After
timing, one untimed pass checks the chunks: size re-measured independently (``len``, or
the MiniLM tokenizer), chunks not found in their document, and for fissure exact offsets
(``text[start:end] == chunk.text``). The parse rows time fissure's parser alone and the
libraries beneath it alone, the ceiling the parse is read against.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import corpora, environment
from bench.format_systems import LIBRARIES, MIMES, PEERS, Budget, Item, Split, fissure

RESULTS = Path(__file__).resolve().parent / "results"
NODE_DOCS = Path("/usr/share/doc/nodejs/api")
BUDGETS = (Budget("chars", 1000), Budget("minilm", 254))
SECTION = "## Format-aware peers"
FISSURE = "fissure structural"


def markdown_input(limit: int) -> tuple[str, list[Item]]:
    """The Node.js API docs (sorted, while they fit), or the Rust release notes."""
    paths = sorted(NODE_DOCS.glob("*.md"))
    if not paths:
        path = corpora.rust_docs_root() / "releases.md"
        data = path.read_bytes()[:limit]
        return f"`{path}` (Rust release notes)", [_item(path.name, data)]
    items: list[Item] = []
    used = 0
    for path in paths:
        data = path.read_bytes()
        if items and used + len(data) > limit:
            continue
        items.append(_item(path.name, data))
        used += len(data)
    return f"{len(items)} Node.js API docs `{NODE_DOCS}/*.md`", items


def python_input(limit: int) -> tuple[str, list[Item]]:
    """Stdlib modules (``bench.corpora``'s stdlib corpus)."""
    corpus = corpora.load("stdlib", limit / 1e6)
    items = [_item(d.id, d.text.encode()) for d in corpus.documents]
    return f"{len(items)} stdlib files from `{corpus.source}`", items


def html_input(limit: int) -> tuple[str, list[Item]]:
    """The Rust book's HTML pages (``bench.formats``'s HTML input)."""
    from bench.formats import _files

    root = corpora.rust_docs_root() / "book"
    chosen = _files("html", "text/html", root, "*.html", limit)
    return chosen.origin, [_item(name, data) for name, data in chosen.documents]


INPUTS = {"markdown": markdown_input, "python": python_input, "html": html_input}


def _item(source: str, data: bytes) -> Item:
    return Item(source, data, data.decode("utf-8", "replace"))


def _cpu(call: Callable[[], Any]) -> float:
    start = time.process_time()
    call()
    return time.process_time() - start


def _each(split: Split, items: list[Item]) -> list[list[str]]:
    return [split(item) for item in items]


def _drop(call: Callable[[Item], Any], items: list[Item]) -> None:
    """Parse each item and let its result go, as a splitter's row lets its document go
    (a list of every parsed document kept alive slows the collector, not the parser)."""
    for item in items:
        call(item)


def time_format(
    fmt: str, items: list[Item], repeats: int, log: Callable[[str], None]
) -> list[dict[str, Any]]:
    """Every system of ``fmt`` at every budget, then the parse rows."""
    rows: list[dict[str, Any]] = []
    live: list[tuple[dict[str, Any], Split]] = []
    for budget in BUDGETS:
        for name, build in [(FISSURE, fissure(fmt)), *PEERS[fmt]]:
            row: dict[str, Any] = {"system": name, "budget": budget.label, "cpu_s": []}
            rows.append(row)
            try:
                split = build(budget)
                split(items[0])  # warm-up: imports, grammars, compiled patterns
            except Exception as exc:  # noqa: BLE001 - a peer that cannot run is a result
                row["error"] = f"{type(exc).__name__}: {exc}"[:300]
                continue
            live.append((row, split))
    parses = [("fissure.parse.parse", _fissure_parse(fmt)), *LIBRARIES[fmt]]
    parse_rows: list[dict[str, Any]] = [
        {"system": name, "budget": "parse only", "cpu_s": []} for name, _ in parses
    ]
    for call in (c for _, c in parses):
        call(items[0])
    for repeat in range(repeats):
        for row, split in live:
            row["cpu_s"].append(_cpu(lambda: _each(split, items)))  # noqa: B023
        for row, (_, call) in zip(parse_rows, parses, strict=True):
            row["cpu_s"].append(_cpu(lambda: _drop(call, items)))  # noqa: B023
        log(f"{fmt}: repeat {repeat + 1}/{repeats} done")
    for row, split in live:
        budget = next(b for b in BUDGETS if b.label == row["budget"])
        row.update(check(row["system"], fmt, split, items, budget))
    return rows + parse_rows


def _fissure_parse(fmt: str) -> Callable[[Item], Any]:
    from fissure.parse import parse

    mime = MIMES[fmt]
    return lambda item: parse(item.data, item.source, mime)


def check(name: str, fmt: str, split: Split, items: list[Item], budget: Budget) -> dict[str, Any]:
    """Chunks, largest size, chunks over budget or not in the source; exact offsets for
    fissure (untimed)."""
    size = budget.length()
    sizes: list[int] = []
    missing = inexact = 0
    if name == FISSURE:
        from bench.format_systems import fissure_chunker

        chunker, parse = fissure_chunker(budget)
        for item in items:
            doc = parse(item.data, item.source, MIMES[fmt])
            chunks = chunker.chunk_document(doc)
            inexact += sum(doc.text[c.start : c.end] != c.text for c in chunks)
            sizes += [size(c.text) for c in chunks]
    else:
        for item in items:
            texts = split(item)
            missing += sum(t not in item.text for t in texts)
            sizes += [size(t) for t in texts]
    return {
        "chunks": len(sizes),
        "max_size": max(sizes, default=0),
        "over_budget": sum(s > budget.size for s in sizes),
        "not_in_source": missing,
        "inexact": inexact if name == FISSURE else None,
    }


def render(results: dict[str, Any]) -> str:
    """The section for ``formats.md``."""
    meta = results["meta"]
    lines = [
        SECTION,
        "",
        f"Generated by `{meta['command']}` on {meta['date']} (see the docstring of "
        "`bench/format_peers.py`): process CPU time, one thread, median of "
        f"{meta['repeats']}; load average {meta['load_before']} before, "
        f"{meta['load_after']} after; fissure at {meta['git']}.",
        "",
    ]
    for fmt, block in results["formats"].items():
        lines += [f"### {fmt}: {block['origin']}, {block['mb']:.2f} MB", ""]
        lines += _table(block["rows"], block["mb"])
        lines.append("")
    return "\n".join(lines)


def _table(rows: list[dict[str, Any]], mb: float) -> list[str]:
    out = [
        "| system | budget | MB/s | fissure / it | chunks | max size | over budget | not in"
        " source | inexact offsets |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    ours = {r["budget"]: r for r in rows if r["system"] == FISSURE and r["cpu_s"]}
    errors = []
    for row in rows:
        if "error" in row:
            out.append(f"| {row['system']} | {row['budget']} | did not run¹ | | | | | | |")
            errors.append(f"{row['system']} ({row['budget']}): `{row['error']}`")
            continue
        speed = mb / statistics.median(row["cpu_s"])
        mine = ours.get(row["budget"])
        ratio = f"{mb / statistics.median(mine['cpu_s']) / speed:.2f}×" if mine else ""
        if row["budget"] == "parse only":
            out.append(f"| {row['system']} | parse only | {speed:.2f} | | | | | | |")
            continue
        inexact = "" if row.get("inexact") is None else f"{row['inexact']:,}"
        out.append(
            f"| {row['system']} | {row['budget']} | {speed:.2f} | {ratio} | {row['chunks']:,} "
            f"| {row['max_size']:,} | {row['over_budget']:,} | {row['not_in_source']:,} "
            f"| {inexact} |"
        )
    if errors:
        out += ["", "¹ " + "; ".join(errors)]
    return out


def write_section(page: Path, section: str) -> None:
    """Put ``section`` into ``page`` in place of its old one (or at the end)."""
    old = page.read_text(encoding="utf-8") if page.exists() else "# Parser throughput per format\n"
    start = old.find(SECTION)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + section
    else:
        after = old.find("\n## ", start + len(SECTION))
        new = old[:start] + section + ("" if after < 0 else "\n" + old[after + 1 :])
    page.write_text(new.rstrip("\n") + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Build the inputs, time every system, write the results; returns them."""
    environment.prepare()
    from bench import report

    parser = argparse.ArgumentParser(
        prog="python -m bench.format_peers",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mb", type=float, default=3.6, help="at most this much per format")
    parser.add_argument("--only", help="comma-separated formats: markdown,python,html")
    parser.add_argument("--smoke", action="store_true", help="0.05 MB, one repeat, no write")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the results")
    args = parser.parse_args(argv)
    if args.smoke:
        args.mb, args.repeats = 0.05, 1
    args.limit_mb = args.mb
    argv_text = shlex.join(sys.argv[1:] if argv is None else argv)
    meta = report.metadata(f"python -m bench.format_peers {argv_text}".strip(), args)
    formats = args.only.split(",") if args.only else list(INPUTS)
    results: dict[str, Any] = {"meta": meta, "formats": {}}
    for fmt in formats:
        origin, items = INPUTS[fmt](int(args.mb * 1e6))
        rows = time_format(fmt, items, args.repeats, lambda m: print(m, file=sys.stderr))
        mb = sum(len(i.data) for i in items) / 1e6
        results["formats"][fmt] = {"origin": origin, "mb": mb, "docs": len(items), "rows": rows}
    meta["load_after"] = report.machine_load()
    section = render(results)
    print(section)
    if not args.smoke:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "format-peers.json").write_text(json.dumps(results, indent=1) + "\n")
        write_section(args.out / "formats.md", section)
    return results


if __name__ == "__main__":
    main()
