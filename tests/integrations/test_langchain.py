"""The LangChain adapter in LangChain's own pipeline: loader → splitter → vector store →
retriever, and the contracts LangChain documents for splitters and loaders."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_text_splitters")

from langchain_core.documents import BaseDocumentTransformer, Document  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402
from langchain_text_splitters import TextSplitter  # noqa: E402

import fissure  # noqa: E402
from fissure.integrations.langchain import (  # noqa: E402
    FissureEmbeddings,
    FissureLoader,
    FissureTextSplitter,
)
from tests.integrations.conftest import (  # noqa: E402
    REPEATED,
    SAMPLES,
    SETTINGS,
    corpus_files,
    expected,
)


@pytest.fixture(scope="module")
def embeddings() -> FissureEmbeddings:
    return FissureEmbeddings()  # the real MiniLM, offline


def test_loader_splitter_store_retriever_answers(embeddings: FissureEmbeddings) -> None:
    docs = FissureLoader(SAMPLES).load()
    assert {Path(d.metadata["source"]).name for d in docs} == {
        "fault-lines.md", "seismograph.py", "tremors.txt"}  # fmt: skip
    chunks = FissureTextSplitter(**SETTINGS).split_documents(docs)
    store = InMemoryVectorStore(embedding=embeddings)
    ids = store.add_documents(chunks)
    assert ids == [c.id for c in chunks] and len(set(ids)) == len(chunks)
    retriever = store.as_retriever(search_kwargs={"k": 2})
    top = retriever.invoke("How far did the ground move in San Francisco in 1906?")[0]
    assert top.metadata["source"].endswith("tremors.txt") and "six metres" in top.page_content
    code = retriever.invoke("How is a local magnitude estimated from the peak amplitude?")[0]
    assert code.metadata["source"].endswith("seismograph.py")
    assert code.metadata["entity"].startswith("Event"), code.metadata
    # The same chunks again: ids are content-addressed, so nothing is stored twice.
    store.add_documents(FissureTextSplitter(**SETTINGS).split_documents(docs))
    assert len(store.store) == len(chunks)


def test_offsets_are_exact_where_str_find_is_not() -> None:
    splitter = FissureTextSplitter(max_tokens=24, tokenizer="words")
    chunks = splitter.create_documents([REPEATED], [{"source": "retries.md"}])
    starts = [c.metadata["start_index"] for c in chunks]
    for c in chunks:
        assert REPEATED[c.metadata["start_index"] : c.metadata["end_index"]] == c.page_content
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    # A str.find from just after the previous chunk's start (LlamaIndex's rule; LangChain's
    # with overlap) lands on the copy of "Note: retry later." inside the chunk before.
    pairs = zip(starts[:-1], chunks[1:], strict=True)
    found = [REPEATED.find(c.page_content, s + 1) for s, c in pairs]
    assert found != starts[1:]


def test_metadata_is_carried_and_copied() -> None:
    parent = Document(page_content=REPEATED, metadata={"source": "retries.md", "team": {"a": 1}})
    chunks = FissureTextSplitter(max_tokens=24, tokenizer="words").split_documents([parent])
    assert len(chunks) > 2
    assert all(c.metadata["team"] == {"a": 1} and c.metadata["source"] == "retries.md"
               for c in chunks)  # fmt: skip
    chunks[0].metadata["team"]["a"] = 2  # a deep copy per chunk, as LangChain's own splitter
    assert chunks[1].metadata["team"] == {"a": 1} and parent.metadata["team"] == {"a": 1}
    first = chunks[0].metadata
    assert {"start_index", "end_index", "line_start", "line_end", "n_tokens", "cut"} <= set(first)
    assert chunks[-1].metadata["headings"] == "Limits"  # structure found from the .md source
    assert all(isinstance(v, str | int) for c in chunks for k, v in c.metadata.items()
               if k != "team")  # fmt: skip


def test_the_langchain_interfaces() -> None:
    splitter = FissureTextSplitter(max_tokens=24, tokenizer="words")
    assert isinstance(splitter, TextSplitter) and isinstance(splitter, BaseDocumentTransformer)
    docs = [Document(page_content=REPEATED, metadata={"source": "r.md"})]
    split = splitter.split_documents(docs)
    assert list(splitter.transform_documents(docs)) == split
    assert list(asyncio.run(splitter.atransform_documents(docs))) == split
    assert splitter.split_text(REPEATED) == [
        c.text for c in fissure.chunk(REPEATED, max_tokens=24, tokenizer="words")
    ]
    assert [d.page_content for d in splitter.create_documents([REPEATED])] == (
        splitter.split_text(REPEATED)
    )
    assert [c.id for c in split] == [c.id for c in FissureTextSplitter(
        max_tokens=24, tokenizer="words").split_documents(docs)]  # fmt: skip
    assert splitter._chunk_size == 24  # what LangChain helpers read
    with pytest.raises(fissure.ConfigError):
        FissureTextSplitter(fissure.Chunker(), max_tokens=3)


def test_same_chunks_as_fissure_chunk_on_every_format(corpus_dir: Path) -> None:
    loader = FissureLoader(corpus_dir)
    docs = loader.load()
    files = corpus_files()
    assert sorted(Path(d.metadata["source"]) for d in docs) == files and not loader.skipped
    assert {"application/pdf", "text/html", "text/x-python"} <= {d.metadata["mime"] for d in docs}
    splitter = FissureTextSplitter(**SETTINGS)
    for doc in docs:
        got = [(c.page_content, c.metadata["start_index"], c.metadata["end_index"],
                c.metadata.get("headings", ""), c.metadata.get("entity"), c.metadata.get("page"))
               for c in splitter.split_documents([doc])]  # fmt: skip
        assert got == expected(Path(doc.metadata["source"])), doc.metadata["source"]
        for c in splitter.split_documents([doc]):
            start, end = c.metadata["start_index"], c.metadata["end_index"]
            assert doc.page_content[start:end] == c.page_content


def test_loader_skips_what_it_cannot_read(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\ntext\n")
    (tmp_path / "noise.bin").write_bytes(bytes(range(256)) * 8)
    loader = FissureLoader([tmp_path])
    docs = list(loader.lazy_load())
    assert [Path(d.metadata["source"]).name for d in docs] == ["a.md"]
    assert [Path(s.path).name for s in loader.skipped] == ["noise.bin"]
