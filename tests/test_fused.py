"""The fused C decode pipeline gives exactly what the per-codec path gives."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.errors import ChecksumError, CorruptChunkError
from zarrbolt.storage import MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
CHAINS = {
    "bytes": [LE],
    "be-complex": [BE],
    "blosc": [LE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}}],
    "blosc-be-noshuffle": [BE, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1, "shuffle": "noshuffle", "typesize": 1, "blocksize": 1024}}],
    "zstd-crc": [BE, {"name": "zstd", "configuration": {"level": 1, "checksum": True}}, {"name": "crc32c"}],
    "crc-gzip": [LE, {"name": "crc32c"}, {"name": "gzip", "configuration": {"level": 1}}],
    "transpose": [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, BE, {"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
}
SELS = [(...,), (3, slice(2, 30), slice(None)), (slice(5, 6), 7, 8), (slice(None), slice(None), 0), (11,), (slice(9, 11),),
        (slice(17, 19), slice(3, 5)),
        (slice(1, 19), slice(4, 33), slice(3, 20)), (np.newaxis, 2), (slice(0, 0),)]


def both(store, path):
    with zarr.config.set(fused_pipeline=True):
        fused = zarr.open_array(store, path=path)
    with zarr.config.set(fused_pipeline=False):
        slow = zarr.open_array(store, path=path)
    assert fused._plan is not None and slow._plan is None
    return fused, slow


@pytest.fixture(params=["cached", "stream", "one-slot"])
def output_stores(request, monkeypatch):
    """Run with the fused decode writing outputs with ordinary and with non-temporal stores
    (where its runs are long enough), and copying every chunk on its own (one scratch slot)
    instead of grouping the copies of a row of chunks."""
    import sys

    if request.param == "stream":
        monkeypatch.setattr(sys.modules["zarrbolt.pipeline.buffers"], "STREAM_MIN_BYTES", 0)
    if request.param == "one-slot":
        monkeypatch.setattr(sys.modules["zarrbolt.pipeline.buffers"], "GROUP_SCRATCH_BYTES", 0)
    return request.param


@pytest.mark.parametrize("name", sorted(CHAINS))
@pytest.mark.parametrize("sharded", [False, True])
def test_fused_equals_general(name, sharded, output_stores):
    dtype = "complex64" if name == "be-complex" else "float32"
    data = (np.arange(20 * 35 * 22) * 1.25).astype(dtype).reshape(20, 35, 22)
    data.reshape(-1)[::13] = np.nan
    st = MemoryStore()
    codecs = CHAINS[name]
    if sharded:
        codecs = [{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 8, 11], "codecs": codecs,
                                                                 "index_codecs": [LE, {"name": "crc32c"}]}}]
    a = zarr.create_array(st, name="a", shape=data.shape, chunks=(8, 16, 22), dtype=dtype, codecs=codecs, fill_value=-1)
    a[2:, :30] = data[2:, :30]
    expect = np.full(data.shape, -1, dtype)
    expect[2:, :30] = data[2:, :30]
    fused, slow = both(st, "a")
    for sel in SELS:
        f, s = fused[sel], slow[sel]
        assert f.tobytes() == s.tobytes() == expect[sel].tobytes(), sel


def test_fused_errors_name_the_chunk():
    st = MemoryStore()
    a = zarr.create_array(st, shape=(16,), chunks=(8,), dtype="u2", codecs=[LE, {"name": "crc32c"}])
    a[...] = np.arange(16)
    raw = bytearray(st.get("c/1"))
    raw[0] ^= 1
    st.set("c/1", bytes(raw))
    fused, _ = both(st, "")
    with pytest.raises(ChecksumError, match="c/1"):
        fused[...]
    st.set("c/1", bytes(raw[:3]))
    with pytest.raises(CorruptChunkError, match="c/1"):
        fused[...]


def test_blosc_partial_decode_reads_only_the_needed_blocks():
    """A plane of a blosc chunk decodes only the blosc blocks holding it: damage in another
    block does not affect it (the whole-chunk read, and the general path, see the damage)."""
    st = MemoryStore()
    codecs = [LE, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1, "shuffle": "noshuffle",
                                                      "typesize": 2, "blocksize": 1024}}]
    a = zarr.create_array(st, shape=(64, 64), chunks=(64, 64), dtype="uint16", codecs=codecs)
    data = (np.arange(64 * 64, dtype=np.uint32) * 2654435761 % 65521).astype(np.uint16).reshape(64, 64)
    a[...] = data
    raw = bytearray(st.get("c/0/0"))
    raw[-8:] = bytes(8)  # inside the last block's compressed stream
    st.set("c/0/0", bytes(raw))
    fused, slow = both(st, "")
    np.testing.assert_array_equal(fused[0], data[0])
    np.testing.assert_array_equal(fused[1:3, 5:9], data[1:3, 5:9])
    with pytest.raises(CorruptChunkError):
        fused[...]
    with pytest.raises(CorruptChunkError):
        slow[0]


@pytest.mark.parametrize("damage", ["truncate", "extend", "nbytes"])
def test_blosc_partial_decode_checks_the_header(damage):
    st = MemoryStore()
    codecs = [LE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                      "typesize": 2, "blocksize": 512}}]
    a = zarr.create_array(st, shape=(32, 32), chunks=(32, 32), dtype="uint16", codecs=codecs)
    a[...] = np.arange(32 * 32, dtype=np.uint16).reshape(32, 32)
    raw = bytearray(st.get("c/0/0"))
    if damage == "truncate":
        raw = raw[:-5]
    elif damage == "extend":
        raw += b"\0\0"
    else:  # header nbytes (bytes 4..8) no longer matches the chunk size
        raw[4:8] = (1024).to_bytes(4, "little")
    st.set("c/0/0", bytes(raw))
    fused, _ = both(st, "")
    with pytest.raises(CorruptChunkError, match="c/0/0"):
        fused[3]


# --------------------------------------------------------------------------- local files, read in C
def local_pair(tmp_path, name, data, chunks, codecs, fill_value=-1):
    from zarrbolt.storage import LocalStore

    a = zarr.create_array(LocalStore(tmp_path / name), shape=data.shape, chunks=chunks, dtype=data.dtype,
                          codecs=codecs, fill_value=fill_value)
    return a


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_local_files_read_in_c_equal_general(tmp_path, name, output_stores):
    """A plain LocalStore goes through the C file reader; chunks that were never written read as
    the fill value, and every selection equals the general path and the numpy reference."""
    from zarrbolt.storage import LocalStore

    dtype = "complex64" if name == "be-complex" else "float32"
    data = (np.arange(20 * 35 * 22) * 1.25).astype(dtype).reshape(20, 35, 22)
    a = local_pair(tmp_path, "a", data, (8, 16, 22), CHAINS[name])
    a[2:, :30] = data[2:, :30]
    expect = np.full(data.shape, -1, dtype)
    expect[2:, :30] = data[2:, :30]
    fused, slow = both(LocalStore(tmp_path / "a"), "")
    for sel in SELS:
        for threads in (1, 3):
            with zarr.config.set(threads=threads):
                f, s = fused[sel], slow[sel]
            assert f.tobytes() == s.tobytes() == expect[sel].tobytes(), sel


def test_local_files_larger_than_the_arena_and_directories(tmp_path, monkeypatch):
    import os
    import sys

    from zarrbolt.storage import LocalStore

    za = sys.modules["zarrbolt.pipeline.buffers"]
    data = np.arange(16 * 64, dtype=np.uint16).reshape(16, 64)
    a = local_pair(tmp_path, "a", data, (4, 64), [LE], fill_value=7)
    a[...] = data
    os.remove(tmp_path / "a" / "c" / "1" / "0")
    expect = data.copy()
    expect[4:8] = 7
    os.remove(tmp_path / "a" / "c" / "3" / "0")
    os.makedirs(tmp_path / "a" / "c" / "3" / "0")  # a directory where a chunk file would be
    expect[12:16] = 7
    b = zarr.open_array(LocalStore(tmp_path / "a"))
    assert b._store.native_files() is not None
    old = getattr(za._arenas, "buf", None)
    try:
        for size in (1 << 20, 600, 300, 100):  # chunks are 512 bytes: 1, then 0 per arena
            za._arenas.buf = memoryview(bytearray(size))
            with zarr.config.set(threads=1):
                np.testing.assert_array_equal(b[...], expect)
                np.testing.assert_array_equal(b[3:13, 5:60], expect[3:13, 5:60])
    finally:
        za._arenas.buf = old


def test_local_files_corrupt_and_unreadable(tmp_path):
    import os

    from zarrbolt.errors import StoreError
    from zarrbolt.storage import LocalStore

    data = np.arange(16 * 8, dtype=np.uint16).reshape(16, 8)
    a = local_pair(tmp_path, "a", data, (4, 8), [LE, {"name": "crc32c"}], fill_value=0)
    a[...] = data
    p = tmp_path / "a" / "c" / "2" / "0"
    raw = bytearray(p.read_bytes())
    raw[0] ^= 1
    p.write_bytes(bytes(raw))
    b = zarr.open_array(LocalStore(tmp_path / "a"))
    with pytest.raises(ChecksumError, match="c/2/0"):
        b[...]
    p.write_bytes(bytes(raw[:3]))
    with pytest.raises(CorruptChunkError, match="c/2/0"):
        b[...]
    if os.name == "posix" and os.geteuid() != 0:
        p.write_bytes(b"")
        os.chmod(p, 0)
        with pytest.raises(StoreError, match="c/2/0"):
            b[...]


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="POSIX only")
def test_local_files_symlink_loop_and_fifo(tmp_path):
    """An OS error (a symlink loop) is a StoreError naming the chunk; a FIFO where a chunk file
    should be reads as a missing chunk and never blocks."""
    import os

    from zarrbolt.errors import StoreError
    from zarrbolt.storage import LocalStore

    data = np.arange(16 * 8, dtype=np.uint16).reshape(16, 8)
    a = local_pair(tmp_path, "a", data, (4, 8), [LE], fill_value=5)
    a[...] = data
    b = zarr.open_array(LocalStore(tmp_path / "a"))
    p = tmp_path / "a" / "c" / "1" / "0"
    os.remove(p)
    os.mkfifo(p)
    expect = data.copy()
    expect[4:8] = 5
    for fused in (True, False):
        with zarr.config.set(fused_pipeline=fused):
            np.testing.assert_array_equal(zarr.open_array(LocalStore(tmp_path / "a"))[...], expect)
    os.remove(p)
    os.symlink(p, p)  # a link to itself: ELOOP
    with pytest.raises(StoreError, match="c/1/0"):
        b[...]


# --------------------------------------------------------------------------- local shard files, read in C
class PlanSpy:
    """Wraps an array's plan and counts the calls of each of its methods."""

    def __init__(self, plan):
        self._plan = plan
        self.calls: dict = {}

    def __getattr__(self, name):
        fn = getattr(self._plan, name)
        if not callable(fn):  # properties
            return fn

        def call(*args, **kw):
            self.calls[name] = self.calls.get(name, 0) + 1
            return fn(*args, **kw)

        return call


