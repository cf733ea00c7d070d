"""zarrbolt's zarr-python codec pipeline (zarrbolt.codec_pipeline.ZarrboltCodecPipeline): zarr-python's
reads and writes through zarrbolt, on zarr-python's real stores."""

from __future__ import annotations

import asyncio
import gzip
import logging
import pickle
import warnings

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")

import zarrbolt.codec_pipeline as zcp  # noqa: E402
from zarr.codecs import (  # noqa: E402
    BloscCodec,
    BytesCodec,
    Crc32cCodec,
    GzipCodec,
    TransposeCodec,
    ZstdCodec,
)
from zarr.storage import LocalStore, MemoryStore  # noqa: E402
from zarr.testing.store import LatencyStore  # noqa: E402

from zarrbolt import config as zb_config  # noqa: E402
numcodecs = pytest.importorskip("numcodecs")
from zarrbolt.errors import ZarrboltError  # noqa: E402

PATH = "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"
DEFAULT = "zarr.core.codec_pipeline.BatchedCodecPipeline"


@pytest.fixture(autouse=True)
def _plans():
    with zarr.config.set({"codec_pipeline.path": PATH}):
        yield


@pytest.fixture(params=["local", "memory", "remote"])
def store(request, tmp_path):
    if request.param == "local":
        return LocalStore(tmp_path / "data")
    if request.param == "memory":
        return MemoryStore()
    # a store with no native fast path: the staged / bridged path
    return LatencyStore(MemoryStore(), get_latency=0.0, set_latency=0.0)


