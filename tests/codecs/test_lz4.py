"""numcodecs.lz4: numcodecs' LZ4 format (4-byte little-endian size + one LZ4 block) through
zarrbolt._ext._lz4, untrusted input, the codec's JSON, arrays, and its fused-path stages."""

from __future__ import annotations

import importlib
import random
import struct
import tracemalloc

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.codecs import parse_codec
from zarrbolt.codecs.numcodecs.compressors import LZ4Codec
from zarrbolt.errors import CorruptChunkError, MetadataError
from zarrbolt.storage import MemoryStore
from zarrbolt._ext import _lz4

RNG = random.Random(99)
PAYLOADS = {
    "empty": b"",
    "one": b"\x07",
    "ramp": np.arange(300_000, dtype="<u2").tobytes(),
    "random": RNG.randbytes(70_000),
    "zeros": bytes(100_000),
}


@pytest.mark.parametrize("name", PAYLOADS)
@pytest.mark.parametrize("acc", [1, 0, -3, 7, 65537, 2**31 - 1])
def test_round_trip(name, acc):
    data = PAYLOADS[name]
    enc = _lz4.compress(data, acc)
    assert struct.unpack("<I", enc[:4])[0] == len(data) == _lz4.decoded_size(enc)
    assert len(enc) <= _lz4.compress_bound(len(data)) == LZ4Codec().max_encoded_size(len(data))
    assert _lz4.decompress(enc, len(data)) == data
    assert _lz4.decompress(memoryview(enc), len(data) + 10) == data
    out = bytearray(len(data) + 5)
    assert _lz4.decompress_into(enc, out) == len(data) and bytes(out[: len(data)]) == data


def test_reads_what_numcodecs_writes():
    # numcodecs.LZ4().encode(b"") and of int16 [0, 1, 1, 1] (a delta-encoded chunk zarr-python wrote)
    assert _lz4.decompress(bytes.fromhex("0000000000"), 0) == b""
    assert _lz4.decompress(bytes.fromhex("08000000800000010001000100"), 8) == np.array([0, 1, 1, 1], "<i2").tobytes()


def test_claimed_size_is_checked_before_allocating():
    enc = b"\xff\xff\xff\x7f" + b"\x10abcd"  # claims 2 GiB
    tracemalloc.start()
    try:
        with pytest.raises(CorruptChunkError, match="at most 1000"):
            _lz4.decompress(enc, 1000)
        assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()
    with pytest.raises(CorruptChunkError):
        _lz4.decompress(b"\xff\xff\xff\xff\x00", 2**40)  # beyond what LZ4 can write at all
    with pytest.raises(CorruptChunkError):
        _lz4.decompress_into(enc, bytearray(100))


@pytest.mark.parametrize("case", ["short-header", "header-only", "truncated", "trailing", "size-too-small", "size-too-large", "bad-offset"])
def test_corrupt_inputs(case):
    data = PAYLOADS["ramp"][:20000]
    enc = _lz4.compress(data)
    bad = {
        "short-header": enc[:3],
        "header-only": enc[:4],
        "truncated": enc[:-7],
        "trailing": enc + b"\x00\x01",
        "size-too-small": struct.pack("<I", len(data) - 1) + enc[4:],
        "size-too-large": struct.pack("<I", len(data) + 1) + enc[4:],
        "bad-offset": enc[:4] + b"\x1f" + b"\x00" + b"\xff\xff" + enc[8:],
    }[case]
    with pytest.raises(CorruptChunkError):
        _lz4.decompress(bad, len(data) + 16)
    with pytest.raises(CorruptChunkError):
        _lz4._run_bb_step(_lz4.DECODE_STEP, b"", bad, len(data) + 16)


def test_garbage_never_crashes():
    data = PAYLOADS["ramp"][:5000]
    enc = bytearray(_lz4.compress(data))
    rng = random.Random(5)
    for _ in range(3000):
        b = bytearray(enc)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(4, len(b))] = rng.randrange(256)
        if rng.random() < 0.3:
            b = b[: rng.randrange(len(b))]
        try:
            out = _lz4.decompress(bytes(b), len(data))
            assert len(out) == len(data)
        except CorruptChunkError:
            pass


def test_prefix():
    data = PAYLOADS["ramp"]
    enc = _lz4.compress(data)
    for want in (0, 1, 100, 65536, 300_001, len(data) - 1, len(data)):
        got = _lz4.decompress_prefix(enc, len(data), want)
        assert len(got) >= want and got == data[: len(got)]
    with pytest.raises(CorruptChunkError):  # the header does not say the expected size
        _lz4.decompress_prefix(enc, len(data) - 2, 10)
    with pytest.raises(CorruptChunkError):
        _lz4.decompress_prefix(enc[:4] + b"\xf0" + enc[5:40], len(data), 10)


