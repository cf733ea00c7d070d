"""The fused C encode path (csrc/encode.c, ``EncodePlan``, ``Array._write_native``) writes
exactly the files the per-codec path writes, and behaves the same around them."""

from __future__ import annotations

import os
import sys
import threading

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.errors import StoreError
from zarrbolt.storage import LocalStore
from zarrbolt.storage.local import TMP_PREFIX

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}


def blosc(cname, shuffle, clevel=5, typesize=2, blocksize=0):
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": clevel, "shuffle": shuffle,
                                                "typesize": typesize, "blocksize": blocksize}}


CHAINS = {
    "bytes": [LE],
    "bytes-be": [BE],
    "lz4-shuffle": [LE, blosc("lz4", "shuffle")],
    "zstd-bitshuffle": [LE, blosc("zstd", "bitshuffle", clevel=3)],
    "blosclz-noshuffle-blocks": [LE, blosc("blosclz", "noshuffle", clevel=9, typesize=1, blocksize=4096)],
    "zstd-checksum": [LE, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
    "gzip": [LE, {"name": "gzip", "configuration": {"level": 5}}],
    "crc32c": [LE, {"name": "crc32c"}],
    "blosc-crc32c": [LE, blosc("lz4", "bitshuffle"), {"name": "crc32c"}],
    "crc32c-gzip-crc32c": [BE, {"name": "crc32c"}, {"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}],
    "transpose-zstd": [{"name": "transpose", "configuration": {"order": [2, 1, 0]}}, LE,
                       {"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
    "transpose-be-blosc": [{"name": "transpose", "configuration": {"order": [1, 2, 0]}}, BE, blosc("lz4", "shuffle")],
}


def files(root):
    """{relative path: bytes} of every file under root except zarr.json."""
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            if rel != "zarr.json":
                with open(p, "rb") as f:
                    out[rel] = f.read()
    return out


def make(path, data, codecs, chunks, fill=0, **kw):
    return zarr.create_array(str(path), shape=data.shape, dtype=data.dtype, chunks=chunks, codecs=codecs,
                             fill_value=fill, overwrite=True, **kw)


def write_both(tmp_path, data, codecs, chunks, sel=(Ellipsis,), value=None, fill=0, native=True, **kw):
    """Write value (default data[sel]) at sel with the fused and the per-codec path into two new
    arrays: returns (fused files, per-codec files, fused array)."""
    value = data[sel] if value is None else value
    out = []
    for fused in (True, False):
        with zarr.config.set(fused_pipeline=fused):
            a = make(tmp_path / f"f{fused}", data, codecs, chunks, fill, **kw)
            a[sel] = value
            assert (a._eplans != {} and any(p is not None for p in a._eplans.values())) == (fused and native)
            out.append((files(tmp_path / f"f{fused}"), a))
    return out[0][0], out[1][0], out[0][1]


@pytest.mark.parametrize("name", sorted(CHAINS))
@pytest.mark.parametrize("dtype", ["uint16", "float32"])
def test_same_files_as_the_per_codec_path(tmp_path, name, dtype):
    rng = np.random.default_rng(1)
    data = (rng.normal(300, 40, (37, 45, 29))).astype(dtype)  # edge chunks on every axis
    data[:16, :16, :8] = 0  # one chunk of fill only: left out
    fused, slow, a = write_both(tmp_path, data, CHAINS[name], (16, 16, 8))
    assert fused.keys() == slow.keys() and len(fused) == 3 * 3 * 4 - 1
    for k in fused:
        assert fused[k] == slow[k], k
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "fTrue"))[...], data)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "uint64", "float64", "complex64",
                                   "complex128"])
@pytest.mark.parametrize("endian", ["little", "big"])
def test_dtypes(tmp_path, dtype, endian):
    rng = np.random.default_rng(2)
    raw = rng.integers(0, 200, (21, 13))
    data = (raw > 100) if dtype == "bool" else (raw * (1 + 1j) if "complex" in dtype else raw).astype(dtype)
    codecs = [{"name": "bytes", "configuration": {"endian": endian}}, {"name": "crc32c"}]
    fused, slow, _ = write_both(tmp_path, data, codecs, (8, 5), fill=False if dtype == "bool" else 0)
    assert fused == slow
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "fTrue"))[...], data)


