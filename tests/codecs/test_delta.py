"""numcodecs.delta: the C kernels against numcodecs' algorithm run by numpy for every (dtype,
astype) pair, the codec's JSON and checks, round trips through arrays, and the fused-path stage."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.codecs import ChunkSpec, parse_codec
from zarrbolt.codecs.numcodecs.filters import DeltaCodec
from zarrbolt.errors import CodecError, MetadataError
from zarrbolt.metadata.dtypes import DataType
from zarrbolt.storage import MemoryStore
from zarrbolt._ext import _delta

INTS = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]
FLOATS = ["f2", "f4", "f8"]
TYPES = INTS + FLOATS
PAIRS = [(d, a) for d in TYPES for a in TYPES]


def ref_encode(x: np.ndarray, astype: str) -> np.ndarray:
    """numcodecs.Delta.encode (its ``enc[0] = x[0]`` raises OverflowError in numpy 2 for a first
    element outside an integer astype; the slice assignment wraps, as zarrbolt does)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        x = x.reshape(-1)
        enc = np.empty_like(x, dtype=astype)
        if x.size:
            enc[:1] = x[:1]
            enc[1:] = np.diff(x)
        return enc


def ref_decode(e: np.ndarray, dtype: str) -> np.ndarray:
    """numcodecs.Delta.decode (numpy's cumsum into a dtype array), except integer pairs, which
    zarrbolt sums exactly in modular arithmetic where numpy goes through float64."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        e = e.reshape(-1)
        if np.dtype(dtype).kind in "iu" and e.dtype.kind in "iu":
            return np.cumsum(e.astype(dtype), dtype=dtype)
        out = np.empty(e.shape, dtype=dtype)
        np.cumsum(e, out=out)
        return out


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-equal, NaN payloads aside (hardware arithmetic may quiet them)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        an, bn = np.isnan(a), np.isnan(b)
        return bool((an == bn).all()) and a[~an].tobytes() == b[~bn].tobytes()
    return a.tobytes() == b.tobytes()


def safe_steps(dtype: str, n: int, rng) -> np.ndarray:
    """Small non-negative steps (0, 0.75 or 1.5 for floats, so that integer targets truncate)."""
    steps = rng.integers(0, 3, size=n)
    return (steps * 0.75).astype(dtype) if np.dtype(dtype).kind == "f" else steps.astype(dtype)


def safe_data(dtype: str, n: int, rng) -> np.ndarray:
    """Values whose differences fit every type: a non-decreasing ramp of safe steps (n <= 60
    keeps the running sums of safe steps inside int8)."""
    return np.cumsum(safe_steps("f8" if np.dtype(dtype).kind == "f" else "i8", n, rng)).astype(dtype)


def wild_data(dtype: str, n: int, rng) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
    with np.errstate(over="ignore"):  # some overflow to inf in float16, on purpose
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-8, 6, size=n)).astype(dt)
    specials = [np.inf, -np.inf, -0.0, 0.0, np.nan, np.finfo(dt).max, np.finfo(dt).tiny / 3, -np.finfo(dt).max]
    x[: len(specials)] = np.array(specials, dtype=dt)
    return x


@pytest.mark.parametrize("dtype,astype", PAIRS)
def test_kernels_match_numcodecs_on_safe_data(dtype, astype):
    rng = np.random.default_rng(7)
    x = safe_data(dtype, 60, rng)
    e = _delta.encode(x, astype)
    assert same(e, ref_encode(x, astype))
    y = safe_steps(astype, 60, rng)
    assert same(_delta.decode(y, dtype), ref_decode(y, dtype))


@pytest.mark.parametrize("dtype,astype", [(d, a) for d, a in PAIRS if not (np.dtype(a).kind in "iu" and np.dtype(d).kind == "f")])
def test_kernels_match_numcodecs_on_wild_data(dtype, astype):
    """Full-range integers (wrapping) and floats with specials, subnormals and overflow."""
    rng = np.random.default_rng(11)
    x = wild_data(dtype, 5000, rng)
    assert same(_delta.encode(x, astype), ref_encode(x, astype))
    if not (np.dtype(dtype).kind in "iu" and np.dtype(astype).kind == "f"):
        y = wild_data(astype, 5000, rng)
        assert same(_delta.decode(y, dtype), ref_decode(y, dtype))


@pytest.mark.parametrize("t", INTS + FLOATS)
def test_same_type_round_trip(t):
    rng = np.random.default_rng(3)
    x = wild_data(t, 3000, rng).reshape(30, 100)
    e = _delta.encode(x, t)
    assert e.shape == x.shape
    back = _delta.decode(e, t)
    if np.dtype(t).kind in "iu":
        assert back.tobytes() == x.tobytes()  # integers: exact, whatever the values
    assert same(back, ref_decode(ref_encode(x, t), t).reshape(x.shape))


def test_wide_integer_pairs_are_exact_where_numpy_is_not():
    x = np.array([2**60 + 1, 2**60 + 3, 5], dtype="u8")
    e = _delta.encode(x, "i8")
    assert _delta.decode(e, "u8").tolist() == x.tolist()


def test_float16_rounds_like_numpy():
    x = np.array([0.1, 0.2, 0.3, 1000, 0.1, 65504, -65504, 6e-8, 1e-7], dtype="f2")
    for a in ("f2", "f4", "f8"):
        assert same(_delta.encode(x, a), ref_encode(x, a))
    assert same(_delta.encode(x[:5], "i4"), ref_encode(x[:5], "i4"))
    y = np.array([1, 2048, 1, 1, 3, -7], dtype="i2")
    assert same(_delta.decode(y, "f2"), ref_decode(y, "f2"))  # summed in float32, then rounded


def test_float_to_integer_out_of_range_is_an_error():
    x = np.array([0.0, 1.5, np.nan, 2.0], dtype="f8")
    with pytest.raises(CodecError, match="element 2"):
        _delta.encode(x, "i4")
    with pytest.raises(CodecError, match="element 1"):
        _delta.encode(np.array([0, 300], dtype="f4"), "u1")
    with pytest.raises(CodecError, match="element 1"):
        _delta.decode(np.array([100.0, 100.0], dtype="f4"), "i1")
    with pytest.raises(CodecError):
        _delta.encode(np.array([np.inf], dtype="f2"), "i8")


def test_in_place_and_steps():
    rng = np.random.default_rng(5)
    x = wild_data("u2", 1000, rng)
    params = _delta.params("u2", "i2")
    enc = bytearray(x.tobytes())
    _delta._run_aa_step(_delta.ENCODE_STEP, params, enc, x.size, enc)  # src == dst
    assert bytes(enc) == ref_encode(x, "i2").tobytes()
    _delta._run_aa_step(_delta.DECODE_STEP, params, bytes(enc), x.size, enc)
    assert bytes(enc) == x.tobytes()
    wide = bytearray(x.size * 8)
    _delta._run_aa_step(_delta.ENCODE_STEP, _delta.params("u2", "f8"), x, x.size, wide)
    assert bytes(wide) == ref_encode(x, "f8").tobytes()
    with pytest.raises(CodecError):
        _delta._run_aa_step(_delta.ENCODE_STEP, _delta.params("f8", "i1"), np.array([1e9, 0.0]), 2, bytearray(2))


def test_empty_and_single():
    assert _delta.encode(np.zeros(0, "i4"), "i2").size == 0
    assert _delta.decode(np.array([7], "i1"), "u8").tolist() == [7]


def test_unsupported_types_in_the_kernel():
    for bad in ("bool", "c8", ">i2", "S2", "M8[s]"):
        assert not _delta.supported(bad, "i4")
        with pytest.raises(ValueError):
            _delta.params(bad, "i4")


# --------------------------------------------------------------------------- the codec


def test_json_round_trip_and_checks():
    for conf in ({"dtype": "<u2"}, {"dtype": "uint16", "astype": "int32"}, {"dtype": "i2", "astype": "<i1", "id": "delta"}):
        c = parse_codec({"name": "numcodecs.delta", "configuration": conf})
        expect = {k: v for k, v in conf.items() if k != "id"}
        assert c.to_json() == {"name": "numcodecs.delta", "configuration": expect}
        assert parse_codec(c.to_json()) == c
    bad = [None, {}, {"astype": "i2"}, {"dtype": "i2", "extra": 1}, {"dtype": 5}, {"dtype": "i2", "id": "zlib"},
           {"dtype": "c8"}, {"dtype": ">i2"}, {"dtype": "f16"}, {"dtype": "i2", "astype": "S2"},
           {"dtype": "nonsense"}, {"dtype": "i2", "astype": None, "x": 1}]
    for conf in bad:
        with pytest.raises(MetadataError):
            parse_codec({"name": "numcodecs.delta", "configuration": conf})
    # bool data: read as numcodecs decodes it (a running OR), never written nor created
    c = parse_codec({"name": "numcodecs.delta", "configuration": {"dtype": "bool"}})
    spec = ChunkSpec((6,), DataType("bool"), np.False_)
    stored = np.array([False, True, False, False, True, False])
    np.testing.assert_array_equal(c.decode(stored, spec), [False, True, True, True, True, True])
    with pytest.raises(CodecError, match="does not round-trip"):
        c.encode(stored, spec)
    with pytest.raises(MetadataError, match="does not create them"):
        c.for_writing()


def test_dtype_must_be_the_arrays_or_of_its_size():
    with pytest.raises(MetadataError, match="not of that size"):
        zarr.create_array(MemoryStore(), shape=(10,), chunks=(5,), dtype="i4",
                          codecs=[{"name": "numcodecs.delta", "configuration": {"dtype": "u2"}}, {"name": "bytes", "configuration": {"endian": "little"}}])


@pytest.mark.parametrize("sharded", [False, True])
def test_another_dtype_of_the_same_size(sharded):
    """As zarr-python 3: the bytes taken as the codec's type to encode, the sums cast back by value
    to decode; between integer types that round-trips (and matches numcodecs' stored bytes),
    with a float on one side it does not and is not written."""
    delta = {"name": "numcodecs.delta", "configuration": {"dtype": "<i2"}}
    inner = [delta, {"name": "bytes", "configuration": {"endian": "little"}}]
    codecs = inner
    if sharded:
        codecs = [{"name": "sharding_indexed", "configuration": {"chunk_shape": [5], "codecs": inner,
                                                                 "index_codecs": [LE, {"name": "crc32c"}]}}]
    st = MemoryStore()
    data = np.array([0, 65535, 3, 40000, 7, 1, 65000, 2, 9, 12], dtype="u2")
    a = zarr.create_array(st, shape=(10,), chunks=(10,), dtype="u2", codecs=codecs)
    a[...] = data
    np.testing.assert_array_equal(zarr.open_array(st, mode="r")[...], data)
    if not sharded:  # numcodecs' bytes: the differences of the items taken as int16
        v = data.view("i2")
        want = np.concatenate([v[:1], np.diff(v)]).astype("<i2")
        assert bytes(st.get("c/0")) == want.tobytes()
    f = zarr.create_array(MemoryStore(), shape=(4,), chunks=(4,), dtype="f4",
                          codecs=[{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, LE])
    with pytest.raises(CodecError, match="does not round-trip"):
        f[...] = 1.5


def test_resolve_and_sizes():
    from zarrbolt.codecs.abc import ChunkSpec
    from zarrbolt.metadata.dtypes import DataType

    c = DeltaCodec("u2", "i4")
    spec = ChunkSpec((4, 5), DataType.from_numpy("u2"), np.uint16(3))
    out = c.resolve(spec)
    assert out.shape == (4, 5) and out.dtype.name == "int32" and out.fill_value == 3
    assert c.encoded_size(40) == 80 == c.max_encoded_size(40)


LE = {"name": "bytes", "configuration": {"endian": "little"}}


@pytest.mark.parametrize("dtype,astype", [("u2", None), ("u2", "i4"), ("i2", "i1"), ("f4", None), ("f8", "f4"), ("i8", None), ("u1", "i2")])
@pytest.mark.parametrize("sharded", [False, True])
def test_arrays_round_trip(dtype, astype, sharded):
    conf = {"dtype": np.dtype(dtype).str} | ({"astype": np.dtype(astype).str} if astype else {})
    inner = [{"name": "numcodecs.delta", "configuration": conf}, LE, {"name": "numcodecs.lz4", "configuration": {}}]
    codecs = inner
    if sharded:
        codecs = [{"name": "sharding_indexed", "configuration": {"chunk_shape": [6, 5], "codecs": inner,
                                                                 "index_codecs": [LE, {"name": "crc32c"}]}}]
    rng = np.random.default_rng(1)
    data = (safe_data(dtype, 23 * 17, rng) % 100).astype(dtype).reshape(23, 17)  # differences fit every astype
    st = MemoryStore()
    a = zarr.create_array(st, shape=data.shape, chunks=(12, 10), dtype=dtype, codecs=codecs, fill_value=0)
    a[...] = data
    assert a[...].tobytes() == data.tobytes()
    assert a[5:19, 3:16].tobytes() == data[5:19, 3:16].tobytes()
    b = zarr.open_array(st, mode="r")
    assert b[...].tobytes() == data.tobytes()


# --------------------------------------------------------------------------- fused path
def _stage_class():
    from zarrbolt.codecs.stages import ArrayKernelStage

    return ArrayKernelStage


def test_c_stage_is_an_array_kernel_stage():
    from zarrbolt.codecs.abc import ChunkSpec
    from zarrbolt.metadata.dtypes import DataType

    cls = _stage_class()
    c = DeltaCodec("u2", "i4")
    spec = ChunkSpec((4, 5), DataType.from_numpy("u2"), np.uint16(0))
    stage = c.c_stage(spec, c.resolve(spec))
    assert isinstance(stage, cls)


@pytest.mark.parametrize("astype", [None, "i4"])
def test_fused_reads_and_writes_equal_the_per_codec_path(astype):
    _stage_class()
    conf = {"dtype": "<u2"} | ({"astype": astype} if astype else {})
    codecs = [{"name": "numcodecs.delta", "configuration": conf}, LE, {"name": "numcodecs.zlib", "configuration": {"level": 1}}]
    data = (np.arange(40 * 33) % 700).astype("u2").reshape(40, 33)
    st = MemoryStore()
    with zarr.config.set(fused_pipeline=True):
        a = zarr.create_array(st, name="f", shape=data.shape, chunks=(16, 16), dtype="u2", codecs=codecs)
        a[...] = data
        fused = zarr.open_array(st, path="f")
        assert fused._plan is not None
        got = fused[...]
    with zarr.config.set(fused_pipeline=False):
        slow = zarr.open_array(st, path="f")
        assert slow[...].tobytes() == got.tobytes() == data.tobytes()
