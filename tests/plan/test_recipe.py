"""The spec <-> settings mapping: round trips both ways, agrees with how the evaluator reads a
spec, and refuses what one side cannot hold."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fissure.config import STRATEGIES, ChunkSettings
from fissure.errors import ConfigError
from fissure.eval.strategies import FissureRun, parse_strategy
from fissure.plan.recipe import CHUNK_KEYS, QUERY_KEYS, canonical, preset_of, settings_of, to_spec
from fissure.plan.tune import GRIDS
from fissure.settings import PRESETS, load_settings
from fissure.settings.model import QuerySettings, Settings

CANONICAL = [*GRIDS["small"], "fixed:250:125", "fissure-recursive:200:20+min=30+dedup",
             "hybrid:180+tok=minilm+bp=90+buffer=2+atom=32+mode=lexical",
             "semantic:120+breakpoint=gradient+bp=80", "sentence:60+win=200+before=0.25",
             "structural:100+sub=0.5+subsize=20"]  # fmt: skip


@pytest.mark.parametrize("spec", CANONICAL)
def test_spec_to_settings_and_back(spec: str) -> None:
    preset = preset_of(spec, k=7, embedder="hashing")
    assert set(preset["chunk"]) == {*CHUNK_KEYS, "embedder"} and set(preset["query"]) == set(
        QUERY_KEYS
    )
    assert to_spec(settings_of(preset)) == spec
    assert preset_of(to_spec(settings_of(preset)), k=7, embedder="hashing") == preset
    assert settings_of(preset).query.k == 7 and settings_of(preset).ingest.embedder == "hashing"


@pytest.mark.parametrize("spec", CANONICAL)
def test_the_evaluator_reads_a_spec_as_its_settings(spec: str) -> None:
    """What FissureRun builds its Chunker from is the preset's chunk settings, and the
    retrieval options the Strategy carries are the preset's."""
    from fissure.embed import HashingEmbedder

    strategy = parse_strategy(spec, HashingEmbedder())
    assert isinstance(strategy.chunk, FissureRun)
    built = strategy.chunk.chunker.settings
    ours = settings_of(preset_of(spec))
    cut_keys = [f.name for f in fields(ChunkSettings) if f.name not in
                ("embedder", "embed_window_tokens", "embed_window_share", "embed_window_before",
                 "embed_headings", "sub_vector_tokens", "dedup")]  # fmt: skip
    assert {k: getattr(built, k) for k in cut_keys} == {k: getattr(ours.chunk, k) for k in cut_keys}
    assert strategy.mode == ours.query.mode
    assert strategy.dedup == ours.chunk.dedup
    assert strategy.sub == (ours.query.sub_weight or 0.0)
    if ours.chunk.sub_vector_tokens:
        assert strategy.sub_spec.startswith(f"sentence:{ours.chunk.sub_vector_tokens}")
    assert (strategy.window is not None) == (ours.chunk.embed_window_tokens is not None)
    if strategy.window is not None:
        assert strategy.share == ours.chunk.embed_window_share
    assert (strategy.view is not None) == ours.chunk.embed_headings


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_built_in_presets_have_a_spec(name: str) -> None:
    s = load_settings(name, use_files=False)
    spec = to_spec(s)
    again = settings_of(preset_of(spec))
    assert to_spec(again) == spec and again.chunk.budget == s.chunk.budget
    if name == "chroma-best":  # the recipe bench/results/eval-chroma.md measured, + the mode
        assert spec == ("semantic:140+min=50+hctx+win=254+share=0.8+sub=0.4+subctx+subsize=30"
                        "+dedup+mode=hybrid")  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    strategy=st.sampled_from(list(STRATEGIES)),
    budget=st.integers(20, 400),
    overlap=st.integers(0, 30),
    minimum=st.integers(0, 19),
    tokenizer=st.sampled_from(["cl100k_base", "minilm", "words"]),
    window=st.one_of(st.none(), st.integers(1, 254)),
    share=st.sampled_from([0.6, 0.0, 0.35, 1.0]),
    headings=st.booleans(),
    pieces=st.one_of(st.none(), st.integers(4, 60)),
    weight=st.sampled_from([0.4, 0.0, 0.75]),
    dedup=st.booleans(),
    mode=st.sampled_from([None, "dense", "lexical", "hybrid"]),
)
def test_any_settings_round_trip(strategy, budget, overlap, minimum, tokenizer, window, share,
                                 headings, pieces, weight, dedup, mode) -> None:  # fmt: skip
    assume(overlap < budget and minimum < budget)
    chunk = ChunkSettings(strategy=strategy, max_tokens=budget, overlap_tokens=overlap,
                          min_tokens=minimum, tokenizer=tokenizer, embed_window_tokens=window,
                          embed_window_share=share, embed_headings=headings,
                          sub_vector_tokens=pieces, dedup=dedup)  # fmt: skip
    query = QuerySettings(sub_weight=None if pieces is None else weight, mode=mode)
    original = Settings(chunk=chunk, query=query)
    spec = to_spec(original)
    back = settings_of(preset_of(spec))
    assert to_spec(back) == spec == canonical(spec)
    inert = () if window else ("embed_window_share", "embed_window_before")  # no window
    for key in set(CHUNK_KEYS) - set(inert):  # every key the mapping covers, as it was
        was, now = getattr(original.chunk, key), getattr(back.chunk, key)
        assert now == (original.chunk.budget if key == "max_tokens" else was), key
    assert back.query.sub_weight == original.query.sub_weight
    assert back.query.mode == (mode or "hybrid")  # unset: the folder store's default


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("recursive:200", "fissure-recursive"),
        ("tokentext:250:125", "only fissure's strategies"),
        ("langchain-recursive:200", "only fissure's strategies"),
        ("structural:200+find", "+find has no setting"),
        ("structural:200+ctx", "+ctx has no setting"),
        ("structural:200+mode=hybrid+rrf=10", "+rrf has no setting"),
        ("structural:200+hctx+sub=0.4", "+hctx and +subctx together"),
        ("structural:200+subsize=30", "go with sub=F"),
        ("structural:200+share=0.5", "need win=N"),
        ("structural:200+min=abc", "min= needs a int"),
    ],
)
def test_what_has_no_setting_is_refused(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("+", r"\+")):
        preset_of(spec)


def test_settings_without_a_spec_are_refused() -> None:
    base = Settings()
    with pytest.raises(ConfigError, match="prepend_context"):
        to_spec(replace(base, chunk=ChunkSettings(prepend_context=True)))
    with pytest.raises(ConfigError, match="separators"):
        to_spec(replace(base, chunk=ChunkSettings(strategy="recursive", separators=("\n",))))
    with pytest.raises(ConfigError, match="set both or neither"):
        to_spec(replace(base, chunk=ChunkSettings(sub_vector_tokens=30)))
