"""vlen-utf8 / vlen-bytes: numcodecs' variable-length format, both the C form (zarrbolt._ext._vlen)
and the Python form used without it; every malformed chunk is a CorruptChunkError."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from zarrbolt.codecs import parse_codec
from zarrbolt.codecs import vlen as vlen_mod
from zarrbolt.codecs.abc import ChunkSpec
from zarrbolt.errors import CodecError, CorruptChunkError, MetadataError
from zarrbolt.metadata.dtypes import DataType

STRING = DataType("string")
VBYTES = DataType("variable_length_bytes")
SDT = STRING.numpy_dtype


def frame(items: list[bytes], count: int | None = None) -> bytes:
    out = struct.pack("<I", len(items) if count is None else count)
    for b in items:
        out += struct.pack("<I", len(b)) + b
    return out


@pytest.fixture(params=["c", "python"])
def impl(request, monkeypatch):
    """Run each test with the C extension and with the Python form."""
    if request.param == "python":
        monkeypatch.setattr(vlen_mod, "_vlen", None)
    elif vlen_mod._vlen is None:
        pytest.skip("zarrbolt._ext._vlen is not built (numpy 1.x)")
    return request.param


def spec(dtype, shape):
    return ChunkSpec(tuple(shape), dtype, dtype.default_fill_value())


TEXTS = ["", "a", "héllo wörld", "日本語", "emoji \U0001f600", "x" * 1000, "nul\x00inside"]


def test_format_is_numcodecs(impl):
    codec = parse_codec({"name": "vlen-utf8", "configuration": {}})
    a = np.array(TEXTS, dtype=SDT)
    enc = bytes(codec.encode(a, spec(STRING, a.shape)))
    assert enc == frame([t.encode() for t in TEXTS])
    b = parse_codec({"name": "vlen-bytes"})
    vals = np.array([t.encode() for t in TEXTS], dtype=object)
    assert bytes(b.encode(vals, spec(VBYTES, vals.shape))) == enc


@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 5), (2, 0, 4)])
def test_round_trip_shapes(impl, shape):
    n = int(np.prod(shape))
    texts = np.array([TEXTS[i % len(TEXTS)] + str(i) for i in range(n)], dtype=SDT).reshape(shape)
    codec = parse_codec({"name": "vlen-utf8"})
    s = spec(STRING, shape)
    dec = codec.decode(codec.encode(texts, s), s)
    assert dec.dtype == SDT and dec.shape == shape and (dec == texts).all()
    # object arrays of str encode the same
    assert bytes(codec.encode(texts.astype(object), s)) == bytes(codec.encode(texts, s))
    raw = np.array([t.encode() for t in texts.reshape(-1)] or [], dtype=object).reshape(shape)
    bcodec = parse_codec({"name": "vlen-bytes"})
    sb = spec(VBYTES, shape)
    decb = bcodec.decode(bcodec.encode(raw, sb), sb)
    assert decb.dtype == object and decb.shape == shape and all(x == y for x, y in zip(decb.flat, raw.flat))


def test_object_string_arrays_decode_to_str_objects(impl):
    """The StringDType choice is for the string type; the decode of kind 'str' gives Python str."""
    data = frame([b"ab", "é".encode()])
    if vlen_mod._vlen is not None:
        got = vlen_mod._vlen.decode(memoryview(data), 2, "str")
    else:
        got = vlen_mod._py_decode(memoryview(data), 2, "str", "vlen-utf8")
    assert got.dtype == object and got.tolist() == ["ab", "é"]


MALFORMED = {
    "empty": b"",
    "short count": b"\x01\x00",
    "count too large": frame([b"a", b"b"], count=3),
    "count too small": frame([b"a", b"b", b"c"], count=2),
    "huge count": frame([b"a"], count=2**32 - 1),
    "length past end": struct.pack("<II", 3, 100) + b"abc" + frame([b"x", b"y"])[4:],
    "truncated header": frame([b"a", b"b", b"c"])[:-5],
    "truncated item": frame([b"a", b"b", b"cdef"])[:-2],
    "trailing bytes": frame([b"a", b"b", b"c"]) + b"\x00",
    "huge length": struct.pack("<II", 3, 2**32 - 1) + b"\x00" * 20,
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
@pytest.mark.parametrize("name", ["vlen-utf8", "vlen-bytes"])
def test_malformed_chunks(impl, case, name):
    codec = parse_codec({"name": name})
    dt = STRING if name == "vlen-utf8" else VBYTES
    with pytest.raises(CorruptChunkError):
        codec.decode(MALFORMED[case], spec(dt, (3,)))


BAD_UTF8 = [b"\xff", b"\xc0\x80", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82",
            b"abc\x80", b"\xf8\x88\x80\x80\x80", b"ok\xc3"]


@pytest.mark.parametrize("bad", BAD_UTF8)
def test_invalid_utf8_is_corrupt(impl, bad):
    codec = parse_codec({"name": "vlen-utf8"})
    with pytest.raises(CorruptChunkError, match="UTF-8"):
        codec.decode(frame([b"fine", bad]), spec(STRING, (2,)))
    # the same bytes are fine for vlen-bytes
    got = parse_codec({"name": "vlen-bytes"}).decode(frame([b"fine", bad]), spec(VBYTES, (2,)))
    assert got[1] == bad


def test_utf8_validator_agrees_with_python():
    rng = np.random.default_rng(3)
    ext = vlen_mod._vlen
    if ext is None:
        pytest.skip("C form not built")
    alphabet = np.array([0x00, 0x41, 0x7F, 0x80, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF,
                         0x9F, 0xA0, 0x8F, 0x90], np.uint8)
    for _ in range(3000):
        b = bytes(rng.choice(alphabet, size=int(rng.integers(0, 9))))
        try:
            b.decode("utf-8")
            ok = True
        except UnicodeDecodeError:
            ok = False
        data = frame([b])
        if ok:
            assert ext.decode(memoryview(data), 1, "stringdtype")[0] == b.decode()
        else:
            with pytest.raises(CorruptChunkError):
                ext.decode(memoryview(data), 1, "stringdtype")


def test_encode_refuses_wrong_items(impl):
    with pytest.raises(CodecError):
        parse_codec({"name": "vlen-utf8"}).encode(np.array(["a", 3], dtype=object), spec(STRING, (2,)))
    with pytest.raises(CodecError):
        parse_codec({"name": "vlen-bytes"}).encode(np.array([b"a", "s"], dtype=object), spec(VBYTES, (2,)))


def test_json_and_v2_forms():
    c = parse_codec("vlen-utf8")
    assert c.to_json() == {"name": "vlen-utf8", "configuration": {}}
    assert c.to_v2_config() == {"id": "vlen-utf8"}
    assert type(c).from_v2_config({"id": "vlen-utf8"}) == c
    with pytest.raises(MetadataError):
        parse_codec({"name": "vlen-utf8", "configuration": {"x": 1}})
    with pytest.raises(MetadataError):
        type(c).from_v2_config({"id": "vlen-bytes"})


def test_resolve_checks_the_data_type():
    with pytest.raises(MetadataError):
        parse_codec("vlen-utf8").resolve(spec(VBYTES, (2,)))
    with pytest.raises(MetadataError):
        parse_codec("vlen-bytes").resolve(spec(STRING, (2,)))
    with pytest.raises(MetadataError):
        parse_codec("vlen-bytes").resolve(spec(DataType("uint8"), (2,)))
    with pytest.raises(MetadataError):
        parse_codec({"name": "bytes"}).resolve(spec(STRING, (2,)))


def test_large_chunk_round_trip():
    n = 200_000
    texts = np.array([f"item-{i}-{'é' * (i % 5)}" for i in range(n)], dtype=SDT)
    codec = parse_codec("vlen-utf8")
    s = spec(STRING, (n,))
    enc = codec.encode(texts, s)
    assert (codec.decode(enc, s) == texts).all()
