"""The compiled loop that builds the chunks of a plain document makes the same chunks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fissure import Chunker, chunker
from fissure.types import CHUNK_FIELDS, Document

pytestmark = pytest.mark.skipif(
    chunker._build_plain is None, reason="the compiled helper was not built here"
)

CONFIGS = [
    {"strategy": "recursive", "max_tokens": 40, "tokenizer": "chars"},
    {"strategy": "structural", "max_tokens": 12, "tokenizer": "cl100k_base", "min_tokens": 4},
    {"strategy": "sentence", "max_tokens": 10, "tokenizer": "words", "overlap_tokens": 3},
    {"strategy": "fixed", "max_tokens": 9, "tokenizer": "cl100k_base", "overlap_tokens": 2},
]


def _fields(chunks: list) -> list[tuple]:
    return [tuple(getattr(c, f) for f in CHUNK_FIELDS) + (c.chunk_id,) for c in chunks]


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet="ab. \n\t中é", min_size=1, max_size=200),
    config=st.sampled_from(CONFIGS),
    fallback=st.sampled_from([None, "text/plain after a parse error"]),
)
def test_compiled_build_equals_the_python_loop(
    text: str, config: dict, fallback: str | None
) -> None:
    doc = Document.from_text(
        text, source="docs/a.txt", metadata={"fallback": fallback} if fallback else None
    )
    splitter = Chunker(**config)
    compiled = splitter.chunk_document(doc)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(chunker, "_build_plain", None)
        plain = splitter.chunk_document(doc)
    assert _fields(compiled) == _fields(plain)
    assert all(type(c).__name__ == "Chunk" for c in compiled)


def test_make_builds_the_chunk_its_init_builds() -> None:
    from fissure import Chunk

    values = ("text", 3, 7, "doc", 2, 4, (1, 1), "structural", "a.md", ("T", "S"), None,
              None, None, "a.md › T", {"cut": "paragraph", "block": "paragraph"})  # fmt: skip
    made, init = chunker._make(Chunk, CHUNK_FIELDS, values), Chunk(*values)
    assert type(made) is Chunk
    assert _fields([made]) == _fields([init]) and made == init and hash(made) == hash(init)
    assert made.metadata is values[-1]
