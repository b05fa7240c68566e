"""What ingesting a corpus will cost, per strategy: chunks, tokens, bytes, time, money.

Every figure comes from chunking the survey's sample for real: tokens are counted by the
embedding model's own tokenizer on exactly the text that would be embedded (overlap and
any context line included), vectors are ``chunks × dim × 4`` bytes (float32, as stored),
and the embedding time is measured on this machine on a sample of the chunks. When the
survey parsed only a sample, figures are scaled by total bytes over sampled bytes; with
every file sampled they are exact (the chunk count is what ``fissure chunk`` makes).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from fissure.config import ChunkSettings
from fissure.embed import Embedder, load_embedder
from fissure.embed.window import headed_text
from fissure.errors import ConfigError
from fissure.plan.measure import Measured, measure
from fissure.plan.survey import Survey
from fissure.size import Sizer
from fissure.types import Chunk

FLOAT32 = 4


@dataclass(frozen=True, slots=True)
class Model:
    """An embedding model as far as cost goes.

    Attributes:
        name: As given to ``--model``.
        dim: Vector width.
        tokenizer: What counts its input tokens (a fissure tokenizer name).
        max_tokens: Its input limit (longer chunks are truncated), if known.
        local: Runs here (embedding time is measured), else a priced API.
    """

    name: str
    dim: int
    tokenizer: str
    max_tokens: int | None
    local: bool


# Published widths and input limits (prices change: pass --price-per-million).
MODELS = {
    "minilm": Model("minilm", 384, "minilm", 254, local=True),
    "text-embedding-3-small": Model("text-embedding-3-small", 1536, "cl100k_base", 8191, False),
    "text-embedding-3-large": Model("text-embedding-3-large", 3072, "cl100k_base", 8191, False),
    "text-embedding-ada-002": Model("text-embedding-ada-002", 1536, "cl100k_base", 8191, False),
}


def model_named(name: str, dim: int | None = None, tokenizer: str = "cl100k_base") -> Model:
    """A model from the table, or any other API model given its ``dim``.

    Raises:
        ConfigError: An unknown model without ``dim``, or a width below 1.
    """
    if dim is not None and dim < 1:
        raise ConfigError(f"--dim must be at least 1, got {dim}")
    known = MODELS.get(name)
    if known is not None:
        return replace(known, dim=dim or known.dim)
    if dim is None:
        raise ConfigError(f"unknown model {name!r}: use one of {', '.join(MODELS)}, or give "
                          "its vector width with --dim (and --count-tokenizer)")  # fmt: skip
    return Model(name, dim, tokenizer, None, local=False)


@dataclass(frozen=True, slots=True)
class Timing:
    """Embedding speed measured on this machine."""

    texts: int
    tokens: int
    seconds: float
    cpu_seconds: float

    @property
    def tokens_per_second(self) -> float:
        """Model tokens embedded per wall second."""
        return self.tokens / self.seconds if self.seconds > 0 else float("inf")


@dataclass(frozen=True, slots=True)
class Estimate:
    """One strategy's cost for the whole corpus (scaled when the survey sampled).

    Attributes:
        strategy: The strategy name.
        settings: Its chunk settings.
        chunks: Chunks (= vectors stored).
        mean_tokens: Mean chunk size in the chunker's unit.
        tokens: Tokens the model embeds, by its tokenizer, context and overlap included.
        truncated: Chunks over the model's input limit (it would cut them short).
        vector_bytes: ``chunks × dim × 4``.
        text_bytes: UTF-8 bytes of the chunk texts the store keeps.
        boundary_tokens: MiniLM tokens embedded while choosing semantic cuts.
        boundary_seconds: Wall seconds of that, on this machine.
        embed_seconds: Wall seconds to embed ``tokens`` here (local models), else ``None``.
        cost: ``tokens / 1e6 × price`` when a price was given, else ``None``.
        scale: What the sample's figures were multiplied by (1.0: exact).
    """

    strategy: str
    settings: ChunkSettings
    chunks: int
    mean_tokens: float
    tokens: int
    truncated: int
    vector_bytes: int
    text_bytes: int
    boundary_tokens: int
    boundary_seconds: float
    embed_seconds: float | None
    cost: float | None
    scale: float


def estimate(
    survey: Survey,
    strategies: Sequence[str],
    base: ChunkSettings,
    model: Model,
    *,
    price_per_million: float | None = None,
    time_sample: int = 64,
    embed_headings: bool = False,
    embedder: Embedder | None = None,
) -> tuple[list[Estimate], Timing | None]:
    """Estimate each strategy on ``survey`` with ``base`` settings otherwise.

    Args:
        survey: The corpus and its parsed sample.
        strategies: Strategy names, side by side.
        base: Every other chunk setting (budget, tokenizer, overlap, context …).
        model: The embedding model (its width, tokenizer, limit).
        price_per_million: Money per million embedded tokens, for the cost column.
        time_sample: Chunks to embed for the time measurement (0: do not measure).
        embed_headings: Count the headings line ``fissure ingest --embed-headings`` adds.
        embedder: The local model to time (default: loaded from ``model.name``).

    Raises:
        ConfigError: Invalid settings or price.
    """
    if price_per_million is not None and price_per_million < 0:
        raise ConfigError(f"--price-per-million must be >= 0, got {price_per_million}")
    counter = Sizer.named(model.tokenizer)
    measured = [measure(survey, replace(base, strategy=name)) for name in strategies]
    texts = [[_embedded(c, embed_headings) for c in m.every] for m in measured]
    timing = None
    if model.local and time_sample > 0 and any(texts):
        timing = time_embedding(embedder or load_embedder(model.name), counter,
                                next(t for t in texts if t), time_sample)  # fmt: skip
    out = []
    for name, m, embedded in zip(strategies, measured, texts, strict=True):
        out.append(_one(name, m, embedded, survey.scale, model, counter, timing,
                        price_per_million))  # fmt: skip
    return out, timing


def _one(
    name: str,
    m: Measured,
    embedded: list[str],
    scale: float,
    model: Model,
    counter: Sizer,
    timing: Timing | None,
    price: float | None,
) -> Estimate:
    sizes = counter.count_many(embedded) if embedded else []
    tokens = round(sum(sizes) * scale)
    chunks = round(m.count * scale)
    limit = model.max_tokens
    every = m.every
    return Estimate(
        strategy=name,
        settings=m.settings,
        chunks=chunks,
        mean_tokens=round(sum(c.n_tokens for c in every) / len(every), 1) if every else 0.0,
        tokens=tokens,
        truncated=round(sum(s > limit for s in sizes) * scale) if limit else 0,
        vector_bytes=chunks * model.dim * FLOAT32,
        text_bytes=round(sum(len(c.text.encode("utf-8", "surrogatepass")) for c in every) * scale),
        boundary_tokens=round(m.boundary_tokens * scale),
        boundary_seconds=m.boundary_seconds * scale,
        embed_seconds=tokens / timing.tokens_per_second if timing else None,
        cost=tokens / 1e6 * price if price is not None else None,
        scale=scale,
    )


def time_embedding(embedder: Embedder, counter: Sizer, texts: list[str], n: int) -> Timing:
    """Embed ``n`` of ``texts`` (evenly spread) once the model is warm, and time it."""
    step = max(1, len(texts) // n)
    chosen = texts[::step][:n]
    embedder.embed(chosen[:2])  # loads the model and warms it up; not timed
    wall, cpu = time.perf_counter(), time.process_time()
    embedder.embed(chosen)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return Timing(len(chosen), sum(counter.count_many(chosen)), wall, cpu)


def _embedded(chunk: Chunk, embed_headings: bool) -> str:
    """The text ingest embeds for a chunk (see :class:`fissure.ingest.writer.Writer`)."""
    if embed_headings:
        return headed_text(chunk)
    return chunk.embedding_text()
