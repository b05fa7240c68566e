"""Runs strategies over a dataset: chunk, embed, retrieve from one pooled index, score.

As in Chroma's evaluation, the chunks of *all* corpora go into one collection and every query
searches all of it (cosine similarity, exact, ties broken by chunk order). Per question it
scores the top ``k`` for each ``k``, the "Min" setting (as many chunks as touch the excerpts,
at most 20), and optionally a token budget (see :mod:`fissure.eval.ranking`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from fissure.embed.protocol import Embedder
from fissure.embed.window import blend
from fissure.errors import FissureError
from fissure.eval import damage, lexical, multivector, ranking
from fissure.eval.dataset import Dataset, Question
from fissure.eval.metrics import MIN_K_CAP, Located, mean_std, min_k, precision_omega, token_scores
from fissure.eval.spans import Span
from fissure.eval.strategies import Strategy, parse_strategy
from fissure.size import Sizer

if TYPE_CHECKING:
    from rich.progress import Progress

TOKEN_METRICS = ("recall", "precision", "iou")


@dataclass(frozen=True, slots=True)
class Pool:
    """All chunks of one strategy over all corpora, in corpus order."""

    located: list[Located]
    sizes: list[int]
    by_corpus: dict[str, list[Span]]
    damaged: int = 0


@dataclass(slots=True)
class StrategyResult:
    """Per-question scores of one strategy.

    Attributes:
        strategy: The strategy's name.
        size: Nominal size, if any.
        overlap: Nominal overlap, if any.
        n_chunks: Chunks over all corpora.
        mean_tokens: Mean chunk size in the run's token unit.
        corpus_ids: The corpus of each question, in question order.
        scores: Metric name → one value per question. Token metrics are named
            ``SETTING/METRIC`` (``k=5/recall``, ``min/iou``, ``budget=400/precision``),
            ranking metrics ``recall@5``, ``ndcg@10``, ``mrr@10``, ``hit@5``,
            ``line_recall@5``, ``tokens@5``; ``omega`` is Precision Ω.
        unlocated: Chunks a peer returned that could not be placed in the corpus (dropped).
        damaged: Chunks that cut through a unit they could have held (see
            :mod:`fissure.eval.damage`).
    """

    strategy: str
    size: int | None
    overlap: int | None
    n_chunks: int
    mean_tokens: float
    corpus_ids: tuple[str, ...]
    scores: dict[str, list[float]] = field(default_factory=dict)
    unlocated: int = 0
    damaged: int = 0

    def add(self, name: str, value: float) -> None:
        """Append one question's value of metric ``name``."""
        self.scores.setdefault(name, []).append(float(value))

    def summary(self) -> dict[str, object]:
        """JSON-ready means and population stds (×100 for fractions) and per-corpus means."""
        stats = {name: _stat(name, values) for name, values in self.scores.items()}
        corpora = list(dict.fromkeys(self.corpus_ids))
        per_corpus = {
            cid: {
                name: _stat(
                    name, [v for v, c in zip(values, self.corpus_ids, strict=True) if c == cid]
                )[0]
                for name, values in self.scores.items()
            }
            for cid in corpora
        }
        return {
            "strategy": self.strategy,
            "size": self.size,
            "overlap": self.overlap,
            "chunks": self.n_chunks,
            "unlocated": self.unlocated,
            "damage": round(100 * self.damaged / self.n_chunks, 1) if self.n_chunks else 0.0,
            "mean_tokens": round(self.mean_tokens, 1),
            "questions": len(self.corpus_ids),
            "metrics": stats,
            "per_corpus": per_corpus,
        }


def _stat(name: str, values: list[float]) -> tuple[float, float]:
    if name.rsplit("/", 1)[-1].startswith("tokens"):  # counts, not fractions
        arr = np.asarray(values or [0.0])
        return float(arr.mean()), float(arr.std())
    return mean_std(values)


def embed_texts(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    batch: int = 64,
    progress: Progress | None = None,
    label: str = "embedding",
) -> np.ndarray:
    """Embed ``texts`` in batches (each distinct text once), advancing a progress bar.

    Returns:
        A ``(len(texts), dim)`` float32 array, rows in the order of ``texts``.
    """
    distinct = list(dict.fromkeys(texts))
    if not distinct:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    task = progress.add_task(label, total=len(distinct)) if progress else None
    parts = []
    for at in range(0, len(distinct), batch):
        parts.append(embedder.embed(distinct[at : at + batch]))
        if progress and task is not None:
            progress.advance(task, len(distinct[at : at + batch]))
    if progress and task is not None:
        progress.remove_task(task)
    row = {text: i for i, text in enumerate(distinct)}
    return np.concatenate(parts)[[row[t] for t in texts]].astype(np.float32, copy=False)