def _sharded_codecs(inner, index_location, crc):
    index_codecs = [LE, {"name": "crc32c"}] if crc else [LE]
    return [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 8, 11], "codecs": inner, "index_codecs": index_codecs, "index_location": index_location}}]


@pytest.mark.parametrize("name", ["bytes", "blosc", "zstd-crc", "transpose"])
@pytest.mark.parametrize("index_location,crc", [("end", True), ("start", True), ("end", False), ("start", False)])
def test_local_shard_files_read_in_c_equal_general(tmp_path, name, index_location, crc, output_stores):
    """Shards of a plain LocalStore are read in C (index, coalesced inner chunk reads, decode):
    missing shards and empty inner chunks read as the fill value, and every selection equals the
    general path and the numpy reference, with 1 and 3 threads."""
    from zarrbolt.storage import LocalStore

    data = (np.arange(20 * 35 * 22) * 1.25).astype("float32").reshape(20, 35, 22)
    a = local_pair(tmp_path, "a", data, (8, 16, 22), _sharded_codecs(CHAINS[name], index_location, crc))
    a[2:, :30] = data[2:, :30]  # shards (0, 2, 0) and (1, 2, 0) partly, (2, 2, 0) not at all
    a[9:11, 3:9] = -1  # empty inner chunks (the fill value) inside written shards
    expect = np.full(data.shape, -1, "float32")
    expect[2:, :30] = data[2:, :30]
    expect[9:11, 3:9] = -1
    fused, slow = both(LocalStore(tmp_path / "a"), "")
    spy = fused._plan = PlanSpy(fused._plan)
    for sel in SELS:
        for threads in (1, 3):
            with zarr.config.set(threads=threads):
                f, s = fused[sel], slow[sel]
            assert f.tobytes() == s.tobytes() == expect[sel].tobytes(), sel
    assert spy.calls.get("read_shards_par", 0) > 0 and "decode" not in spy.calls


