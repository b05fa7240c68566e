"""Options that several commands share, declared once.

Every option that sets a setting defaults to ``None`` ("not given"): the value in force comes
from :func:`fissure.cli.common.settings_for`, which layers the built-in defaults, presets, the
settings file and the flags given (``docs/settings.md``). :data:`PARAM_KEYS` routes each such
parameter to its ``section.key``; its help shows the key and the built-in default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from fissure.config import BREAKPOINTS, STRATEGIES
from fissure.settings.model import defaults

# Command parameter -> the setting it gives. A parameter of this name in any command sets
# that key (`--embedder` means a different key in chunk, ingest and query, so those
# parameters have different names).
PARAM_KEYS = {
    "strategy": "chunk.strategy",
    "max_tokens": "chunk.max_tokens",
    "max_chars": "chunk.max_chars",
    "min_tokens": "chunk.min_tokens",
    "overlap_tokens": "chunk.overlap_tokens",
    "tokenizer": "chunk.tokenizer",
    "language": "chunk.language",
    "prepend_context": "chunk.prepend_context",
    "embedder": "chunk.embedder",
    "breakpoint": "chunk.breakpoint",
    "breakpoint_amount": "chunk.breakpoint_amount",
    "target_chunks": "chunk.target_chunks",
    "embed_window": "chunk.embed_window_tokens",
    "embed_window_share": "chunk.embed_window_share",
    "sub_vectors": "chunk.sub_vector_tokens",
    "dedup": "chunk.dedup",
    "embed_headings": "chunk.embed_headings",
    "max_bytes": "source.max_bytes",
    "follow_outside_links": "source.follow_outside_links",
    "store": "store.path",
    "ingest_embedder": "ingest.embedder",
    "workers": "ingest.workers",
    "timeout": "ingest.timeout",
    "memory_mb": "ingest.memory_mb",
    "timeout_per_mb": "ingest.timeout_per_mb",
    "max_inflate_mb": "ingest.max_inflate_mb",
    "engine": "ingest.engine",
    "address": "ingest.address",
    "progress": "ingest.progress",
    "k": "query.k",
    "sub_weight": "query.sub_weight",
    "query_embedder": "query.embedder",
    "mode": "query.mode",
    "budget_tokens": "query.budget_tokens",
}
# Flags where 0 turns the setting off (None), so a flag can undo a file's value.
OFF_AT_ZERO = ("chunk.embed_window_tokens", "chunk.sub_vector_tokens", "chunk.max_chars")


def setting(param: str, *names: str, help: str, unset: str = "none") -> Any:  # noqa: A002
    """The typer option of a setting: its help ends with the built-in default and the key.

    Args:
        param: The command parameter's name (a key of :data:`PARAM_KEYS`).
        names: The option's spellings (``"--max-tokens"``).
        help: What it does.
        unset: How to say the default when it is ``None``.
    """
    key = PARAM_KEYS[param]
    section, _, name = key.partition(".")
    value = defaults(section)[name]
    shown = unset if value is None else value
    if isinstance(value, bool):  # not a dict lookup: 0 == False and 1 == True
        shown = "on" if value else "off"
    if isinstance(value, bool):
        names = (f"{names[0]}/--no-{names[0].removeprefix('--')}", *names[1:])
    # "\[" keeps rich from reading the bracket as markup.
    return typer.Option(
        *names,
        help=f"{help} \\[default: {shown}; {key}]",
        show_default=False,
        rich_help_panel=f"Settings: {section}",
    )


# chunk.*
Strategy = Annotated[
    str | None, setting("strategy", "--strategy", "-s", help=f"One of: {', '.join(STRATEGIES)}.")
]
MaxTokens = Annotated[
    int | None,
    setting(
        "max_tokens",
        "--max-tokens",
        help="Hard budget per chunk.",
        unset="the tokenizer's: 254 for minilm, 1000 chars, 200 words, else 512",
    ),
]
MaxChars = Annotated[
    int | None,
    setting(
        "max_chars",
        "--max-chars",
        help="Hard ceiling per chunk in characters, beside the token budget (a run a "
        "tokenizer counts as one token, such as a long line of base64, is cut to it); 0: "
        "the default.",
        unset="16 per token of the budget, at least 256",
    ),
]
MinTokens = Annotated[
    int | None, setting("min_tokens", "--min-tokens", help="Merge smaller chunks into a neighbour.")
]
OverlapTokens = Annotated[
    int | None,
    setting("overlap_tokens", "--overlap-tokens", help="Extend chunks backwards by this much."),
]
Tokenizer = Annotated[
    str | None,
    setting(
        "tokenizer",
        "--tokenizer",
        "-t",
        help="minilm | cl100k_base | o200k_base | chars | words | PATH/tokenizer.json",
    ),
]
Language = Annotated[
    str | None, setting("language", "--language", help="Separator preset for --strategy recursive.")
]
PrependContext = Annotated[
    bool | None,
    setting(
        "prepend_context",
        "--prepend-context",
        help="Count each chunk's context line inside its budget.",
    ),
]
Embedder = Annotated[
    str | None,
    setting(
        "embedder",
        "--embedder",
        "-e",
        help="Finds semantic/hybrid cuts: minilm:auto | minilm | minilm:bf16 | minilm:onnx | "
        "minilm:onnx-fp32 | static | static:PATH | http:URL#MODEL | hashing",
    ),
]
Breakpoint = Annotated[
    str | None, setting("breakpoint", "--breakpoint", help=" | ".join(BREAKPOINTS))
]
BreakpointAmount = Annotated[
    float | None,
    setting(
        "breakpoint_amount",
        "--breakpoint-amount",
        help="The breakpoint method's amount.",
        unset="95, 3, 1.5, 95 by method",
    ),
]
TargetChunks = Annotated[
    int | None,
    setting(
        "target_chunks",
        "--target-chunks",
        help="Semantic: cut at the strongest N-1 boundaries.",
        unset="off",
    ),
]
EmbedWindow = Annotated[
    int | None,
    setting(
        "embed_window",
        "--embed-window",
        unset="off",
        help="Also embed each chunk with its surrounding text, up to this many MiniLM word "
        "pieces (254: MiniLM's limit), and store the blend of the two vectors; 0: off.",
    ),
]
EmbedWindowShare = Annotated[
    float | None,
    setting(
        "embed_window_share",
        "--embed-window-share",
        help="The window vector's weight in that blend, 0..1.",
    ),
]
SubVectors = Annotated[
    int | None,
    setting(
        "sub_vectors",
        "--sub-vectors",
        unset="off",
        help="Also store sentence pieces of at most this many cl100k_base tokens (30 works "
        "well), linked to the chunks they overlap, for `fissure query --sub-weight`; 0: off.",
    ),
]
Dedup = Annotated[
    bool | None,
    setting(
        "dedup",
        "--dedup",
        help="Leave out chunks whose text repeats an earlier chunk's in the same document.",
    ),
]
EmbedHeadings = Annotated[
    bool | None,
    setting(
        "embed_headings",
        "--embed-headings",
        help="Embed each chunk (and its window and pieces) after its headings breadcrumb "
        "line; the stored text does not change.",
    ),
]

# source.*
MaxBytes = Annotated[
    int | None,
    setting(
        "max_bytes",
        "--max-bytes",
        help="Skip files larger than this many bytes; a read stops here whatever the file "
        "system said (a file that grows, a /proc file).",
    ),
]
FollowOutsideLinks = Annotated[
    bool | None,
    setting(
        "follow_outside_links",
        "--follow-outside-links",
        help="Also follow links that lead outside the folder (by default they are skipped, "
        "with a reason).",
    ),
]

# store.*
Store = Annotated[
    str | None,
    setting(
        "store",
        "--store",
        help="Store folder (manifest, dead letters, Chroma), or postgresql://… (all of it in "
        "one shared PostgreSQL database with pgvector).",
    ),
]

# ingest.*
IngestEmbedder = Annotated[
    str | None,
    setting(
        "ingest_embedder",
        "--embedder",
        help="Embeds the stored vectors: minilm:auto (the fastest MiniLM variant here; a store "
        "keeps the one it was built with) | minilm | minilm:bf16 | minilm:onnx | "
        "minilm:onnx-fp32 | static | static:PATH | http:URL#MODEL",
    ),
]
Workers = Annotated[
    int | None,
    setting(
        "workers",
        "--workers",
        unset="cores - 1, 1 to 4; with --engine ray the CPUs the embedding actors leave",
        help="Parsing processes (with --engine ray: parsing actors).",
    ),
]
# The limits on one document (see fissure.limits), shared by chunk, ingest and dlq retry.
Timeout = Annotated[
    float | None,
    setting(
        "timeout",
        "--timeout",
        help="Seconds one document may take to parse and split before its worker is killed "
        "as hung, plus --timeout-per-mb per MB (embedding for semantic cuts does not count).",
    ),
]
TimeoutPerMb = Annotated[
    float | None,
    setting("timeout_per_mb", "--timeout-per-mb", help="Extra seconds per MB of a document."),
]
MemoryMb = Annotated[
    int | None,
    setting(
        "memory_mb",
        "--memory-mb",
        help="Memory (address space) one document may take, MiB: the cap of each worker "
        "process; 0 for none.",
    ),
]
MaxInflateMb = Annotated[
    int | None,
    setting(
        "max_inflate_mb",
        "--max-inflate-mb",
        help="How far one document's compressed content (DOCX members, PDF streams) may "
        "inflate, MiB; content inflating over 100 times its size (more when this is raised) "
        "is refused as a bomb.",
    ),
]
Engine = Annotated[
    str | None,
    setting("engine", "--engine", help="local (worker processes here) | ray (a Ray cluster)."),
]
Address = Annotated[
    str | None,
    setting(
        "address",
        "--address",
        help="Ray cluster HOST:PORT.",
        unset="$RAY_ADDRESS, else a local Ray",
    ),
]
Progress = Annotated[
    bool | None, setting("progress", "--progress", help="Progress bars on stderr.")
]

# query.*
K = Annotated[int | None, setting("k", "-k", help="How many chunks.")]
BudgetTokens = Annotated[
    int | None,
    setting(
        "budget_tokens",
        "--budget-tokens",
        unset="off",
        help="Small-to-big: hand over the best chunks as passages (overlapping or adjacent "
        "chunks of a document joined, repeated text left out), best first, up to this many "
        "cl100k_base tokens in all, instead of -k chunks.",
    ),
]
SubWeight = Annotated[
    float | None,
    setting(
        "sub_weight",
        "--sub-weight",
        unset="off",
        help="Blend each chunk's score with its best sentence piece's, this much (0..1; 0.4 "
        "works well); needs a store ingested with --sub-vectors.",
    ),
]
QueryEmbedder = Annotated[
    str | None,
    setting(
        "query_embedder",
        "--embedder",
        help="Embeds the query.",
        unset="the embedder the store was built with",
    ),
]
Mode = Annotated[
    str | None,
    setting(
        "mode",
        "--mode",
        help="dense: cosine of the embeddings; lexical: BM25 over the chunks' words (finds "
        "identifiers, error codes, rare terms; loads no embedder); hybrid: both rankings fused "
        "(reciprocal rank fusion, chosen held out: docs/store.md).",
        unset="hybrid for a folder store, dense for postgresql://",
    ),
]

# Which settings: on every command that takes settings.
PANEL = "Settings files and presets"
Preset = Annotated[
    str | None,
    typer.Option(
        "--preset",
        envvar="FISSURE_PRESET",
        show_default=False,
        rich_help_panel=PANEL,
        help="Apply this preset (built-in: fast, chroma-best; or a \\[presets.NAME] of "
        "the settings file) over the file's own values; flags still win.",
    ),
]
ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        envvar="FISSURE_CONFIG",
        show_default=False,
        rich_help_panel=PANEL,
        help="Read this settings file (fissure.toml, or a pyproject.toml's "
        "\\[tool.fissure]) instead of searching for one from the working folder up.",
    ),
]
NoConfig = Annotated[
    bool,
    typer.Option(
        "--no-config",
        envvar="FISSURE_NO_CONFIG",
        show_default=False,
        rich_help_panel=PANEL,
        help="Read no settings file: built-in defaults, presets and flags only (for "
        "scripts and tests).",
    ),
]


def json_option(help: str) -> Any:  # noqa: A002 - typer's own keyword
    """The ``--json`` flag of a command that prints results; ``help`` says what it prints
    (one JSON document, or JSON lines for a list that streams: docs/cli.md)."""
    return typer.Option("--json", help=help)


# Planning commands (recommend, estimate): not settings.
Sample = Annotated[int, typer.Option(help="Files to parse, drawn at random (all if fewer).")]
Seed = Annotated[int, typer.Option(help="Seed of the random sample (same seed, same sample).")]
