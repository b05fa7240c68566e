"""Checks shared by the corpus, structure, parser and hostile-input tests.

``assert_chunk_invariants`` is STYLE habit 11 for one parsed document: exact slicing, an
exact size within the budget (measured by the raw tokenizer, bypassing every cache), a
length within the character ceiling (``ChunkSettings.char_ceiling``), strictly increasing
starts, coverage of every visible character (no overlap here) and
identical output on a second run.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from fissure import Chunk, Chunker, Document


def assert_chunk_invariants(document: Document, chunker: Chunker, chunks: list[Chunk]) -> None:
    """Fail with the offending chunk when ``chunks`` break an invariant for ``document``.

    With overlap, chunks may share text, so disjointness and coverage are checked only
    without it; starts must still increase and ends never go back.
    """
    text, budget, count = document.text, chunker.settings.budget, chunker.sizer._fn
    ceiling = chunker.settings.char_ceiling
    overlap = chunker.settings.overlap_tokens
    for i, c in enumerate(chunks):
        where = f"{document.source} chunk {i} [{c.start}:{c.end}]"
        assert c.index == i, where
        assert 0 <= c.start < c.end <= len(text), where
        assert text[c.start : c.end] == c.text, where
        assert c.text == c.text.strip(), f"{where}: untrimmed"
        measured = count(c.text)  # the raw tokenizer, bypassing every cache
        assert c.n_tokens == measured, (where, c.n_tokens, measured)
        assert measured <= budget, (where, measured, budget)
        assert len(c.text) <= ceiling, (where, "characters", len(c.text), ceiling)
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert a.start < b.start, (document.source, a.start, b.start)
        assert a.end <= b.end, (document.source, "end went back", a.end, b.end)
        if not overlap:
            assert a.end <= b.start, (document.source, "overlap", a.end, b.start)
    if not overlap:
        covered = bytearray(len(text))
        for c in chunks:
            covered[c.start : c.end] = b"\x01" * (c.end - c.start)
        missed = [i for i, ch in enumerate(text) if not covered[i] and not ch.isspace()]
        assert not missed, (document.source, "uncovered", [(i, text[i]) for i in missed[:10]])
    again = chunker.chunk_document(document)
    assert [_full(c) for c in again] == [_full(c) for c in chunks], document.source


def _full(c: Chunk) -> tuple[Chunk, str]:
    return c, repr(c.metadata)  # Chunk equality leaves metadata out


def corpus_maker() -> ModuleType:
    """``tests/corpus/make_binary.py`` (which writes the corpus PDF and DOCX) as a module."""
    path = Path(__file__).resolve().parent / "corpus" / "make_binary.py"
    spec = importlib.util.spec_from_file_location("make_binary", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