CODECS = {
    "raw": dict(compressors=None),
    "gzip": dict(compressors=GzipCodec(level=1)),
    "zstd": dict(compressors=ZstdCodec(level=1)),
    "blosc": dict(compressors=BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")),
    "crc32c": dict(compressors=Crc32cCodec()),
    "transpose": dict(filters=[TransposeCodec(order=(1, 0, 2))], compressors=None),
    "bigendian": dict(serializer=BytesCodec(endian="big"), compressors=None),
    "sharded": dict(shards=(8, 20, 12), compressors=None),
    "sharded-zstd": dict(shards=(8, 20, 12), compressors=ZstdCodec(level=1)),
}
SHAPE = (13, 45, 30)
CHUNKS = (4, 10, 6)


def _ref(shape=SHAPE, dtype="uint16"):
    return (np.arange(np.prod(shape)) % 997).astype(dtype).reshape(shape)


def _array(store, codecs="raw", **kw):
    args = dict(shape=SHAPE, chunks=CHUNKS, dtype="uint16", fill_value=7)
    args.update(CODECS[codecs])
    args.update(kw)
    return zarr.create_array(store, **args)


def _pipe(arr):
    return arr.async_array.codec_pipeline


def _chunk_keys(store):
    async def go():
        return {k async for k in store.list() if not k.endswith("zarr.json")}

    return asyncio.run(go())


READS = [
    np.s_[...], np.s_[2:11, 5:40, 3:29], np.s_[5], np.s_[:, 17], np.s_[3, 4, 5], np.s_[::2, 3:40:5, ::7],
    np.s_[-1, -5:, :], np.s_[0:0],
]


@pytest.mark.parametrize("codecs", sorted(CODECS))
def test_roundtrip_and_reads(store, codecs):
    a = _array(store, codecs)
    assert _pipe(a)._meta is not None, _pipe(a)
    ref = _ref()
    a[:] = ref
    for sel in READS:
        np.testing.assert_array_equal(a[sel], ref[sel], err_msg=repr(sel))
    oi = ([0, 5, 12, 3], slice(2, 30), [1, 29, 7])
    np.testing.assert_array_equal(a.oindex[oi], ref[np.ix_([0, 5, 12, 3], range(2, 30), [1, 29, 7])])
    np.testing.assert_array_equal(a.oindex[[1, 7], 3, :], ref[[1, 7], 3, :])
    pts = ([0, 12, 5, 5], [44, 0, 13, 13], [2, 29, 0, 0])
    np.testing.assert_array_equal(a.vindex[pts], ref[pts])
    mask = ref % 11 == 0
    np.testing.assert_array_equal(a.vindex[mask], ref[mask])
    # a second, independent reader sees the same
    b = zarr.open_array(store, mode="r")
    np.testing.assert_array_equal(b[:], ref)


@pytest.mark.parametrize("codecs", ["raw", "blosc", "sharded"])
def test_writes(store, codecs):
    a = _array(store, codecs)
    ref = np.full(SHAPE, 7, np.uint16)
    writes = [
        (np.s_[1:9, 3:33, 2:20], _ref((8, 30, 18)) + 5),  # partial chunks and shards
        (np.s_[4:8, 10:20, 6:12], 3),  # a scalar over whole chunks
        (np.s_[12], 9),  # a plane
        (np.s_[0, 0, 0], 11),  # one element
        (np.s_[2:5, :, 10:], _ref((3, 45, 20))),
    ]
    for sel, v in writes:
        a[sel] = v
        ref[sel] = v
        np.testing.assert_array_equal(a[:], ref, err_msg=repr(sel))
    a.oindex[[1, 3], :, [2, 4]] = 42  # a selection the planners do not take whole: zarr-python's way
    ref[np.ix_([1, 3], range(45), [2, 4])] = 42
    np.testing.assert_array_equal(a[:], ref)


def test_order_f(store):
    a = _array(store, "blosc", config={"order": "F"})
    ref = _ref()
    a[:] = np.asfortranarray(ref)
    x = a[1:12, 2:40, :]
    assert x.flags.f_contiguous
    np.testing.assert_array_equal(x, ref[1:12, 2:40, :])
    b = zarr.open_array(store, mode="r", config={"order": "C"})
    np.testing.assert_array_equal(b[:], ref)


@pytest.mark.parametrize("codecs", ["raw", "sharded"])
def test_write_empty_chunks(store, codecs):
    a = _array(store, codecs, config={"write_empty_chunks": False})
    a[:] = _ref()
    n = len(_chunk_keys(store))
    a[:] = 7  # all fill
    assert _chunk_keys(store) == set()
    a = _array(store, codecs, config={"write_empty_chunks": True}, overwrite=True)
    a[:] = 7
    assert len(_chunk_keys(store)) == n
    if codecs == "sharded":
        # (zarr-python then also drops the stored fill inner chunks beyond the array's edge of
        # shards it updates; zarrbolt keeps what lies beyond the edge as it is)
        return
    with zarr.config.set({"array.write_empty_chunks": False}):
        c = zarr.open_array(store, mode="r+")
        c[:] = 7
    assert _chunk_keys(store) == set()


def test_read_missing_chunks_false(store):
    a = _array(store, "raw", config={"read_missing_chunks": False})
    with pytest.raises(zarr.errors.ChunkNotFoundError):
        a[:]
    a[0:4, 0:10, 0:6] = 1
    np.testing.assert_array_equal(a[0:4, 0:10, 0:6], 1)
    with pytest.raises(zarr.errors.ChunkNotFoundError):
        a[0:5, 0:10, 0:6]
    s = _array(store, "sharded", config={"read_missing_chunks": False}, overwrite=True)
    s[0, 0, 0] = 1  # the shard exists; its other inner chunks are absent: they fill
    x = s[0:8, 0:20, 0:12]
    assert x[0, 0, 0] == 1 and (x.ravel()[1:] == 7).all()
    with pytest.raises(zarr.errors.ChunkNotFoundError):
        s[0:9, 0:20, 0:12]


def _stored(path, codecs, store_kind, tmp_path, **kw):
    with zarr.config.set({"codec_pipeline.path": path}):
        st = LocalStore(tmp_path / path) if store_kind == "local" else MemoryStore()
        a = _array(st, codecs, **kw)
        ref = _ref()
        ref[:3] = 7  # some chunks all fill
        a[:] = ref
        a[5:9, 3:17, 4:25] = 3
        a[11] = 8
        out = {}
        for k in _chunk_keys(st):
            out[k] = asyncio.run(st.get(k, zarr.core.buffer.default_buffer_prototype())).to_bytes()
        return out


@pytest.mark.parametrize("store_kind", ["local", "memory"])
@pytest.mark.parametrize("codecs", ["raw", "zstd", "blosc", "crc32c", "transpose", "bigendian", "gzip"])
def test_stored_bytes_match_zarr_python(tmp_path, store_kind, codecs):
    mine = _stored(PATH, codecs, store_kind, tmp_path)
    theirs = _stored(DEFAULT, codecs, store_kind, tmp_path)
    assert sorted(mine) == sorted(theirs)
    for k in mine:
        if codecs == "gzip":  # another deflate implementation: the same data, other bytes
            assert gzip.decompress(mine[k]) == gzip.decompress(theirs[k]), k
        else:
            assert mine[k] == theirs[k], k


def test_sharded_store_matches_zarr_python(tmp_path):
    """Shards hold their inner chunks in another order than zarr-python's (morton): the same
    keys, and each reads back the same through zarr-python's own pipeline."""
    mine = _stored(PATH, "sharded-zstd", "memory", tmp_path)
    theirs = _stored(DEFAULT, "sharded-zstd", "memory", tmp_path)
    assert sorted(mine) == sorted(theirs)
    with zarr.config.set({"codec_pipeline.path": DEFAULT}):
        st = MemoryStore()
        a = _array(st, "sharded-zstd")
        proto = zarr.core.buffer.default_buffer_prototype()
        for k, v in mine.items():
            asyncio.run(st.set(k, proto.buffer.from_bytes(v)))
        x = a[:]
        for k, v in theirs.items():
            asyncio.run(st.set(k, proto.buffer.from_bytes(v)))
        np.testing.assert_array_equal(a[:], x)


def test_fused_strategies_used(tmp_path):
    zcp.strategy_counts.clear()
    a = _array(LocalStore(tmp_path / "a"), "blosc")
    a[:] = _ref()
    a[:]
    s = _array(MemoryStore(), "sharded")
    s[:] = _ref()
    s[1:7]
    assert zcp.strategy_counts["fused-files"] >= 1
    assert zcp.strategy_counts["sharded-fused-store"] >= 1
    assert not zcp.strategy_counts["per-codec"] and not zcp.strategy_counts["sharded-per-codec"]


class _InvertCodec(zarr.abc.codec.BytesBytesCodec):
    """A user's own bytes -> bytes codec (every byte inverted), which zarrbolt has no codec for."""

    is_fixed_size = True

    @classmethod
    def from_dict(cls, data):
        return cls()

    def to_dict(self):
        return {"name": "test.invert"}

    async def _decode_single(self, chunk_bytes, chunk_spec):
        return chunk_spec.prototype.buffer.from_bytes(bytes(255 - np.frombuffer(chunk_bytes.to_bytes(), "u1")))

    async def _encode_single(self, chunk_bytes, chunk_spec):
        return await self._decode_single(chunk_bytes, chunk_spec)

    def compute_encoded_size(self, input_byte_length, chunk_spec):
        return input_byte_length


V2_CASES = {  # numcodecs' own codec objects or their dicts, as zarr-python takes them for v2
    "C-blosc": dict(order="C", compressors={"id": "blosc", "cname": "lz4", "clevel": 3, "shuffle": 1}),
    "F-zstd-slash": dict(order="F", compressors={"id": "zstd", "level": 2},
                         chunk_key_encoding={"name": "v2", "separator": "/"}),
    "C-delta-zlib": dict(order="C", filters=[numcodecs.Delta(dtype="<i4")], compressors={"id": "zlib", "level": 1}),
    "C-none": dict(order="C", compressors=None),
}


@pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", sorted(V2_CASES))
def test_zarr_v2_arrays_are_served(case):
    """Zarr v2 arrays (order C and F, both separators, filters and compressors by numcodecs id)
    go through zarrbolt's planner and give what zarr-python's own pipeline gives."""
    zcp.fallback_counts.clear()
    store = MemoryStore()
    ref = np.arange(23 * 17, dtype="int32").reshape(23, 17) * 7 - 50
    a = zarr.create_array(store, shape=ref.shape, chunks=(5, 6), dtype="int32", zarr_format=2, fill_value=3,
                          **V2_CASES[case])
    assert _pipe(a)._meta is not None and _pipe(a)._meta.zarr_format == 2, zcp.fallback_counts
    a[:] = ref
    a[20:, 15:] = -1
    exp = ref.copy()
    exp[20:, 15:] = -1
    np.testing.assert_array_equal(a[:], exp)
    np.testing.assert_array_equal(a[3:19, 2:9], exp[3:19, 2:9])
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}):
        np.testing.assert_array_equal(zarr.open_array(store, mode="r")[:], exp)
    assert not zcp.fallback_counts
    assert pickle.loads(pickle.dumps(a))[:5, :5].tolist() == exp[:5, :5].tolist()


