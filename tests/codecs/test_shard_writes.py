"""Shard writes: edge shards through the fused path, partial shard writes in both
``shard_update`` modes ("rewrite": whole shard, atomic; "append": touched inner chunks and a
new index appended), checked against a numpy model and against the stored index."""

from __future__ import annotations

import os

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.codecs.sharding import EMPTY
from zarrbolt.errors import ChecksumError, CorruptChunkError, MetadataError
from zarrbolt.storage import LocalStore, MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
BLOSC = {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 2,
                                            "blocksize": 0}}


def sharding(chunk_shape, codecs=(LE, BLOSC), index_location="end", transpose=False):
    codecs = list(codecs)
    if transpose:
        codecs = [{"name": "transpose", "configuration": {"order": [2, 1, 0]}}] + codecs
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(chunk_shape), "codecs": codecs, "index_codecs": [LE, {"name": "crc32c"}],
        "index_location": index_location}}


def vol(shape, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 50, size=shape) + np.arange(shape[-1]) % 7).astype(np.uint16)


def index_of(raw: bytes, n: int, loc: str = "end") -> np.ndarray:
    ib = raw[-(16 * n + 4):-4] if loc == "end" else raw[: 16 * n]
    return np.frombuffer(ib, dtype="<u8").reshape(n, 2)


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("write_empty", [False, True])
def test_edge_shards_store_only_inner_chunks_inside_the_array(tmp_path, fused, transpose, write_empty):
    data = vol((40, 27, 33))
    with zarr.config.set(fused_pipeline=fused, write_empty_chunks=write_empty):
        a = zarr.create_array(str(tmp_path / "a"), shape=data.shape, dtype="uint16", chunks=(32, 16, 32),
                              codecs=[sharding((8, 8, 8), transpose=transpose)], fill_value=3)
        a[...] = data
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a"))[...], data)
    # shard (1, 1, 1) holds rows 32-39, 16-26, 32-32: inner chunks (0, 0..1, 0) only
    raw = (tmp_path / "a" / "c" / "1" / "1" / "1").read_bytes()
    idx = index_of(raw, 4 * 2 * 4)
    stored = np.flatnonzero(idx[:, 0] != EMPTY)
    assert stored.tolist() == [0, 4]
    # an edge shard whose only part inside the array is all fill value
    b = zarr.create_array(MemoryStore(), shape=(40, 20), dtype="uint16", chunks=(32, 16),
                          codecs=[sharding((8, 8))], fill_value=3)
    with zarr.config.set(fused_pipeline=fused, write_empty_chunks=write_empty):
        b[...] = 3
    assert (b.store.get("c/1/1") is not None) == write_empty


def test_edge_shards_of_a_single_value_and_of_strided_values():
    data = vol((50, 70))
    a = zarr.create_array(MemoryStore(), shape=(50, 70), dtype="uint16", chunks=(32, 32), codecs=[sharding((8, 16))])
    a[...] = 7
    assert (a[...] == 7).all()
    a[...] = np.asfortranarray(data)
    np.testing.assert_array_equal(a[...], data)
    big = np.zeros((100, 140), np.uint16)
    big[::2, ::2] = data
    a[...] = big[::2, ::2]
    np.testing.assert_array_equal(a[...], data)


SELECTIONS = [
    (slice(8, 16), slice(16, 32), slice(0, 8)),  # one whole inner chunk
    (slice(3, 11), slice(None), slice(None)),  # a slab across every shard
    (slice(5, 6), slice(2, 30), slice(1, 9)),
    (20, slice(None), 5),  # integers drop axes
    (slice(1, 38, 3), slice(4, 20), slice(None, None, 5)),  # steps
    (slice(32, 40), slice(16, 27), slice(0, 33)),  # the edge shards
]


