"""Low-level compressor bindings: zarrbolt._ext._zstd, _deflate (gzip), _blosc1 (encode), _blosc2
(decode).  Round trips, references (Python's gzip, numcodecs in the reference venv), corrupt and
truncated inputs, size limits and concurrency."""

from __future__ import annotations

import concurrent.futures
import gzip
import os
import pickle
import random
import struct
import subprocess
import textwrap
import tracemalloc
import zlib

import numpy as np
import pytest

from zarrbolt.errors import ChecksumError, CodecError, CorruptChunkError
from zarrbolt._ext import _blosc1, _blosc2, _deflate, _zstd

RNG = random.Random(1234)
MIB = 1 << 20


def _payloads() -> dict[str, bytes]:
    ramp = np.arange(MIB // 4, dtype="<u4").tobytes()  # 1 MiB, compressible
    return {
        "empty": b"",
        "one": b"\x07",
        "ramp_1mib": ramp,
        "random_64k": RNG.randbytes(65536),  # incompressible
        "zeros_100k": bytes(100_000),
    }


PAYLOADS = _payloads()
SMALL = {k: v for k, v in PAYLOADS.items() if len(v) <= 65536}


# ------------------------------------------------------------------------------------------ zstd


@pytest.mark.parametrize("name", PAYLOADS)
@pytest.mark.parametrize("level,checksum", [(0, False), (1, True), (-5, False), (19, True)])
def test_zstd_round_trip(name, level, checksum):
    data = PAYLOADS[name]
    if level == 19 and len(data) > 65536:
        data = data[:65536]  # keep the test fast
    enc = _zstd.compress(data, level, checksum)
    assert isinstance(enc, bytes)
    assert enc[:4] == b"\x28\xb5\x2f\xfd"
    assert _zstd.decompress(enc, len(data)) == data
    assert _zstd.decompress(memoryview(enc), len(data) + 100) == data
    out = bytearray(len(data) + 3)
    assert _zstd.decompress_into(enc, out) == len(data)
    assert bytes(out[: len(data)]) == data


def test_zstd_levels_out_of_range_are_clamped():
    data = PAYLOADS["ramp_1mib"][:4096]
    for level in (100, -(10**6)):
        assert _zstd.decompress(_zstd.compress(data, level), len(data)) == data


def test_zstd_checksum_flag_in_frame_header():
    # Frame header descriptor bit 2 is the content-checksum flag.
    assert _zstd.compress(b"abc" * 100, 3, True)[4] & 0x04
    assert not _zstd.compress(b"abc" * 100, 3, False)[4] & 0x04


@pytest.mark.parametrize("name", PAYLOADS)
def test_zstd_frames_without_content_size(name):
    data = PAYLOADS[name]
    enc = _zstd._compress_nosize(data, 3)
    assert enc != _zstd.compress(data, 3) or not data
    assert _zstd.decompress(enc, len(data)) == data
    assert _zstd.decompress(enc, len(data) + 10) == data
    if data:
        with pytest.raises(CorruptChunkError):
            _zstd.decompress(enc, len(data) - 1)
        with pytest.raises(CorruptChunkError):
            _zstd.decompress_into(enc, bytearray(len(data) - 1))


def test_zstd_nosize_frame_really_has_no_size():
    data = PAYLOADS["ramp_1mib"]
    enc = _zstd._compress_nosize(data)
    fhd = enc[4]
    assert fhd >> 6 == 0 and not fhd & 0x20  # FCS field absent, not single segment


def test_zstd_concatenated_and_skippable_frames():
    a, b = PAYLOADS["ramp_1mib"][:5000], PAYLOADS["random_64k"][:3000]
    skippable = struct.pack("<II", 0x184D2A50, 5) + b"hello"
    frames = (_zstd.compress(a) + skippable + _zstd._compress_nosize(b)
              + _zstd.compress(b"", 1))
    assert _zstd.decompress(frames, len(a) + len(b)) == a + b
    with pytest.raises(CorruptChunkError):
        _zstd.decompress(frames, len(a) + len(b) - 1)
    known = _zstd.compress(a) + _zstd.compress(b)
    assert _zstd.decompress(known, len(a) + len(b)) == a + b
    with pytest.raises(CorruptChunkError):  # refused from the frame headers alone
        _zstd.decompress(known, len(a) + len(b) - 1)


def test_zstd_max_size_violation_known_size():
    data = PAYLOADS["ramp_1mib"]
    enc = _zstd.compress(data)
    with pytest.raises(CorruptChunkError):
        _zstd.decompress(enc, len(data) - 1)
    with pytest.raises(CorruptChunkError):
        _zstd.decompress(enc, 0)
    with pytest.raises(CorruptChunkError):
        _zstd.decompress_into(enc, bytearray(10))


def test_zstd_huge_declared_size_allocates_nothing():
    # A frame claiming 2**40 decoded bytes (8-byte content size field, one empty raw block).
    frame = b"\x28\xb5\x2f\xfd" + bytes([0xE0]) + struct.pack("<Q", 1 << 40) + b"\x01\x00\x00"
    tracemalloc.start()
    try:
        with pytest.raises(CorruptChunkError):
            _zstd.decompress(frame, 1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024


def test_zstd_declared_size_larger_than_content_is_corrupt():
    frame = b"\x28\xb5\x2f\xfd" + bytes([0xE0]) + struct.pack("<Q", 10) + b"\x01\x00\x00"
    with pytest.raises(CorruptChunkError):
        _zstd.decompress(frame, 100)


@pytest.mark.parametrize("cut", [0, 1, 4, 6, -1, -4])
def test_zstd_truncated(cut):
    enc = _zstd.compress(PAYLOADS["random_64k"][:2000], 3, True)
    bad = enc[:cut] if cut > 0 else (enc[:cut] if cut < 0 else b"")
    with pytest.raises(CorruptChunkError):
        _zstd.decompress(bad, 10_000)
    with pytest.raises(CorruptChunkError):
        _zstd.decompress_into(bad, bytearray(10_000))


def test_zstd_garbage_and_trailing_bytes():
    with pytest.raises(CorruptChunkError):
        _zstd.decompress(b"not a zstd frame at all", 100)
    enc = _zstd.compress(b"x" * 1000)
    with pytest.raises(CorruptChunkError):
        _zstd.decompress(enc + b"\x00\x01", 2000)


def test_zstd_checksum_mismatch():
    data = PAYLOADS["ramp_1mib"][:10_000]
    enc = bytearray(_zstd.compress(data, 3, True))
    enc[-1] ^= 0xFF
    with pytest.raises(ChecksumError):
        _zstd.decompress(bytes(enc), len(data))


def test_zstd_corrupt_payload_never_crashes():
    data = PAYLOADS["ramp_1mib"][:50_000]
    enc = _zstd.compress(data, 3)
    r = random.Random(7)
    for _ in range(200):
        bad = bytearray(enc)
        for _ in range(r.randint(1, 4)):
            bad[r.randrange(6, len(bad))] = r.randrange(256)
        try:
            out = _zstd.decompress(bytes(bad), len(data))
        except CorruptChunkError:
            continue
        assert len(out) <= len(data)


# ------------------------------------------------------------------------------------------ gzip


@pytest.mark.parametrize("name", PAYLOADS)
@pytest.mark.parametrize("level", [0, 1, 6, 9])
def test_gzip_round_trip_and_stdlib(name, level):
    data = PAYLOADS[name]
    enc = _deflate.gzip_compress(data, level)
    assert enc[:2] == b"\x1f\x8b"
    assert gzip.decompress(enc) == data
    assert _deflate.gzip_decompress(enc, len(data)) == data
    out = bytearray(len(data) + 5)
    assert _deflate.gzip_decompress_into(enc, out) == len(data)
    assert bytes(out[: len(data)]) == data
    ref = gzip.compress(data, compresslevel=level)
    assert _deflate.gzip_decompress(ref, len(data)) == data


@pytest.mark.parametrize("level", [10, 12])
def test_gzip_libdeflate_high_levels(level):
    data = PAYLOADS["ramp_1mib"][:20_000]
    assert gzip.decompress(_deflate.gzip_compress(data, level)) == data


@pytest.mark.parametrize("level", [-1, 13, 1.5, True, "6"])
def test_gzip_bad_level(level):
    with pytest.raises((ValueError, TypeError)):
        _deflate.gzip_compress(b"abc", level)


def test_gzip_multi_member():
    a, b = b"first member " * 100, PAYLOADS["random_64k"][:1000]
    multi = gzip.compress(a) + gzip.compress(b) + gzip.compress(b"")
    assert gzip.decompress(multi) == a + b
    assert _deflate.gzip_decompress(multi, len(a) + len(b)) == a + b
    mixed = _deflate.gzip_compress(a) + gzip.compress(b)
    assert _deflate.gzip_decompress(mixed, len(a) + len(b) + 7) == a + b
    with pytest.raises(CorruptChunkError):
        _deflate.gzip_decompress(multi, len(a) + len(b) - 1)
    with pytest.raises(CorruptChunkError):
        _deflate.gzip_decompress(multi, len(a))
    with pytest.raises(CorruptChunkError):
        _deflate.gzip_decompress_into(multi, bytearray(len(a) + 10))


def test_gzip_bad_crc_and_isize_in_second_member():
    a, b = b"a" * 500, b"b" * 700
    second = bytearray(gzip.compress(b))
    second[-8] ^= 0x01  # CRC-32
    with pytest.raises(CorruptChunkError):
        _deflate.gzip_decompress(gzip.compress(a) + bytes(second), 2000)
    second = bytearray(gzip.compress(b))
    second[-4] ^= 0x01  # ISIZE
    with pytest.raises(CorruptChunkError):
        _deflate.gzip_decompress(gzip.compress(a) + bytes(second), 2000)


@pytest.mark.parametrize("cut", [0, 5, 10, 17, -1, -8])
def test_gzip_truncated(cut):
    enc = gzip.compress(PAYLOADS["random_64k"][:3000])
    bad = enc[:cut] if cut else b""
    with pytest.raises(CorruptChunkError):
        _deflate.gzip_decompress(bad, 10_000)
    with pytest.raises(CorruptChunkError):
        _deflate.gzip_decompress_into(bad, bytearray(10_000))


def test_gzip_trailing_garbage_and_not_gzip():
    enc = gzip.compress(b"hello" * 10)
    with pytest.raises(CorruptChunkError):
        _deflate.gzip_decompress(enc + b"\x00" * 3, 100)
    with pytest.raises(CorruptChunkError):
        _deflate.gzip_decompress(enc + b"garbage garbage garbage", 100)
    with pytest.raises(CorruptChunkError):  # zlib stream, not gzip
        _deflate.gzip_decompress(zlib.compress(b"hello" * 10), 100)


def test_gzip_corrupt_payload_never_crashes():
    data = PAYLOADS["ramp_1mib"][:50_000]
    enc = gzip.compress(data)
    r = random.Random(11)
    for _ in range(200):
        bad = bytearray(enc)
        bad[r.randrange(10, len(bad))] ^= 1 << r.randrange(8)
        with pytest.raises(CorruptChunkError):  # CRC-32 catches what the decoder does not
            _deflate.gzip_decompress(bytes(bad), len(data))


# ------------------------------------------------------------------------------------------ common


@pytest.mark.parametrize(
    "func,args",
    [
        (_zstd.compress, ()),
        (_deflate.gzip_compress, ()),
        (_zstd.decompress, (10,)),
        (_deflate.gzip_decompress, (10,)),
        (_blosc2.cbuffer_sizes, ()),
        (_blosc2.decompress, (10,)),
    ],
)
def test_buffer_arguments(func, args):
    with pytest.raises(TypeError):
        func("a string", *args)
    with pytest.raises(TypeError):
        func(12345, *args)
    with pytest.raises(ValueError):
        func(np.zeros((4, 4), "u1")[:, ::2], *args)  # not contiguous


def test_buffer_kinds_accepted():
    arr = np.arange(1000, dtype="<i8").reshape(10, 100)
    raw = arr.tobytes()
    for obj in (arr, memoryview(raw), bytearray(raw), memoryview(raw).cast("Q")):
        assert _zstd.decompress(_zstd.compress(obj), len(raw)) == raw
        assert _deflate.gzip_decompress(_deflate.gzip_compress(obj), len(raw)) == raw
        assert _blosc2.decompress(_blosc1.compress(obj, 8, 5, 1, "lz4"), len(raw)) == raw
    out = np.zeros(1000, "<i8")
    assert _zstd.decompress_into(_zstd.compress(raw), out) == len(raw)
    assert np.array_equal(out, arr.ravel())


@pytest.mark.parametrize(
    "func",
    [_zstd.decompress_into, _deflate.gzip_decompress_into, _blosc2.decompress_into],
)
def test_into_needs_writable_buffer(func):
    with pytest.raises(ValueError):
        func(b"\x00" * 32, b"\x00" * 32)  # bytes are read-only
    with pytest.raises(TypeError):
        func(b"\x00" * 32, 5)


@pytest.mark.parametrize("func", [_zstd.decompress, _deflate.gzip_decompress])
@pytest.mark.parametrize("max_size", [-1, 2.0, True, None])
def test_bad_max_size(func, max_size):
    with pytest.raises((ValueError, TypeError)):
        func(b"\x00" * 32, max_size)


def test_library_versions():
    v = _zstd.library_version() | _deflate.library_version()
    assert set(v) == {"zstd", "libdeflate"}
    assert all(isinstance(s, str) and s[0].isdigit() for s in v.values())
    assert _blosc1.library_version().startswith("1.")
    assert int(_blosc2.library_version().split(".")[0]) >= 2
    assert {"blosclz", "lz4", "lz4hc", "zlib", "zstd"} <= set(_blosc1.compressors())


def test_concurrent_calls_share_nothing():
    datas = [PAYLOADS["ramp_1mib"][i * 1000 : i * 1000 + 40_000] for i in range(16)]

    def work(i):
        d = datas[i]
        z = _zstd.compress(d, i % 5, bool(i % 2))
        g = _deflate.gzip_compress(d, i % 10)
        b = _blosc1.compress(d, 4, 5, i % 3, ["lz4", "zstd", "blosclz"][i % 3])
        return (
            _zstd.decompress(z, len(d)) == d
            and _deflate.gzip_decompress(g, len(d)) == d
            and _blosc2.decompress(b, len(d)) == d
        )

    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        assert all(ex.map(work, list(range(16)) * 4))


# ------------------------------------------------------------------------------------------ blosc

CNAMES = _blosc1.compressors()


def _zstd_cases():
    """Inputs of every kind and size (shuffled, so that each thread's kept zstd context goes from
    one level and size to another), with their type size, level and shuffle."""
    rng = np.random.default_rng(5)
    datas = [b"", bytes(1000)]
    for n in (1, 100, 4096, 65536, 300_001, MIB + 7):
        smooth = (np.cumsum(rng.normal(size=n // 2 + 1)) * 50).astype("<i2").tobytes()[:n]
        part = bytearray(n)
        part[: n // 3] = smooth[: n // 3]
        datas += [rng.integers(0, 256, n, dtype=np.uint8).tobytes(), smooth, bytes(part)]
    cases = [(d, ts, cl, sh) for d in datas for ts in (1, 2, 8) for cl in (1, 3, 5, 7) for sh in (0, 1, 2)]
    random.Random(9).shuffle(cases)
    return cases


def test_blosc_zstd_chunks_are_the_librarys_own():
    """blosc1_codec.c gives c-blosc's per-block ZSTD_compress a context kept per thread (on
    Linux builds): the chunks must be byte for byte those of c-blosc's own ZSTD_compress (a
    fresh context per block), here python-blosc's copy of the same c-blosc, from 4 threads."""
    blosc = pytest.importorskip("blosc")
    if os.uname().sysname == "Linux":
        assert _blosc1.zstd_context_reuse()
    if blosc.blosclib_version.split()[0] != _blosc1.library_version().split()[0]:
        pytest.skip("python-blosc carries another c-blosc version")
    blosc.set_nthreads(1)
    cases = _zstd_cases()
    want = [blosc.compress(d, typesize=ts, clevel=cl, shuffle=sh, cname="zstd") for d, ts, cl, sh in cases]

    def ours(part):
        return [(i, _blosc1.compress(*cases[i], "zstd")) for i in part]

    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        got = dict(kv for r in ex.map(ours, [range(k, len(cases), 4) for k in range(4)]) for kv in r)
    bad = [i for i in range(len(cases)) if got[i] != want[i]]
    assert not bad, f"{len(bad)} of {len(cases)} chunks differ, first: {cases[bad[0]][1:]} {len(cases[bad[0]][0])} B"


@pytest.mark.parametrize("cname", CNAMES)
@pytest.mark.parametrize("shuffle", [0, 1, 2])
@pytest.mark.parametrize("typesize", [1, 2, 4, 8, 3])
def test_blosc_round_trip(cname, shuffle, typesize):
    arr = (np.arange(24_000) * 7 % 1000).astype("<u8").tobytes()[: 24_000 * typesize // 8 * 8]
    for data in (arr, SMALL["random_64k"][:9_999], b"", b"\x01"):
        enc = _blosc1.compress(data, typesize, 5, shuffle, cname)
        assert isinstance(enc, bytes)
        assert enc[0] == 2  # c-blosc 1.x format version: readable by every Zarr reader
        nbytes, cbytes, blocksize = _blosc2.cbuffer_sizes(enc)
        assert (nbytes, cbytes) == (len(data), len(enc))
        assert _blosc2.decompress(enc, len(data)) == data
        out = bytearray(len(data) + 8)
        assert _blosc2.decompress_into(enc, out) == len(data)
        assert bytes(out[: len(data)]) == data


@pytest.mark.parametrize("clevel", [0, 1, 9])
@pytest.mark.parametrize("blocksize", [0, 256, 4096, 1 << 20])
def test_blosc_clevel_blocksize(clevel, blocksize):
    data = PAYLOADS["ramp_1mib"][:200_000]
    enc = _blosc1.compress(data, 4, clevel, 1, "zstd", blocksize)
    if clevel == 0:
        assert len(enc) == len(data) + 16  # stored
    assert _blosc2.decompress(enc, len(data)) == data


def test_blosc_large_typesize_written_as_one():
    data = PAYLOADS["ramp_1mib"][:3000]
    enc = _blosc1.compress(data, 300, 5, 1, "lz4")
    assert enc[3] == 1
    assert _blosc2.decompress(enc, len(data)) == data
    assert _blosc1.compress(data, 255, 5, 1, "lz4")[3] == 255


@pytest.mark.parametrize(
    "kwargs,exc",
    [
        ({"typesize": 0}, ValueError),
        ({"typesize": -1}, ValueError),
        ({"clevel": 10}, ValueError),
        ({"clevel": -1}, ValueError),
        ({"shuffle": 3}, ValueError),
        ({"cname": "brotli"}, ValueError),
        ({"cname": b"lz4"}, ValueError),
        ({"blocksize": -1}, ValueError),
        ({"blocksize": 2**31}, ValueError),
        ({"typesize": 1.0}, TypeError),
    ],
)
def test_blosc_bad_arguments(kwargs, exc):
    args = {"typesize": 4, "clevel": 5, "shuffle": 1, "cname": "lz4", "blocksize": 0} | kwargs
    with pytest.raises(exc):
        _blosc1.compress(b"abcd" * 10, **args)


def test_blosc_snappy():
    if "snappy" in CNAMES:
        data = b"abcd" * 1000
        assert _blosc2.decompress(_blosc1.compress(data, 4, 5, 1, "snappy"), len(data)) == data
    else:  # not compiled into the c-blosc wheel: a codec error, not a crash or a ValueError
        with pytest.raises(CodecError):
            _blosc1.compress(b"abcd" * 10, 4, 5, 1, "snappy")


def _chunk(n=40_000, cname="lz4", shuffle=1, typesize=4):
    data = np.arange(n // 4, dtype="<u4").tobytes()
    return data, _blosc1.compress(data, typesize, 5, shuffle, cname)


def _patch(enc: bytes, off: int, fmt: str, value) -> bytes:
    b = bytearray(enc)
    struct.pack_into(fmt, b, off, value)
    return bytes(b)


def test_blosc_getitem():
    data, enc = _chunk(400_000, "zstd", 1, 4)
    items = np.frombuffer(data, "<u4")
    for start, k in [(0, 1), (5, 100), (99_000, 1000), (0, 100_000), (50_000, 0)]:
        out = bytearray(4 * k + 4)
        assert _blosc2.getitem(enc, start, k, out) == 4 * k
        assert np.array_equal(np.frombuffer(out[: 4 * k], "<u4"), items[start : start + k])
    with pytest.raises(ValueError):
        _blosc2.getitem(enc, 99_999, 2, bytearray(8))
    with pytest.raises(ValueError):
        _blosc2.getitem(enc, 0, 10, bytearray(39))
    with pytest.raises((ValueError, TypeError)):
        _blosc2.getitem(enc, -1, 1, bytearray(8))


def test_blosc_header_short_and_truncated():
    data, enc = _chunk()
    for bad in (b"", enc[:1], enc[:15]):
        with pytest.raises(CorruptChunkError):
            _blosc2.cbuffer_sizes(bad)
        with pytest.raises(CorruptChunkError):
            _blosc2.decompress(bad, len(data))
    for bad in (enc[:16], enc[:-1]):  # cbytes larger than the buffer
        with pytest.raises(CorruptChunkError):
            _blosc2.cbuffer_sizes(bad)
        with pytest.raises(CorruptChunkError):
            _blosc2.decompress(bad, len(data))
        with pytest.raises(CorruptChunkError):
            _blosc2.decompress_into(bad, bytearray(len(data)))
        with pytest.raises(CorruptChunkError):
            _blosc2.getitem(bad, 0, 1, bytearray(4))


def test_blosc_huge_nbytes_allocates_nothing():
    data, enc = _chunk()
    bad = _patch(enc, 4, "<i", 2**31 - 64)
    tracemalloc.start()
    try:
        with pytest.raises(CorruptChunkError):
            _blosc2.decompress(bad, len(data))
        with pytest.raises(CorruptChunkError):
            _blosc2.decompress_into(bad, bytearray(len(data)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024
    with pytest.raises(CorruptChunkError):  # negative sizes
        _blosc2.cbuffer_sizes(_patch(enc, 4, "<i", -5))
    with pytest.raises(CorruptChunkError):
        _blosc2.cbuffer_sizes(_patch(enc, 12, "<i", -5))


def test_blosc_expected_size_mismatch():
    data, enc = _chunk()
    with pytest.raises(CorruptChunkError):
        _blosc2.decompress(enc, len(data) - 1)
    with pytest.raises(CorruptChunkError):
        _blosc2.decompress(enc, len(data) + 1)
    with pytest.raises(CorruptChunkError):
        _blosc2.decompress_into(enc, bytearray(len(data) - 1))


def test_blosc_bad_header_fields():
    data, enc = _chunk()
    with pytest.raises(CorruptChunkError):  # version 0
        _blosc2.decompress(_patch(enc, 0, "B", 0), len(data))
    with pytest.raises(CorruptChunkError):  # compressor code 7 does not exist
        _blosc2.decompress(_patch(enc, 2, "B", (enc[2] & 0x1F) | 0xE0), len(data))
    with pytest.raises(CorruptChunkError):  # blocksize 0 with data
        _blosc2.decompress(_patch(enc, 8, "<i", 0), len(data))
    with pytest.raises(CodecError):  # c-blosc2 extended header (both shuffle bits)
        _blosc2.decompress(_patch(enc, 2, "B", enc[2] | 0x05), len(data))
    stored = _blosc1.compress(data, 4, 0, 0, "lz4")
    assert stored[2] & 0x02  # memcpyed
    short = _patch(stored, 12, "<i", len(stored) - 4)[:-4]
    with pytest.raises(CorruptChunkError):  # memcpyed but cbytes != nbytes + 16
        _blosc2.decompress(short, len(data))


@pytest.mark.parametrize("cname", CNAMES)
def test_blosc_corrupt_payload_never_crashes(cname):
    data, enc = _chunk(60_000, cname, 2, 4)
    r = random.Random(cname)
    for _ in range(150):
        bad = bytearray(enc)
        for _ in range(r.randint(1, 6)):
            bad[r.randrange(16, len(bad))] = r.randrange(256)
        try:
            out = _blosc2.decompress(bytes(bad), len(data))  # blosc has no checksum
        except CorruptChunkError:
            continue
        assert len(out) == len(data)


def test_blosc_c_blosc2_written_chunk_refused_or_read():
    """A chunk written by python-blosc2 (c-blosc2 format, extended header) is refused with a
    CodecError: it is not the Zarr blosc format.  Skipped only if python-blosc2 is absent."""
    blosc2 = pytest.importorskip("blosc2")
    data = np.arange(1000, dtype="<u4").tobytes()
    enc = blosc2.compress(data, typesize=4)
    with pytest.raises(CodecError):
        _blosc2.decompress(enc, len(data))


# ------------------------------------------------------------------------------------------ reference readers

REF_PYTHON = os.environ.get("ZARRBOLT_REF_PYTHON") or "/tmp/refvenv/bin/python"

_REF_SCRIPT = textwrap.dedent(
    """
    import pickle, sys
    import numcodecs
    from numcodecs import Blosc, GZip, Zstd
    cases = pickle.load(sys.stdin.buffer)
    res = {"decoded": [], "encoded": []}
    for kind, enc in cases["decode"]:
        codec = {"blosc": Blosc(), "gzip": GZip(), "zstd": Zstd()}[kind]
        res["decoded"].append(bytes(codec.decode(enc)))
    for cname, shuffle, typesize, data in cases["encode"]:
        res["encoded"].append(bytes(Blosc(cname=cname, clevel=5, shuffle=shuffle,
                                          typesize=typesize).encode(data)))
    for data in cases["encode_other"]:
        res["encoded"].append((bytes(GZip(5).encode(data)), bytes(Zstd(3).encode(data))))
    pickle.dump(res, sys.stdout.buffer)
    """
)


def test_reference_numcodecs_interop():
    if not os.path.exists(REF_PYTHON):
        pytest.skip(f"reference python with numcodecs not found at {REF_PYTHON}")
    datas = [np.arange(5000, dtype="<u4").tobytes(), SMALL["random_64k"][:7777], b"", b"\x05"]
    decode, expect = [], []
    for cname in CNAMES:
        for shuffle in (0, 1, 2):
            for d in datas:
                if not d:
                    # numcodecs cannot decode any empty blosc chunk, its own included (it treats
                    # a decoded size of 0 as an error); not a format question.
                    continue
                decode.append(("blosc", _blosc1.compress(d, 4, 5, shuffle, cname)))
                expect.append(d)
    for d in datas:
        decode.append(("gzip", _deflate.gzip_compress(d, 5)))
        expect.append(d)
        if d:  # numcodecs' Zstd rejects empty frames, its own included
            decode.append(("zstd", _zstd.compress(d, 3, True)))
            expect.append(d)
    encode = [(c, s, 4, d) for c in CNAMES for s in (0, 1, 2) for d in (datas[0], b"")]
    payload = pickle.dumps({"decode": decode, "encode": encode, "encode_other": datas})
    proc = subprocess.run([REF_PYTHON, "-c", _REF_SCRIPT], input=payload, capture_output=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    res = pickle.loads(proc.stdout)
    assert res["decoded"] == expect
    for (cname, shuffle, _typesize, d), enc in zip(encode, res["encoded"][: len(encode)]):
        assert _blosc2.decompress(enc, len(d)) == d, (cname, shuffle)
    for d, (g, z) in zip(datas, res["encoded"][len(encode):]):
        assert _deflate.gzip_decompress(g, len(d)) == d
        assert _zstd.decompress(z, len(d)) == d


# ------------------------------------------------------------------------ prefix decodes (gzip, zstd)
def _prefix_payload(n=1 << 20) -> bytes:
    """Microscopy-like noise: compresses, but mostly to literals and short matches."""
    rng = np.random.default_rng(7)
    return (rng.integers(0, 300, n // 2) + 1000).astype("<u2").tobytes()


PREFIX_DATA = _prefix_payload()
PREFIX_WANTS = [0, 1, 1000, 65535, 65536, 65537, 300_001, len(PREFIX_DATA) // 2, len(PREFIX_DATA) - 200_000,
                len(PREFIX_DATA) - 70_000, len(PREFIX_DATA) - 1, len(PREFIX_DATA)]


def _check_prefix(fn, enc, data, want):
    out = fn(enc, len(data), want)
    assert len(out) in (want, len(data))
    assert out == data[: len(out)]
    return len(out)


def _gzip_encodings(data):
    yield "libdeflate-0", _deflate.gzip_compress(data, 0)  # stored blocks of up to 65535 bytes
    for level in (1, 6, 12):
        yield f"libdeflate-{level}", _deflate.gzip_compress(data, level)
    yield "zlib-1", gzip.compress(data, compresslevel=1)
    yield "zlib-9", gzip.compress(data, compresslevel=9)
    # a header with every optional field: FEXTRA, FNAME, FCOMMENT and FHCRC
    body = zlib.compressobj(6, zlib.DEFLATED, -15)
    deflated = body.compress(data) + body.flush()
    head = bytes([0x1F, 0x8B, 8, 0x02 | 0x04 | 0x08 | 0x10]) + bytes(6)
    head += struct.pack("<H", 5) + b"extra" + b"name.raw\0" + b"a comment\0"
    head += struct.pack("<H", zlib.crc32(head) & 0xFFFF)
    yield "all-fields", head + deflated + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


@pytest.mark.parametrize("name,enc", list(_gzip_encodings(PREFIX_DATA)), ids=lambda v: v if isinstance(v, str) else "")
def test_gzip_prefix_equals_whole_decode(name, enc):
    got = [_check_prefix(_deflate.gzip_decompress_prefix, enc, PREFIX_DATA, w) for w in PREFIX_WANTS]
    # small prefixes stop early; a prefix close to the end decodes (and checks) everything
    assert got[2] == 1000 and got[6] == 300_001
    assert got[-2] == got[-1] == len(PREFIX_DATA)


def test_gzip_prefix_stops_early_and_skips_only_the_unread_tail():
    """Damage past the prefix goes unseen by a prefix decode (the CRC-32 covers the whole member),
    damage inside it is an error; the whole decode sees both."""
    enc = bytearray(_deflate.gzip_compress(PREFIX_DATA, 1))
    bad_crc = bytes(enc[:-8]) + bytes(4) + bytes(enc[-4:])
    assert _deflate.gzip_decompress_prefix(bad_crc, len(PREFIX_DATA), 4096) == PREFIX_DATA[:4096]
    with pytest.raises(CorruptChunkError):
        _deflate.gzip_decompress_prefix(bad_crc, len(PREFIX_DATA), len(PREFIX_DATA))
    with pytest.raises(CorruptChunkError):
        _deflate.gzip_decompress(bad_crc, len(PREFIX_DATA))
    early = bytearray(enc)
    early[10] |= 0x06  # the first block's type: 3 is reserved
    with pytest.raises(CorruptChunkError):
        _deflate.gzip_decompress_prefix(bytes(early), len(PREFIX_DATA), 4096)


@pytest.mark.parametrize("case", ["multi-member", "isize", "short", "long", "reserved-flag", "not-gzip", "truncated"])
def test_gzip_prefix_falls_back_to_checked_whole_decode(case):
    data = PREFIX_DATA
    enc = _deflate.gzip_compress(data, 1)
    half = len(data) // 2
    if case == "multi-member":  # ISIZE is the last member's: the whole decode runs and succeeds
        enc = gzip.compress(data[:half]) + gzip.compress(data[half:])
        assert _deflate.gzip_decompress_prefix(enc, len(data), 1000) == data
        return
    if case == "isize":
        enc = enc[:-4] + struct.pack("<I", len(data) + 1)
    elif case in ("short", "long"):
        # a member decoding to less / more than the chunk whose ISIZE claims the chunk's size: a
        # short prefix cannot tell (its bytes are the member's), the whole decode can
        enc = gzip.compress(data[:-1000] if case == "short" else data + b"xy")[:-4] + struct.pack("<I", len(data))
        assert _deflate.gzip_decompress_prefix(enc, len(data), 1000) == data[:1000]
        with pytest.raises(CorruptChunkError):
            _deflate.gzip_decompress_prefix(enc, len(data), len(data) - 1000)
        return
    elif case == "reserved-flag":
        enc = enc[:3] + bytes([0x20]) + enc[4:]
    elif case == "not-gzip":
        enc = zlib.compress(data)
    else:
        enc = enc[: len(enc) // 3]
    with pytest.raises(CorruptChunkError):
        _deflate.gzip_decompress_prefix(enc, len(data), 1000)


@pytest.mark.parametrize("level,checksum", [(1, False), (3, True), (19, False), (-3, False)])
def test_zstd_prefix_equals_whole_decode(level, checksum):
    enc = _zstd.compress(PREFIX_DATA, level, checksum)
    got = [_check_prefix(_zstd.decompress_prefix, enc, PREFIX_DATA, w) for w in PREFIX_WANTS]
    assert got[2] == 1000 and got[6] == 300_001
    assert got[-3] == got[-2] == got[-1] == len(PREFIX_DATA)


def test_zstd_prefix_stops_early_and_falls_back():
    data = PREFIX_DATA
    enc = _zstd.compress(data, 1, True)
    bad_sum = enc[:-4] + bytes(4)  # content checksum: needs the whole frame
    assert _zstd.decompress_prefix(bad_sum, len(data), 5000) == data[:5000]
    with pytest.raises(ChecksumError):
        _zstd.decompress_prefix(bad_sum, len(data), len(data))
    # no recorded size, or two frames: the whole (checked) decode
    assert _zstd.decompress_prefix(_zstd._compress_nosize(data, 1), len(data), 5000) == data
    half = len(data) // 2
    two = _zstd.compress(data[:half], 1) + _zstd.compress(data[half:], 1)
    assert _zstd.decompress_prefix(two, len(data), 5000) == data
    with pytest.raises(CorruptChunkError):  # size recorded, but not the chunk's
        _zstd.decompress_prefix(_zstd.compress(data[:-2], 1), len(data), 5000)
    with pytest.raises(CorruptChunkError):
        _zstd.decompress_prefix(enc[: len(enc) // 4], len(data), len(data) // 2)
    with pytest.raises(ValueError):
        _zstd.decompress_prefix(enc, len(data), len(data) + 1)


def test_zstd_prefix_window_larger_than_the_chunk_is_not_allocated():
    """A frame header claiming a 1 GiB window (the recorded size is the chunk's) allocates no
    window: the prefix is decoded block by block straight into the output buffer."""
    data = PREFIX_DATA
    enc = _zstd.compress(data, 1)
    assert enc[4] & 0x20 == 0  # no single-segment flag: byte 5 is the window descriptor
    huge = enc[:5] + bytes([20 << 3]) + enc[6:]  # exponent 20: 2**30 bytes
    resource = pytest.importorskip("resource")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert _zstd.decompress_prefix(huge, len(data), 5000) == data[:5000]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # KiB