def test_steps_match_the_functions():
    data = PAYLOADS["ramp"]
    for acc in (1, 9):
        params = _lz4.encode_params(acc)
        assert len(params) == 4
        enc = _lz4._run_bb_step(_lz4.ENCODE_STEP, params, data, _lz4.compress_bound(len(data)))
        assert enc == _lz4.compress(data, acc)
        assert _lz4._run_bb_step(_lz4.DECODE_STEP, b"", enc, len(data)) == data
    with pytest.raises(CorruptChunkError):  # output larger than the room the plan gives
        _lz4._run_bb_step(_lz4.DECODE_STEP, b"", _lz4.compress(data), len(data) - 1)
    with pytest.raises(CorruptChunkError):
        _lz4._run_bb_step(_lz4.ENCODE_STEP, _lz4.encode_params(1), data, 10)


def test_json():
    for conf, expect in (({}, {}), ({"acceleration": 5}, {"acceleration": 5}), ({"acceleration": 1, "id": "lz4"}, {"acceleration": 1}), (None, {})):
        c = parse_codec({"name": "numcodecs.lz4", "configuration": conf} if conf is not None else {"name": "numcodecs.lz4"})
        assert c.to_json() == {"name": "numcodecs.lz4", "configuration": expect}
        assert parse_codec(c.to_json()) == c
    assert LZ4Codec(-2).effective_acceleration == 1
    for conf in ({"acceleration": "1"}, {"acceleration": True}, {"acceleration": 1.5}, {"acceleration": 2**40},
                 {"level": 1}, {"id": "zlib"}, [1]):
        with pytest.raises(MetadataError):
            parse_codec({"name": "numcodecs.lz4", "configuration": conf})


LE = {"name": "bytes", "configuration": {"endian": "little"}}


@pytest.mark.parametrize("sharded", [False, True])
def test_arrays(sharded):
    inner = [LE, {"name": "numcodecs.lz4", "configuration": {"acceleration": 3}}]
    codecs = inner if not sharded else [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [5, 8], "codecs": inner, "index_codecs": [LE, {"name": "crc32c"}]}}]
    data = (np.arange(27 * 35) * 0.5).astype("f4").reshape(27, 35)
    st = MemoryStore()
    a = zarr.create_array(st, shape=data.shape, chunks=(10, 16), dtype="f4", codecs=codecs, fill_value=-1)
    a[1:] = data[1:]
    expect = data.copy()
    expect[:1] = -1
    assert a[...].tobytes() == expect.tobytes()
    assert a[3:9, 5:30].tobytes() == expect[3:9, 5:30].tobytes()


def test_corrupt_chunk_in_an_array():
    st = MemoryStore()
    a = zarr.create_array(st, shape=(100,), chunks=(50,), dtype="u2", codecs=[LE, {"name": "numcodecs.lz4", "configuration": {}}])
    a[...] = np.arange(100)
    raw = st.get("c/1")
    st.set("c/1", struct.pack("<I", 1 << 30) + raw[4:])  # claims 1 GiB for a 100-byte chunk
    with pytest.raises(CorruptChunkError):
        a[...]
    st.set("c/1", struct.pack("<I", 98) + _lz4.compress(bytes(98))[4:])  # a valid block, one element short
    with pytest.raises(CorruptChunkError):
        a[...]
    assert a[:50].tolist() == list(range(50))


# --------------------------------------------------------------------------- fused path
def _plan_module():
    return importlib.import_module("zarrbolt.pipeline.plan")


def test_stage_methods():
    from zarrbolt.codecs.abc import ChunkSpec
    from zarrbolt.metadata.dtypes import DataType

    spec = ChunkSpec((10,), DataType.from_numpy("u2"), np.uint16(0))
    c = LZ4Codec(4)
    kind, fn, params = c.c_decode_step(spec)
    assert kind == "transform" and params == b""
    kind, efn, eparams = c.c_encode_step(spec)
    assert kind == "transform" and eparams == _lz4.encode_params(4)
    data = np.arange(10, dtype="u2").tobytes()
    enc = _lz4._run_bb_step(efn, eparams, data, c.max_encoded_size(20))
    assert _lz4._run_bb_step(fn, params, enc, 20) == data
    assert c.c_partial(spec) == ("prefix", _lz4.PREFIX_FN)


@pytest.mark.parametrize("sharded", [False, True])
def test_fused_equals_per_codec(sharded):
    _plan_module()
    inner = [LE, {"name": "numcodecs.lz4", "configuration": {}}]
    codecs = inner if not sharded else [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [8, 8], "codecs": inner, "index_codecs": [LE, {"name": "crc32c"}]}}]
    data = (np.arange(40 * 33) % 999).astype("u2").reshape(40, 33)
    st = MemoryStore()
    with zarr.config.set(fused_pipeline=True):
        a = zarr.create_array(st, name="f", shape=data.shape, chunks=(16, 16), dtype="u2", codecs=codecs)
        a[...] = data
        fused = zarr.open_array(st, path="f")
        assert fused._plan is not None
        got = fused[...], fused[17], fused[3:20, 30]
    with zarr.config.set(fused_pipeline=False):
        slow = zarr.open_array(st, path="f")
        assert [g.tobytes() for g in got] == [slow[...].tobytes(), slow[17].tobytes(), slow[3:20, 30].tobytes()]
    assert got[0].tobytes() == data.tobytes()
