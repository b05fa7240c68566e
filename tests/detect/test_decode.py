import codecs

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fissure.detect import decode
from fissure.errors import InputError


def test_utf8_plain_and_with_bom():
    assert decode("héllo".encode()) == ("héllo", {"encoding": "utf-8"})
    text, meta = decode(codecs.BOM_UTF8 + "héllo".encode())
    assert text == "héllo" and meta == {"encoding": "utf-8", "bom": True}


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_need_a_bom(codec):
    raw = "héllo\nwörld".encode(codec)
    if codec == "utf-16-be":
        raw = codecs.BOM_UTF16_BE + raw
    text, meta = decode(raw)
    assert text == "héllo\nwörld"
    assert meta["bom"] is True and meta["encoding"].startswith(codec[:6])


def test_legacy_bytes_fall_back_to_cp1252_and_say_so():
    text, meta = decode("naïve café – “quoted”".encode("cp1252"))
    assert text == "naïve café – “quoted”"
    assert meta["encoding"] == "cp1252"
    assert meta["fallback"].startswith("not valid UTF-8 (first bad byte at 2)")


def test_bytes_cp1252_leaves_undefined_fall_back_to_latin1():
    text, meta = decode(b"abc\x81def")
    assert text == "abc\x81def" and meta["encoding"] == "latin-1"


def test_nul_bytes_are_refused_with_advice():
    with pytest.raises(InputError, match="NUL bytes .* Document.from_text"):
        decode(b"abc\x00def")


def test_mostly_undecodable_is_refused():
    noise = bytes((i * 73 + 41) % 256 for i in range(4096)).replace(b"\x00", b"\x01")
    with pytest.raises(InputError, match="mostly not text"):
        decode(noise)


def test_broken_utf16_after_a_bom_is_refused():
    with pytest.raises(InputError, match="byte-order mark"):
        decode(codecs.BOM_UTF16_LE + b"a\x00\x00\xd8")


@given(st.text())
def test_any_utf8_text_round_trips(text):
    if "\x00" in text:
        return
    assert decode(text.encode("utf-8"))[0] == text.removeprefix("\ufeff")


def test_nul_bytes_after_a_utf8_bom_are_still_refused():
    with pytest.raises(InputError, match="NUL"):
        decode(codecs.BOM_UTF8 + b"abc\x00")
