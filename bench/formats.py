"""Parser throughput per format: parse alone, and parse + structural split.

Usage::

    python -m bench.formats                       # every format, 3 repeats (~10 min here)
    python -m bench.formats --repeats 5           # what produced results/formats.md
    python -m bench.formats --only markdown,html --mb 0.3 --out /tmp/formats

Each format gets a deterministic input of about ``--mb`` megabytes built from material on
this machine (the stdlib, the Rust toolchain's docs, the venv's C sources, the committed
test corpus) or generated (PDF, DOCX, notebook, JSON, YAML, CSV). Parsing goes through
``fissure.parse.parse`` with the MIME type given, so detection's sniffing is not timed; the
split is ``Chunker(strategy="structural", max_tokens=254, tokenizer="minilm")``. Times are
process CPU seconds (``time.process_time``), medians over repeats, one thread; the formats
take turns within each repeat so a shared machine's drift hits them alike. One extra,
untimed pass under cProfile splits parse time into the parser's library (everything outside
``src/fissure``) and fissure's own code; time in built-ins and generated ``__init__``\\s is
charged to whoever called them. Compiled extensions that cProfile cannot see into (Cython:
selectolax, libyaml) count as their caller, so HTML's "fissure" share is mostly lexbor's.
When PDF is among the formats, ``bench.pdf_speed`` adds PDF pages per second per core with
table finding on and off.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import random
import re
import shlex
import statistics
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import corpora, environment

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
RESULTS = Path(__file__).resolve().parent / "results"
FISSURE_SRC = str(ROOT / "src" / "fissure")
# Native entry points of the parsing libraries: time in them is the library's, whoever
# calls them (ast.parse is builtins.compile; json's C scanner is the JSON parser's engine).
_LIBRARY_BUILTINS = re.compile(r"tree_sitter\.|selectolax|lexbor|builtins\.compile|_json\.|lxml")


@dataclass(frozen=True)
class Input:
    """One format's benchmark input: named documents of bytes, and where they came from."""

    name: str
    mime: str
    origin: str
    documents: tuple[tuple[str, bytes], ...]

    @property
    def n_bytes(self) -> int:
        """Total size in bytes."""
        return sum(len(data) for _, data in self.documents)


# ----------------------------------------------------------------------------- inputs


def _take(paths: list[Path], limit: int, *, keep: Callable[[str], bool] = bool) -> list[Path]:
    """Files in path-hash order (deduplicated by content) while they fit in ``limit``."""
    ranked = sorted(paths, key=lambda p: hashlib.sha1(str(p).encode()).hexdigest())
    chosen: list[Path] = []
    seen: set[bytes] = set()
    used = 0
    for path in ranked:
        data = path.read_bytes()
        digest = hashlib.sha1(data).digest()
        if digest in seen or not keep(data.decode("utf-8", "replace")):
            continue
        if used + len(data) <= limit or not chosen:
            chosen.append(path)
            seen.add(digest)
            used += len(data)
    return sorted(chosen)


def _files(name: str, mime: str, root: Path, pattern: str, limit: int, **kw: Any) -> Input:
    chosen = _take(sorted(root.rglob(pattern)), limit, **kw)
    docs = tuple((str(p.relative_to(root)), p.read_bytes()) for p in chosen)
    return Input(name, mime, f"{len(docs)} `{pattern}` files under `{root}`", docs)