def build_pool(
    dataset: Dataset, strategy: Strategy, sizer: Sizer
) -> tuple[Pool, list[str], list[str]]:
    """Chunk every corpus and check the spans.

    Returns:
        The pool (where chunks are scored; sizes are of the chunk text the reader gets),
        what is embedded for every chunk (its text, or ``strategy.view`` of it) and its
        window (``strategy.window``; empty without one).

    Raises:
        FissureError: The strategy returned a span outside its text.
    """
    located: list[Located] = []
    texts: list[str] = []
    views: list[str] = []
    windows: list[str] = []
    by_corpus: dict[str, list[Span]] = {}
    n_damaged = 0
    for cid, text in dataset.corpora.items():
        spans = [(int(s), int(e)) for s, e in strategy.chunk(text, cid)]
        scored = strategy.relocate(text, spans) if strategy.relocate else spans
        for s, e in [*spans, *scored]:
            if not 0 <= s < e <= len(text):
                raise FissureError(
                    f"strategy {strategy.name} returned span ({s}, {e}) outside corpus {cid} "
                    f"of {len(text)} characters; chunk offsets must index the text given"
                )
        by_corpus[cid] = scored
        located.extend((cid, s, e) for s, e in scored)
        n_damaged += count_damaged(text, cid, spans, strategy.size, sizer)
        own = [text[s:e] for s, e in spans]
        texts.extend(own)
        views.extend(strategy.view(text, spans) if strategy.view else own)
        if strategy.window:
            windows.extend(strategy.window(text, spans))
    return Pool(located, sizer.count_many(texts), by_corpus, n_damaged), views, windows


def count_damaged(text: str, cid: str, spans: list[Span], size: int | None, sizer: Sizer) -> int:
    """Chunks that cut through a fence, table or function they could have kept whole."""
    found = damage.units(text, cid)
    if not found:
        return 0
    return damage.damaged(
        spans, found, lambda u: size is None or sizer.count(text[u[0] : u[1]]) <= size
    )


def rank(queries: np.ndarray, chunks: np.ndarray, depth: int) -> np.ndarray:
    """Indices of the ``depth`` most similar chunks per query, best first (ties: lower index)."""
    sims = queries @ chunks.T
    order = np.argsort(-sims, axis=1, kind="stable")
    return order[:, :depth]


