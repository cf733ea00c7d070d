"""numcodecs.zlib: zlib streams (RFC 1950) through zarrbolt._ext._deflate (libdeflate) against
Python's zlib module (what numcodecs uses), untrusted input, the codec's JSON, arrays, and its
fused-path stages."""

from __future__ import annotations

import importlib
import random
import zlib

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.codecs import parse_codec
from zarrbolt.codecs.numcodecs.compressors import ZlibCodec
from zarrbolt.errors import CorruptChunkError, MetadataError
from zarrbolt.storage import MemoryStore
from zarrbolt._ext import _deflate

RNG = random.Random(42)
PAYLOADS = {
    "empty": b"",
    "one": b"\x07",
    "ramp": np.arange(300_000, dtype="<u2").tobytes(),
    "random": RNG.randbytes(70_000),
    "zeros": bytes(100_000),
}


@pytest.mark.parametrize("name", PAYLOADS)
@pytest.mark.parametrize("level", [-1, 0, 1, 6, 9])
def test_round_trip_both_ways_with_python_zlib(name, level):
    data = PAYLOADS[name]
    enc = _deflate.zlib_compress(data, level)
    assert len(enc) <= _deflate.zlib_compress_bound(len(data)) == ZlibCodec().max_encoded_size(len(data))
    assert zlib.decompress(enc) == data  # what numcodecs reads
    assert _deflate.zlib_decompress(enc, len(data)) == data
    ref = zlib.compress(data, level)  # what numcodecs writes
    assert _deflate.zlib_decompress(ref, len(data)) == data
    out = bytearray(len(data) + 3)
    assert _deflate.zlib_decompress_into(ref, out) == len(data) and bytes(out[: len(data)]) == data


def test_streaming_writers_and_window_sizes():
    data = PAYLOADS["ramp"]
    for wbits in (9, 12, 15):
        co = zlib.compressobj(5, zlib.DEFLATED, wbits)
        enc = co.compress(data[:1000]) + co.flush(zlib.Z_SYNC_FLUSH) + co.compress(data[1000:]) + co.flush()
        assert _deflate.zlib_decompress(enc, len(data)) == data


@pytest.mark.parametrize("case", ["empty", "short", "bad-header", "bad-fcheck", "dictionary", "truncated", "adler", "trailing", "not-zlib"])
def test_corrupt_inputs(case):
    data = PAYLOADS["ramp"][:20000]
    enc = zlib.compress(data, 6)
    bad = {
        "empty": b"",
        "short": enc[:5],
        "bad-header": b"\x79" + enc[1:],
        "bad-fcheck": enc[:1] + bytes([enc[1] ^ 1]) + enc[2:],
        "dictionary": b"\x78\xbb" + b"\x00\x00\x00\x01" + enc[2:],
        "truncated": enc[:-9],
        "adler": enc[:-1] + bytes([enc[-1] ^ 0x40]),
        "trailing": enc + b"\x00",
        "not-zlib": zlib.compress(data)[2:],
    }[case]
    with pytest.raises(CorruptChunkError):
        _deflate.zlib_decompress(bad, len(data))
    with pytest.raises(CorruptChunkError):
        _deflate._run_bb_step(_deflate.ZLIB_DECODE_STEP, b"", bad, len(data))


def test_more_than_allowed():
    data = bytes(1 << 20)
    enc = zlib.compress(data, 9)  # 1 KiB that inflates to 1 MiB
    with pytest.raises(CorruptChunkError, match="more than 1000"):
        _deflate.zlib_decompress(enc, 1000)
    with pytest.raises(CorruptChunkError):
        _deflate.zlib_decompress_into(enc, bytearray(1000))
    with pytest.raises(CorruptChunkError):
        _deflate._run_bb_step(_deflate.ZLIB_DECODE_STEP, b"", enc, 1000)


def test_garbage_never_crashes():
    data = PAYLOADS["ramp"][:5000]
    enc = bytearray(zlib.compress(data, 6))
    rng = random.Random(8)
    for _ in range(3000):
        b = bytearray(enc)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        if rng.random() < 0.3:
            b = b[: rng.randrange(len(b))]
        try:
            out = _deflate.zlib_decompress(bytes(b), len(data))
            assert out == data  # a stream that passes its Adler-32 check is the data
        except CorruptChunkError:
            pass


