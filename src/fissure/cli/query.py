"""``fissure query``: the chunks closest to a question.

Every hit carries its score as the mode computed it, labelled (:data:`SCORE_KINDS`), and a
``relevance`` within 0..1 derived from it (:func:`relevance`; docs/cli.md has the
formulas and what they can be compared with).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from fissure.cli.common import open_existing, settings_for
from fissure.cli.options import (
    BudgetTokens,
    ConfigFile,
    K,
    Mode,
    NoConfig,
    Preset,
    QueryEmbedder,
    Store,
    SubWeight,
    json_option,
)
from fissure.cli.output import display, err, fail, printable
from fissure.errors import FissureError
from fissure.store.fusion import DEFAULT_MODE, Fusion
from fissure.store.handover import DEPTH, Passage, hand_over
from fissure.store.open import is_database

# What a hit's score is in each mode, and how the text output labels it.
SCORE_KINDS = {"dense": "cosine", "lexical": "bm25", "hybrid": "rrf"}
LABELS = {"dense": "cosine", "lexical": "bm25", "hybrid": "hybrid rrf"}
# The BM25 score that maps to relevance 0.5 (s / (s + BM25_HALF)).
BM25_HALF = 5.0


def query(
    ctx: typer.Context,
    text: Annotated[
        str | None, typer.Argument(help="What to look for (or pass --queries FILE).")
    ] = None,
    k: K = None,
    where: Annotated[
        list[str] | None,
        typer.Option(help="key=value filter on chunk metadata (source, entity, strategy …)."),
    ] = None,
    store: Store = None,
    query_embedder: QueryEmbedder = None,
    sub_weight: SubWeight = None,
    as_json: Annotated[
        bool,
        json_option(
            "Print one JSON line per query: the query, its mode and its hits (rank, "
            "score, score_kind, relevance 0..1, source, start/end offsets, lines, "
            "headings, entity, page, text)."
        ),
    ] = False,
    queries: Annotated[
        Path | None,
        typer.Option(
            "--queries",
            help="Answer every line of this file ('-': standard input), one "
            "JSON line per query, in order, as --json prints them.",
        ),
    ] = None,
    all_copies: Annotated[
        bool,
        typer.Option(
            "--all-copies",
            help="Show every near-copy (same text up to case, spaces and "
            "digits in one document), not only the best of each group.",
        ),
    ] = False,
    mode: Mode = None,
    budget_tokens: BudgetTokens = None,
    preset: Preset = None,
    config_file: ConfigFile = None,
    no_config: NoConfig = False,
) -> None:
    """Print the K closest chunks: score, relevance, source:lines, breadcrumb or entity
    and a snippet.

    By default (folder stores) the ranking is hybrid: cosine and BM25 rankings fused,
    chosen held out (docs/store.md). Every chunk is scored exactly up to a million
    chunks. Each score is printed with what it is: cosine (--mode dense), bm25
    (lexical) or hybrid rrf (the fused rank score, at most 1/6), and beside it a
    relevance within 0..1: the cosine clamped at 0, s/(s+5) of BM25, or the fused
    score over its best possible (docs/cli.md).

    With --budget-tokens N (small-to-big) the reader is handed passages instead: the
    best chunks (ranked on their sentence pieces too under --sub-weight), overlapping or
    adjacent chunks of a document joined, repeated text left out, best first, up to N
    cl100k_base tokens in all (docs/store.md).

    Exit status: 0 answered (even with no hits), 2 an error (no store, bad option …).
    """
    from fissure.store.open import close_store

    s = settings_for(ctx)
    k, sub_weight, embedder, store = s.query.k, s.query.sub_weight, s.query.embedder, s.store.path
    mode = s.query.mode or ("dense" if is_database(store) else DEFAULT_MODE)
    budget = s.query.budget_tokens
    depth = k if budget is None else max(k, DEPTH)
    filters = _filters(where or [])
    asked = _asked(text, queries)
    found, manifest = open_existing(store, read_only=True)  # search is a read
    try:
        vectors = _vectors(asked, manifest, embedder, mode)
        pieces = getattr(found, "count_pieces", lambda: 1)
        if sub_weight is not None and found.count() and not pieces():
            err.print("note: this store has no sentence pieces (ingest with --sub-vectors N); "
                      "--sub-weight is ignored")  # fmt: skip
        answers = [found.query(v, depth, filters, sub_weight=sub_weight, collapse=not all_copies,
                               mode=mode, text=q)
                   for q, v in zip(asked, vectors, strict=True)]  # fmt: skip
    except FissureError as exc:
        fail(str(exc))
    finally:
        close_store(found)
    if budget is not None:
        _print_passages(asked, [hand_over(got, budget) for got in answers], mode, budget,
                        as_json or queries is not None)  # fmt: skip
        return
    if as_json or queries is not None:
        _json_lines(asked, [{"mode": mode,
                             "hits": [_hit(h, i, mode) for i, h in enumerate(got, 1)]}
                            for got in answers])  # fmt: skip
        return
    hits = answers[0]
    if not hits:
        typer.echo("no results")
    for hit in hits:
        m = hit.metadata
        where_ = f"{display(str(m.get('source', '?')))}:{m.get('line_start')}-{m.get('line_end')}"
        label = _label(m)
        snippet = " ".join(hit.text.split())
        snippet = printable(snippet[:197] + "…" if len(snippet) > 200 else snippet)
        more = f"  (+{hit.copies - 1} near-copies)" if hit.copies > 1 else ""
        typer.echo(f"{_scored(hit.score, mode)}  {where_}  {label}".rstrip() + more)
        typer.echo(f"       {snippet}")


def _print_passages(
    asked: list[str], handed: list[list[Passage]], mode: str, budget: int, as_json: bool
) -> None:
    """Small-to-big output: one JSON line per query, or the first query's passages."""
    if as_json:
        _json_lines(asked, [{"mode": mode, "budget_tokens": budget,
                             "tokens": sum(p.n_tokens for p in passages),
                             "passages": [_passage(p, mode) for p in passages]}
                            for passages in handed])  # fmt: skip
        return
    passages = handed[0]
    if not passages:
        typer.echo("no results")
    for p in passages:
        typer.echo(f"{_scored(p.score, mode)}  {display(p.source)}:{p.start}-{p.end}  "
                   f"{p.n_tokens} tokens  "
                   f"{len(p.chunk_ids)} chunk(s)  {_label(p.metadata)}".rstrip())  # fmt: skip
        typer.echo(printable(p.text))
    typer.echo(f"{sum(p.n_tokens for p in passages)} of {budget} tokens")