def _depth(pool: Pool, ks: Sequence[int], budget: int | None) -> int:
    depth = max(*ks, MIN_K_CAP, 10)
    if budget is not None and pool.sizes:
        depth = max(depth, budget // max(1, min(pool.sizes)) + 1)
    return min(depth, len(pool.located))


def score_question(
    result: StrategyResult,
    question: Question,
    pool: Pool,
    top: Sequence[int],
    settings: tuple[Sequence[int], int | None, dict[str, ranking.LineIndex]],
) -> None:
    """Append every metric of one question's ranked list ``top`` to ``result``."""
    ks, budget, line_index = settings
    lines = line_index[question.corpus_id]
    gold, cid = question.gold, question.corpus_id
    ranked = [pool.located[i] for i in top]
    sizes = [pool.sizes[i] for i in top]
    corpus_chunks = pool.by_corpus.get(cid, [])
    cuts = {f"k={k}": k for k in ks}
    cuts["min"] = min_k(gold, corpus_chunks)
    if budget is not None:
        cuts[f"budget={budget}"] = ranking.budget_take(sizes, budget)
    for setting, n in cuts.items():
        scores = token_scores(gold, cid, ranked[:n])
        for metric in TOKEN_METRICS:
            result.add(f"{setting}/{metric}", getattr(scores, metric))
    if budget is not None:
        result.add(f"budget={budget}/tokens", sum(sizes[: cuts[f"budget={budget}"]]))
    result.add("omega", precision_omega(gold, corpus_chunks))
    rel = ranking.relevance(ranked, cid, gold)
    n_rel = ranking.count_relevant(corpus_chunks, gold)
    for k in ks:
        result.add(f"recall@{k}", ranking.recall_at_k(rel, n_rel, k))
        result.add(f"precision@{k}", ranking.precision_at_k(rel, k))
        result.add(f"ndcg@{k}", ranking.ndcg_at_k(rel, n_rel, k))
        code = ranking.code_lookup_scores(ranked, sizes, cid, gold, lines, n_rel, k)
        result.add(f"hit@{k}", code.hit)
        result.add(f"line_recall@{k}", code.line_recall)
        result.add(f"tokens@{k}", code.tokens)
    result.add("mrr@10", ranking.reciprocal_rank(rel, 10))
    if 10 not in ks:
        result.add("ndcg@10", ranking.ndcg_at_k(rel, n_rel, 10))


def evaluate_strategy(
    dataset: Dataset,
    strategy: Strategy,
    embedder: Embedder,
    queries: np.ndarray,
    *,
    ks: Sequence[int] = (5, 10),
    budget_tokens: int | None = None,
    sizer: Sizer,
    progress: Progress | None = None,
) -> StrategyResult:
    """Chunk, embed, retrieve and score one strategy.

    Args:
        dataset: Corpora and questions.
        strategy: The strategy to run.
        embedder: Embeds chunk texts (the same model that embedded ``queries``); wrap it in
            :class:`~fissure.embed.CachedEmbedder` to keep vectors between runs.
        queries: Query vectors, one row per question.
        ks: Cut-offs to score.
        budget_tokens: Also score a reader budget of this many tokens.
        sizer: Measures chunk sizes (budget and reports).
        progress: Rich progress display for the embedding bar.
    """
    pool, texts, windows = build_pool(dataset, strategy, sizer)
    sizes = pool.sizes
    result = StrategyResult(
        strategy.name,
        strategy.size,
        strategy.overlap,
        len(pool.located),
        float(np.mean(sizes)) if sizes else 0.0,
        tuple(q.corpus_id for q in dataset.questions),
        unlocated=strategy.unlocated[0],
        damaged=pool.damaged,
    )
    if not pool.located:
        raise FissureError(f"strategy {strategy.name} produced no chunks for any corpus")
    scores = chunk_scores(dataset, strategy, embedder, queries, (pool, texts, windows), progress)
    depth = _depth(pool, ks, budget_tokens)
    top = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
    lines = {cid: ranking.LineIndex(text) for cid, text in dataset.corpora.items()}
    for question, row in zip(dataset.questions, top, strict=True):
        score_question(result, question, pool, row.tolist(), (ks, budget_tokens, lines))
    return result


def chunk_scores(
    dataset: Dataset,
    strategy: Strategy,
    embedder: Embedder,
    queries: np.ndarray,
    built: tuple[Pool, list[str], list[str]],
    progress: Progress | None = None,
) -> np.ndarray:
    """Query × chunk similarities: cosine to each chunk's vector (blended with its window's
    under ``+win``), blended with the best sentence piece under ``+sub``, and repeated
    texts hidden under ``+dedup``; BM25, or the fusion of the two rankings, under
    ``+mode=lexical`` / ``+mode=hybrid``."""
    pool, texts, windows = built
    vectors = embed_texts(embedder, texts, progress=progress, label=strategy.name)
    if windows:
        around = embed_texts(embedder, windows, progress=progress, label="windows")
        vectors = blend(vectors, around, strategy.share)
    scores = queries @ vectors.T
    if strategy.sub:
        pieces = parse_strategy(strategy.sub_spec)
        piece_pool, piece_texts, _ = build_pool(dataset, pieces, Sizer.chars())
        piece_vectors = embed_texts(embedder, piece_texts, progress=progress, label="pieces")
        links = multivector.piece_links(pool.by_corpus, piece_pool.located)
        scores = multivector.blend_pieces(scores, queries @ piece_vectors.T, links, strategy.sub)
    own = [dataset.corpora[cid][s:e] for cid, s, e in pool.located]
    hidden = multivector.repeated(own) if strategy.dedup else None
    if hidden is not None:
        scores[:, hidden] = multivector.HIDDEN
    if strategy.mode == "dense":
        return scores
    words = lexical.lexical_scores(own, [q.query for q in dataset.questions], strategy.lexer,
                                   hidden)  # fmt: skip
    if strategy.mode == "lexical":
        return words
    return lexical.fused_scores(scores, words, strategy.fusion, 10, multivector.HIDDEN)


def evaluate(
    dataset: Dataset,
    strategies: Sequence[Strategy],
    embedder: Embedder,
    *,
    ks: Sequence[int] = (5, 10),
    budget_tokens: int | None = None,
    sizer: Sizer | None = None,
    progress: Progress | None = None,
) -> list[StrategyResult]:
    """Evaluate every strategy on ``dataset`` with one embedder (see :func:`evaluate_strategy`).

    ``sizer`` defaults to cl100k_base tokens, the unit of Chroma's report.
    """
    sizer = sizer or Sizer.tiktoken("cl100k_base")
    queries = embed_texts(
        embedder, [q.query for q in dataset.questions], progress=progress, label="queries"
    )
    return [
        evaluate_strategy(
            dataset,
            strategy,
            embedder,
            queries,
            ks=ks,
            budget_tokens=budget_tokens,
            sizer=sizer,
            progress=progress,
        )
        for strategy in strategies
    ]
