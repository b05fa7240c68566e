from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tree_checks import assert_valid_tree

from fissure.parse import csv as csv_parser

CORPUS = Path(__file__).parent.parent / "corpus" / "csv" / "cities.csv"


def test_header_then_rows_with_quoted_newlines():
    source = CORPUS.read_text(encoding="utf-8")
    document = csv_parser.parse(source, source="cities.csv")
    assert_valid_tree(document)
    kinds = [b.kind for b in document.blocks[0].children]
    assert kinds == ["header"] + ["row"] * 6
    assert document.metadata["header"] == "city,country,population,note"
    assert document.metadata["columns"] == ["city", "country", "population", "note"]
    mexico = document.blocks[0].children[5]
    assert source[mexico.start : mexico.end] == 'Mexico City,Mexico,21581000,"Spans\ntwo lines"'
    assert mexico.metadata == {"row": 5}


def test_tsv_by_name_crlf_blank_lines_and_unclosed_quotes():
    source = 'a\tb\r\n1\t"x\r\n\r\n2\t3'
    document = csv_parser.parse(source, source="t.tsv")
    assert_valid_tree(document)
    assert document.metadata["delimiter"] == "\t"
    assert [source[b.start : b.end] for b in document.blocks[0].children][0] == "a\tb"


def test_semicolon_dialect_is_sniffed():
    source = "name;city\nAnn;Oslo\nBob;Rome\n"
    document = csv_parser.parse(source, source="x.csv")
    assert document.metadata["columns"] == ["name", "city"]
    assert len(document.blocks[0].children) == 3


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from('ab,;"\n\r\t '), max_size=80))
def test_any_csv_gives_a_valid_tree(source):
    assert_valid_tree(csv_parser.parse(source, source="h.csv"))