def test_prefix():
    data = RNG.randbytes(200_000) + bytes(300_000)
    enc = zlib.compress(data, 6)
    for want in (0, 1, 1000, 150_000, 400_000, len(data) - 1, len(data)):
        got = _deflate.zlib_decompress_prefix(enc, len(data), want)
        assert len(got) >= want and got == data[: len(got)]
    assert len(_deflate.zlib_decompress_prefix(enc, len(data), 10)) < len(data)  # stopped early
    with pytest.raises(CorruptChunkError):  # the stream is shorter than the expected size
        _deflate.zlib_decompress_prefix(zlib.compress(data[:1000]), len(data), 10)
    with pytest.raises(CorruptChunkError):
        _deflate.zlib_decompress_prefix(enc[:2] + b"\xff" * 50, len(data), 10)


def test_steps_match_the_functions():
    data = PAYLOADS["ramp"]
    for level in (-1, 1, 9):
        params = _deflate.zlib_encode_params(level)
        assert len(params) == 4
        enc = _deflate._run_bb_step(_deflate.ZLIB_ENCODE_STEP, params, data, _deflate.zlib_compress_bound(len(data)))
        assert enc == _deflate.zlib_compress(data, level) and zlib.decompress(enc) == data
        assert _deflate._run_bb_step(_deflate.ZLIB_DECODE_STEP, b"", enc, len(data)) == data
    with pytest.raises(CorruptChunkError):
        _deflate._run_bb_step(_deflate.ZLIB_ENCODE_STEP, _deflate.zlib_encode_params(1), PAYLOADS["random"], 100)


def test_json():
    for conf, expect in (({}, {}), ({"level": 9}, {"level": 9}), ({"level": -1, "id": "zlib"}, {"level": -1}), (None, {})):
        c = parse_codec({"name": "numcodecs.zlib", "configuration": conf} if conf is not None else {"name": "numcodecs.zlib"})
        assert c.to_json() == {"name": "numcodecs.zlib", "configuration": expect}
        assert parse_codec(c.to_json()) == c
    assert ZlibCodec().effective_level == 1
    for conf in ({"level": 10}, {"level": -2}, {"level": "1"}, {"level": True}, {"level": 1.0}, {"acceleration": 1},
                 {"id": "gzip"}, "x"):
        with pytest.raises(MetadataError):
            parse_codec({"name": "numcodecs.zlib", "configuration": conf})


LE = {"name": "bytes", "configuration": {"endian": "little"}}


@pytest.mark.parametrize("sharded", [False, True])
def test_arrays(sharded):
    inner = [LE, {"name": "numcodecs.zlib", "configuration": {"level": 5}}]
    codecs = inner if not sharded else [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [5, 8], "codecs": inner, "index_codecs": [LE, {"name": "crc32c"}]}}]
    data = np.arange(27 * 35, dtype="i8").reshape(27, 35) - 400
    st = MemoryStore()
    a = zarr.create_array(st, shape=data.shape, chunks=(10, 16), dtype="i8", codecs=codecs, fill_value=7)
    a[...] = data
    assert a[...].tobytes() == data.tobytes()
    assert a[3:9, 5:30].tobytes() == data[3:9, 5:30].tobytes()


def test_chunks_decoding_to_more_or_less_than_a_chunk():
    st = MemoryStore()
    a = zarr.create_array(st, shape=(100,), chunks=(50,), dtype="u2", codecs=[LE, {"name": "numcodecs.zlib", "configuration": {}}])
    a[...] = np.arange(100)
    for raw in (zlib.compress(bytes(102)), zlib.compress(bytes(98)), zlib.compress(bytes(1 << 24))):
        st.set("c/1", raw)
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
    c = ZlibCodec(3)
    kind, fn, params = c.c_decode_step(spec)
    assert kind == "transform" and params == b""
    kind, efn, eparams = c.c_encode_step(spec)
    assert kind == "transform" and eparams == _deflate.zlib_encode_params(3)
    data = np.arange(10, dtype="u2").tobytes()
    enc = _deflate._run_bb_step(efn, eparams, data, c.max_encoded_size(20))
    assert zlib.decompress(enc) == data and _deflate._run_bb_step(fn, params, enc, 20) == data
    assert c.c_partial(spec) == ("prefix", _deflate.ZLIB_PREFIX_FN)


@pytest.mark.parametrize("sharded", [False, True])
def test_fused_equals_per_codec(sharded):
    _plan_module()
    inner = [LE, {"name": "numcodecs.zlib", "configuration": {"level": 1}}]
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