def _repeated(name: str, mime: str, path: Path, limit: int) -> Input:
    data = path.read_bytes()
    times = max(1, limit // (len(data) + 2))
    joined = b"\n\n".join([data.rstrip(b"\n")] * times) + b"\n"
    origin = f"`{path.relative_to(ROOT)}` repeated {times}× (no such files on this machine)"
    return Input(name, mime, origin, ((path.name, joined),))


def _not_minified(text: str) -> bool:
    return text.count("\n") > 20 and len(text) / (text.count("\n") + 1) < 200


def _pdf(limit: int) -> Input:
    from tests.corpus.make_binary import make_pdf

    pages: list[list[list[str]]] = [[]]
    lines_on_page = 0
    for paragraph in corpora.prose_paragraphs(limit):
        text = paragraph.encode("cp1252", "ignore").decode("cp1252")
        lines = textwrap.wrap(" ".join(text.split()), 90)[:40]
        if lines_on_page + len(lines) > 44:
            pages.append([])
            lines_on_page = 0
        pages[-1].append(lines)
        lines_on_page += len(lines) + 1
    data = make_pdf([p for p in pages if p])
    return Input(
        "pdf",
        "application/pdf",
        f"generated: {len(pages)} pages of Rust-book text (`tests/corpus/make_binary.make_pdf`)",
        (("book.pdf", data),),
    )


def _docx(limit: int) -> Input:
    import docx

    document = docx.Document()
    rng = random.Random(0)
    for i, paragraph in enumerate(corpora.prose_paragraphs(limit)):
        if i % 12 == 0:
            document.add_heading(" ".join(paragraph.split()[:6]), level=1 + (i // 12) % 3)
        elif i % 12 in (5, 6, 7):
            document.add_paragraph(" ".join(paragraph.split()[:20]), style="List Bullet")
        elif i % 12 == 9:
            table = document.add_table(rows=3, cols=3)
            for row in table.rows:
                for cell in row.cells:
                    cell.text = str(rng.randrange(10_000))
        else:
            document.add_paragraph(paragraph)
    out = io.BytesIO()
    document.save(out)
    return Input(
        "docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "generated with python-docx from Rust-book text",
        (("book.docx", out.getvalue()),),
    )


def _notebook(limit: int) -> Input:
    import nbformat

    paragraphs = _rust_releases().decode().split("\n\n")
    markdown = ["\n\n".join(paragraphs[i : i + 8]) for i in range(0, len(paragraphs), 8)]
    code = [d.text[:3000] for d in corpora.load("stdlib", 2.0).documents]
    cells: list[Any] = []
    used = 0
    while used < limit:
        i = len(cells)
        if i % 2 == 0:
            cell = nbformat.v4.new_markdown_cell(markdown[i // 2 % len(markdown)])
        else:
            cell = nbformat.v4.new_code_cell(code[i // 2 % len(code)])
        cell["id"] = f"cell-{i}"  # nbformat draws random ids; keep the input deterministic
        cells.append(cell)
        used += len(nbformat.writes(nbformat.v4.new_notebook(cells=[cell])))
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python"}
    data = nbformat.writes(notebook).encode()
    origin = "generated: Rust release notes and stdlib code as alternating cells"
    return Input("notebook", "application/x-ipynb+json", origin, (("book.ipynb", data),))


def _records(limit: int) -> list[dict[str, Any]]:
    rng = random.Random(0)
    words = ["alpha", "beta", "gamma", "delta", "café", "river", "north", "south", "east"]
    records: list[dict[str, Any]] = []
    used = 0
    while used < limit:
        record = {
            "id": len(records),
            "name": " ".join(rng.choices(words, k=3)),
            "tags": rng.sample(words, 3),
            "active": rng.random() < 0.5,
            "owner": {"login": rng.choice(words), "score": round(rng.random() * 100, 3)},
            "events": [{"kind": rng.choice(words), "at": rng.randrange(10**9)} for _ in range(2)],
        }
        records.append(record)
        used += len(json.dumps(record, indent=2))
    return records


def _rust_releases() -> bytes:
    return (corpora.rust_docs_root() / "releases.md").read_bytes()


def build_inputs(mb: float) -> list[Input]:
    """Every format's input, about ``mb`` megabytes each, in a fixed order."""
    limit = int(mb * 1_000_000)
    docs_root = corpora.rust_docs_root()
    site = Path(sysconfig_purelib())
    records = _records(limit)
    csv_rows = ["id,name,city,notes,amount"] + [
        f'{r["id"]},{r["name"]},{r["owner"]["login"]},"{", ".join(r["tags"])}",'
        f"{r['owner']['score']}"
        for r in _records(limit * 4)
    ]
    releases = _rust_releases()
    return [
        Input(
            "markdown",
            "text/markdown",
            f"`{docs_root}/releases.md` (Rust release notes)",
            (("releases.md", releases[:limit]),),
        ),
        _stdlib(limit),
        _files("javascript", "text/x-javascript", docs_root, "*.js", limit, keep=_not_minified),
        _repeated("typescript", "text/x-typescript", CORPUS / "code" / "shapes.ts", limit),
        _repeated("go", "text/x-go", CORPUS / "code" / "server.go", limit),
        _repeated("rust", "text/x-rust", CORPUS / "code" / "lib.rs", limit),
        _repeated("java", "text/x-java", CORPUS / "code" / "Repository.java", limit),
        _files("c", "text/x-c", site, "*.c", limit),
        _files("html", "text/html", docs_root / "book", "*.html", limit),
        _pdf(limit),
        _docx(limit // 2),
        _notebook(limit),
        _rst(limit),
        Input(
            "json",
            "application/json",
            "generated records (random.Random(0))",
            (("records.json", json.dumps(records, indent=2).encode()),),
        ),
        Input(
            "yaml",
            "application/yaml",
            "the JSON records as block YAML (yaml.safe_dump)",
            (("records.yaml", _yaml(records, limit)),),
        ),
        Input(
            "csv",
            "text/csv",
            "generated rows with quoted fields",
            (("records.csv", "\n".join(csv_rows).encode()[:limit]),),
        ),
        _text(limit),
    ]


def sysconfig_purelib() -> str:
    """The running environment's site-packages (the venv's C sources live there)."""
    import sysconfig

    return sysconfig.get_paths()["purelib"]


def _stdlib(limit: int) -> Input:
    corpus = corpora.load("stdlib", limit / 1e6)
    docs = tuple((d.id, d.text.encode()) for d in corpus.documents)
    return Input(
        "python", "text/x-python", f"{len(docs)} stdlib files from `{corpus.source}`", docs
    )


def _text(limit: int) -> Input:
    corpus = corpora.load("prose", limit / 1e6)
    docs = tuple((d.id, d.text.encode()) for d in corpus.documents)
    return Input("text", "text/plain", f"{len(docs)} Rust-book pages as text (prose corpus)", docs)


def _rst(limit: int) -> Input:
    roots = sorted({Path(sysconfig_purelib()), Path(sys.base_prefix)})
    paths = sorted(p for root in roots for p in root.rglob("*.rst"))
    chosen = _take(paths, limit)
    if sum(p.stat().st_size for p in chosen) < limit // 2:
        return _repeated("rst", "text/x-rst", CORPUS / "rst" / "manual.rst", limit)
    docs = tuple((str(p), p.read_bytes()) for p in chosen)
    return Input(
        "rst",
        "text/x-rst",
        f"{len(docs)} `.rst` files under {', '.join(f'`{r}`' for r in roots)}",
        docs,
    )


def _yaml(records: list[dict[str, Any]], limit: int) -> bytes:
    import yaml

    data = yaml.safe_dump(records, sort_keys=False).encode()
    return data[: data.rfind(b"\n- ", 0, limit) + 1]


# ----------------------------------------------------------------------------- measuring


def parse_all(item: Input) -> list[Any]:
    """Parse every document of ``item`` through the registry."""
    from fissure.parse import parse

    return [parse(data, source, item.mime) for source, data in item.documents]


def split_all(item: Input, chunker: Any) -> int:
    """Parse and split every document; the number of chunks."""
    return sum(len(chunker.chunk_document(doc)) for doc in parse_all(item))


def count_blocks(documents: list[Any]) -> int:
    """Blocks in every tree, at every depth."""
    stack = [b for doc in documents for b in doc.blocks]
    count = 0
    while stack:
        count += 1
        stack.extend(stack.pop().children)
    return count


def _timed(call: Callable[[], Any]) -> float:
    start = time.process_time()
    call()
    return time.process_time() - start


def library_share(item: Input) -> float:
    """Share of parse time spent outside ``src/fissure`` (cProfile, one pass)."""
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    parse_all(item)
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    memo: dict[Any, float] = {}
    total = sum(entry[2] for entry in stats.values())
    mine = sum(entry[2] * _fissure_fraction(func, stats, memo) for func, entry in stats.items())
    return 1 - mine / total if total else 0.0


def _fissure_fraction(func: Any, stats: dict[Any, Any], memo: dict[Any, float]) -> float:
    """How much of ``func``'s own time is fissure's: 1 or 0 for code in a file; for a
    built-in or generated code (a dataclass ``__init__``), its callers' shares, weighted."""
    if func in memo:
        return memo[func]
    filename = func[0]
    if filename.startswith("/"):
        memo[func] = float(filename.startswith(FISSURE_SRC))
        return memo[func]
    if _LIBRARY_BUILTINS.search(func[2]):
        memo[func] = 0.0
        return 0.0
    memo[func] = 0.0  # a cycle through built-ins counts as library
    callers = stats[func][4] if func in stats else {}
    weights = {c: (via[2] or via[1] * 1e-9) for c, via in callers.items()}
    total = sum(weights.values())
    if total:
        memo[func] = sum(w * _fissure_fraction(c, stats, memo) for c, w in weights.items()) / total
    return memo[func]


def run(inputs: list[Input], repeats: int, log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Time every input, ``repeats`` times each, formats taking turns within a repeat."""
    from fissure import Chunker

    rows: dict[str, dict[str, Any]] = {}
    for item in inputs:  # warm-up and facts: imports, grammars, compiled patterns
        documents = parse_all(item)
        fallbacks = [d.metadata["fallback"] for d in documents if "fallback" in d.metadata]
        rows[item.name] = {
            "format": item.name,
            "origin": item.origin,
            "mb": item.n_bytes / 1e6,
            "documents": len(item.documents),
            "blocks": count_blocks(documents),
            "fallbacks": fallbacks,
            "parse_s": [],
            "split_s": [],
            "chunks": 0,
        }
    for repeat in range(repeats):
        for item in inputs:
            chunker = Chunker(strategy="structural", max_tokens=254, tokenizer="minilm")
            row = rows[item.name]
            row["parse_s"].append(_timed(lambda: parse_all(item)))  # noqa: B023
            row["split_s"].append(_timed(lambda: row.update(chunks=split_all(item, chunker))))  # noqa: B023
        log(f"repeat {repeat + 1}/{repeats} done")
    for item in inputs:
        rows[item.name]["library"] = library_share(item)
    return list(rows.values())


def render(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """The results page."""
    lines = [
        "# Parser throughput per format",
        "",
        f"Generated by `{meta['command']}` on {meta['date']}. See the docstring of "
        "`bench/formats.py` for the method.",
        "",
        f"- Machine: {meta['nproc']} CPUs available ({meta['cpu']}), {meta['platform']}; "
        f"load average {meta['load_before']} before, {meta['load_after']} after; shared "
        "with other work",
        f"- Python {meta['python']}; fissure at {meta['git']}",
        f"- Repeats: {meta['repeats']}; MB/s is input bytes per second of process CPU time, "
        'median; split = `Chunker(strategy="structural", max_tokens=254, '
        'tokenizer="minilm").chunk_document` after the parse (parse included)',
        "- library / fissure: shares of parse time under cProfile (which slows Python code "
        "more than native code, so read them as rough)",
        "",
        "| format | MB | docs | blocks | parse MB/s | parse+split MB/s | chunks | parse: library"
        " / fissure |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        parse_s, split_s = statistics.median(row["parse_s"]), statistics.median(row["split_s"])
        lines.append(
            f"| {row['format']} | {row['mb']:.2f} | {row['documents']:,} | {row['blocks']:,} "
            f"| {row['mb'] / parse_s:.2f} | {row['mb'] / split_s:.2f} | {row['chunks']:,} "
            f"| {row['library']:.0%} / {1 - row['library']:.0%} |"
        )
    lines += ["", "Inputs:", ""]
    lines += [f"- {row['format']}: {row['origin']}" for row in rows]
    fallbacks = [
        f"- {r['format']}: {len(r['fallbacks'])} fell back ({r['fallbacks'][0]})"
        for r in rows
        if r["fallbacks"]
    ]
    if fallbacks:
        lines += ["", "Fallbacks (these documents were parsed as plain text):", "", *fallbacks]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> str:
    """Build the inputs, time them, write ``formats.md``; returns the page."""
    environment.prepare()
    from bench import report

    parser = argparse.ArgumentParser(
        prog="python -m bench.formats",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mb", type=float, default=1.0, help="size of each format's input")
    parser.add_argument("--only", help="comma-separated formats, e.g. markdown,python")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for formats.md")
    args = parser.parse_args(argv)
    args.limit_mb = args.mb
    argv_text = shlex.join(sys.argv[1:] if argv is None else argv)
    meta = report.metadata(f"python -m bench.formats {argv_text}".strip(), args)
    inputs = build_inputs(args.mb)
    if args.only:
        wanted = args.only.split(",")
        inputs = [i for i in inputs if i.name in wanted]
    rows = run(inputs, args.repeats, lambda m: print(m, file=sys.stderr, flush=True))
    if any(i.name == "pdf" for i in inputs):  # PDF pages/s, tables on and off
        from bench import pdf_speed

        measured = pdf_speed.measure(pdf_speed.build_inputs(200), args.repeats)
        extra = "\n" + pdf_speed.section(measured, meta["command"])
    else:
        extra = ""
    meta["load_after"] = report.machine_load()
    page = render(rows, meta) + extra
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "formats.md").write_text(page, encoding="utf-8")
    print(page)
    return page


if __name__ == "__main__":
    main()