def test_fill_value_padding_and_nan_fill(tmp_path):
    data = np.arange(7 * 9, dtype="float32").reshape(7, 9)
    data[0, 0] = np.nan
    fused, slow, _ = write_both(tmp_path, data, [LE, {"name": "gzip", "configuration": {"level": 1}}], (4, 4),
                                fill=float("nan"))
    assert fused == slow and len(fused) == 2 * 3
    a = zarr.open_array(str(tmp_path / "fTrue"))
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize("kind", ["reversed", "fortran", "strided", "broadcast-row", "scalar", "transposed-view"])
def test_values_with_any_layout(tmp_path, kind):
    rng = np.random.default_rng(3)
    base = rng.integers(1, 60000, (40, 50, 30)).astype("uint16")
    shape = (20, 25, 15)
    value = {
        "reversed": base[:20, :25, :15][::-1, ::-1, ::-1],
        "fortran": np.asfortranarray(base[:20, :25, :15]),
        "strided": base[::2, ::2, ::2],
        "broadcast-row": np.broadcast_to(base[0, 0, :15], shape),
        "scalar": np.uint16(7),
        "transposed-view": base[:15, :25, :20].transpose(2, 1, 0),
    }[kind]
    data = np.empty(shape, "uint16")
    data[...] = value
    fused, slow, a = write_both(tmp_path, data, CHAINS["lz4-shuffle"], (8, 8, 8), value=value)
    assert fused == slow and len(fused) == 3 * 4 * 2
    np.testing.assert_array_equal(a[...], data)


def test_partial_selections_mix_both_paths(tmp_path):
    rng = np.random.default_rng(4)
    data = rng.integers(0, 1000, (30, 40)).astype("int32")
    sel = (slice(3, 29), slice(8, 40))  # whole chunks inside, partial ones around them
    fused, slow, a = write_both(tmp_path, data, CHAINS["zstd-checksum"], (8, 8), sel=sel)
    assert fused == slow
    expect = np.zeros_like(data)
    expect[sel] = data[sel]
    np.testing.assert_array_equal(a[...], expect)
    # integer indices drop a dimension: the per-codec path takes them
    fused, slow, a = write_both(tmp_path, data, CHAINS["zstd-checksum"], (8, 8), sel=(5,), native=False)
    assert fused == slow


@pytest.mark.parametrize("write_empty", [False, True])
def test_fill_chunks_overwrite_existing_ones(tmp_path, write_empty):
    data = np.arange(16 * 16, dtype="uint16").reshape(16, 16) + 1
    with zarr.config.set(write_empty_chunks=write_empty):
        a = make(tmp_path / "x", data, CHAINS["lz4-shuffle"], (8, 8))
        a[...] = data
        assert len(files(tmp_path / "x")) == 4
        a[:8, :] = 0  # two chunks become fill
        names = files(tmp_path / "x")
    assert len(names) == (4 if write_empty else 2)
    expect = data.copy()
    expect[:8] = 0
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "x"))[...], expect)


def no_tmp_files(root):
    return [n for _, _, names in os.walk(root) for n in names if n.startswith(TMP_PREFIX)] == []


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_threads_and_windows(tmp_path, threads, monkeypatch):
    rng = np.random.default_rng(5)
    data = rng.integers(0, 50, (64, 64, 64)).astype("uint16")
    monkeypatch.setattr(sys.modules["zarrbolt.pipeline.buffers"], "READ_WINDOW_BYTES", 3 * 16 ** 3 * 2)  # windows of 3 chunks
    with zarr.config.set(threads=threads):
        fused, slow, a = write_both(tmp_path, data, CHAINS["transpose-zstd"], (16, 16, 16))
    assert fused == slow and len(fused) == 64
    np.testing.assert_array_equal(a[...], data)
    assert no_tmp_files(tmp_path)


def test_huge_work_buffers_are_allocated_per_call(tmp_path, monkeypatch):
    """Chunks whose work buffers exceed the kept scratch size: C allocates them for the call."""
    mod = sys.modules["zarrbolt.pipeline.buffers"]
    monkeypatch.setattr(mod, "GROUP_SCRATCH_BYTES", 1024)
    data = np.arange(32 * 32 * 32, dtype="uint16").reshape(32, 32, 32)
    with zarr.config.set(threads=2):
        fused, slow, _ = write_both(tmp_path, data, CHAINS["gzip"], (16, 16, 16))
    assert fused == slow


