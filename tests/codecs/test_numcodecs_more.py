"""The numcodecs.* codecs of zarrbolt.codecs.numcodecs (compressors, checksums, filters) without
numcodecs: JSON forms, round trips, formats checked against independent reference
implementations, and every bad configuration or damaged chunk a typed error.  (Byte identity with numcodecs itself:
tests/ecosystem/test_ext_dtypes_interop.py.)"""

from __future__ import annotations

import bz2
import zlib

import numpy as np
import pytest

import zarrbolt
from zarrbolt.codecs import parse_codec
from zarrbolt.codecs.abc import ChunkSpec
from zarrbolt.errors import ChecksumError, CorruptChunkError, MetadataError
from zarrbolt.metadata.dtypes import DataType

RAW = (np.arange(30001, dtype=np.uint32) * 2654435761 % 1000).astype("<u4").tobytes() + b"\x07"
U8 = ChunkSpec((len(RAW),), DataType("uint8"), np.uint8(0))

BB = [
    ("bz2", {}), ("bz2", {"level": 9}), ("zstd", {}), ("zstd", {"level": 3, "checksum": True}), ("gzip", {}),
    ("gzip", {"level": 9}), ("blosc", {}), ("blosc", {"cname": "zstd", "clevel": 1, "shuffle": 2}),
    ("blosc", {"shuffle": -1, "typesize": 4}), ("shuffle", {"elementsize": 1}), ("crc32", {}),
    ("crc32", {"location": "end"}), ("adler32", {}), ("fletcher32", {}), ("crc32c", {}), ("lzma", {}),
    ("lzma", {"format": 2, "preset": 1}), ("lzma", {"format": 3, "filters": [{"id": 33, "preset": 1}]}),
    ("jenkins_lookup3", {}), ("jenkins_lookup3", {"initval": 7}),
]


@pytest.mark.parametrize("cid,conf", BB)
def test_round_trip_and_json(cid, conf):
    c = parse_codec({"name": f"numcodecs.{cid}", "configuration": conf})
    assert c.to_json() == {"name": f"numcodecs.{cid}", "configuration": conf}
    assert parse_codec({"name": f"numcodecs.{cid}", "configuration": {"id": cid, **conf}}) == c
    for raw in (RAW, b"", b"x"):
        spec = ChunkSpec((len(raw),), DataType("uint8"), np.uint8(0))
        assert bytes(c.decode(c.encode(raw, spec), spec, len(raw))) == raw


@pytest.mark.parametrize("doc", [
    {"name": "numcodecs.bz2", "configuration": {"level": 0}}, {"name": "numcodecs.bz2", "configuration": {"level": "9"}},
    {"name": "numcodecs.bz2", "configuration": {"id": "zlib"}}, {"name": "numcodecs.bz2", "configuration": {"x": 1}},
    {"name": "numcodecs.zstd", "configuration": {"level": "9"}}, {"name": "numcodecs.zstd", "configuration": {"checksum": 1}},
    {"name": "numcodecs.gzip", "configuration": {"level": -2}},
    {"name": "numcodecs.gzip", "configuration": {"level": 10}},
    {"name": "numcodecs.blosc", "configuration": {"shuffle": 3}}, {"name": "numcodecs.blosc", "configuration": {"shuffle": True}},
    {"name": "numcodecs.blosc", "configuration": {"cname": "lzma"}}, {"name": "numcodecs.blosc", "configuration": {"clevel": 10}},
    {"name": "numcodecs.blosc", "configuration": {"typesize": 0}},
    {"name": "numcodecs.shuffle", "configuration": {"elementsize": -1}},
    {"name": "numcodecs.crc32", "configuration": {"location": "middle"}},
    {"name": "numcodecs.fletcher32", "configuration": {"location": "start"}},
    {"name": "numcodecs.bitround", "configuration": {}}, {"name": "numcodecs.bitround", "configuration": {"keepbits": -1}},
    {"name": "numcodecs.quantize", "configuration": {"digits": 2}},
    {"name": "numcodecs.quantize", "configuration": {"digits": 2, "dtype": "<i4"}},
    {"name": "numcodecs.quantize", "configuration": {"digits": 2, "dtype": ">f8"}},
    {"name": "numcodecs.astype", "configuration": {"decode_dtype": "<f8"}},
    {"name": "numcodecs.astype", "configuration": {"encode_dtype": "nope"}},
    {"name": "numcodecs.packbits", "configuration": {"x": 1}},
    {"name": "numcodecs.lzma", "configuration": {"format": 0}}, {"name": "numcodecs.lzma", "configuration": {"format": 3}},
    {"name": "numcodecs.lzma", "configuration": {"preset": 1, "filters": [{"id": 33}]}},
    {"name": "numcodecs.lzma", "configuration": {"filters": [{"id": "x"}]}},
    {"name": "numcodecs.lzma", "configuration": {"filters": "lzma2"}},
    {"name": "numcodecs.crc32c", "configuration": {"location": 4}},
    {"name": "numcodecs.jenkins_lookup3", "configuration": {"prefix": "YWI="}},
    {"name": "numcodecs.jenkins_lookup3", "configuration": {"initval": -1}},
])
def test_bad_configurations(doc):
    with pytest.raises(MetadataError):
        parse_codec(doc)


