"""One meaning of ``min_tokens`` for the greedy packer and the dynamic programme: a chunk
under it remains only where joining it to either neighbour would not fit its budget (less
the context reserved in front of the joined chunk), or where the join would run across a
hard cut (a PDF's page break or section start, for the strategies that read structure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fissure import Chunker
from fissure.chunker import load_document
from fissure.embed.hashing import HashingEmbedder
from fissure.size import Ruler
from fissure.spans import trim
from fissure.split.breaks import paged_cuts
from fissure.types import Document
from tests.conftest import get_sizer

ROOT = Path(__file__).resolve().parents[2]
FILES = [
    "samples/fault-lines.md",
    "samples/seismograph.py",
    "tests/corpus/csv/cities.csv",
    "tests/corpus/pdf/budget.pdf",
    "tests/corpus/html/guide.html",
    "tests/corpus/data/compose.yaml",
    "tests/corpus/text/notes.txt",
]


@pytest.fixture(scope="module")
def documents() -> list[Document]:
    return [load_document(ROOT / name) for name in FILES]


def _joinable(chunker: Chunker, document: Document) -> list[str]:
    """The chunks under ``min_tokens`` that would fit joined to a neighbour."""
    chunks = chunker.chunk_document(document)
    budget, least = chunker.settings.budget, chunker.settings.min_tokens
    ruler = Ruler(document.text, chunker.sizer)
    reserve = chunker._reserve(chunker._placer(document))
    structural = chunker.settings.strategy in ("structural", "hybrid")
    hard = paged_cuts(document.blocks) if structural else None
    found = []
    for i, c in enumerate(chunks):
        if c.n_tokens >= least:
            continue
        for j in (i - 1, i + 1):
            if 0 <= j < len(chunks):
                lo, hi = min(c.start, chunks[j].start), max(c.end, chunks[j].end)
                s, e = trim(document.text, lo, hi)
                if hard is not None and hard.crosses(s, e):
                    continue
                extra = reserve(s) if reserve else 0
                room = budget if extra > budget // 2 else budget - extra
                if ruler.count(s, e) <= room:
                    found.append(f"{document.source} chunk {i} with {j}")
    return found


@pytest.mark.parametrize("strategy", ["recursive", "sentence", "structural", "semantic", "hybrid"])
@pytest.mark.parametrize("context", [False, True])
@pytest.mark.parametrize(("sizer", "budget", "least"), [("chars", 400, 120), ("minilm", 64, 24)])
def test_a_small_chunk_remains_only_where_no_join_fits(
    documents: list[Document], strategy: str, context: bool, sizer: str, budget: int, least: int
) -> None:
    chunker = Chunker(
        strategy=strategy,
        max_tokens=budget,
        min_tokens=least,
        prepend_context=context,
        sizer=get_sizer(sizer),
        tokenizer=sizer,
        embedder=HashingEmbedder(),
    )
    for document in documents:
        assert _joinable(chunker, document) == []