def test_local_shard_files_larger_than_the_arena(tmp_path):
    """Inner chunks larger than the arena, and an index larger than it, go the Store way (four
    shards, so one batch hands back tasks of several shards)."""
    import sys

    from zarrbolt.storage import LocalStore

    za = sys.modules["zarrbolt.pipeline.buffers"]
    data = np.arange(32 * 128, dtype=np.uint16).reshape(32, 128)
    a = local_pair(tmp_path, "a", data, (16, 64), _sharded_codecs2((4, 16)), fill_value=7)
    a[...] = data
    b = zarr.open_array(LocalStore(tmp_path / "a"))
    spy = b._plan = PlanSpy(b._plan)
    old = za._ARENA_BYTES
    try:
        # inner chunks are 128 bytes, the index 16 * 16 + 4 bytes
        for size in (1 << 20, 300, 200, 100):
            za._ARENA_BYTES = size  # the most any read's arena may hold
            za.release()
            for threads in (1, 2):
                with zarr.config.set(threads=threads):
                    np.testing.assert_array_equal(b[...], data)
                    np.testing.assert_array_equal(b[3:29, 5:120], data[3:29, 5:120])
    finally:
        za._ARENA_BYTES = old
        za.release()
    assert spy.calls["read_shards_par"] > 0 and spy.calls.get("decode", 0) > 0


