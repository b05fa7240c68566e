"""Shared inputs for the framework adapters: a real corpus of every format, and passages
whose text repeats, where offsets found with ``str.find`` land on the wrong copy."""

from __future__ import annotations

from pathlib import Path

import pytest

import fissure

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
SAMPLES = ROOT / "samples"
SETTINGS = {"max_tokens": 64}

# A chunk "Note: retry later." also stands inside the chunk before it: a search from
# the previous chunk's start finds that earlier copy.
REPEATED = (
    "# Retries\n\nA request that fails is sent again. Note: retry later. Each try waits "
    "twice as long as the one before, up to a minute.\n\nNote: retry later.\n\n"
    "# Limits\n\nA client may hold ten connections.\n\nNote: retry later.\n"
)


def corpus_files() -> list[Path]:
    """Every file of the committed corpus (all formats fissure parses)."""
    return sorted(p for p in CORPUS.rglob("*") if p.is_file())


def expected(path: Path) -> list[tuple[str, int, int, str, str | None, int | None]]:
    """What ``fissure.chunk`` makes of a file: text, offsets, breadcrumb, entity, page."""
    return [(c.text, c.start, c.end, " › ".join(c.headings), c.entity, c.page)
            for c in fissure.chunk(path, **SETTINGS)]  # fmt: skip


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return CORPUS