def test_fallback_for_a_codec_zarrbolt_lacks(caplog):
    zcp.fallback_counts.clear()
    zarr.registry.register_codec("test.invert", _InvertCodec)
    with caplog.at_level(logging.DEBUG, logger="zarrbolt.codec_pipeline"):
        a = zarr.create_array(MemoryStore(), shape=(20,), chunks=(5,), dtype="int32", compressors=_InvertCodec())
    assert "_InvertCodec" in caplog.text
    assert type(_pipe(a)).__name__ == "ZarrboltCodecPipeline" and _pipe(a)._meta is None
    assert any("_InvertCodec" in k for k in zcp.fallback_counts), zcp.fallback_counts
    a[:] = np.arange(20)
    np.testing.assert_array_equal(a[:], np.arange(20))


def test_corrupt_chunk_raises_typed_error(store):
    a = _array(store, "crc32c")
    a[:] = _ref()
    proto = zarr.core.buffer.default_buffer_prototype()
    raw = bytearray(asyncio.run(store.get("c/1/1/1", proto)).to_bytes())
    raw[10] ^= 0xFF
    asyncio.run(store.set("c/1/1/1", proto.buffer.from_bytes(bytes(raw))))
    with pytest.raises(ZarrboltError, match="c/1/1/1"):
        a[:]
    s = _array(store, "sharded", overwrite=True)
    s[:] = _ref()
    asyncio.run(store.set("c/0/0/0", proto.buffer.from_bytes(b"\x00" * 17)))
    with pytest.raises(ZarrboltError):
        s[0:8, 0:20, 0:12]