def test_concurrent_writers(tmp_path):
    rng = np.random.default_rng(6)
    datas = [rng.integers(0, 9, (48, 48, 48)).astype("uint16") for _ in range(4)]
    errors = []

    def run(i):
        try:
            for _ in range(3):
                a = make(tmp_path / f"w{i}", datas[i], CHAINS["lz4-shuffle"], (16, 16, 16))
                a[...] = datas[i]
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    with zarr.config.set(threads=2):
        ts = [threading.Thread(target=run, args=(i,)) for i in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    assert errors == []
    for i in range(4):
        np.testing.assert_array_equal(zarr.open_array(str(tmp_path / f"w{i}"))[...], datas[i])


def test_fsync_store(tmp_path):
    data = np.arange(20 * 20, dtype="uint16").reshape(20, 20)
    store = LocalStore(str(tmp_path / "s"), fsync=True)
    a = zarr.create_array(store, shape=data.shape, dtype="uint16", chunks=(8, 8), codecs=CHAINS["gzip"])
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    assert len(files(tmp_path / "s")) == 9


def test_directory_at_a_chunk_key_is_reported(tmp_path):
    """rename() onto a directory fails in C; the per-codec path then reports it."""
    data = np.arange(16 * 16, dtype="uint16").reshape(16, 16) + 1
    a = make(tmp_path / "x", data, CHAINS["lz4-shuffle"], (8, 8))
    os.makedirs(tmp_path / "x" / "c" / "1" / "0" / "sub")
    with pytest.raises(StoreError, match="directory"):
        a[...] = data
    assert no_tmp_files(tmp_path / "x")
    # chunks before the failing one are written, in order
    np.testing.assert_array_equal(a[:8, :], data[:8, :])


def test_file_in_place_of_a_chunk_directory_is_reported(tmp_path):
    data = np.arange(16 * 16, dtype="uint16").reshape(16, 16) + 1
    a = make(tmp_path / "x", data, CHAINS["lz4-shuffle"], (8, 8))
    (tmp_path / "x" / "c").write_bytes(b"not a directory")
    with pytest.raises(StoreError):
        a[...] = data
    assert no_tmp_files(tmp_path / "x")


def test_other_stores_and_chains_take_the_per_codec_path(tmp_path):
    data = np.arange(16 * 16, dtype="float32").reshape(16, 16)
    a = zarr.create_array(zarr.storage.MemoryStore(), shape=data.shape, dtype="float32", chunks=(8, 8))
    a[...] = data
    assert a._eplans == {}
    reshaped = [{"name": "reshape", "configuration": {"shape": [[0, 1]]}}, LE]  # no encode plan for reshape
    b = make(tmp_path / "n", data, reshaped, (8, 8))
    b[...] = data
    assert b._eplans == {False: None}
    np.testing.assert_array_equal(b[...], data)


def test_encode_plan_rejects_bad_tasks():
    from zarrbolt._ext import _kernels, _plans

    CRC32C = ("inplace", _kernels.CRC32C_ENCODE_STEP, b"")
    plan = _plans.EncodePlan([CRC32C], 2, 0, [4, 4], None, b"\0\0", False, 64)
    src = np.zeros((8, 8), "uint16")
    bad_shape = np.array([[5, 4]], np.int64)
    with pytest.raises(ValueError, match="shape"):
        plan.write_par(src, [b"/nonexistent/a"], [b"/nonexistent/t"], np.zeros(1, np.int64), bad_shape, [0, 1], [None])
    outside = np.array([src.strides[0] * 6], np.int64)  # rows 6..9 of an 8-row source
    with pytest.raises(ValueError, match="outside"):
        plan.write_par(src, [b"/nonexistent/a"], [b"/nonexistent/t"], outside, np.array([[4, 4]], np.int64), [0, 1],
                       [None])
    with pytest.raises(ValueError, match="same tasks"):  # two paths, one task
        plan.write_par(src, [b"/nonexistent/a", b"/nonexistent/b"], [b"/nonexistent/t", b"/nonexistent/u"],
                       np.zeros(1, np.int64), np.array([[4, 4]], np.int64), [0, 1], [None])
    with pytest.raises(ValueError, match="smaller"):
        plan.write_par(src, [b"/nonexistent/a"], [b"/nonexistent/t"], np.zeros(1, np.int64),
                       np.array([[4, 4]], np.int64), [0, 1], [bytearray(8)])
    with pytest.raises(ValueError):
        _plans.EncodePlan([CRC32C], 2, 0, [4, 4], None, b"\0\0", False, 16)  # buffers too small
    with pytest.raises(ValueError):
        _plans.EncodePlan([CRC32C], 2, 0, [4, 4], [0, 0], b"\0\0", False, 64)  # not a permutation
    st, failed, err, stage, res = plan.write_par(src, [b"/nonexistent/a"], [b"/nonexistent/t"],
                                                 np.zeros(1, np.int64), np.array([[4, 4]], np.int64), [0, 1], [None])
    assert st != 0 and failed == 0 and err != 0 and _plans.WRITE_STAGES[stage] == "create" and res == b"\0"


def sharding(inner, chunk, index_location="end"):
    return [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(chunk), "codecs": inner, "index_location": index_location,
        "index_codecs": [LE, {"name": "crc32c"}]}}]