def _sharded_codecs2(chunk_shape, inner=(LE, {"name": "crc32c"})):
    return [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(chunk_shape), "codecs": list(inner),
        "index_codecs": [LE, {"name": "crc32c"}], "index_location": "end"}}]


def test_local_shard_files_damage(tmp_path):
    """A damaged inner chunk is an error naming the shard and the inner chunk; a damaged or
    truncated index is reported as the Store way reports it; an OS error is a StoreError naming
    the shard."""
    import os

    from zarrbolt.errors import StoreError
    from zarrbolt.storage import LocalStore

    data = np.arange(16 * 64, dtype=np.uint16).reshape(16, 64)
    a = local_pair(tmp_path, "a", data, (16, 64), _sharded_codecs2((4, 16)), fill_value=7)
    a[...] = data
    p = tmp_path / "a" / "c" / "0" / "0"
    good = p.read_bytes()
    b = zarr.open_array(LocalStore(tmp_path / "a"))
    raw = bytearray(good)
    raw[132 * 5 + 3] ^= 1  # inner chunk 5 (128 bytes + CRC each, stored in order)
    p.write_bytes(bytes(raw))
    with pytest.raises(ChecksumError, match=r"c/0/0\[5\]"):
        b[...]
    np.testing.assert_array_equal(b[:4], data[:4])  # inner chunks 0-3 are intact
    raw = bytearray(good)
    raw[-1] ^= 1  # the index's CRC
    p.write_bytes(bytes(raw))
    with pytest.raises(ChecksumError, match="c/0/0"):
        b[...]
    p.write_bytes(good[:100])
    with pytest.raises(CorruptChunkError, match="smaller than"):
        b[5:9, 20:40]
    p.write_bytes(good[:-300] + good[-260:])  # the index intact, the data cut short
    with pytest.raises(CorruptChunkError, match="c/0/0"):
        b[...]
    os.remove(p)
    os.symlink(p, p)  # a link to itself: ELOOP
    with pytest.raises(StoreError, match="c/0/0"):
        b[...]
    os.remove(p)
    np.testing.assert_array_equal(b[...], np.full_like(data, 7))