def test_pickle_array_and_pipeline(tmp_path):
    a = _array(LocalStore(tmp_path / "p"), "zstd")
    a[:] = _ref()
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(b[:], _ref())
    assert type(_pipe(b)).__name__ == "ZarrboltCodecPipeline" and _pipe(b)._meta is not None
    p = pickle.loads(pickle.dumps(_pipe(a)))
    assert p._meta == _pipe(a)._meta


def test_resize_then_write(store):
    a = _array(store, "raw")
    a[:] = _ref()
    a.resize((20, 45, 30))
    a[13:20] = 5
    ref = np.concatenate([_ref(), np.full((7, 45, 30), 5, np.uint16)])
    np.testing.assert_array_equal(a[:], ref)
    a.resize((10, 45, 30))
    a[8:10] = 1
    ref = ref[:10].copy()
    ref[8:10] = 1
    np.testing.assert_array_equal(a[:], ref)
    np.testing.assert_array_equal(zarr.open_array(store, mode="r")[:], ref)


def test_threads_setting_reaches_zarrbolt(monkeypatch):
    seen = []
    from zarrbolt.pipeline import read as read_planner

    real = read_planner.read

    def spy(*args, **kw):
        seen.append(zb_config.get("threads"))
        return real(*args, **kw)

    monkeypatch.setattr(read_planner, "read", spy)
    a = _array(MemoryStore(), "raw")
    with zarr.config.set({"threading.max_workers": 3}):
        a[:]
    with zarr.config.set({"threading.max_workers": None}):
        a[:]
    assert seen == [3, zb_config.get("threads")]


def test_config_override_is_context_local():
    base = zb_config.get("threads")
    with zb_config.override(threads=base + 5):
        assert zb_config.get("threads") == base + 5

        async def inner():
            return await asyncio.to_thread(zb_config.get, "threads")

        assert asyncio.run(inner()) == base + 5
    assert zb_config.get("threads") == base


