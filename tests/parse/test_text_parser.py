import re

from hypothesis import given, settings
from hypothesis import strategies as st
from tree_checks import assert_valid_tree

from fissure.parse import text as plain


def test_paragraphs_are_separated_by_blank_lines():
    source = "\n\n  first line\nsecond line  \n \t\n\r\nnext\r\n\r\n   \n"
    document = plain.parse(source, source="notes.txt")
    assert [source[b.start : b.end] for b in document.blocks] == [
        "  first line\nsecond line",
        "next",
    ]
    assert {b.kind for b in document.blocks} == {"paragraph"}
    assert {b.level for b in document.blocks} == {plain.TextLevel.PARAGRAPH}
    assert_valid_tree(document)


def test_empty_and_blank_text_have_no_blocks():
    assert plain.parse("", source="e.txt").blocks == ()
    assert plain.parse(" \n\t\n", source="e.txt").blocks == ()


def test_line_helpers_agree_on_crlf_and_lone_cr():
    source = "a\r\nb\rc\nd"
    starts = plain.line_starts(source)
    assert starts == [0, 3, 5, 7]
    assert [source[s : plain.line_end(source, starts, i)] for i, s in enumerate(starts)] == [
        "a",
        "b",
        "c",
        "d",
    ]
    assert plain.line_of(starts, 4) == 1


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab \t\n\r\x0c\u2028é")))
def test_any_text_gives_a_valid_tree(source):
    document = plain.parse(source, source="x.txt")
    assert_valid_tree(document)
    covered = "".join(source[b.start : b.end] for b in document.blocks)
    assert "".join(covered.split()) == "".join(source.split())


def test_wiki_heading_lines_make_sections_in_plain_text():
    from fissure.parse.text import wiki_headings

    source = "= Title =\nintro line\n\n== Part ==\nbody\n"
    document = plain.parse(source, source="doc.txt")
    assert_valid_tree(document)
    (section,) = document.blocks
    assert (section.kind, section.title, section.level) == ("section", "Title", 1)
    assert [c.kind for c in section.children] == ["heading", "paragraph", "section"]
    assert section.children[-1].title == "Part"
    assert wiki_headings(" = = A b = = \n") == [(1, 12, 2, "A b")]
    assert wiki_headings("a = b = c\n= x\n=\n") == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab \n\r\té")), max_size=40))
def test_line_starts_are_the_offsets_after_each_break(source):
    breaks = [m.end() for m in re.finditer(r"\r\n|\r|\n", source)]
    assert plain.line_starts(source) == [0, *breaks]
    ascii_only = source.replace("é", "e").replace("\r", "")
    newlines = [i + 1 for i, c in enumerate(ascii_only) if c == "\n"]
    assert plain.line_starts(ascii_only) == [0, *newlines]