# --------------------------------------------------------------------------- scale_offset / cast_value in the plan
from numeric_chains import BLOSC_LZ4, NUMERIC, _cv, _so  # noqa: E402,F401


@pytest.fixture(params=["convert-into-output", "convert-via-scratch"])
def fused_convert(request):
    """Chains with a one-pass cast_value + scale_offset decode, converted on the way into the
    output (the default) and through a scratch buffer first."""
    from zarrbolt._ext import _plans

    old = _plans._set_fused_convert(request.param == "convert-into-output")
    yield request.param
    _plans._set_fused_convert(old)


@pytest.mark.parametrize("name", sorted(NUMERIC))
@pytest.mark.parametrize("sharded", [False, True])
def test_fused_numeric_chains_equal_general(name, sharded, output_stores, fused_convert, tmp_path):
    from zarrbolt.storage import LocalStore

    dtype, fill, codecs, maker = NUMERIC[name]
    shape = (20, 35, 22)
    data = maker(int(np.prod(shape))).astype(dtype).reshape(shape)
    if sharded:
        codecs = [{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 8, 11], "codecs": codecs,
                                                                 "index_codecs": [LE, {"name": "crc32c"}]}}]
    for st in (MemoryStore(), LocalStore(tmp_path / name)):
        a = zarr.create_array(st, name="a", shape=shape, chunks=(8, 16, 22), dtype=dtype, codecs=codecs, fill_value=fill)
        a[2:, :30] = data[2:, :30]
        fused, slow = both(st, "a")
        for sel in SELS:
            for threads in (1, 2):
                with zarr.config.set(threads=threads):
                    f, s = fused[sel], slow[sel]
                assert f.dtype == s.dtype and f.tobytes() == s.tobytes(), (sel, threads)


def test_fused_numeric_out_of_range_names_the_chunk():
    """A stored value that cannot be decoded (cast_value int16 -> uint8 without clamp) is a
    typed error naming the chunk, as in the per-codec path."""
    from zarrbolt.errors import CodecError

    st = MemoryStore()
    zarr.create_array(st, shape=(16,), chunks=(8,), dtype="int16", codecs=[LE])[...] = np.arange(16) * 20
    # reinterpret the stored int16 values through a uint8 array decoded from int16 storage
    meta = json.loads(st.get("zarr.json"))
    meta["data_type"] = "uint8"
    meta["fill_value"] = 0
    meta["codecs"] = [_cv("int16"), LE]
    st.set("zarr.json", json.dumps(meta).encode())
    fused, slow = both(st, "")
    np.testing.assert_array_equal(fused[:7], np.arange(7) * 20)
    for arr in (fused, slow):
        with pytest.raises(CodecError, match="c/1"):
            arr[...]