@pytest.mark.parametrize("mode", ["rewrite", "append"])
@pytest.mark.parametrize("fused", [True, False])
def test_partial_shard_writes_match_numpy(tmp_path, mode, fused):
    shape = (40, 27, 33)
    model = vol(shape)
    rng = np.random.default_rng(1)
    with zarr.config.set(shard_update=mode, fused_pipeline=fused):
        a = zarr.create_array(str(tmp_path / "a"), shape=shape, dtype="uint16", chunks=(32, 16, 32),
                              codecs=[sharding((8, 8, 8))], fill_value=0)
        a[...] = model
        for k in range(3):
            for sel in SELECTIONS:
                v = rng.integers(0, 1000, size=model[sel].shape).astype(np.uint16)
                a[sel] = v
                model[sel] = v
                np.testing.assert_array_equal(a[sel], model[sel])
            a.oindex[[1, 9, 30], :, [0, 31]] = k  # orthogonal integer arrays
            model[np.ix_([1, 9, 30], np.arange(27), [0, 31])] = k
            a[2:4, 3, 4] = 0  # back to the fill value in part
            model[2:4, 3, 4] = 0
        np.testing.assert_array_equal(a[...], model)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a"))[...], model)


def test_partial_write_into_a_new_shard_stores_only_touched_inner_chunks(tmp_path):
    for mode in ("rewrite", "append"):
        with zarr.config.set(shard_update=mode):
            a = zarr.create_array(str(tmp_path / mode), shape=(64, 64), dtype="uint16", chunks=(64, 64),
                                  codecs=[sharding((16, 16))])
            a[20:24, 3:40] = 9
            raw = (tmp_path / mode / "c" / "0" / "0").read_bytes()
            assert np.flatnonzero(index_of(raw, 16)[:, 0] != EMPTY).tolist() == [4, 5, 6]
            a[20:24, 3:40] = 0  # all fill again: the shard is erased
            assert not (tmp_path / mode / "c" / "0" / "0").exists()


def test_append_mode_appends_and_compacts(tmp_path):
    shape = (64, 64, 64)
    data = vol(shape)
    p = tmp_path / "a"
    a = zarr.create_array(str(p), shape=shape, dtype="uint16", chunks=(64, 64, 64),
                          codecs=[sharding((16, 16, 16), codecs=(LE,))])  # uncompressed: 8 KiB inner chunks
    a[...] = data
    shard = p / "c" / "0" / "0" / "0"
    size0 = shard.stat().st_size
    ino = shard.stat().st_ino
    with zarr.config.set(shard_update="append"):
        a[16:32, 0:16, 16:32] = 5  # one whole inner chunk: 8 KiB + the 1 KiB index appended
        data[16:32, 0:16, 16:32] = 5
        assert shard.stat().st_size == size0 + 16 ** 3 * 2 + 64 * 16 + 4
        assert shard.stat().st_ino == ino  # extended in place
        idx = index_of(shard.read_bytes(), 64)
        assert idx[16 + 1, 0] == size0
        np.testing.assert_array_equal(a[...], data)
        # many more updates: the unused space stays bounded (a compacting rewrite)
        for k in range(80):
            a[0:16, 16:32, 0:16] = k
            data[0:16, 16:32, 0:16] = k
        assert shard.stat().st_size <= 2 * size0 + (1 << 20) + 16 ** 3 * 2
        np.testing.assert_array_equal(zarr.open_array(str(p))[...], data)
    with zarr.config.set(shard_update="rewrite"):
        a[40:41, 3, 7] = 1  # a rewrite: a new file renamed over the old one, compact again
        data[40:41, 3, 7] = 1
        assert shard.stat().st_size == size0
        assert not [f for f in os.listdir(shard.parent) if f != "0"]  # no temporary file left
    np.testing.assert_array_equal(zarr.open_array(str(p))[...], data)


def test_append_mode_falls_back_to_rewrite(tmp_path):
    data = vol((32, 32))
    with zarr.config.set(shard_update="append"):
        # index at the start: cannot be appended to
        a = zarr.create_array(str(tmp_path / "s"), shape=(32, 32), dtype="uint16", chunks=(32, 32),
                              codecs=[sharding((8, 8), index_location="start")])
        a[...] = data
        a[0:8, 0:8] = 1
        data[0:8, 0:8] = 1
        np.testing.assert_array_equal(a[...], data)
        # a store without files
        m = zarr.create_array(MemoryStore(), shape=(32, 32), dtype="uint16", chunks=(32, 32),
                              codecs=[sharding((8, 8))])
        m[...] = data
        m[8:16, 0:8] = 2
        data[8:16, 0:8] = 2
        np.testing.assert_array_equal(m[...], data)


