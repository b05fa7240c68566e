"""The compiled counters give the tokenizers' own counts.

``PieceCounter`` splits text into cl100k_base's or o200k_base's pre-tokens in C and sums
cached sizes of each; ``Ranks`` merges a new pre-token in C. Both are checked against
bpe-openai: the pre-tokens against its ``pretokenize``, the counts against the length of
its ``encode``.
``WordCounter`` sums MiniLM's WordPiece counts over cached runs of text; it is checked
against the ``tokenizers`` library, as is the pure Python loop it replaces.
"""

from __future__ import annotations

import sys
import sysconfig
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fissure._compiled import reasons
from fissure.size import sizer as sizer_module
from fissure.size.sizer import Sizer, minilm_model_dir
from fissure.size.textindex import TextIndex
from fissure.size.wordpiece import WordPieceCounter
from tests.size.test_sizing import REAL

_pieces = sizer_module._pieces
if _pieces is None:  # not built, or FISSURE_PURE_PYTHON: nothing compiled to check
    why = reasons()["fissure.size._pieces"]
    pytest.skip(f"compiled counters off: {why}", allow_module_level=True)
_bindings = pytest.importorskip("bpe_openai._bindings")

ENCODINGS = ("cl100k_base", "o200k_base")
BPE = {name: _bindings.tokenizer_for_encoding(name) for name in ENCODINGS}


def encoded(name: str, text: str) -> int:
    return len(BPE[name].encode(text))


def ends(name: str, text: str) -> list[int]:
    """End offsets of the tokenizer's pre-tokens of ``text``."""
    out, at = [], 0
    for piece in BPE[name].pretokenize(text):
        at += len(piece)
        out.append(at)
    return out


def counter(name: str, **kwargs) -> object:
    bpe = BPE[name]
    return _pieces.PieceCounter(bpe.count, bpe.count_till_limit, encoding=name, **kwargs)


# Each rule of both patterns and its edges: contractions in any case (and 'ſ', which folds
# to 's'), letters of each case after one other character, caseless letters and marks
# (both "upper" and "lower" for o200k_base), runs of digits, punctuation with newlines and
# slashes, every kind of white space before text, digits and the end, and characters
# outside Latin-1 and the BMP.
_PARTS = st.sampled_from(
    [
        "'s",
        "'S",
        "'t",
        "'re",
        "'RE",
        "'Ve",
        "'m",
        "'ll",
        "'lL",
        "'d",
        "'ſ",
        "'x",
        "'",
        "'r",
        "a",
        "Zeta",
        "ZETA",
        "zETa",
        "é",
        "É",
        "ſ",
        "ǅ",
        "ʰ",
        "日本語",
        "한국어",
        "ß",
        "İ",
        "e\u0301",
        "\u0301",
        "\u0903",
        "\u20dd",
        "Aʰb",
        "ABc",
        "aB",
        "1",
        "12",
        "1234567",
        "٣",
        "½",
        "Ⅻ",
        ".",
        "...",
        "(",
        ")",
        "_",
        "#",
        "=>",
        "/",
        "//",
        "😀",
        "👍🏽",
        "\u200b",
        "\x00",
        "\x1c",
        "\u0378",
        " ",
        "  ",
        "   ",
        "\t",
        "\n",
        "\n\n",
        "\r\n",
        "\r",
        "\x0b",
        "\x0c",
        "\x85",
        "\xa0",
        "\u2000",
        "\u2028",
        "\u3000",
        " \n ",
        "\t\n\t",
    ]
)
TEXTS = st.lists(_PARTS, max_size=60).map("".join)


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=300, deadline=None)
@given(text=TEXTS, limit=st.integers(0, 40))
def test_pretokens_and_counts_equal_the_tokenizer(name: str, text: str, limit: int):
    pc = counter(name, ranks=lambda: sizer_module._ranks(name), ranks_after=0)
    got = pc.pieces(text)
    if got is None:  # an unassigned character: the whole text goes to the tokenizer
        assert "\u0378" in text
    else:
        assert got == ends(name, text)
    n = encoded(name, text)
    assert pc.count(text) == n
    assert pc.count(text) == n  # again, from the cache
    assert pc.count_till_limit(text, limit) == (n if n <= limit else None)


@pytest.mark.parametrize("name", ENCODINGS)
def test_every_assigned_character_is_classed_like_the_tokenizer(name: str):
    """Each character of this Python's Unicode database, in every rule's position and
    beside letters of each case, gives the tokenizer's pre-tokens (its Unicode version may
    be newer; unassigned ones are sent to the tokenizer whole)."""
    pc = counter(name)
    templates = ["a{c}1 {c}x'{c}{c}2\n{c} {c}\t{c}!{c}", "A{c}a {c}B {c}'s b{c}C'LL {c}{c}A"]
    wrong, unsure = [], 0
    for code in range(0x110000):
        c = chr(code)
        if unicodedata.category(c) in ("Cn", "Cs"):
            continue
        for template in templates:
            text = template.format(c=c)
            got = pc.pieces(text)
            if got is None:
                unsure += 1
            elif got != ends(name, text):
                wrong.append(hex(code))
    assert not wrong
    assert unsure == 0


