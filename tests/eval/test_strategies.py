"""Strategy specs: fissure strategies and their options, ``+ctx``, and peer offset mapping."""

from __future__ import annotations

import pytest

from fissure.embed import HashingEmbedder
from fissure.errors import ConfigError
from fissure.eval.peers import PeerRun, locate
from fissure.eval.strategies import parse_spec, parse_strategy

TEXT = (
    "# Cats\n\nThe cat sleeps on the warm mat. It purrs.\n\n"
    "## Food\n\nCats eat fish and mice. They drink water.\n\n"
    "# Dogs\n\nDogs bark at the mail carrier every morning.\n"
)
CODE = 'def f():\n    """Add."""\n    return 1\n\n\nclass C:\n    def g(self):\n        return 2\n'


def test_spec_grammar() -> None:
    spec = parse_spec("structural:120:10+min=40+ctx+bp=90.5")
    assert (spec.name, spec.size, spec.overlap) == ("structural", 120, 10)
    assert spec.options == {"min": "40", "ctx": "", "bp": "90.5"}
    assert spec.number("min") == 40 and spec.number("bp", float) == 90.5
    assert spec.number("atom") is None
    for bad in ("structural:1:0+nope", "structural:x", "structural"):
        with pytest.raises(ConfigError):
            parse_spec(bad)
    with pytest.raises(ConfigError, match="number"):
        parse_spec("structural:50+min=lots").number("min")


@pytest.mark.parametrize(
    "spec",
    ["structural:20", "fissure-recursive:20:4", "sentence:20+min=5", "fixed:20",
     "semantic:20+bp=80", "hybrid:20+atom=8", "fissure-structural:20+ctx"],
)  # fmt: skip
def test_fissure_strategies_slice_back(spec: str) -> None:
    strategy = parse_strategy(spec, HashingEmbedder())
    spans = strategy.chunk(TEXT, "pets.md")
    assert spans and all(0 <= s < e <= len(TEXT) for s, e in spans)
    assert [s for s, _ in spans] == sorted(s for s, _ in spans)


def test_ctx_embeds_the_breadcrumb_but_scores_the_chunk() -> None:
    strategy = parse_strategy("structural:15+ctx")
    spans = strategy.chunk(TEXT, "pets.md")
    assert strategy.view is not None
    views = strategy.view(TEXT, spans)
    food = next(i for i, (s, e) in enumerate(spans) if "fish" in TEXT[s:e])
    assert views[food].endswith(TEXT[spans[food][0] : spans[food][1]])
    assert views[food].startswith("pets.md › Cats › Food\n")


def test_python_corpora_are_parsed_as_python() -> None:
    strategy = parse_strategy("structural:12+ctx")
    spans = strategy.chunk(CODE, "pkg/mod.py")
    assert strategy.view is not None
    views = strategy.view(CODE, spans)
    assert any(v.startswith("mod.py") and "C" in v.split("\n")[0] for v in views)


def test_semantic_needs_an_embedder_and_ctx_needs_fissure() -> None:
    with pytest.raises(ConfigError, match="embedder"):
        parse_strategy("semantic:50")
    with pytest.raises(ConfigError, match="fissure"):
        parse_strategy("recursive:50+ctx")


def test_locate_trusts_only_checked_offsets() -> None:
    text = "alpha beta. alpha beta. gamma"
    pieces = [("alpha beta.", 0), ("alpha beta.", 3), (" gamma ", None), ("rewritten", None)]
    spans, missing = locate(text, pieces)
    assert spans == [(0, 11), (12, 23), (24, 29)]  # the wrong offset 3 is searched again
    assert missing == 1


def test_peer_run_counts_unlocated_chunks() -> None:
    run = PeerRun(lambda text: [(text[:5], 0), ("not there", None)])
    assert run("hello world", "x") == [(0, 5)]
    assert run.unlocated == [1]


MODULE = {"langchain": "langchain_text_splitters", "chonkie": "chonkie",
          "llamaindex": "llama_index.core", "semchunk": "semchunk"}  # fmt: skip


@pytest.mark.parametrize(
    "spec", ["langchain-recursive:20:5", "langchain-token:20:5", "chonkie-recursive:20",
             "chonkie-token:20", "llamaindex-sentence:40:5", "semchunk:20"],
)  # fmt: skip
def test_cheap_peers_map_to_offsets(spec: str) -> None:
    pytest.importorskip(MODULE[spec.split(":")[0].split("-")[0]])
    strategy = parse_strategy(spec)
    spans = strategy.chunk(TEXT, "pets.md")
    assert spans and strategy.unlocated[0] == 0
    covered = "".join(TEXT[s:e] for s, e in spans)
    assert "mail carrier" in covered


def test_win_embeds_a_window_around_the_chunk_and_hctx_a_breadcrumb() -> None:
    strategy = parse_strategy("structural:20+hctx+win=40+share=0.5+before=0.3")
    spans = strategy.chunk(TEXT, "pets.md")
    assert strategy.window is not None and strategy.view is not None
    assert strategy.share == 0.5
    windows = strategy.window(TEXT, spans)
    views = strategy.view(TEXT, spans)
    food = next(i for i, (s, e) in enumerate(spans) if "fish" in TEXT[s:e])
    own = TEXT[spans[food][0] : spans[food][1]]
    assert views[food] == f"Cats › Food\n{own}"  # headings only, no file name
    assert windows[food].startswith("Cats › Food\n")
    body = windows[food].split("\n", 1)[1]
    assert own in body and body in TEXT and len(body) > len(own)
    plain = parse_strategy("tokentext:10+win=30")  # any strategy: a bare slice around it
    spans = plain.chunk(TEXT, "pets.md")
    assert plain.window is not None and plain.view is None and plain.share == 0.6
    for (s, e), w in zip(spans, plain.window(TEXT, spans), strict=True):
        assert TEXT[s:e] in w and w in TEXT


def test_retrieval_options_parse_and_refuse_nonsense() -> None:
    strategy = parse_strategy("recursive:50+sub=0.3+subsize=30+dedup")
    assert (strategy.sub, strategy.sub_spec, strategy.dedup) == (0.3, "sentence:30", True)
    assert parse_strategy("structural:50+hctx+sub=0.2+subctx").sub_spec == "sentence:40+hctx"
    assert parse_strategy("recursive:50").sub == 0.0
    bad_specs = [
        ("recursive:50+share=0.5", "win"),
        ("recursive:50+win=0", "positive"),
        ("recursive:50+win=40+share=2", "0..1"),
        ("recursive:50+sub=1.5", "0..1"),
        ("recursive:50+hctx", "fissure"),
        ("structural:50+ctx+hctx", "not both"),
        ("structural:50+ctx+win=40", "hctx"),
        ("recursive:50+subctx", "hctx"),
    ]
    for bad, why in bad_specs:
        with pytest.raises(ConfigError, match=why):
            parse_strategy(bad)
