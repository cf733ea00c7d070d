"""sharding_indexed: round trips, partial I/O (counted), corrupt shards, metadata validation."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.codecs.sharding import ShardingCodec
from zarrbolt.errors import ChecksumError, CorruptChunkError, MetadataError
from zarrbolt.storage import LocalStore, MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}


def sharding(chunk_shape, codecs=(LE,), index_codecs=(LE, {"name": "crc32c"}), index_location="end"):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(chunk_shape), "codecs": list(codecs), "index_codecs": list(index_codecs),
        "index_location": index_location}}


class CountingStore:
    """Wraps a store and records every read request."""

    def __init__(self, inner):
        self._inner = inner
        self.requests: list[tuple[str, object]] = []
        self._lock = threading.Lock()

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def get(self, key, byte_range=None):
        with self._lock:
            self.requests.append((key, byte_range))
        return self._inner.get(key, byte_range)

    def get_into(self, key, buffer, offset=0):
        with self._lock:
            self.requests.append((key, (offset, offset + len(memoryview(buffer)))))
        return self._inner.get_into(key, buffer, offset)

    def read_into(self, key, buffer):
        with self._lock:
            self.requests.append((key, None))
        return self._inner.read_into(key, buffer)

    def get_ranges_into(self, key, ranges, buffer):
        ranges = list(ranges)
        with self._lock:
            self.requests.extend((key, r) for r in ranges)
        return self._inner.get_ranges_into(key, ranges, buffer)

    def get_partial_values(self, key_ranges):
        key_ranges = list(key_ranges)
        with self._lock:
            self.requests.extend(key_ranges)
        return self._inner.get_partial_values(key_ranges)

    def data_requests(self):
        return [r for r in self.requests if not r[0].endswith("zarr.json")]


def vol(shape, dtype="uint16"):
    return (np.arange(np.prod(shape), dtype=np.int64) * 7 % 65521).astype(dtype).reshape(shape)


@pytest.mark.parametrize("loc", ["start", "end"])
@pytest.mark.parametrize("inner", ["plain", "zstd", "blosc-crc"])
def test_roundtrip(loc, inner):
    codecs = {"plain": [LE], "zstd": [LE, {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
              "blosc-crc": [LE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 3, "shuffle": "shuffle",
                                                                    "typesize": 2, "blocksize": 0}}, {"name": "crc32c"}]}[inner]
    data = vol((37, 50, 21))
    st = MemoryStore()
    a = zarr.create_array(st, shape=data.shape, dtype="uint16", chunks=(16, 32, 16),
                          codecs=[sharding((8, 8, 4), codecs, index_location=loc)])
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[3:30:2, 40:1:-3, 5], data[3:30:2, 40:1:-3, 5])
    a[10:12, :, 3:9] = 1
    data[10:12, :, 3:9] = 1
    np.testing.assert_array_equal(zarr.open_array(st)[...], data)
    assert a.chunks == (8, 8, 4) and a.shards == (16, 32, 16)


def test_create_array_shards_and_fill_omitted():
    st = MemoryStore()
    a = zarr.create_array(st, shape=(64, 64), chunks=(8, 8), shards=(32, 32), dtype="int32", fill_value=-1)
    meta = json.loads(st.get("zarr.json"))
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == [32, 32]
    assert meta["codecs"][0]["name"] == "sharding_indexed"
    a[0:8, 0:8] = 5  # one inner chunk in shard (0, 0)
    raw = st.get("c/0/0")
    n = 16
    idx = np.frombuffer(raw[-(16 * n + 4):-4], dtype="<u8").reshape(n, 2)
    assert (idx[1:] == 2**64 - 1).all() and idx[0, 1] > 0
    a[0:8, 0:8] = -1  # back to fill: the whole shard disappears
    assert st.get("c/0/0") is None
    assert list(st.list_prefix("c")) == []
    with pytest.raises(MetadataError):
        zarr.create_array(MemoryStore(), shape=(10,), chunks=(3,), shards=(8,), dtype="u1")


def test_partial_reads_fetch_only_what_they_need():
    base = MemoryStore()
    data = vol((64, 64))
    zarr.create_array(base, shape=(64, 64), chunks=(8, 8), shards=(64, 64), dtype="uint16",
                      compressors=None)[...] = data
    cs = CountingStore(base)
    a = zarr.Array.open(cs)
    cs.requests.clear()
    np.testing.assert_array_equal(a[9:12, 17:20], data[9:12, 17:20])
    reqs = cs.data_requests()
    # the index (one suffix/prefix request) and exactly one inner chunk
    assert len(reqs) == 2, reqs
    ranges = [r[1] for r in reqs]
    assert tuple(ranges[1]) [1] - tuple(ranges[1])[0] == 8 * 8 * 2
    index_size = 64 * 16 + 4
    assert tuple(ranges[0])[1] - tuple(ranges[0])[0] == index_size
    # k adjacent inner chunks along the last axis: one coalesced range
    cs.requests.clear()
    np.testing.assert_array_equal(a[8:16, 0:40], data[8:16, 0:40])
    reqs = cs.data_requests()
    assert len(reqs) == 2
    assert tuple(reqs[1][1])[1] - tuple(reqs[1][1])[0] == 5 * 8 * 8 * 2
    # a missing shard reads as fill without error
    b = zarr.create_array(MemoryStore(), shape=(20,), chunks=(5,), shards=(10,), dtype="u1", fill_value=9)
    assert (b[3:17] == 9).all()


def test_nested_sharding_and_transpose_before_shard():
    data = vol((32, 24, 16), "float32")
    inner = sharding((4, 4, 4), [LE])
    outer = {"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 8, 8], "codecs": [inner],
                                                           "index_codecs": [BE], "index_location": "start"}}
    a = zarr.create_array(MemoryStore(), shape=data.shape, dtype="float32", chunks=(16, 24, 16), codecs=[outer])
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[5:9, 3, ::5], data[5:9, 3, ::5])
    # transpose before the shard: the shard sees shape (16, 8, 24) and the inner chunk shape must divide it
    t = {"name": "transpose", "configuration": {"order": [2, 0, 1]}}
    a = zarr.create_array(MemoryStore(), shape=data.shape, dtype="float32", chunks=(8, 24, 16),
                          codecs=[t, sharding((4, 4, 8), [LE])])
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    with pytest.raises(MetadataError):
        zarr.create_array(MemoryStore(), shape=data.shape, dtype="float32", chunks=(8, 24, 16),
                          codecs=[t, sharding((8, 8, 5), [LE])])


@pytest.mark.parametrize("conf", [
    {"chunk_shape": [3], "codecs": [LE], "index_codecs": [LE]},  # does not divide 8
    {"chunk_shape": [4, 4], "codecs": [LE], "index_codecs": [LE]},
    {"chunk_shape": [4], "codecs": [LE], "index_codecs": [LE, {"name": "gzip", "configuration": {"level": 1}}]},
    {"chunk_shape": [4], "codecs": [LE], "index_codecs": [LE], "index_location": "middle"},
    {"chunk_shape": [4], "codecs": [LE]},
    {"chunk_shape": [0], "codecs": [LE], "index_codecs": [LE]},
    {"chunk_shape": [4], "codecs": [], "index_codecs": [LE]},
    {"chunk_shape": [4], "codecs": [LE], "index_codecs": [LE], "foo": 1},
])
def test_bad_sharding_metadata(conf):
    with pytest.raises(MetadataError):
        zarr.create_array(MemoryStore(), shape=(16,), dtype="u2", chunks=(8,),
                          codecs=[{"name": "sharding_indexed", "configuration": conf}])


def _write_one_shard(tmp_path, index_location="end", index_codecs=(LE, {"name": "crc32c"})):
    st = LocalStore(tmp_path / "s")
    a = zarr.create_array(st, shape=(16,), chunks=(16,), dtype="u2",
                          codecs=[sharding((4,), [LE], index_codecs, index_location)])
    a[...] = np.arange(16)
    return st, a, tmp_path / "s" / "c" / "0"


def _read_all(a):
    # both the whole-shard path and the partial path
    with pytest.raises((CorruptChunkError, ChecksumError)) as e1:
        a[...]
    with pytest.raises((CorruptChunkError, ChecksumError)) as e2:
        a[1:2]
    return e1.value, e2.value


def test_corrupt_shards(tmp_path):
    st, a, path = _write_one_shard(tmp_path)
    good = path.read_bytes()
    n = 4
    idx = np.frombuffer(good[-(16 * n + 4):-4], dtype="<u8").copy().reshape(n, 2)

    def with_index(new_idx, fix_crc=True):
        from zarrbolt.kernels import crc32c

        body = new_idx.astype("<u8").tobytes()
        crc = crc32c(body) if fix_crc else int.from_bytes(good[-4:], "little")
        return good[: -(16 * n + 4)] + body + crc.to_bytes(4, "little")

    cases = {
        "truncated": good[:-10],
        "tiny": good[:5],
        "bad-crc": good[:-1] + bytes([good[-1] ^ 1]),
        "overflow": with_index(np.array([[2**64 - 2, 10]] + idx[1:].tolist(), dtype=np.uint64)),
        "out-of-range": with_index(np.array([[0, 1000]] + idx[1:].tolist(), dtype=np.uint64)),
        "into-index": with_index(np.array([[len(good) - 20, 8]] + idx[1:].tolist(), dtype=np.uint64)),
        "half-empty": with_index(np.array([[2**64 - 1, 8]] + idx[1:].tolist(), dtype=np.uint64)),
        "wrong-size": with_index(np.array([[0, 4]] + idx[1:].tolist(), dtype=np.uint64)),
    }
    for name, raw in cases.items():
        path.write_bytes(raw)
        e1, e2 = _read_all(a)
        if name == "bad-crc":
            assert isinstance(e1, ChecksumError) and isinstance(e2, ChecksumError)
        assert "c/0" in str(e1) and "c/0" in str(e2), (name, str(e1))
    path.write_bytes(good)
    np.testing.assert_array_equal(a[...], np.arange(16))


def test_corrupt_shard_non_default_index_codecs(tmp_path):
    st, a, path = _write_one_shard(tmp_path, "start", (BE,))
    good = path.read_bytes()
    bad = (2**40).to_bytes(8, "big") + good[8:]
    path.write_bytes(bad)
    _read_all(a)
    path.write_bytes(good)
    np.testing.assert_array_equal(a[...], np.arange(16))


def test_concurrent_writes_to_different_shards(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    a = zarr.create_array(str(tmp_path / "p"), shape=(8, 64), chunks=(8, 8), shards=(8, 16), dtype="u2")
    data = vol((8, 64))

    def w(i):
        a[:, i * 16:(i + 1) * 16] = data[:, i * 16:(i + 1) * 16]

    with ThreadPoolExecutor(4) as ex:
        list(ex.map(w, range(4)))
    np.testing.assert_array_equal(a[...], data)


def test_codec_json_roundtrip():
    c = ShardingCodec.from_json(sharding((2, 2))["configuration"])
    assert c.to_json() == sharding((2, 2))
    assert ShardingCodec.from_json({"chunk_shape": [2], "codecs": [LE], "index_codecs": [LE]}).index_location == "end"


class ShortReadStore(CountingStore):
    """A store whose shard changes under the reader: ranged reads come back one byte short."""

    def get_into(self, key, buffer, offset=0):
        got = self._inner.get_into(key, buffer, offset)
        return got - 1 if got and "c/" in key else got

    def get_ranges_into(self, key, ranges, buffer):
        got = self._inner.get_ranges_into(key, ranges, buffer)
        return [g - 1 if g and "c/" in key else g for g in got] if got is not None else got


def test_fused_sharded_read_detects_short_range_reads():
    base = MemoryStore()
    data = vol((32, 32))
    zarr.create_array(base, shape=(32, 32), chunks=(8, 8), shards=(32, 32), dtype="uint16")[...] = data
    a = zarr.Array.open(ShortReadStore(base))
    with pytest.raises(CorruptChunkError, match="changed or was truncated"):
        a[0:16, 0:16]


def test_fused_sharded_read_chunks_larger_than_the_arena():
    import sys

    za = sys.modules["zarrbolt.pipeline.buffers"]  # the per-thread buffers of the fused reads
    data = vol((32, 64))
    a = zarr.create_array(MemoryStore(), shape=(32, 64), chunks=(8, 16), shards=(32, 64), dtype="uint16",
                          compressors=None)
    a[...] = data
    old = getattr(za._arenas, "buf", None)
    za._arenas.buf = memoryview(bytearray(300))  # an inner chunk is 256 bytes: two never fit together
    try:
        with zarr.config.set(threads=1):
            np.testing.assert_array_equal(a[...], data)
            np.testing.assert_array_equal(a[3:29, 5:60], data[3:29, 5:60])
        za._arenas.buf = memoryview(bytearray(100))  # smaller than one inner chunk
        with zarr.config.set(threads=1):
            np.testing.assert_array_equal(a[...], data)
    finally:
        za._arenas.buf = old


def test_single_shard_write_encodes_inner_chunks_in_parallel(monkeypatch):
    """Fewer shards than threads: the inner chunks of one shard are encoded on the pool, and the
    stored shard is byte-for-byte the one a single thread writes."""
    import time

    data = vol((64, 128, 128))
    stored = {}
    for threads in (1, 4):
        store = MemoryStore()
        with zarr.config.set(threads=threads, fused_pipeline=False):  # the Python per-codec path
            a = zarr.create_array(store, shape=data.shape, chunks=(32, 32, 32), shards=data.shape, dtype="uint16")
            idents = set()
            orig = ShardingCodec.inner_region

            def spy(self, lay, flat, orig=orig, idents=idents):
                idents.add(threading.get_ident())
                time.sleep(0.002)  # let every pool thread pick up a batch
                return orig(self, lay, flat)

            monkeypatch.setattr(ShardingCodec, "inner_region", spy)
            a[...] = data
            monkeypatch.setattr(ShardingCodec, "inner_region", orig)
        assert len(idents) == (1 if threads == 1 else 4)
        stored[threads] = store.get("c/0/0/0")
        np.testing.assert_array_equal(zarr.Array.open(store)[...], data)
    assert stored[1] == stored[4]
    # the fused C encode of the inner chunks (on the native pool) writes the same shard
    for threads in (1, 4):
        store = MemoryStore()
        with zarr.config.set(threads=threads):
            a = zarr.create_array(store, shape=data.shape, chunks=(32, 32, 32), shards=data.shape, dtype="uint16")
            a[...] = data
            assert a._eplans["inner"] is not None
        assert store.get("c/0/0/0") == stored[1]
