import json
from pathlib import Path

import pytest
from tree_checks import assert_valid_tree, walk

from fissure.parse import notebook

CORPUS = Path(__file__).parent.parent / "corpus" / "notebook" / "analysis.ipynb"


def cells(document):
    return [b for b in walk(document.blocks) if "cell" in b.metadata and b.kind != "output"]


def test_cells_are_blocks_over_the_joined_sources():
    raw = CORPUS.read_text(encoding="utf-8")
    document = notebook.parse(raw, source="analysis.ipynb")
    assert_valid_tree(document)
    sources = [cell["source"] for cell in json.loads(raw)["cells"]]
    found = cells(document)
    assert [b.metadata["cell"] for b in found] == [0, 1, 2, 3, 4, 6]  # cell 5 is empty
    for block in found:
        expected = "".join(sources[block.metadata["cell"]]).rstrip()
        assert document.text[block.start : block.end] == expected
    assert "# %% [markdown]\n# Analysis" in document.text
    assert document.metadata["language"] == "python"


def test_markdown_headings_group_the_following_cells():
    document = notebook.parse(CORPUS.read_text(encoding="utf-8"), source="a.ipynb")
    analysis, results = document.blocks
    assert (analysis.kind, analysis.title) == ("section", "Analysis")
    load = analysis.children[-1]
    assert (load.title, load.level) == ("Load", 2)
    code = [b for b in load.children if b.kind == "code"]
    assert code[0].metadata["lang"] == "python"
    assert "df = pd.read_csv" in document.text[code[0].start : code[0].end]
    assert results.title == "Results"
    assert [b.title for b in walk(results.children) if b.kind == "section"] == ["Sub"]


def test_outputs_are_dropped_by_default_and_indexed_on_request():
    raw = CORPUS.read_text(encoding="utf-8")
    assert "ok" not in notebook.parse(raw, source="a.ipynb").text.split()
    document = notebook.parse(raw, source="a.ipynb", outputs=True)
    assert_valid_tree(document)
    (output,) = [b for b in walk(document.blocks) if b.kind == "output"]
    assert document.text[output.start : output.end] == "ok"
    assert output.metadata["cell"] == 1


def test_not_a_notebook_raises():
    with pytest.raises(Exception):  # noqa: B017 - nbformat's own errors; the registry reports them
        notebook.parse('{"cells": "nope"}', source="bad.ipynb")


def test_a_chunk_that_starts_at_a_cell_marker_keeps_the_cells_breadcrumb():
    """``# %% [markdown]`` spells a word but is a marker: a chunk starting with it is about
    the cell after it (its headings and context), not about nothing."""
    from fissure import Chunker

    document = notebook.parse(CORPUS.read_text(encoding="utf-8"), source="a.ipynb")
    for budget in (16, 64, 4000):
        chunker = Chunker(strategy="structural", max_tokens=budget, tokenizer="cl100k_base")
        for chunk in chunker.chunk_document(document):
            if chunk.text.startswith("# %% [markdown]\n#"):
                assert chunk.headings, (budget, chunk.text[:60])
                assert chunk.context and " › " in chunk.context
