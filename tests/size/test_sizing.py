"""Sizing is exact: span sizes by lookup equal the real tokenizer on the span's text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fissure
from fissure.errors import ConfigError
from fissure.size import Ruler, Sizer, parts
from fissure.size import ruler as ruler_module
from fissure.size.ruler import PartTable
from fissure.size.sizer import minilm_model_dir
from fissure.size.wordpiece import WordPieceCounter
from fissure.split.levels import LINE, PARAGRAPH
from tests.conftest import SIZER_NAMES, get_sizer
from tests.split.test_invariants import TEXTS


def _real_minilm():
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(minilm_model_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return lambda t: len(tok.encode(t, add_special_tokens=False).ids)


def _real_tiktoken(name: str):
    from bpe_openai import _bindings

    backend = _bindings.tokenizer_for_encoding(name)
    return lambda t: len(backend.encode(t))


REAL = {
    "chars": len,
    "words": lambda t: len(t.split()),
    "cl100k_base": _real_tiktoken("cl100k_base"),
    "o200k_base": _real_tiktoken("o200k_base"),
    "minilm": _real_minilm(),
}


@pytest.mark.parametrize("name", SIZER_NAMES)
@settings(max_examples=60, deadline=None)
@given(text=TEXTS, data=st.data())
def test_ruler_spans_equal_the_real_tokenizer(name: str, text: str, data: st.DataObject):
    ruler = Ruler(text, get_sizer(name))
    direct = Ruler(text, get_sizer(name))  # counts directly until its table pays
    assert ruler.total() == direct.total() == REAL[name](text)
    if text:
        ruler.table([0, len(text)])  # builds the seam table: the counts below are lookups
    for _ in range(8):
        a = data.draw(st.integers(0, len(text)))
        b = data.draw(st.integers(a, len(text)))
        assert ruler.count(a, b) == REAL[name](text[a:b]), (text[a:b],)
        assert direct.count(a, b) == REAL[name](text[a:b]), (text[a:b],)


@pytest.mark.parametrize("name", SIZER_NAMES)
def test_span_table_equals_direct_counts(name: str):
    text = "def f(x):\n    return g(x) + 1  # note\n\nclass A:\n    pass\n" * 5
    ruler = Ruler(text, get_sizer(name))
    bounds = [0, 10, 11, 40, 41, 60, len(text)]
    table = ruler.table(bounds)
    for i in range(len(bounds) - 1):
        for j in range(i, len(bounds) - 1):
            span = text[bounds[i] : bounds[j + 1]].strip()
            assert table.size(i, j) == REAL[name](span)


def test_wordpiece_matches_tokenizers_on_real_text():
    counter = WordPieceCounter.from_tokenizer_json(minilm_model_dir() / "tokenizer.json")
    real = REAL["minilm"]
    package = Path(fissure.__file__).parent
    samples = [
        *(p.read_text(encoding="utf-8") for p in sorted(package.rglob("*.py"))[:40]),
        "Ünïcödé façade — naïve café, İstanbul, straße, ﬁnance, 日本語のテキスト, 한국어 😀.",
        "x" * 150 + " short " + "unaffordable" * 3,
        "tabs\tand\x0bvertical\x0cfeeds\x85next\u2028line\u00a0nbsp\u200bzero",
    ]
    for text in samples:
        assert counter.count(text) == real(text)


def test_named_sizers_and_errors(tmp_path):
    assert Sizer.named("chars").count("héllo") == 5
    assert Sizer.named("words").count(" a b\nc ") == 3
    assert Sizer.named("cl100k_base").count("hello world") == 2
    with pytest.raises(ConfigError, match="unknown tokenizer"):
        Sizer.named("gpt-9")
    with pytest.raises(ConfigError, match="not found"):
        Sizer.from_tokenizer_file(tmp_path / "missing.json")


def test_tokenizer_json_path_counts_like_the_model():
    sizer = Sizer.named(str(minilm_model_dir() / "tokenizer.json"))
    text = "Counting with a tokenizer.json from a path, offline."
    assert sizer.count(text) == REAL["minilm"](text)
    ruler = Ruler(text * 3, sizer)
    assert ruler.count(5, 70) == REAL["minilm"]((text * 3)[5:70])


def test_custom_function_sizer_is_measured_directly():
    sizer = Sizer.from_function(lambda t: len(t.encode("utf-8")), name="bytes")
    assert not sizer.additive
    ruler = Ruler("héllo wörld", sizer)
    assert ruler.count(0, 5) == len("héllo".encode())


LINES = st.lists(
    st.sampled_from(
        [
            "a",
            "bb",
            "The",
            "end.",
            "x,",
            "f():",
            "中文",
            "。",
            " ",
            "  ",
            "\t",
            "\n",
            "\n\n",
            "\r\n",
            " \n",
            "(",
            ")",
            "123",
            "'s",
            "é",
            "😀",
            "    return 1",
            "[CLS]",
            "\x0b",
        ]
    ),
    max_size=40,
).map("".join)


def _line_bounds(ruler: Ruler, level: str) -> list[int]:
    """Part bounds at the paragraph starts, the line starts, or both."""
    text, cuts = ruler.text, set()
    if level in ("paragraph", "both"):
        cuts |= set(PARAGRAPH.find(ruler.index, 0, len(text)))
    if level in ("line", "both"):
        cuts |= set(LINE.find(ruler.index, 0, len(text)))
    return [0, *sorted(cuts), len(text)]


@pytest.mark.parametrize("name", [n for n in SIZER_NAMES if n != "chars"])
@settings(max_examples=150, deadline=None)
@given(text=LINES, level=st.sampled_from(["paragraph", "line", "both"]), cap=st.integers(1, 40))
def test_part_table_equals_the_seam_table(name: str, text: str, level: str, cap: int) -> None:
    """Counting each line-start part once (no whole-document table) gives the seam
    table's sizes for every run that fits the cap, the same fits/trimmed ends, and the
    packer's greedy extension."""
    if text.isspace() or not text:
        return
    sizer = get_sizer(name)
    ruler = Ruler(text, sizer)
    bounds = _line_bounds(ruler, level)
    parts = ruler.table(bounds, cap=cap)
    seams = Ruler(text, sizer).table(bounds)
    # Line starts of visible lines are always seams: counted part by part.
    assert isinstance(parts, (PartTable, ruler_module.compiled_table or PartTable))
    n = len(bounds) - 1
    for i in range(n):
        assert (parts.start(i), parts.end(i)) == (seams.start(i), seams.end(i))
        greedy = i - 1
        while greedy + 1 < n and seams.size(i, greedy + 1) <= cap:
            greedy += 1
        assert parts.sure(i, cap) == greedy
        for j in range(i, n):
            size = seams.size(i, j)
            assert parts.fits(i, j, cap) == (size <= cap)
            if size <= cap:
                assert parts.size(i, j) == size
            s, e = seams.start(i), seams.end(j)
            assert size == (REAL[name](text[s:e]) if s < e else 0)