@pytest.mark.parametrize("inner", ["lz4-shuffle", "zstd-bitshuffle", "transpose-zstd", "crc32c-gzip-crc32c", "bytes"])
@pytest.mark.parametrize("index_location", ["start", "end"])
@pytest.mark.parametrize("threads", [1, 2])
def test_shards_same_files_as_the_per_codec_path(tmp_path, inner, index_location, threads):
    rng = np.random.default_rng(7)
    data = rng.integers(100, 400, (40, 36, 20)).astype("uint16")  # edge shards, padded with fill
    data[:8, :8, :4] = 0  # one inner chunk of fill only: an empty entry
    with zarr.config.set(threads=threads):
        fused, slow, a = write_both(tmp_path, data, sharding(CHAINS[inner], (8, 8, 4), index_location),
                                    (16, 16, 20))
    assert fused == slow and len(fused) == 3 * 3
    assert a._eplans["inner"] is not None
    np.testing.assert_array_equal(a[...], data)


def test_shard_updates_re_encode_the_touched_inner_chunks(tmp_path):
    rng = np.random.default_rng(8)
    data = rng.integers(100, 400, (32, 32)).astype("int32")
    out = []
    for fused in (True, False):
        with zarr.config.set(fused_pipeline=fused):
            a = make(tmp_path / f"u{fused}", data, sharding(CHAINS["zstd-checksum"], (4, 4)), (16, 16))
            a[...] = data
            a[3:9, 5:6] = -1  # read-modify-write of part of one shard
            a[20:, 20:] = 0  # inner chunks become fill: empty entries
            out.append(files(tmp_path / f"u{fused}"))
    assert out[0] == out[1]
    expect = data.copy()
    expect[3:9, 5:6] = -1
    expect[20:, 20:] = 0
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "uTrue"))[...], expect)


def test_inner_chunks_larger_than_their_room_are_encoded_in_python(tmp_path):
    """gzip level 0 (stored blocks) adds more than the per-chunk room the C packing keeps for
    1 MiB inner chunks: those come back unencoded and the Python codec encodes them."""
    from zarrbolt._ext import _deflate, _plans

    plan = _plans.EncodePlan([("transform", _deflate.GZIP_ENCODE_STEP, _deflate.gzip_encode_params(0))], 2, 0,
                                [512, 1024], None,
                                b"\0\0", True, 2 << 20)
    src = np.ones((512, 1024), "uint16")
    buf, where = plan.encode_chunks(src, np.zeros(1, np.int64), np.array([[512, 1024]], np.int64), [0, 1], [None])
    assert where.tolist() == [[_plans.ENC_SKIPPED_ROOM, 0]]
    data = np.arange(1024 * 1024, dtype="uint16").reshape(1024, 1024)
    gz0 = [LE, {"name": "gzip", "configuration": {"level": 0}}]
    fused, slow, a = write_both(tmp_path, data, sharding(gz0, (512, 1024)), (1024, 1024))
    assert fused == slow
    np.testing.assert_array_equal(a[...], data)


def test_encode_chunks_reports_codec_errors_with_the_task():
    from zarrbolt._ext import _blosc1, _plans

    # an unknown compressor name reaches c-blosc: an invalid-argument status for task 0
    step = ("transform", _blosc1.ENCODE_STEP, _blosc1.encode_params(5, 0, 1, "nope"))
    plan = _plans.EncodePlan([step], 1, 0, [8], None,
                                b"\0", False, 1024)
    with pytest.raises(ValueError) as e:
        plan.encode_chunks(np.ones(8, "uint8"), np.zeros(1, np.int64), np.array([[8]], np.int64), [0, 1], [None])
    assert e.value.task_index == 0 and len(e.value.args) == 1