def test_unassigned_characters_and_lone_surrogates_are_left_to_the_tokenizer():
    pc = counter("cl100k_base")
    assert pc.pieces("x\u0378y") is None
    assert pc.count("x\u0378y ab") == encoded("cl100k_base", "x\u0378y ab")
    with pytest.raises(UnicodeEncodeError):  # as the tokenizer itself raises
        pc.count("a\ud800b")
    sizer = Sizer.tiktoken("cl100k_base")  # and the Sizer counts what an encoder would see
    assert sizer.count("a\ud800b") == encoded("cl100k_base", "a\ufffdb")
    bpe = BPE["cl100k_base"]
    with pytest.raises(ValueError, match="no pre-token pattern"):
        _pieces.PieceCounter(bpe.count, bpe.count_till_limit, encoding="p50k_base")


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=200, deadline=None)
@given(piece=st.text(min_size=1, max_size=24))
def test_merges_equal_the_tokenizer(name: str, piece: str):
    table = sizer_module._ranks(name)
    for p in BPE[name].pretokenize(piece):
        raw = p.encode("utf-8")
        expected = encoded(name, p) if len(raw) <= _pieces.MERGED_BYTES else None
        assert table.count_bytes(raw) == expected, p


def _real_texts() -> list[str]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    names = ["textwrap.py", "email/_header_value_parser.py", "difflib.py", "pydoc_data/topics.py"]
    texts = [(stdlib / n).read_text(encoding="utf-8") for n in names if (stdlib / n).is_file()]
    package = Path(sizer_module.__file__).parents[1]
    texts += [p.read_text(encoding="utf-8") for p in sorted(package.rglob("*.py"))]
    texts.append(Path(__file__).read_text(encoding="utf-8"))
    return texts


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("ranks_after", [0, sys.maxsize])
def test_real_files_count_exactly(name: str, ranks_after: int):
    """Whole files and every line of them, with pre-tokens merged here or by the tokenizer."""
    pc = counter(name, ranks=lambda: sizer_module._ranks(name), ranks_after=ranks_after)
    for text in _real_texts():
        assert pc.count(text) == encoded(name, text)
        for line in text.splitlines(keepends=True)[:400]:
            assert pc.count(line) == BPE[name].count(line)


def test_a_full_cache_starts_over_and_stays_exact():
    pc = counter("cl100k_base", max_entries=16)
    text = " ".join(f"word{i} x{i * 7}" for i in range(500))
    assert pc.count(text) == encoded("cl100k_base", text)
    assert pc.size <= 16
    assert pc.count(text) == encoded("cl100k_base", text)


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=150, deadline=None)
@given(text=TEXTS)
def test_prefix_counts_at_seams_equal_the_tokenizer(name: str, text: str):
    pc = counter(name)
    index = TextIndex(text, fine=True)
    got = pc.prefix(text, index.seams)
    if got is None:
        assert "\u0378" in text
        return
    assert got.tolist() == [encoded(name, text[:s]) for s in index.seams.tolist()]


def test_prefix_refuses_a_seam_inside_a_pre_token():
    pc = counter("cl100k_base")
    text = "hello world"
    assert pc.prefix(text, np.array([0, 5, 11], dtype=np.int64)).tolist() == [0, 1, 2]
    assert pc.prefix(text, np.array([0, 3, 11], dtype=np.int64)) is None


@pytest.mark.parametrize("name", ENCODINGS)
def test_the_sizer_counts_with_it(name: str):
    assert isinstance(Sizer.tiktoken(name).native[0].__self__, _pieces.PieceCounter)


# ----------------------------------------------------------------- WordPiece (MiniLM)

_WORD_PARTS = st.sampled_from(
    [
        "a",
        "Zeta",
        "HELLO",
        "x1",
        "42",
        "supercalifragilistic",
        "unaffordable",
        "##",
        "(",
        ".",
        "_",
        "'",
        "~",
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\r",
        "\x00",
        "\x0b",
        "\x0c",
        "\x1c",
        "\x7f",
        "\x85",
        "\xa0",
        "\u2028",
        "\u3000",
        "\u200b",
        "\ufffd",
        "é",
        "e\u0301",
        "İ",
        "ΣΑΣ",
        "ß",
        "\u037e",
        "ﬁ",
        "日本語",
        "中文。",
        "한국어",
        "😀",
        "[CLS]",
        "[SEP]x",
        "[MASK]",
        "a" * 120,
        "b" * 300,
    ]
)
WORD_TEXTS = st.lists(_WORD_PARTS, max_size=40).map("".join)


def _wordpiece_counters():
    path = minilm_model_dir() / "tokenizer.json"
    compiled = WordPieceCounter.from_tokenizer_json(path)
    python = WordPieceCounter.from_tokenizer_json(path)
    python._runs = None  # the pure Python loop, as without the compiled helper
    return compiled, python


WORDPIECE = _wordpiece_counters()


@settings(max_examples=300, deadline=None)
@given(text=WORD_TEXTS)
def test_wordpiece_counts_equal_the_tokenizer(text: str):
    compiled, python = WORDPIECE
    assert compiled._runs is not None
    expected = REAL["minilm"](text)
    assert compiled.count(text) == expected
    assert python.count(text) == expected
    assert compiled.count(text) == expected  # again, from the caches
