import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from tree_checks import assert_valid_tree, depth, walk

from fissure.parse import data

CORPUS = Path(__file__).parent.parent / "corpus" / "data"


def test_json_keys_become_titled_blocks_with_exact_spans():
    source = (CORPUS / "config.json").read_text(encoding="utf-8")
    document = data.parse_json(source, source="config.json")
    assert_valid_tree(document)
    assert [b.title for b in document.blocks] == list(json.loads(source))
    chunking = document.blocks[2]
    assert chunking.title == "chunking" and chunking.level == data.DataLevel.KEY
    assert [c.title for c in chunking.children] == ["strategy", "max_tokens", "overlap", "levels"]
    overlap = chunking.children[2]
    assert source[overlap.start : overlap.end] == '"overlap": {"tokens": 32, "unit": "sentence"}'
    sources = document.blocks[3]
    assert [c.title for c in sources.children] == ["[0]", "[1]"]
    assert {c.kind for c in sources.children} == {"item"}
    assert document.blocks[-1].title == "café"


def test_json_scalars_in_arrays_get_no_blocks():
    document = data.parse_json('[1, 2, [3], {"a": 4}]', source="a.json")
    assert [b.title for b in document.blocks] == ["[2]", "[3]"]


@pytest.mark.parametrize("bad", ["", "{", '{"a":}', "[1,]", '{"a":1} x', "{1: 2}", '"open'])
def test_invalid_json_raises_value_error(bad):
    with pytest.raises(ValueError, match="not valid JSON"):
        data.parse_json(bad, source="bad.json")


@pytest.mark.parametrize(
    "source", ["[" * 10_000 + "]" * 10_000, '{"a":' * 10_000 + "1" + "}" * 10_000]
)
def test_ten_thousand_levels_stop_at_max_depth(source):
    document = data.parse_json(source, source="deep.json")
    assert_valid_tree(document)
    assert depth(document.blocks) == data.MAX_DEPTH


def test_yaml_keys_and_items_from_events():
    source = (CORPUS / "compose.yaml").read_text(encoding="utf-8")
    document = data.parse_yaml(source, source="compose.yaml")
    assert_valid_tree(document)
    assert [b.title for b in document.blocks] == list(yaml.safe_load(source))
    services = document.blocks[2]
    assert [c.title for c in services.children] == ["web", "api", "cache"]
    api = services.children[1]
    command = next(c for c in api.children if c.title == "command")
    assert source[command.start : command.end] == (
        "command: >\n      gunicorn app:wsgi\n      --workers 4"
    )
    assert [b.title for b in walk(api.children) if b.title == "<<"] == ["<<"]


def test_yaml_multi_document_stream_and_bad_yaml():
    document = data.parse_yaml("a: 1\n---\nb: [1, {c: 2}]\n", source="s.yaml")
    assert [b.kind for b in document.blocks] == ["document", "document"]
    assert [b.children[0].title for b in document.blocks] == ["a", "b"]
    with pytest.raises(ValueError, match="not valid YAML"):
        data.parse_yaml("a: [\n", source="bad.yaml")


def test_yaml_is_parsed_safely():
    source = "x: !!python/object/apply:os.system ['echo pwned']\n"
    document = data.parse_yaml(source, source="evil.yaml")
    assert [b.title for b in document.blocks] == ["x"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(_JSON, st.sampled_from([None, 0, 2]), st.booleans())
def test_any_json_value_round_trips_its_top_level_keys(value, indent, ascii_only):
    source = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    document = data.parse_json(source, source="h.json")
    assert_valid_tree(document)
    if isinstance(value, dict):
        assert [b.title for b in document.blocks] == list(value)
        for block, item in zip(document.blocks, value.values(), strict=True):
            member = json.loads("{" + source[block.start : block.end] + "}")
            assert list(member.values()) == [item]


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text("abc_", min_size=1, max_size=4), _JSON, max_size=5))
def test_any_yaml_mapping_gives_its_keys(value):
    source = yaml.safe_dump(value, sort_keys=False)
    document = data.parse_yaml(source, source="h.yaml")
    assert_valid_tree(document)
    assert [b.title for b in document.blocks] == list(value)