def test_append_mode_reports_a_corrupt_shard(tmp_path):
    a = zarr.create_array(str(tmp_path / "a"), shape=(32, 32), dtype="uint16", chunks=(32, 32),
                          codecs=[sharding((8, 8))])
    a[...] = vol((32, 32))
    f = tmp_path / "a" / "c" / "0" / "0"
    raw = bytearray(f.read_bytes())
    raw[-2] ^= 0xFF  # the index checksum
    f.write_bytes(bytes(raw))
    with zarr.config.set(shard_update="append"), pytest.raises(ChecksumError):
        a[0:4, 0:4] = 1
    f.write_bytes(b"xy")
    with zarr.config.set(shard_update="append"), pytest.raises(CorruptChunkError):
        a[0:4, 0:4] = 1


def test_shard_update_option_is_checked():
    with pytest.raises(Exception) as e:
        zarr.config.set(shard_update="sometimes")
    assert isinstance(e.value, (MetadataError, ValueError))
    assert zarr.config.get("shard_update") == "rewrite"


def test_rewrite_mode_goes_through_a_temporary_file(tmp_path):
    a = zarr.create_array(LocalStore(str(tmp_path / "a")), shape=(32, 32), dtype="uint16", chunks=(32, 32),
                          codecs=[sharding((8, 8))])
    a[...] = vol((32, 32))
    f = tmp_path / "a" / "c" / "0" / "0"
    ino = f.stat().st_ino
    a[1:3, 1:3] = 4
    assert f.stat().st_ino != ino  # replaced by rename, never modified in place


@pytest.mark.parametrize("mode", ["rewrite", "append"])
@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("local", [True, False])
def test_partial_write_over_a_corrupt_inner_chunk_names_it(tmp_path, mode, fused, local):
    store = LocalStore(str(tmp_path / "a")) if local else MemoryStore()
    a = zarr.create_array(store, shape=(32, 32), dtype="uint16", chunks=(32, 32), codecs=[sharding((8, 8))])
    a[...] = vol((32, 32))
    raw = bytearray(store.get("c/0/0"))
    idx = index_of(bytes(raw), 16)
    o, n = int(idx[5, 0]), int(idx[5, 1])
    raw[o: o + n] = b"\x07" * n  # inner chunk 5: rows 8-15, columns 8-15
    store.set("c/0/0", bytes(raw))
    with zarr.config.set(shard_update=mode, fused_pipeline=fused), pytest.raises(CorruptChunkError) as e:
        a[9:10, 9:10] = 1
    assert "c/0/0" in str(e.value) and "inner chunk 5" in str(e.value)
    with zarr.config.set(shard_update=mode, fused_pipeline=fused):
        a[8:16, 8:16] = 2  # wholly overwritten: not read, the shard is whole again
    assert (a[8:16, 8:16] == 2).all()


@pytest.mark.parametrize("mode", ["rewrite", "append"])
@pytest.mark.parametrize("nshards", [2, 3, 5])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_partial_writes_into_several_shards_side_by_side(tmp_path, mode, nshards, threads):
    # with several threads, the updates of several shards run one shard per thread (the ones
    # beyond a multiple of the threads one at a time): the same result as one at a time
    shape = (24, 16 * nshards, 20)
    model = vol(shape)
    rng = np.random.default_rng(2)
    with zarr.config.set(shard_update=mode, threads=threads):
        a = zarr.create_array(str(tmp_path / "a"), shape=shape, dtype="uint16", chunks=(16, 16, 16),
                              codecs=[sharding((8, 8, 8))], fill_value=0)
        a[...] = model
        for sel in [(slice(3, 5), slice(None), slice(None)), (slice(None), slice(None), slice(2, 9)),
                    (slice(8, 24), slice(1, None), slice(16, 20)), (slice(0, 8), slice(None), slice(0, 8))]:
            for _ in range(2):
                v = rng.integers(0, 1000, size=model[sel].shape).astype(np.uint16)
                a[sel] = v
                model[sel] = v
        a[0:8, :, 0:16] = 0  # some shards left with the fill value only in part
        model[0:8, :, 0:16] = 0
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a"))[...], model)