def _json_lines(asked: list[str], answers: list[dict[str, Any]]) -> None:
    """One JSON line per query, in order: the query, then its answer's keys."""
    for question, answer in zip(asked, answers, strict=True):
        typer.echo(json.dumps({"query": question, **answer}, ensure_ascii=False))


def _label(m: dict[str, Any]) -> str:
    """What a hit or passage is about: its entity, else its headings (printable)."""
    return printable(str(m.get("entity") or m.get("headings") or ""))


def relevance(score: float, mode: str) -> float:
    """A hit's score mapped into 0..1, higher more relevant (docs/cli.md).

    * dense: the cosine, clamped at 0 (an opposite vector is as irrelevant as an
      unrelated one); comparable across queries with one embedder.
    * lexical: ``s / (s + 5)`` of the BM25 score ``s``: 0 for no match, 0.5 at 5, near 1
      for a strong one; BM25 depends on the query's words and the store's statistics, so
      it ranks one query's hits and is not calibrated across queries or stores.
    * hybrid: the fused score over its best possible, ``1 / (c + 1)`` (first in both
      rankings): 1 for a chunk first in both, about 0.6 for one first in the dense
      ranking alone, 0 for one past both; a rank measure, not a similarity.
    """
    if mode == "dense":
        value = score
    elif mode == "lexical":
        value = score / (score + BM25_HALF) if score > 0 else 0.0
    else:
        value = score * (Fusion().constant + 1)  # the fusion the store's query uses
    return round(min(1.0, max(0.0, value)), 4)