@pytest.mark.parametrize("doc, level, written", [
    ({"name": "numcodecs.zstd", "configuration": {"level": 100}}, 22, {"level": 22}),
    ({"name": "numcodecs.zstd", "configuration": {"level": -200000, "checksum": True}}, -131072,
     {"level": -131072, "checksum": True}),
    ({"name": "numcodecs.gzip", "configuration": {"level": -1}}, 6, {"level": 6}),
])
def test_levels_read_as_the_libraries_take_them(doc, level, written):
    """numcodecs passes these levels on and the libraries accept them (zstd clamps, -1 is zlib's
    default): read so, kept as given in the metadata read, normalised (with a warning) in new
    metadata."""
    from zarrbolt.codecs.registry import codecs_for_writing
    from zarrbolt.errors import MetadataNormalizedWarning

    c = parse_codec(doc)
    assert c.inner.level == level and c.to_json() == doc
    spec = ChunkSpec((len(RAW),), DataType("uint8"), np.uint8(0))
    assert bytes(c.decode(c.encode(RAW, spec), spec, len(RAW))) == RAW
    with pytest.warns(MetadataNormalizedWarning, match="written as"):
        (strict,) = codecs_for_writing((c,))
    assert strict.to_json() == {"name": doc["name"], "configuration": written}


def test_jenkins_lookup3_vectors():
    from zarrbolt._ext import _checksum32

    # Bob Jenkins' published values for hashlittle
    assert _checksum32.jenkins_lookup3(b"", 0) == 0xDEADBEEF
    assert _checksum32.jenkins_lookup3(b"Four score and seven years ago", 0) == 0x17770551
    assert _checksum32.jenkins_lookup3(b"Four score and seven years ago", 1) == 0xCD628161
    c = parse_codec({"name": "numcodecs.jenkins_lookup3"})
    assert bytes(c.encode(b"Four score and seven years ago", U8))[-4:] == (0x17770551).to_bytes(4, "little")


def test_known_formats():
    crc = parse_codec({"name": "numcodecs.crc32"})
    assert bytes(crc.encode(b"abc", U8)) == zlib.crc32(b"abc").to_bytes(4, "little") + b"abc"
    crc_end = parse_codec({"name": "numcodecs.crc32", "configuration": {"location": "end"}})
    assert bytes(crc_end.encode(b"abc", U8)) == b"abc" + zlib.crc32(b"abc").to_bytes(4, "little")
    adler = parse_codec({"name": "numcodecs.adler32"})
    assert bytes(adler.encode(b"abc", U8)) == zlib.adler32(b"abc").to_bytes(4, "little") + b"abc"
    assert bytes(parse_codec({"name": "numcodecs.bz2", "configuration": {"level": 3}}).encode(RAW, U8)) == \
        bz2.compress(RAW, 3)
    sh = parse_codec({"name": "numcodecs.shuffle", "configuration": {"elementsize": 2}})
    assert bytes(sh.encode(b"\x01\x02\x03\x04\x05\x06", U8)) == b"\x01\x03\x05\x02\x04\x06"
    assert bytes(sh.decode(b"\x01\x03\x05\x02\x04\x06", U8, 6)) == b"\x01\x02\x03\x04\x05\x06"