@pytest.mark.parametrize("name", SIZER_NAMES)
def test_count_within_stops_at_the_cap(name: str) -> None:
    sizer = get_sizer(name)
    text = "word " * 3000
    full = sizer.count(text)
    assert sizer.count_within(text, full) == full
    assert sizer.count_within(text, full - 1) is None
    assert sizer.count_within("", 0) == 0


@pytest.mark.skipif(parts.measure_c is None, reason="the compiled helper was not built here")
@pytest.mark.parametrize("name", ["cl100k_base", "minilm", "words"])
@settings(max_examples=300, deadline=None)
@given(text=LINES, data=st.data(), cap=st.integers(1, 40))
def test_compiled_part_measure_equals_pure_python(
    name: str, text: str, data: st.DataObject, cap: int
) -> None:
    """The Cython twin returns exactly the pure Python lists, for any bounds (seams or
    not, empty parts included)."""
    sizer = get_sizer(name)
    inner = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=8))
    bounds = [0, *sorted({b for b in inner if 0 < b < len(text)}), len(text)]
    if len(text) == 0:
        return
    args = (text, bounds, cap, sizer.counters(), Ruler(text, sizer).fine)
    assert parts.measure_c(*args) == parts.measure_py(*args)


def test_chunks_are_the_same_without_the_compiled_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no C compiler built the helper, the pure Python twin gives the same chunks."""
    text = (Path(fissure.__file__).parent / "chunker.py").read_text() * 3
    chunker = fissure.Chunker(strategy="structural", max_tokens=120, tokenizer="cl100k_base")
    compiled = [(c.start, c.end, c.n_tokens) for c in chunker.chunk(text)]
    monkeypatch.setattr("fissure.size.ruler.measure", parts.measure_py)
    monkeypatch.setattr("fissure.size.ruler.compiled_table", None)
    chunker = fissure.Chunker(strategy="structural", max_tokens=120, tokenizer="cl100k_base")
    assert [(c.start, c.end, c.n_tokens) for c in chunker.chunk(text)] == compiled
    assert len(compiled) > 20


@pytest.mark.skipif(ruler_module.compiled_table is None, reason="not built here")
@pytest.mark.parametrize("name", ["cl100k_base", "minilm"])
@settings(max_examples=200, deadline=None)
@given(text=LINES, level=st.sampled_from(["paragraph", "line", "both"]), cap=st.integers(1, 40))
def test_compiled_part_table_answers_like_the_python_one(
    name: str, text: str, level: str, cap: int
) -> None:
    if not text or text.isspace():
        return
    sizer = get_sizer(name)
    ruler = Ruler(text, sizer)
    bounds = _line_bounds(ruler, level)
    compiled = ruler_module.compiled_table.build(ruler, bounds, cap, sizer.counters(), ruler.fine)
    python = PartTable.build(Ruler(text, sizer), bounds, cap)
    assert compiled is not None and python is not None
    n = len(bounds) - 1
    for i in range(n):
        assert (compiled.start(i), compiled.end(i)) == (python.start(i), python.end(i))
        for budget in (cap, max(1, cap // 2)):
            assert compiled.sure(i, budget) == python.sure(i, budget)
        for j in range(i, n):
            assert compiled.fits(i, j, cap) == python.fits(i, j, cap)
            assert compiled.size(i, j) == python.size(i, j)


_SPACY = st.text(alphabet=st.sampled_from(list(" \t\n\r\x0b\u3000\u2028ab.x")), max_size=60)


@pytest.mark.skipif(ruler_module.compiled_chars is None, reason="not built here")
@settings(max_examples=300, deadline=None)
@given(text=_SPACY, cuts=st.lists(st.integers(0, 60), max_size=8), budget=st.integers(0, 30))
def test_compiled_char_table_answers_like_the_lazy_one(
    text: str, cuts: list[int], budget: int
) -> None:
    ruler = Ruler(text, get_sizer("chars"))
    n = len(text)
    bounds = sorted({0, n, *(min(c, n) for c in cuts)}) if n else [0, 0]
    compiled = ruler_module.compiled_chars(ruler, bounds)
    lazy = ruler_module.LazyTable(ruler, bounds)
    parts_n = len(bounds) - 1
    for i in range(parts_n + 1):  # a start and a sure past the last part, as bisect allows
        assert compiled.start(i) == lazy.start(i)
        assert compiled.sure(i, budget) == lazy.sure(i, budget)
    for i in range(parts_n):
        for j in range(i, parts_n):
            assert compiled.end(j) == lazy.end(j)
            assert compiled.size(i, j) == lazy.size(i, j)
            assert compiled.fits(i, j, budget) == lazy.fits(i, j, budget)
    with pytest.raises(IndexError):
        compiled.end(parts_n)
