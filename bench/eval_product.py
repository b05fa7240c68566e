"""The evaluator's retrieval recipe end to end through the product.

``fissure.eval`` scores strategies with its own exact retrieval. This script checks that the
same recipe, run the way a user runs it (``fissure ingest`` into the Chroma store, then
``ChromaStore.query``), gets the same figures: it ingests the Chroma benchmark's corpora
folder, asks every question through the store and scores the hits with the evaluator's
metrics (character recall, precision and IoU at k, from the chunks' exact offsets).

Usage::

    python -m bench.eval_product /path/to/chroma-chunking-eval --store .fissure/eval-product
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict
from pathlib import Path
from typing import cast

from fissure.config import ChunkSettings
from fissure.embed import CachedEmbedder, load_embedder
from fissure.embed.protocol import Embedder
from fissure.eval.dataset import HALVES, load_chroma
from fissure.eval.metrics import Located, mean_std, token_scores
from fissure.ingest import Options, ingest, open_source
from fissure.store import ChromaStore
from fissure.store.fusion import LEXICAL_WEIGHT, MODES, RRF_CONSTANT, Fusion
from fissure.store.handover import DEPTH, hand_over


def settings_from(args: argparse.Namespace) -> ChunkSettings:
    """The ingest settings under test."""
    return ChunkSettings(
        strategy=args.strategy,
        max_tokens=args.max_tokens,
        min_tokens=args.min_tokens,
        tokenizer=args.tokenizer,
        embedder=args.embedder,
        embed_window_tokens=args.window,
        embed_window_share=args.share,
        sub_vector_tokens=args.sub_vectors,
        dedup=args.dedup,
        embed_headings=args.embed_headings,
    )


def main(argv: list[str] | None = None) -> None:
    """Ingest the corpora, query every question, print recall / precision / IoU."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.eval_product",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dataset", type=Path, help="Chroma dataset folder")
    parser.add_argument("--store", type=Path, default=Path(".fissure/eval-product"))
    parser.add_argument("--strategy", default="semantic")
    parser.add_argument("--max-tokens", type=int, default=140)
    parser.add_argument("--min-tokens", type=int, default=50)
    parser.add_argument("--tokenizer", default="cl100k_base",
                        help="what --max-tokens counts (minilm: fissure's default)")  # fmt: skip
    parser.add_argument("--embedder", default="minilm", help="for queries, vectors and cuts")
    parser.add_argument("--window", type=int, default=254, help="embed_window_tokens (0: off)")
    parser.add_argument("--share", type=float, default=0.8)
    parser.add_argument("--sub-vectors", type=int, default=30, help="piece tokens (0: off)")
    parser.add_argument("--sub-weight", type=float, default=0.4)
    parser.add_argument("--dedup", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--embed-headings", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument(
        "--collapse",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="one hit per group of near-copies (the store's default)",
    )
    parser.add_argument(
        "--budget-tokens",
        type=int,
        default=None,
        help="small-to-big: score the passages `fissure query --budget-tokens` "
        f"hands over ({DEPTH} best chunks read) instead of the k best chunks",
    )
    parser.add_argument("--search", default="auto", choices=("auto", "exact", "index"))
    parser.add_argument("--questions", default="all", choices=HALVES)
    parser.add_argument("--mode", default="dense", choices=MODES, help="retrieval mode")
    parser.add_argument("--rrf", type=float, default=RRF_CONSTANT, help="hybrid rank constant")
    parser.add_argument("--lexw", type=float, default=LEXICAL_WEIGHT, help="hybrid lexical weight")
    parser.add_argument("--cache", type=Path, default=None,
                        help="embedding cache folder (as the evaluator's --cache)")  # fmt: skip
    args = parser.parse_args(argv)
    args.window = args.window or None
    args.sub_vectors = args.sub_vectors or None

    dataset = load_chroma(args.dataset).half(args.questions)
    settings = settings_from(args)
    model = load_embedder(args.embedder)
    if args.cache is not None:
        model = cast(Embedder, CachedEmbedder(model, args.cache))
    started = time.perf_counter()
    options = Options(settings=settings, workers=1, timeout=3600, memory_mb=None, progress=False)
    summary = ingest(open_source(str(args.dataset / "corpora")), args.store, model, options)
    ingested = time.perf_counter() - started
    store = ChromaStore(args.store / "chroma")
    vectors = model.embed([q.query for q in dataset.questions])
    weight = args.sub_weight if args.sub_vectors else None
    recall, precision, iou, handed = [], [], [], []
    depth = args.k if args.budget_tokens is None else max(args.k, DEPTH)
    for question, vector in zip(dataset.questions, vectors, strict=True):
        hits = store.query(vector, k=depth, sub_weight=weight, collapse=args.collapse,
                           search=args.search, mode=args.mode, text=question.query,
                           fusion=Fusion(args.rrf, args.lexw))  # fmt: skip
        located: list[Located] = [
            (Path(str(h.metadata["source"])).stem, int(h.metadata["start"]), int(h.metadata["end"]))
            for h in hits
        ]  # the corpus id is the file stem
        if args.budget_tokens is not None:
            passages = hand_over(hits, args.budget_tokens)
            located = [(Path(p.source).stem, p.start, p.end) for p in passages]
            handed.append(sum(p.n_tokens for p in passages))
        scores = token_scores(question.gold, question.corpus_id, located)
        recall.append(scores.recall)
        precision.append(scores.precision)
        iou.append(scores.iou)
    print(f"settings: {asdict(settings)}; sub_weight {weight}; k={args.k}; collapse "
          f"{args.collapse}; search {args.search}; mode {args.mode} (rrf {args.rrf:g}, lexw "
          f"{args.lexw:g}); {args.questions} questions "
          f"({len(dataset.questions)})")  # fmt: skip
    print(f"ingest: {summary.chunks} chunks, {summary.pieces} pieces, {summary.duplicates} "
          f"duplicates left out, {ingested:.0f} s")  # fmt: skip
    for name, values in (("recall", recall), ("precision", precision), ("IoU", iou)):
        mean, std = mean_std(values)
        print(f"{name}: {mean:.2f} ± {std:.1f}")
    if handed:
        print(
            f"budget {args.budget_tokens} tokens: {sum(handed) / len(handed):.0f} cl100k "
            "tokens handed over on average"
        )


if __name__ == "__main__":
    main()