def _hdf5_fletcher32(data: bytes) -> int:
    """H5_checksum_fletcher32, word by word (the reference the vectorised form must equal)."""
    sum1 = sum2 = 0
    n, i = len(data) // 2, 0
    while n:
        t = min(n, 360)
        n -= t
        for _ in range(t):
            sum1 = (sum1 + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
            sum2 = (sum2 + sum1) & 0xFFFFFFFF
            i += 2
        sum1 = (sum1 & 0xFFFF) + (sum1 >> 16)
        sum2 = (sum2 & 0xFFFF) + (sum2 >> 16)
    if len(data) % 2:
        sum1 = (sum1 + (data[i] << 8)) & 0xFFFFFFFF
        sum2 = (sum2 + sum1) & 0xFFFFFFFF
        sum1 = (sum1 & 0xFFFF) + (sum1 >> 16)
        sum2 = (sum2 & 0xFFFF) + (sum2 >> 16)
    sum1 = (sum1 & 0xFFFF) + (sum1 >> 16)
    sum2 = (sum2 & 0xFFFF) + (sum2 >> 16)
    return (sum2 << 16) | sum1


@pytest.mark.parametrize("n", [0, 1, 2, 719, 720, 721, 5000, 20001])
def test_fletcher32_matches_hdf5(n):
    from zarrbolt.codecs.numcodecs.checksums import fletcher32

    data = bytes(np.full(n, 255, np.uint8)) if n % 3 == 0 else RAW[:n]
    assert fletcher32(data) == _hdf5_fletcher32(data)
    enc = bytes(parse_codec({"name": "numcodecs.fletcher32"}).encode(data, U8))
    assert enc == data + _hdf5_fletcher32(data).to_bytes(4, "little")


@pytest.mark.parametrize("cid,conf", [("crc32", {}), ("crc32", {"location": "end"}), ("adler32", {}),
                                      ("fletcher32", {}), ("jenkins_lookup3", {}), ("crc32c", {})])
def test_checksum_damage(cid, conf):
    c = parse_codec({"name": f"numcodecs.{cid}", "configuration": conf})
    enc = bytearray(c.encode(RAW[:100], U8))
    enc[50] ^= 1
    with pytest.raises(ChecksumError):
        c.decode(bytes(enc), U8, 100)
    with pytest.raises(CorruptChunkError):
        c.decode(b"\x01\x02", U8, 100)
    with pytest.raises(CorruptChunkError):
        c.decode(bytes(c.encode(RAW[:100], U8)), U8, 50)  # more than the chain allows


def test_bz2_damage():
    c = parse_codec({"name": "numcodecs.bz2"})
    enc = bz2.compress(RAW)
    for bad in (enc[:-10], enc[:20] + b"\x00" * 30 + enc[50:], b"not bz2 at all", enc + b"\x00"):
        with pytest.raises(CorruptChunkError):
            c.decode(bad, U8, len(RAW))
    with pytest.raises(CorruptChunkError):
        c.decode(enc, U8, len(RAW) - 1)  # decodes to more than allowed: never allocated past the bound


def test_lzma_damage():
    import lzma

    c = parse_codec({"name": "numcodecs.lzma"})
    enc = lzma.compress(RAW)
    for bad in (enc[:-10], b"\xfd7zXZ\x00 garbage", enc + b"\x00\x01"):
        with pytest.raises(CorruptChunkError):
            c.decode(bad, U8, len(RAW))
    with pytest.raises(CorruptChunkError):
        c.decode(enc, U8, 1000)


def test_shuffle_partial_elements():
    c = parse_codec({"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}})
    with pytest.raises(CorruptChunkError):
        c.decode(b"\x00" * 6, U8, 6)


def _bitround_ref(x: float, keep: int, dt) -> float:
    """numcodecs' rule, one value at a time in Python integers."""
    dt = np.dtype(dt)
    bits = {2: 10, 4: 23, 8: 52}[dt.itemsize]
    w = 8 * dt.itemsize
    i = int(np.array([x], dt).view(f"u{dt.itemsize}")[0])
    drop = bits - keep
    if drop == 0:
        return x
    i = (i + ((i >> drop) & 1) + (1 << (drop - 1)) - 1) % (1 << w)
    i &= ((1 << w) - 1) ^ ((1 << drop) - 1)
    return float(np.array([i], f"u{dt.itemsize}").view(dt)[0])


@pytest.mark.parametrize("dt,keep", [("<f4", 0), ("<f4", 3), ("<f4", 22), ("<f8", 7), ("<f2", 4), ("<f8", 52)])
def test_bitround(dt, keep):
    vals = np.array([0.0, -0.0, 1.0, 1 / 3, -2.75, 1e-30 if dt != "<f2" else 1e-5, 123456.789 if dt != "<f2" else 1234.5,
                     np.inf, -np.inf], dt)
    c = parse_codec({"name": "numcodecs.bitround", "configuration": {"keepbits": keep}})
    s = ChunkSpec(vals.shape, DataType.from_numpy(dt), vals.dtype.type(0))
    c.resolve(s)
    got = c.encode(vals, s)
    assert got.dtype == vals.dtype
    assert [float(g) for g in got] == [_bitround_ref(float(v), keep, dt) for v in vals]
    with pytest.raises(MetadataError):
        c.resolve(ChunkSpec((2,), DataType("int32"), np.int32(0)))


def test_arrays_with_the_codecs(tmp_path):
    data = (np.arange(6000, dtype="<f8") / 7).reshape(60, 100)
    chains = [
        [{"name": "numcodecs.bitround", "configuration": {"keepbits": 10}}, {"name": "bytes", "configuration": {"endian": "little"}},
         {"name": "numcodecs.shuffle", "configuration": {"elementsize": 8}}, {"name": "numcodecs.bz2", "configuration": {}}],
        [{"name": "numcodecs.quantize", "configuration": {"digits": 3, "dtype": "<f8", "astype": "<f4"}},
         {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.crc32", "configuration": {}}],
        [{"name": "numcodecs.astype", "configuration": {"encode_dtype": "<f4", "decode_dtype": "<f8"}},
         {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.blosc", "configuration": {}},
         {"name": "numcodecs.fletcher32", "configuration": {}}],
    ]
    for i, codecs in enumerate(chains):
        a = zarrbolt.create_array(str(tmp_path / str(i)), shape=data.shape, chunks=(16, 32), dtype="<f8",
                                  codecs=codecs)
        a[:] = data
        a[3:5, 7:40] = 1.5
        got = zarrbolt.open_array(str(tmp_path / str(i)))[:]
        expected = data.copy()
        expected[3:5, 7:40] = 1.5
        assert np.allclose(got, expected, rtol=2**-10, atol=1e-3)  # all three are lossy, this much
    b = zarrbolt.create_array(str(tmp_path / "b"), shape=(37,), chunks=(10,), dtype=bool,
                              codecs=[{"name": "numcodecs.packbits", "configuration": {}}, {"name": "bytes"}])
    b[:] = np.arange(37) % 3 == 0
    assert (zarrbolt.open_array(str(tmp_path / "b"))[:] == (np.arange(37) % 3 == 0)).all()
    s = zarrbolt.create_array(str(tmp_path / "s"), shape=(10,), chunks=(5,), dtype="<i4",
                              compressors=[{"name": "numcodecs.shuffle"}])
    assert s.metadata.to_json()["codecs"][1] == {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}


def test_packbits_damage():
    c = parse_codec({"name": "numcodecs.packbits"})
    s = ChunkSpec((10,), DataType("bool"), np.bool_(False))
    enc = c.encode(np.arange(10) % 2 == 0, s)
    assert enc.tolist()[0] == 6
    for bad in (enc[:-1], np.concatenate([[np.uint8(5)], enc[1:]]), np.concatenate([enc, [np.uint8(0)]])):
        with pytest.raises(CorruptChunkError):
            c.decode(bad, s)


@pytest.mark.parametrize("dt", ["<U5", "string"])
def test_categorize(tmp_path, dt):
    labels = ["red", "green", "blue"]
    conf = {"labels": labels, "dtype": "|O" if dt == "string" else "<U5", "astype": "|u1"}
    vals = np.array(["red", "blue", "green", "other", "", "blue"], dtype=DataType.from_numpy(dt).numpy_dtype)
    a = zarrbolt.create_array(str(tmp_path / "c"), shape=(6,), chunks=(4,), dtype=dt,
                              codecs=[{"name": "numcodecs.categorize", "configuration": conf}, {"name": "bytes"}])
    a[:] = vals
    got = zarrbolt.open_array(str(tmp_path / "c"))[:]
    assert got.tolist() == ["red", "blue", "green", "", "", "blue"]
    assert (tmp_path / "c" / "c" / "0").read_bytes() == bytes([1, 3, 2, 0])


@pytest.mark.parametrize("conf", [{"labels": ["a"]}, {"labels": "a", "dtype": "<U1"}, {"labels": [1], "dtype": "<U1"},
                                  {"labels": ["a"], "dtype": "<f8"}, {"labels": ["a"], "dtype": "<U1", "astype": "<f4"},
                                  {"labels": ["a"] * 300, "dtype": "<U1", "astype": "|u1"}])
def test_categorize_bad_configurations(conf):
    with pytest.raises(MetadataError):
        parse_codec({"name": "numcodecs.categorize", "configuration": conf})