DTYPES = {
    "bool": (np.array([True, False, False] * 7), True),
    "float16": (np.arange(21, dtype="f2"), True),
    "complex128": (np.arange(21) * (1 + 2j), True),
    "int8": (np.arange(21, dtype="i1") - 10, True),
    "bytes": (np.array([b"ab", b"cdefg", b""] * 7), True),  # null_terminated_bytes
    "str": (np.array(["a", "bbbbbb", ""] * 7, dtype=object), True),  # string (vlen-utf8)
    "U": (np.array(["a", "bbbbbb", ""] * 7), True),  # fixed_length_utf32
    "M8": (np.arange(21).astype("M8[s]"), True),
    "struct": (np.array([(i, i / 2) for i in range(21)], "<i2,<f4"), True),
}


@pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")
@pytest.mark.parametrize("name", sorted(DTYPES))
def test_data_types(name):
    v, served = DTYPES[name]
    zcp.fallback_counts.clear()
    a = zarr.create_array(MemoryStore(), shape=(21,), chunks=(8,), dtype=str if name == "str" else v.dtype,
                          fill_value=None)
    assert (_pipe(a)._meta is not None) == served
    assert bool(zcp.fallback_counts) == (not served)
    a[:] = v
    a[3:9] = v[:6]
    exp = v.copy()
    exp[3:9] = v[:6]
    assert (a[:] == exp).all()
    assert (a.vindex[[20, 0, 5]] == exp[[20, 0, 5]]).all()


def test_sharded_selections_on_a_bridged_store():
    """Point, mask and orthogonal reads of a sharded array on a store with no native access:
    only the inner chunks they touch are staged."""
    st = LatencyStore(MemoryStore(), get_latency=0.0, set_latency=0.0)
    a = _array(st, "sharded-zstd")
    ref = _ref()
    a[:] = ref
    zcp.delegated_counts.clear()
    np.testing.assert_array_equal(a.vindex[[0, 12], [1, 44], [2, 29]], ref[[0, 12], [1, 44], [2, 29]])
    np.testing.assert_array_equal(a.oindex[[3, 9], 4:30, [0, 17]], ref[np.ix_([3, 9], range(4, 30), [0, 17])])
    mask = ref % 13 == 1
    np.testing.assert_array_equal(a.vindex[mask], ref[mask])
    np.testing.assert_array_equal(a[1:12:3, ::4, 5], ref[1:12:3, ::4, 5])
    assert not zcp.delegated_counts


def test_read_only_store_refuses_writes(tmp_path):
    a = _array(LocalStore(tmp_path / "ro"), "raw")
    a[:] = _ref()
    b = zarr.open_array(LocalStore(tmp_path / "ro", read_only=True), mode="r")
    with pytest.raises(ValueError, match="read-only"):
        b[:] = 1
    np.testing.assert_array_equal(b[:], _ref())


def _read_all(arr):
    return arr[:]


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_forked_child_reads(tmp_path):
    """A child forked after the parent read through the pipeline (its worker threads idle) reads
    too (it must not wait on the parent's threads)."""
    import multiprocessing as mp

    st = LatencyStore(LocalStore(tmp_path / "f"), get_latency=0.0, set_latency=0.0)  # the bridged path
    a = _array(st, "zstd")
    a[:] = _ref()
    a[:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() of a process with threads
        with mp.get_context("fork").Pool(1) as pool:
            got = pool.apply_async(_read_all, (a,)).get(timeout=60)
    np.testing.assert_array_equal(got, _ref())


@pytest.mark.parametrize("codecs", ["raw", "sharded"])
def test_read_into_a_strided_out(codecs):
    """zarr-python's ``out=``: the fused read decodes straight into a strided, permuted view."""
    from zarr.core.buffer.cpu import NDBuffer

    a = _array(MemoryStore(), codecs)
    a[:] = _ref()
    big = np.zeros((20, 60, 70), np.uint16)
    view = big[2:13, 5:32, 3:63:2].transpose(0, 2, 1)
    zcp.strategy_counts.clear()
    a.get_basic_selection(np.s_[1:12, 0:30, 3:30], out=NDBuffer.from_numpy_array(view))
    np.testing.assert_array_equal(view, _ref()[1:12, 0:30, 3:30])
    assert big.sum() == view.sum()  # nothing written outside the view
    assert zcp.strategy_counts["fused-store"] + zcp.strategy_counts["sharded-fused-store"] == 1