@pytest.mark.parametrize("mode", ["rewrite", "append"])
def test_partial_writes_side_by_side_report_a_corrupt_shard(tmp_path, mode):
    # one corrupt shard among four: the write fails naming it; every other shard holds either
    # its old or its new values, whole (never a torn shard), and the corrupt one is untouched
    shape = (16, 64, 16)
    data = vol(shape)
    with zarr.config.set(shard_update=mode, threads=2):
        a = zarr.create_array(str(tmp_path / "a"), shape=shape, dtype="uint16", chunks=(16, 16, 16),
                              codecs=[sharding((8, 8, 8))])
        a[...] = data
        f = tmp_path / "a" / "c" / "0" / "2" / "0"
        raw = bytearray(f.read_bytes())
        raw[-2] ^= 0xFF  # the index checksum
        f.write_bytes(bytes(raw))
        with pytest.raises(ChecksumError) as e:
            a[2:4] = 7
        assert "c/0/2/0" in str(e.value)
        assert f.read_bytes() == bytes(raw)
        for j in (0, 1, 3):
            got = a[:, 16 * j: 16 * (j + 1)]
            new = data[:, 16 * j: 16 * (j + 1)].copy()
            new[2:4] = 7
            assert (got == data[:, 16 * j: 16 * (j + 1)]).all() or (got == new).all()


def _deleted_fds(under) -> int:
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        n += target.startswith(str(under)) and target.endswith(" (deleted)")
    return n


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_replaced_large_shard_files_are_closed_in_the_background(tmp_path):
    # a rewrite leaves the last descriptor of the replaced file (large ones) to a daemon thread:
    # at most CLOSE_LATER_MAX wait, and all of them are closed soon after
    import time

    from zarrbolt.storage.files import CLOSE_LATER_MAX, CLOSE_LATER_MIN

    shape = (64, 128, 512)  # one uncompressed 8 MiB shard
    assert np.prod(shape) * 2 >= CLOSE_LATER_MIN
    data = vol(shape)
    with zarr.config.set(shard_update="rewrite"):
        a = zarr.create_array(str(tmp_path / "a"), shape=shape, dtype="uint16", chunks=shape,
                              codecs=[sharding((32, 32, 32), codecs=(LE,))])
        a[...] = data
        for k in range(3 * CLOSE_LATER_MAX):
            a[k, 0:8, 0:8] = k
            data[k, 0:8, 0:8] = k
            assert _deleted_fds(tmp_path) <= CLOSE_LATER_MAX
    deadline = time.monotonic() + 60
    while _deleted_fds(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _deleted_fds(tmp_path) == 0
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a"))[...], data)


def test_side_by_side_only_for_even_work():
    from zarrbolt.pipeline.shard.storing import balanced

    assert balanced([10, 10], 2) and balanced([10, 10, 9, 9], 2) and balanced([5, 4, 3, 3, 2, 2, 1], 3)
    assert not balanced([64, 1], 2) and not balanced([10, 10, 10], 2) and not balanced([40, 10, 10], 2)


BE = {"name": "bytes", "configuration": {"endian": "big"}}


@pytest.mark.parametrize("codecs,transpose", [((LE, BLOSC), False), ((BE, ZSTD), False), ((LE,), False),
                                              ((LE, ZSTD), True)])
def test_partial_writes_encode_stacked_chunks_of_any_chain(tmp_path, codecs, transpose):
    # the touched inner chunks, merged one after another, are encoded straight from there
    # (no gather) unless the chain swaps bytes or transposes
    shape = (32, 32, 48)
    model = vol(shape)
    rng = np.random.default_rng(3)
    with zarr.config.set(threads=2):
        a = zarr.create_array(str(tmp_path / "a"), shape=shape, dtype="uint16", chunks=(16, 16, 48),
                              codecs=[sharding((8, 8, 8), codecs=codecs, transpose=transpose)])
        a[...] = model
        for sel in [(slice(3, 5), slice(None), slice(None)), (slice(8, 16), slice(8, 16), slice(0, 8)),
                    (slice(None), 7, slice(5, 30))]:
            v = rng.integers(0, 1000, size=model[sel].shape).astype(np.uint16)
            a[sel] = v
            model[sel] = v
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a"))[...], model)
