"""The built-in presets: named sets of settings, ``--preset NAME`` on every command.

A preset maps sections to keys and values, as a ``[presets.NAME]`` table of a settings file
does. :data:`DEFAULT_PRESET` is the one a run uses when none is named and the settings file
names none (``preset = "NAME"``).
"""

from __future__ import annotations

from typing import Any

from fissure.settings.model import defaults

Preset = dict[str, dict[str, Any]]

# The best recipe measured on Chroma's chunking benchmark with all-MiniLM-L6-v2 (README "Two
# retrieval options", bench/results/eval-chroma.md; `python -m bench.eval_product` runs it
# through `fissure ingest` and `fissure query`).
CHROMA_BEST: Preset = {
    "chunk": {
        "strategy": "semantic",
        "tokenizer": "cl100k_base",
        "max_tokens": 140,
        "min_tokens": 50,
        "embed_window_tokens": 254,
        "embed_window_share": 0.8,
        "sub_vector_tokens": 30,
        "dedup": True,
        "embed_headings": True,
    },
    "query": {"sub_weight": 0.4},
}


def _plain(recipe: Preset) -> Preset:
    """Every key ``recipe`` sets, at its built-in default: plain one-vector chunks, whatever
    the default preset (or the file below the preset) says about those keys."""
    return {
        section: {k: defaults(section)[k] for k in values} for section, values in recipe.items()
    }


PRESETS: dict[str, Preset] = {
    # The defaults without window vectors, sentence pieces or headings: one vector per chunk.
    "fast": _plain(CHROMA_BEST),
    "chroma-best": CHROMA_BEST,
}

# Which preset applies when none is named (None: the built-in defaults alone). The
# retrieval issue's held-out protocol decides it; changing the default is this one line.
DEFAULT_PRESET: str | None = None
