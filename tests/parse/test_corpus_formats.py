"""Every corpus file of the formats parsed here: detected right, a valid tree, exact text."""

from pathlib import Path

import pytest
from tree_checks import assert_valid_tree, titled

from fissure.parse import registry

CORPUS = Path(__file__).parent.parent / "corpus"

EXPECTED = {
    "markdown/guide.md": ("text/markdown", "section", ["Fissure user guide", "Installation"]),
    "python/pathlike.py": ("text/x-python", "class", ["Path", "Error"]),
    "rst/manual.rst": ("text/x-rst", "section", ["The Fissure Manual", "Getting started"]),
    "data/config.json": ("application/json", "key", ["name", "version"]),
    "data/compose.yaml": ("application/yaml", "key", ["version", "x-defaults"]),
    "csv/cities.csv": ("text/csv", "header", [None]),
    "notebook/analysis.ipynb": ("application/x-ipynb+json", "section", ["Analysis", "Load"]),
    "text/notes.txt": ("text/plain", "paragraph", [None, None]),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_file_parses_cleanly(name):
    data = (CORPUS / name).read_bytes()
    mime, kind, first_titles = EXPECTED[name]
    document = registry.parse(data, name)
    assert document.mime == mime
    assert "fallback" not in document.metadata, document.metadata
    assert_valid_tree(document)
    assert titled(document, kind)[: len(first_titles)] == first_titles
    if not name.endswith(".ipynb"):
        assert document.text == data.decode("utf-8")