def _scored(score: float, mode: str) -> str:
    """A score as the text output prints it: what it is, its value, its relevance."""
    return f"{LABELS[mode]} {score:.3f}  relevance {relevance(score, mode):.2f}"


def _passage(p: Passage, mode: str) -> dict[str, Any]:
    """A passage as JSON: exact offsets into its document's text, and the chunks it holds."""
    return {"rank": p.rank, "score": round(p.score, 6), "score_kind": SCORE_KINDS[mode],
            "relevance": relevance(p.score, mode), "source": p.source, "start": p.start,
            "end": p.end, "n_tokens": p.n_tokens, "chunk_ids": list(p.chunk_ids),
            "doc_id": p.metadata.get("doc_id"), "text": p.text}  # fmt: skip


def _vectors(asked: list[str], manifest: Any, embedder: str | None, mode: str) -> list[Any]:
    """The questions' vectors, from the embedder the store was built with (closes the
    manifest); ``None`` each in lexical mode, which needs no embedder."""
    from fissure.embed import load_embedder

    try:
        spec = embedder or _embedder_of(manifest)
        built_with = manifest.get_meta("model")
    finally:
        manifest.close()
    if mode == "lexical":
        return [None] * len(asked)
    model = load_embedder(spec)
    if built_with and built_with != model.model_id:
        fail(f"the store was built with {built_with}, not {model.model_id}: pass --embedder")
    return list(model.embed(asked))


def _asked(text: str | None, queries: Path | None) -> list[str]:
    """The questions: the argument, or the non-blank lines of the --queries file."""
    if (text is None) == (queries is None):
        fail("give a query, or --queries FILE (one query per line), but not both")
    if queries is None:
        return [str(text)]
    try:
        raw = sys.stdin.read() if str(queries) == "-" else queries.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read --queries {queries}: {exc}")
    asked = [line.strip() for line in raw.splitlines() if line.strip()]
    if not asked:
        fail(f"--queries {queries} has no query (one per line)")
    return asked


def _hit(hit: Any, rank: int, mode: str) -> dict[str, Any]:
    """A hit as JSON: its score and what it is, and where the chunk is (offsets into its
    document's text, 1-based lines)."""
    m = hit.metadata
    headings = str(m.get("headings") or "")
    return {
        "rank": rank,
        "mode": mode,
        "score": round(float(hit.score), 6),
        "score_kind": SCORE_KINDS[mode],
        "relevance": relevance(float(hit.score), mode),
        "source": m.get("source"),
        "start": m.get("start"),
        "end": m.get("end"),
        "lines": [m.get("line_start"), m.get("line_end")],
        "headings": headings.split(" › ") if headings else [],
        "entity": m.get("entity"),
        "page": m.get("page"),
        "cell": m.get("cell"),
        "chunk_id": hit.chunk_id,
        "copies": hit.copies,
        "doc_id": m.get("doc_id"),
        "index": m.get("index"),
        "n_tokens": m.get("n_tokens"),
        "strategy": m.get("strategy"),
        "text": hit.text,
    }


def _filters(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            fail(f"--where {pair!r} is not key=value")
        out[key] = int(value) if value.lstrip("-").isdigit() else value
    return out


def _embedder_of(manifest: Any) -> str:
    """The embedder to query with: the one the store was built with
    (:func:`~fissure.embed.load.stored_embedder`), else MiniLM."""
    from fissure.embed.load import stored_embedder

    return stored_embedder(manifest) or "minilm"