def test_zero_dimensional_arrays(tmp_path):
    for value, stored in ((3.5, True), (0.0, False), (np.float64(-2), True)):
        out = []
        for fused in (True, False):
            with zarr.config.set(fused_pipeline=fused):
                a = zarr.create_array(str(tmp_path / f"z{fused}"), shape=(), dtype="float64", chunks=(), fill_value=0,
                                      overwrite=True)
                a[...] = value
                assert a[...] == value
                out.append(files(tmp_path / f"z{fused}"))
        assert out[0] == out[1] and bool(out[0]) == stored


@pytest.mark.parametrize("sharded", [False, True])
def test_codec_errors_in_c_are_reported_by_the_codec(tmp_path, sharded):
    """A compressor this c-blosc build lacks fails in C; the chunk then goes the per-codec way,
    which raises the codec's error, and nothing (no chunk, no temporary file) is left behind."""
    from zarrbolt._ext import _blosc1
    from zarrbolt.errors import CodecError

    if "snappy" in _blosc1.compressors():
        pytest.skip("this c-blosc build has snappy")
    codecs = [LE, blosc("snappy", "shuffle")]
    if sharded:
        codecs = sharding(codecs, (4, 4))
    data = np.arange(16 * 16, dtype="uint16").reshape(16, 16) + 1
    a = make(tmp_path / "s", data, codecs, (8, 8))
    with pytest.raises(CodecError, match="snappy"):
        a[...] = data
    assert files(tmp_path / "s") == {}
    assert no_tmp_files(tmp_path / "s")


from numeric_chains import NUMERIC  # noqa: E402  (the numeric chains the fused decode is tested with)


@pytest.mark.parametrize("name", sorted(NUMERIC))
def test_numeric_chains_same_files_as_the_per_codec_path(tmp_path, name):
    """scale_offset / cast_value run in the encode plan (zb_encode_chunk's elementwise step)."""
    dtype, fill, codecs, maker = NUMERIC[name]
    shape = (20, 35, 22)
    data = np.asarray(maker(int(np.prod(shape)))).astype(dtype).reshape(shape)
    data[:8, :16, :10] = fill  # a chunk of fill only: left out
    fused, slow, a = write_both(tmp_path, data, codecs, (8, 16, 10), fill=fill)
    assert fused.keys() == slow.keys() and len(fused) == 3 * 3 * 3 - 1
    for k in fused:
        assert fused[k] == slow[k], k
    with zarr.config.set(fused_pipeline=False):
        expect = zarr.open_array(str(tmp_path / "fFalse"))[...]
    np.testing.assert_array_equal(a[...], expect)


def test_numeric_errors_are_reported_by_the_codec(tmp_path):
    """A value cast_value cannot store (out_of_range 'error') fails in C; the per-codec path then
    names it, and no temporary file is left."""
    from zarrbolt.errors import CodecError

    data = np.zeros((16, 16), "float32")
    data[11, 3] = 300.0  # does not fit uint8
    codecs = [{"name": "cast_value", "configuration": {"data_type": "uint8"}}, LE, {"name": "crc32c"}]
    a = make(tmp_path / "e", data, codecs, (8, 8))
    with pytest.raises(CodecError, match="300"):
        a[...] = data
    assert no_tmp_files(tmp_path / "e")
    assert a._eplans[False] is not None


@pytest.mark.parametrize("shape,chunks", [((1000,), (10,)), ((3, 2000), (2, 7)), ((2, 3, 700), (2, 3, 9))])
@pytest.mark.parametrize("name", ["crc32c", "crc32c-gzip-crc32c", "lz4-shuffle"])
def test_long_rows_of_chunks(tmp_path, shape, chunks, name):
    """Whole chunks that follow one another along the last axis are gathered a row at a time (at
    most ZB_ENC_ROW_MAX chunks or 8 MiB): rows longer than that, edge chunks after them, 1-d."""
    rng = np.random.default_rng(10)
    data = rng.integers(1, 1 << 15, shape).astype("int16")
    fused, slow, a = write_both(tmp_path, data, CHAINS[name], chunks)
    assert fused == slow
    np.testing.assert_array_equal(a[...], data)
    reversed_view = np.flip(np.flip(data, -1).copy(), -1)  # the same values, a negative last stride
    assert reversed_view.strides[-1] < 0
    fused2, slow2, _ = write_both(tmp_path, data, CHAINS[name], chunks, value=reversed_view)
    assert fused2 == slow2 == fused
