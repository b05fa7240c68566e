from hypothesis import given, settings
from hypothesis import strategies as st
from tree_checks import assert_valid_tree, titled, walk

from fissure.parse import markdown
from fissure.parse.markdown import MarkdownLevel


def parse(source: str):
    document = markdown.parse(source, source="doc.md")
    assert_valid_tree(document)
    return document


def test_atx_and_setext_headings_nest_into_titled_sections():
    source = "# Top *one*\n\nintro\n\n## Sub `two`\n\ntext\n\nSetext\n======\n\nmore\n"
    document = parse(source)
    top, setext = document.blocks
    assert (top.kind, top.title, top.level) == ("section", "Top one", MarkdownLevel.H1)
    assert top.children[0].kind == "heading"
    assert source[top.children[0].start : top.children[0].end] == "# Top *one*"
    sub = top.children[-1]
    assert (sub.kind, sub.title, sub.level) == ("section", "Sub two", 2)
    assert source[sub.start : sub.end] == "## Sub `two`\n\ntext"
    assert (setext.title, setext.level) == ("Setext", 1)


def test_heading_levels_that_skip_still_nest():
    document = parse("# A\n### C\n## B\n")
    (a,) = document.blocks
    assert [c.title for c in a.children if c.kind == "section"] == ["C", "B"]


def test_hash_lines_inside_fences_are_not_headings():
    source = "# Real\n\n```python\n# not a heading\nx = 1\n```\n"
    document = parse(source)
    assert titled(document, "section") == ["Real"]
    (code,) = [b for b in walk(document.blocks) if b.kind == "code"]
    assert code.metadata == {"lang": "python", "fenced": True}
    assert source[code.start : code.end] == "```python\n# not a heading\nx = 1\n```"


def test_unclosed_fence_runs_to_the_end():
    source = "# T\n\n```js\nlet a = 1;\n# still code\n"
    document = parse(source)
    (code,) = [b for b in walk(document.blocks) if b.kind == "code"]
    assert source[code.start : code.end] == "```js\nlet a = 1;\n# still code"
    assert titled(document, "section") == ["T"]


def test_indented_code_front_matter_and_html():
    source = "---\ntitle: x\n---\n\npara\n\n    indented\n\n<div>\nhi\n</div>\n"
    document = parse(source)
    kinds = [(b.kind, source[b.start : b.end]) for b in document.blocks]
    assert kinds == [
        ("front_matter", "---\ntitle: x\n---"),
        ("paragraph", "para"),
        ("code", "    indented"),
        ("html", "<div>\nhi\n</div>"),
    ]
    assert document.blocks[2].metadata["lang"] is None


def test_table_rows_are_children_and_the_header_keeps_its_delimiter():
    source = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"
    (table,) = parse(source).blocks
    assert table.kind == "table"
    rows = [source[r.start : r.end] for r in table.children]
    assert rows == ["| a | b |\n|---|---|", "| 1 | 2 |", "| 3 | 4 |"]
    assert [r.metadata["header"] for r in table.children] == [True, False, False]
    assert {r.level for r in table.children} == {MarkdownLevel.ROW}


def test_lists_have_item_children_and_blockquotes_are_blocks():
    source = "- one\n- two\n  - nested\n\n> quoted\n> text\n"
    document = parse(source)
    lst, quote = document.blocks
    assert lst.kind == "list" and [c.kind for c in lst.children] == ["item", "item"]
    assert source[lst.children[1].start : lst.children[1].end] == "- two\n  - nested"
    assert quote.kind == "blockquote"


def test_crlf_offsets_are_exact():
    source = "# Title\r\n\r\nBody line\r\n\r\n## Next\r\ntext\r\n"
    document = parse(source)
    assert titled(document, "section") == ["Title", "Next"]
    paragraphs = [source[b.start : b.end] for b in walk(document.blocks) if b.kind == "paragraph"]
    assert paragraphs == ["Body line", "text"]


def test_markdown_blocks_shift_offsets():
    blocks = markdown.markdown_blocks("# A\n\nx\n", offset=100)
    assert blocks[0].start == 100 and blocks[0].children[1].start == 105


_MD_PIECES = st.sampled_from(
    ["# h", "## h2", "text", "", "```", "~~~py", "- item", "  - sub", "> q", "| a |", "|---|",
     "    code", "***", "---", "===", "<div>", "1. one", "\t", "\r"]
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(_MD_PIECES, max_size=30))
def test_any_markdown_gives_a_valid_tree(lines):
    parse("\n".join(lines))


def test_wikitext_headings_open_sections_inside_one_paragraph():
    # WikiText-103 as in Chroma's corpus: one line per heading or paragraph, no blank lines.
    source = (
        " = Valkyria Chronicles III = \n Senjō no Valkyria 3 is a game .\n"
        " = = Gameplay = = \n As with previous games , it is tactical .\n"
        " = = = Music = = = \n Sakimoto wrote it .\n = Other article = \n Text .\n"
    )
    document = parse(source)
    assert titled(document, "section") == ["Valkyria Chronicles III", "Gameplay", "Music",
                                           "Other article"]  # fmt: skip
    first, second = document.blocks
    assert (first.level, second.level) == (1, 1)
    gameplay = first.children[-1]
    assert (gameplay.title, gameplay.level) == ("Gameplay", 2)
    heading = gameplay.children[0]
    assert heading.kind == "heading" and source[heading.start : heading.end] == "= = Gameplay = ="
    paragraph = gameplay.children[1]
    assert source[paragraph.start : paragraph.end] == "As with previous games , it is tactical ."


def test_mediawiki_headings_need_matching_runs_and_stay_out_of_code():
    source = "== Real ==\ntext\n\n= not closed\n\n== uneven =\n\n```\n== in code ==\n```\n"
    document = parse(source)
    assert titled(document, "section") == ["Real"]
    assert titled(document, "heading") == ["Real"]


def test_wiki_headings_in_a_shifted_tree_keep_exact_offsets():
    text = "== Cell title ==\nbody text\n"
    blocks = markdown.markdown_blocks(text, offset=100)
    (section,) = blocks
    heading = section.children[0]
    assert (heading.start, heading.end) == (100, 100 + len("== Cell title =="))
    assert section.title == "Cell title"
