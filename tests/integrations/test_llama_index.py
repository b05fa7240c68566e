"""The LlamaIndex adapter in LlamaIndex's own pipeline: reader → node parser → vector
index (its default in-memory store) → retriever, and the contracts of its node parsers."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import VectorStoreIndex  # noqa: E402
from llama_index.core.ingestion import IngestionPipeline  # noqa: E402
from llama_index.core.node_parser import NodeParser  # noqa: E402
from llama_index.core.schema import Document, MetadataMode, NodeRelationship  # noqa: E402

from fissure.integrations.llama_index import (  # noqa: E402
    FissureEmbedding,
    FissureNodeParser,
    FissureReader,
)
from tests.integrations.conftest import (  # noqa: E402
    REPEATED,
    SAMPLES,
    SETTINGS,
    corpus_files,
    expected,
)


@pytest.fixture(scope="module")
def embed_model() -> FissureEmbedding:
    return FissureEmbedding()  # the real MiniLM, offline


def test_reader_parser_index_retriever_answers(embed_model: FissureEmbedding) -> None:
    documents = FissureReader(SAMPLES).load_data()
    assert [d.id_ for d in documents] == [
        str(SAMPLES / n) for n in ("fault-lines.md", "seismograph.py", "tremors.txt")
    ]
    nodes = FissureNodeParser.from_defaults(**SETTINGS).get_nodes_from_documents(documents)
    index = VectorStoreIndex(nodes, embed_model=embed_model)
    retriever = index.as_retriever(similarity_top_k=2)
    top = retriever.retrieve("How far did the ground move in San Francisco in 1906?")[0]
    assert top.node.metadata["file_name"] == "tremors.txt" and "six metres" in top.node.text
    code = retriever.retrieve("How is a local magnitude estimated from the peak amplitude?")[0]
    assert code.node.metadata["file_name"] == "seismograph.py"
    assert code.node.metadata["entity"].startswith("Event")
    assert set(index.docstore.docs) == {n.node_id for n in nodes}


def test_an_ingestion_pipeline_runs_the_parser(embed_model: FissureEmbedding) -> None:
    documents = FissureReader(SAMPLES / "fault-lines.md").load_data()
    pipeline = IngestionPipeline(transformations=[FissureNodeParser.from_defaults(**SETTINGS),
                                                  embed_model])  # fmt: skip
    nodes = pipeline.run(documents=documents)
    assert nodes and all(n.embedding is not None and len(n.embedding) == 384 for n in nodes)
    assert [n.text for n in nodes] == [t for t, *_ in expected(SAMPLES / "fault-lines.md")]


def test_offsets_are_exact_where_str_find_is_not() -> None:
    document = Document(text=REPEATED, metadata={"file_path": "retries.md"})
    ours = FissureNodeParser.from_defaults(max_tokens=24, tokenizer="words")
    nodes = ours.get_nodes_from_documents([document])
    for n in nodes:
        assert REPEATED[n.start_char_idx : n.end_char_idx] == n.text
    starts = [n.start_char_idx for n in nodes]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    # LlamaIndex finds offsets with str.find from just after the previous node's start,
    # which here lands on the copy of "Note: retry later." inside the node before.
    found = [REPEATED.find(n.text, s + 1) for s, n in zip(starts[:-1], nodes[1:], strict=True)]
    assert found != starts[1:]


def test_relationships_ids_and_metadata() -> None:
    docs = [
        Document(id_="a", text=REPEATED, metadata={"file_path": "a.md", "team": "x"}),
        Document(id_="b", text="Plain words. " * 40, metadata={"file_path": "b.txt"}),
    ]
    parser = FissureNodeParser.from_defaults(max_tokens=24, tokenizer="words")
    assert isinstance(parser, NodeParser)
    nodes = parser.get_nodes_from_documents(docs)
    by_doc = {d: [n for n in nodes if n.ref_doc_id == d] for d in ("a", "b")}
    assert all(len(v) > 1 for v in by_doc.values())
    for group in by_doc.values():
        for i, n in enumerate(group):
            prev, nxt = (n.relationships.get(r) for r in (NodeRelationship.PREVIOUS,
                                                         NodeRelationship.NEXT))  # fmt: skip
            assert (prev.node_id if prev else None) == (group[i - 1].node_id if i else None)
            assert (nxt.node_id if nxt else None) == (
                group[i + 1].node_id if i + 1 < len(group) else None)  # fmt: skip
    assert all(n.metadata["team"] == "x" for n in by_doc["a"])  # the document's metadata
    assert by_doc["a"][-1].metadata["headings"] == "Limits"
    again = FissureNodeParser.from_defaults(max_tokens=24, tokenizer="words")
    assert [n.node_id for n in again.get_nodes_from_documents(docs)] == [n.node_id for n in nodes]
    embedded = by_doc["a"][1].get_content(metadata_mode=MetadataMode.EMBED)
    assert "headings: Retries" in embedded and "n_tokens" not in embedded
    custom = FissureNodeParser.from_defaults(max_tokens=24, tokenizer="words",
                                             id_func=lambda i, doc: f"{doc.id_}-{i}")  # fmt: skip
    assert custom.get_nodes_from_documents(docs[:1])[0].node_id == "a-0"


def test_same_chunks_as_fissure_chunk_on_every_format(corpus_dir: Path) -> None:
    reader = FissureReader(corpus_dir)
    documents = reader.load_data()
    assert sorted(Path(d.id_) for d in documents) == corpus_files() and not reader.skipped
    parser = FissureNodeParser.from_defaults(**SETTINGS)
    for document in documents:
        nodes = parser.get_nodes_from_documents([document])
        got = [(n.text, n.start_char_idx, n.end_char_idx, n.metadata.get("headings", ""),
                n.metadata.get("entity"), n.metadata.get("page")) for n in nodes]  # fmt: skip
        assert got == expected(Path(document.id_)), document.id_