# ------------------------------------------------------------ prefix decodes of gzip / zstd chunks
PREFIX_CHAINS = {
    "gzip": [LE, {"name": "gzip", "configuration": {"level": 1}}],
    "gzip-be": [BE, {"name": "gzip", "configuration": {"level": 5}}],
    "zstd": [LE, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
    # stored as (x, z, y) and (y, x, z): regions with few leading stored planes decode a prefix too
    "zstd-transposed": [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, LE,
                        {"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
    "gzip-be-transposed": [{"name": "transpose", "configuration": {"order": [1, 2, 0]}}, BE,
                           {"name": "gzip", "configuration": {"level": 1}}],
}


def _prefix_data(shape, dtype="uint16"):
    rng = np.random.default_rng(11)
    return (rng.integers(0, 400, shape) + 900).astype(dtype)


@pytest.mark.parametrize("name", sorted(PREFIX_CHAINS))
@pytest.mark.parametrize("store", ["memory", "local", "sharded"])
def test_prefix_decode_regions_equal_numpy(name, store, tmp_path, output_stores):
    """Chunks of 48x64x80 uint16 (480 KiB): planes, rows and blocks near the chunk start decode
    a prefix of the chunk; every region equals numpy's."""
    from zarrbolt.storage import LocalStore

    data = _prefix_data((96, 64, 150))
    st = LocalStore(tmp_path / "p") if store == "local" else MemoryStore()
    codecs, chunks = PREFIX_CHAINS[name], (48, 64, 80)
    if store == "sharded":
        codecs = [{"name": "sharding_indexed", "configuration": {"chunk_shape": list(chunks), "codecs": codecs,
                                                                 "index_codecs": [LE, {"name": "crc32c"}]}}]
        chunks = (96, 64, 160)
    a = zarr.create_array(st, shape=data.shape, chunks=chunks, dtype=data.dtype, codecs=codecs, fill_value=0)
    a[...] = data
    fused, slow = both(st, "")
    sels = [0, 1, 47, 48, 60, 95, (slice(0, 3),), (slice(2, 9), slice(5, 40), slice(70, 90)),
            (5, 7), (slice(40, 56),), (slice(None), 3, slice(None)), (...,), (30, slice(None), 100),
            (..., slice(0, 7)), (slice(3, 30), slice(2, 50), slice(0, 20)), (slice(1, 40), slice(0, 9)),
            (slice(None), slice(None), 85)]
    for sel in sels:
        f = fused[sel]
        assert f.tobytes() == data[sel].tobytes() == slow[sel].tobytes(), sel


@pytest.mark.parametrize("name", ["gzip", "zstd", "zstd-transposed"])
def test_prefix_decode_leaves_the_tail_unread(name):
    """A plane at the start of a chunk decodes only a prefix: damage to the end of the stored chunk
    (gzip's CRC-32, zstd's content checksum) goes unseen there, while whole reads report it.  A
    chunk stored transposed to (x, z, y) has its x planes first."""
    st = MemoryStore()
    data = _prefix_data((64, 64, 64))
    a = zarr.create_array(st, shape=data.shape, chunks=data.shape, dtype=data.dtype, codecs=PREFIX_CHAINS[name])
    a[...] = data
    raw = bytearray(st.get("c/0/0/0"))
    raw[-8 if name == "gzip" else -4] ^= 0xFF
    st.set("c/0/0/0", bytes(raw))
    fused, slow = both(st, "")
    first = (slice(None), slice(None), 0) if name.endswith("transposed") else (0,)
    near = (slice(10, 20), slice(0, 64), slice(2, 5)) if name.endswith("transposed") else (slice(2, 5), slice(10, 20))
    last = (slice(None), slice(None), 60) if name.endswith("transposed") else (60,)
    np.testing.assert_array_equal(fused[first], data[first])
    np.testing.assert_array_equal(fused[near], data[near])
    with pytest.raises((CorruptChunkError, ChecksumError), match="c/0/0/0"):
        fused[...]
    with pytest.raises((CorruptChunkError, ChecksumError), match="c/0/0/0"):
        fused[last]
    with pytest.raises((CorruptChunkError, ChecksumError)):
        slow[0]


@pytest.mark.parametrize("cname,shuffle", [("lz4", "shuffle"), ("lz4", "noshuffle"), ("lz4hc", "shuffle"),
                                           ("zstd", "shuffle"), ("blosclz", "noshuffle")])
@pytest.mark.parametrize("fast_lz4", [True, False])
@pytest.mark.parametrize("perm", [None, [2, 0, 1]])
def test_blosc_partial_regions_equal_numpy(cname, shuffle, fast_lz4, perm):
    """Planes, rows and blocks of blosc chunks whose blocks hold a few planes each (of the stored,
    possibly transposed, chunk): LZ4 chunks stop inside blocks, the others decode whole blocks;
    every region equals numpy's."""
    from zarrbolt._ext import _blosc2

    old = _blosc2._set_fast_lz4(fast_lz4)
    try:
        st = MemoryStore()
        codecs = [LE, {"name": "blosc", "configuration": {"cname": cname, "clevel": 5, "shuffle": shuffle,
                                                          "typesize": 2, "blocksize": 8192}}]
        if perm is not None:
            codecs = [{"name": "transpose", "configuration": {"order": perm}}, *codecs]
        data = (np.random.default_rng(2).integers(0, 500, (40, 48, 72)) + 300).astype("uint16")
        a = zarr.create_array(st, shape=data.shape, chunks=(20, 48, 64), dtype="uint16", codecs=codecs)
        a[...] = data
        fused, slow = both(st, "")
        sels = [0, 1, 5, 19, 20, 39, (slice(2, 4),), (7, slice(3, 40), slice(10, 70)), (slice(3, 17), slice(1, 47), 5),
                (slice(0, 21), slice(0, 48), slice(0, 64)), (slice(9, 30), slice(20, 30), slice(60, 70)), (...,),
                (..., 3), (slice(2, 30), slice(5, 40), slice(0, 9)), (slice(None), slice(None), slice(66, 72))]
        for sel in sels:
            assert fused[sel].tobytes() == data[sel].tobytes() == slow[sel].tobytes(), sel
    finally:
        _blosc2._set_fast_lz4(old)


WIDE_CHAINS = {
    "blosc": ("uint16", [LE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                                 "typesize": 2, "blocksize": 0}}]),
    "bytes-be": ("uint16", [BE]),
    "transpose-zstd": ("uint16", [{"name": "transpose", "configuration": {"order": [2, 1, 0]}}, LE,
                                  {"name": "zstd", "configuration": {"level": 1, "checksum": False}}]),
    "so-cast-blosc": ("float32", [_so(100, 4), _cv("uint16"), LE, BLOSC_LZ4]),
}


@pytest.mark.parametrize("name", sorted(WIDE_CHAINS))
def test_grouped_copies_equal_one_at_a_time(name):
    """Plan.decode with scratch slots groups the copies of neighbouring chunks: in any task order
    (C order, reversed, shuffled, rows of different region shapes), with and without non-temporal
    stores, the output equals numpy's, and the caller's scratch buffer is checked for size."""
    dtype, codecs = WIDE_CHAINS[name]
    shape, chunks = (5, 9, 700), (2, 4, 100)  # rows of 7 chunks, 200-400 bytes each: grouped, streamable
    data = ((np.arange(np.prod(shape)) % 3000) / 4 + 100).astype(dtype).reshape(shape)
    st = MemoryStore()
    a = zarr.create_array(st, name="a", shape=shape, chunks=chunks, dtype=dtype, codecs=codecs, fill_value=100)
    a[...] = data
    fused, _ = both(st, "a")
    plan = fused._plan
    rng = np.random.default_rng(1)
    # tasks: every chunk, the region of the chunk inside the selection [1:5, 1:9, 30:690]
    lo, hi = np.array([1, 1, 30]), np.array([5, 9, 690])
    tasks = []
    for c in np.ndindex(*(-(-s // k) for s, k in zip(shape, chunks))):
        c0 = np.array(c) * chunks
        r0, r1 = np.maximum(c0, lo), np.minimum(c0 + chunks, hi)
        if np.any(r1 <= r0):
            continue
        tasks.append((st.get(fused._chunk_key(c)), r0 - c0, r1 - r0, r0 - lo))
    expect = data[1:5, 1:9, 30:690]
    for order in ("c", "reversed", "shuffled"):
        idx = list(range(len(tasks)))
        if order == "reversed":
            idx.reverse()
        elif order == "shuffled":
            rng.shuffle(idx)
        for nslots in (1, 2, 3, 8):
            for stream in (False, True):
                out = np.full(expect.shape, 7, dtype)
                sc = bytearray(plan.scratch_bytes(nslots))
                plan.decode([tasks[i][0] for i in idx], np.array([tasks[i][1] for i in idx], np.int64),
                            np.array([tasks[i][2] for i in idx], np.int64),
                            np.array([(tasks[i][3] * out.strides).sum() for i in idx], np.int64), out, stream,
                            sc, nslots)
                np.testing.assert_array_equal(out, expect, err_msg=f"{order} {nslots} {stream}")
    with pytest.raises(ValueError, match="scratch"):
        plan.decode([], np.zeros((0, 3), np.int64), np.zeros((0, 3), np.int64), np.zeros(0, np.int64),
                    np.empty(expect.shape, dtype), False, bytearray(plan.scratch_bytes(4) - 1), 4)
    with pytest.raises(ValueError, match="nslots"):
        plan.scratch_bytes(0)


@pytest.mark.parametrize("sharded", [False, True])
def test_wide_reads_group_and_stream(tmp_path, sharded, monkeypatch):
    """Reads whose chunk rows are short are copied a row of chunks at a time, with non-temporal
    stores when the output is large: the result equals numpy's for local files (chunks, and
    shards whose inner chunks are stored in Morton order) and for the Store API path."""
    import sys

    monkeypatch.setattr(sys.modules["zarrbolt.pipeline.buffers"], "STREAM_MIN_BYTES", 0)
    from zarrbolt.storage import LocalStore
    shape = (6, 20, 1200)
    data = (np.arange(np.prod(shape)) % 50000).astype("uint16").reshape(shape)
    codecs = [LE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                      "typesize": 2, "blocksize": 0}}]
    kw = {"shards": (6, 20, 600)} if sharded else {}
    for store in (LocalStore(tmp_path / "a"), MemoryStore()):
        a = zarr.create_array(store, shape=shape, chunks=(2, 5, 100), dtype="uint16", codecs=codecs, **kw)
        a[...] = data
        for sel in [(...,), (slice(1, 6), slice(3, 19), slice(50, 1150)), (2,), (slice(None), 4)]:
            for threads in (1, 2):
                with zarr.config.set(threads=threads):
                    np.testing.assert_array_equal(a[sel], data[sel])


def test_large_chunk_scratch_is_not_kept(monkeypatch):
    """The per-thread decode scratch is kept across reads only up to GROUP_SCRATCH_BYTES; reads of
    arrays with larger chunks decode in a scratch allocated (and freed) by the call."""
    import sys
    import threading

    A = sys.modules["zarrbolt.pipeline.buffers"]
    monkeypatch.setattr(A, "_scratches", threading.local())
    monkeypatch.setattr(A, "GROUP_SCRATCH_BYTES", 4096)
    data = (np.arange(6 * 40 * 50) % 1000).astype("uint16").reshape(6, 40, 50)
    a = zarr.create_array(MemoryStore(), shape=data.shape, chunks=(3, 20, 25), dtype="uint16",
                          codecs=CHAINS["blosc"][:1] + [{"name": "zstd", "configuration": {"level": 1}}])
    a[...] = data
    with zarr.config.set(threads=1):
        np.testing.assert_array_equal(a[...], data)
        np.testing.assert_array_equal(a[1:5, 3:33, 7:48], data[1:5, 3:33, 7:48])
    assert getattr(A._scratches, "buf", None) is None
    monkeypatch.setattr(A, "GROUP_SCRATCH_BYTES", 16 << 20)
    with zarr.config.set(threads=1):
        np.testing.assert_array_equal(a[...], data)
    assert len(A._scratches.buf) >= a._plan.scratch_bytes(1)


def test_converted_rows_longer_than_the_buffer(output_stores, fused_convert):
    """cast_value + scale_offset converted on the way into the output in rows of grouped chunks
    that do not fit the converter's 16 KiB buffer at once (rows of 4000 bytes, six chunks a row),
    and in rows of single chunks."""
    shape, chunks = (3, 5, 6000), (2, 3, 1000)
    data = ((np.arange(np.prod(shape)) % 3000) / np.float32(4) + np.float32(100)).astype("float32").reshape(shape)
    a = zarr.create_array(MemoryStore(), shape=shape, chunks=chunks, dtype="float32",
                          codecs=[_so(100, 4), _cv("uint16"), LE, BLOSC_LZ4], fill_value=100)
    a[...] = data
    for threads in (1, 2):
        with zarr.config.set(threads=threads):
            for sel in [(...,), (slice(1, 3), slice(1, 5), slice(500, 5900)), (2,), (slice(None), 4, slice(100, 300))]:
                np.testing.assert_array_equal(a[sel], data[sel])
