from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tree_checks import assert_valid_tree, titled, walk

from fissure.parse import rst

CORPUS = Path(__file__).parent.parent / "corpus" / "rst" / "manual.rst"


def parse(source: str):
    document = rst.parse(source, source="doc.rst")
    assert_valid_tree(document)
    return document


def test_corpus_sections_nest_by_adornment_style():
    document = parse(CORPUS.read_text(encoding="utf-8"))
    (title,) = document.blocks
    assert (title.title, title.level) == ("The Fissure Manual", 1)
    assert [s.title for s in title.children if s.kind == "section"] == [
        "Getting started",
        "Formats",
        "Appendix",
    ]
    assert titled(document, "section")[2:4] == ["Configuration", "Budgets"]
    levels = {b.title: b.level for b in walk(document.blocks) if b.kind == "section"}
    assert levels["Getting started"] == 2 and levels["Configuration"] == 3
    assert levels["Budgets"] == 4


def test_literal_blocks_and_directives_keep_their_indented_paragraphs():
    source = CORPUS.read_text(encoding="utf-8")
    document = parse(source)
    code = [source[b.start : b.end] for b in walk(document.blocks) if b.kind == "code"]
    assert code == ["    pip install fissure\n\n    # extras\n    pip install 'fissure[embed]'"]
    directives = [b for b in walk(document.blocks) if b.kind == "directive"]
    assert [d.metadata.get("directive") for d in directives] == ["code-block", "note"]
    assert directives[0].metadata["lang"] == "python"
    assert source[directives[0].start : directives[0].end].endswith("Settings(max_tokens=256)")


def test_short_underline_and_transitions_are_not_titles():
    source = "Text\n--\n\nPara\n\n----\n\nMore\n"
    assert titled(parse(source), "section") == []


def test_title_must_follow_a_blank_line():
    source = "para line\nTitle\n=====\n"
    assert titled(parse(source), "section") == []


def test_same_style_is_the_same_level_and_overline_differs():
    source = "A\n==\n\nB\n==\n\n===\nC\n===\n\nD\n==\n"
    levels = [(b.title, b.level) for b in walk(parse(source).blocks) if b.kind == "section"]
    assert levels == [("A", 1), ("B", 1), ("C", 2), ("D", 1)]


_RST_LINES = st.sampled_from(
    ["Title", "=====", "-----", "", "text", "   indented", ".. note::", "x::", "~~", "===",
     "Long title line", "+--+", "\r"]
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(_RST_LINES, max_size=30))
def test_any_rst_gives_a_valid_tree(lines):
    parse("\n".join(lines))
