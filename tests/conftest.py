"""Shared fixtures: sizers are built once per session (loading a tokenizer is not free)."""

from __future__ import annotations

import os

import pytest

from fissure.size import Sizer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SIZER_NAMES = ("chars", "words", "cl100k_base", "o200k_base", "minilm")
_SIZERS: dict[str, Sizer] = {}


def get_sizer(name: str) -> Sizer:
    """A shared sizer (its cache survives between tests, as it would in a real run)."""
    if name not in _SIZERS:
        _SIZERS[name] = Sizer.named(name)
    return _SIZERS[name]


@pytest.fixture(params=SIZER_NAMES)
def sizer(request: pytest.FixtureRequest) -> Sizer:
    return get_sizer(request.param)
