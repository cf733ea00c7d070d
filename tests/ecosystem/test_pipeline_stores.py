"""zarrbolt's read and write planners on zarr-python 3 stores, through the adapters of
``zarrbolt.zarr_python.stores`` / ``staging``: arrays written by zarr-python read by zarrbolt
(and back), request counts and concurrency measured with a counting wrapper store."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")

from zarr.abc.store import RangeByteRequest as ZRange  # noqa: E402
from zarr.abc.store import Store as ZarrStoreABC  # noqa: E402
from zarr.abc.store import SuffixByteRequest as ZSuffix  # noqa: E402
from zarr.core.buffer.core import default_buffer_prototype  # noqa: E402
from zarr.storage import LocalStore as ZLocalStore  # noqa: E402
from zarr.storage import ManagedMemoryStore, MemoryStore, WrapperStore  # noqa: E402
from zarr.testing.store import LatencyStore  # noqa: E402

import zarrbolt  # noqa: E402
from zarrbolt.storage.staged import StagedStore  # noqa: E402
from zarrbolt.storage.write_behind import WriteBehindStore  # noqa: E402
from zarrbolt.zarr_python.staging import (  # noqa: E402
    read_requests,
    staged_read_store,
    write_requests,
)
from zarrbolt.zarr_python.stores import (  # noqa: E402
    LoopBridge,
    ZarrMemoryView,
    native_store,
)
from zarrbolt.errors import ChecksumError, CorruptChunkError, ReadOnlyError, StoreError  # noqa: E402
from zarrbolt.indexing import basic_indexer  # noqa: E402
from zarrbolt.metadata.nodes import parse_node_metadata  # noqa: E402
from zarrbolt.pipeline import read as zb_read  # noqa: E402
from zarrbolt.pipeline import write as zb_write  # noqa: E402
from zarrbolt.pipeline.context import ArrayIO  # noqa: E402
from zarrbolt.storage import LocalStore, SuffixByteRequest  # noqa: E402


class CountingStore(WrapperStore):
    """Counts ``get`` calls (key, byte range, bytes returned) and the most in flight at once,
    optionally sleeping ``latency`` seconds in each."""

    def __init__(self, store, latency: float = 0.0):
        super().__init__(store)
        self.latency = latency
        self.gets: list[tuple] = []
        self.sets: list[str] = []
        self.deletes: list[str] = []
        self.inflight = 0
        self.max_inflight = 0

    def _with_store(self, store):
        return type(self)(store, self.latency)

    async def _enter(self):
        self.inflight += 1
        self.max_inflight = max(self.max_inflight, self.inflight)
        if self.latency:
            await asyncio.sleep(self.latency)

    async def get(self, key, prototype=None, byte_range=None):
        await self._enter()
        try:
            buf = await self._store.get(key, prototype or default_buffer_prototype(), byte_range)
        finally:
            self.inflight -= 1
        self.gets.append((key, byte_range, None if buf is None else len(buf)))
        return buf

    def get_ranges(self, key, byte_ranges, **kw):
        # zarr's own coalescing get_ranges, through this wrapper's counted get (WrapperStore would
        # hand it to the wrapped store, uncounted)
        return ZarrStoreABC.get_ranges(self, key, byte_ranges, **kw)

    async def set(self, key, value):
        await self._enter()
        try:
            await self._store.set(key, value)
        finally:
            self.inflight -= 1
        self.sets.append(key)

    async def delete(self, key):
        await self._enter()
        try:
            await self._store.delete(key)
        finally:
            self.inflight -= 1
        self.deletes.append(key)

    def reset(self):
        self.gets.clear()
        self.sets.clear()
        self.deletes.clear()
        self.max_inflight = 0

    def chunk_gets(self):
        return [g for g in self.gets if not g[0].endswith("zarr.json")]


def _mem_latency():
    return LatencyStore(MemoryStore(), get_latency=0.0, set_latency=0.0)


def _meta(zstore, path):
    raw = zstore._store_dict[f"{path}/zarr.json"] if isinstance(zstore, MemoryStore) else None
    if raw is None:
        raw = zarr.core.sync.sync(zstore.get(f"{path}/zarr.json", default_buffer_prototype()))
    return parse_node_metadata(raw.to_bytes())


async def _meta_async(zstore, path):
    raw = await zstore.get(f"{path}/zarr.json", default_buffer_prototype())
    return parse_node_metadata(raw.to_bytes())


def _indexer(sel, shape):
    return lambda cs: basic_indexer(sel, shape, cs)


# ---------------------------------------------------------------------------- native_store
def test_native_store_kinds(tmp_path):
    z = ZLocalStore(str(tmp_path))
    s = native_store(z)
    assert isinstance(s, LocalStore) and s.root == tmp_path and not s.read_only
    assert native_store(ZLocalStore(tmp_path)) is s  # cached per root (str or Path) and mode
    ro = native_store(ZLocalStore(tmp_path, read_only=True))
    assert ro is not s and ro.read_only and ro.native_files() is not None
    assert isinstance(native_store(MemoryStore()), ZarrMemoryView)
    assert native_store(LatencyStore(MemoryStore())) is None
    assert native_store(CountingStore(ZLocalStore(tmp_path))) is None
    from zarr.storage import GpuMemoryStore, ZipStore

    assert native_store(GpuMemoryStore()) is None
    assert native_store(ZipStore(tmp_path / "x.zip", mode="w")) is None

    class Sub(ZLocalStore):
        pass

    assert native_store(Sub(tmp_path)) is None  # a subclass may change how values are kept

    class MemSub(MemoryStore):
        async def get(self, key, prototype=None, byte_range=None):
            return None

    assert native_store(MemSub()) is None


def test_native_local_store_same_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    z = ZLocalStore("rel")  # relative roots name the directory under the working directory
    a = zarr.create_array(z, name="a", shape=(20, 20), chunks=(8, 8), dtype="f8")
    data = np.random.default_rng(0).random((20, 20))
    a[:] = data
    s = native_store(z)
    assert s.root == tmp_path / "rel"
    assert sorted(s.list_prefix("a/c/")) == sorted(_sync_list(z, "a/c/"))
    io = ArrayIO(s, "a", _meta(z, "a"))
    np.testing.assert_array_equal(zb_read.read(io, _indexer((slice(3, 17), slice(None)), (20, 20))), data[3:17])
    # zarrbolt writes land where zarr-python reads them
    io.store.set("a/c/0/0", s.get("a/c/1/1"))
    np.testing.assert_array_equal(zarr.open_array(z, path="a")[:8, :8], data[8:16, 8:16])


def _sync_list(z, prefix):
    async def collect():
        return [k async for k in z.list_prefix(prefix)]

    return zarr.core.sync.sync(collect())


def test_memory_view_shares_dict_zero_copy():
    z = MemoryStore()
    a = zarr.create_array(z, shape=(100,), chunks=(10,), dtype="i4", compressors=None)
    a[:] = np.arange(100)
    s = native_store(z)
    v = s.get("c/3")
    assert isinstance(v, memoryview) and v.readonly
    assert np.shares_memory(np.frombuffer(v, np.uint8), z._store_dict["c/3"].as_numpy_array())
    assert bytes(s.get("c/3", SuffixByteRequest(4))) == np.int32(39).tobytes()
    assert s.get("missing") is None and not s.exists("missing")
    buf = bytearray(12)
    assert s.read_into("c/3", buf) == -40
    assert s.get_ranges_into("c/3", [(0, 4), (36, 44)], buf) == [4, 4]
    assert np.frombuffer(bytes(buf[:8]), "<i4").tolist() == [30, 39]
    # writes: private copies, zarr Buffers zarr-python reads
    src = bytearray(np.arange(100, 110, dtype="<i4").tobytes())
    s.set_parts("c/0", [memoryview(src)[:20], memoryview(src)[20:]])
    src[:4] = b"\0\0\0\0"
    assert isinstance(z._store_dict["c/0"], zarr.core.buffer.Buffer)
    np.testing.assert_array_equal(a[:10], np.arange(100, 110))
    s.erase("c/1")
    assert "c/1" not in z._store_dict
    np.testing.assert_array_equal(a[10:20], 0)
    assert set(s.list_prefix("c/")) == {f"c/{i}" for i in range(10)} - {"c/1"}
    with pytest.raises(ReadOnlyError):
        native_store(z.with_read_only(True)).set("c/0", b"x")


def test_managed_memory_store_prefix():
    z = ManagedMemoryStore(name="zb-test-prefix", path="sub")
    a = zarr.create_array(z, shape=(6,), chunks=(3,), dtype="u1", compressors=None)
    a[:] = np.arange(6)
    s = native_store(z)
    assert sorted(s.list()) == ["c/0", "c/1", "zarr.json"]
    assert bytes(s.get("c/1")) == bytes([3, 4, 5])
    s.set("c/0", bytes([9, 9, 9]))
    np.testing.assert_array_equal(a[:], [9, 9, 9, 3, 4, 5])


# ---------------------------------------------------------------------------- LoopBridge
def test_loop_bridge_api():
    z = CountingStore(MemoryStore())
    a = zarr.create_array(z, shape=(40,), chunks=(10,), dtype="i4", compressors=None)
    a[:] = np.arange(40)

    async def main():
        b = LoopBridge(z, asyncio.get_running_loop())
        with pytest.raises(StoreError, match="own thread"):
            b.get("c/0")

        def work():
            out = {}
            out["whole"] = np.frombuffer(b.get("c/1"), "<i4").tolist()
            out["range"] = np.frombuffer(b.get("c/1", (4, 12)), "<i4").tolist()
            out["suffix"] = np.frombuffer(b.get("c/1", SuffixByteRequest(4)), "<i4").tolist()
            out["empty"] = bytes(b.get("c/1", (8, 8)))
            out["missing"] = b.get("c/9")
            out["exists"] = (b.exists("c/0"), b.exists("c/9"))
            out["size"] = b.getsize("c/2")
            buf = bytearray(12)
            out["ranges"] = b.get_ranges_into("c/3", [(0, 4), (32, 40)], buf)
            out["ranges_buf"] = np.frombuffer(bytes(buf[:12]), "<i4").tolist()
            out["ranges_missing"] = b.get_ranges_into("c/9", [(0, 4)], buf)
            out["read_into"] = (b.read_into("c/0", bytearray(40)), b.read_into("c/0", bytearray(4)))
            out["list"] = sorted(b.list_prefix("c/"))
            with pytest.raises(StoreError, match="c/9"):
                b.getsize("c/9")
            b.set("c/0", np.arange(50, 60, dtype="<i4").tobytes())
            b.erase("c/3")
            return out

        return await asyncio.to_thread(work)

    out = asyncio.run(main())
    assert out["whole"] == list(range(10, 20))
    assert out["range"] == [11, 12]
    assert out["suffix"] == [19]
    assert out["empty"] == b"" and out["missing"] is None
    assert out["exists"] == (True, False) and out["size"] == 40
    assert out["ranges"] == [4, 8] and out["ranges_buf"] == [30, 38, 39] and out["ranges_missing"] is None
    assert out["read_into"] == (40, -40)
    assert out["list"] == ["c/0", "c/1", "c/2", "c/3"]
    np.testing.assert_array_equal(a[:10], np.arange(50, 60))
    np.testing.assert_array_equal(a[30:], 0)


class FailingStore(WrapperStore):
    async def get(self, key, prototype=None, byte_range=None):
        if "/c/" in key or key.startswith("c/"):
            raise ConnectionError("network down")
        return await self._store.get(key, prototype, byte_range)

    def get_ranges(self, key, byte_ranges, **kw):
        return ZarrStoreABC.get_ranges(self, key, byte_ranges, **kw)


def test_loop_bridge_errors_are_typed():
    z = FailingStore(MemoryStore())

    async def main():
        b = LoopBridge(z, asyncio.get_running_loop())
        with pytest.raises(StoreError, match=r"'c/0'.*network down"):
            await asyncio.to_thread(b.get, "c/0")
        ro = LoopBridge(MemoryStore(read_only=True), asyncio.get_running_loop())
        with pytest.raises(ReadOnlyError):
            await asyncio.to_thread(ro.set, "c/0", b"x")

    asyncio.run(main())
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(StoreError, match="not running"):
            LoopBridge(MemoryStore(), loop).get("c/0")
    finally:
        loop.close()


@pytest.mark.parametrize("kind", ["memory", "local", "latency"])
@pytest.mark.parametrize("sharded", [False, True])
def test_planner_reads_through_bridge(tmp_path, kind, sharded):
    z = {"memory": MemoryStore, "latency": _mem_latency, "local": lambda: ZLocalStore(tmp_path)}[kind]()
    shape = (50, 70)
    data = np.random.default_rng(1).integers(0, 1000, shape).astype("u2")
    kw = dict(shards=(20, 20), chunks=(10, 10)) if sharded else dict(chunks=(16, 16))
    a = zarr.create_array(z, name="arr", shape=shape, dtype="u2", fill_value=7, **kw)
    a[:] = data
    a[40:, 60:] = 7  # some chunks / inner chunks absent
    data[40:, 60:] = 7
    sel = (slice(3, 47), slice(5, 66))

    async def main():
        io = ArrayIO(LoopBridge(z, asyncio.get_running_loop()), "arr", await _meta_async(z, "arr"))
        return await asyncio.to_thread(zb_read.read, io, _indexer(sel, shape))

    np.testing.assert_array_equal(asyncio.run(main()), data[sel])


# ---------------------------------------------------------------------------- staged reads
def _staged_read(zstore, path, sel, *, concurrency=None, before=None):
    """Stage what reading ``sel`` of array ``path`` needs, then read it with zarrbolt's planner
    in a worker thread; ``before()`` runs just before staging (to reset counters)."""

    async def main():
        loop = asyncio.get_running_loop()
        meta = await _meta_async(zstore, path)
        mk = _indexer(sel, tuple(meta.shape))
        io0 = ArrayIO(LoopBridge(zstore, loop), path, meta)
        reqs = read_requests(io0, mk)
        if before is not None:
            before()
        staged = await staged_read_store(zstore, loop, io0, reqs, concurrency=concurrency)
        io = ArrayIO(staged, path, meta)
        out = await asyncio.to_thread(zb_read.read, io, mk)
        return out, staged, reqs

    return asyncio.run(main())


def _make(zstore, shape, *, sharded, dtype="u2", loc="end", compressed=True, seed=2, name="arr", blank=None):
    """An array written by zarr-python with random data (fill value 3 at ``blank``: chunks, inner
    chunks or shards holding only it are not stored)."""
    data = np.random.default_rng(seed).integers(0, 5000, shape).astype(dtype)
    if blank is not None:
        data[blank] = 3
    if sharded:
        from zarr.codecs import BytesCodec, ShardingCodec, ZstdCodec

        kw = dict(shards=sharded[0], chunks=sharded[1])
        if loc == "start":  # the sharding codec alone in the chain, its inner chunks compressed
            inner = [BytesCodec()] + ([ZstdCodec()] if compressed else [])
            kw = dict(chunks=sharded[0], compressors=None,
                      serializer=ShardingCodec(chunk_shape=sharded[1], codecs=inner, index_location="start"))
    else:
        kw = dict(chunks=tuple(min(16, s) for s in shape))
    if not compressed:
        kw["compressors"] = None
    a = zarr.create_array(zstore, name=name, shape=shape, dtype=dtype, fill_value=3, **kw)
    a[:] = data
    return a, data


SELECTIONS = [
    (slice(None), slice(None)),
    (slice(5, 37), slice(11, 60)),
    (7, slice(None)),
    (slice(None, None, 3), slice(2, 50, 7)),
]


def _fsspec_store(tmp_path):
    pytest.importorskip("fsspec")
    from zarr.storage import FsspecStore

    return FsspecStore.from_url(f"memory://zb-{abs(hash(str(tmp_path)))}/data")


def _zip_store(tmp_path):
    from zarr.storage import ZipStore

    return ZipStore(tmp_path / "data.zip", mode="a")


STORES = {"memory": lambda p: MemoryStore(), "latency": lambda p: _mem_latency(), "local": ZLocalStore,
          "fsspec": _fsspec_store, "zip": _zip_store}


@pytest.mark.parametrize("kind", ["memory", "local", "latency", "fsspec", "zip"])
@pytest.mark.parametrize("layout", ["chunks", "shards-end", "shards-start"])
@pytest.mark.parametrize("sel", SELECTIONS, ids=["all", "box", "row", "steps"])
def test_staged_reads_match_zarr(tmp_path, kind, layout, sel):
    z = STORES[kind](tmp_path)
    sharded = ((20, 20), (10, 10)) if layout != "chunks" else None
    # absent chunks / inner chunks / shards at [30:, 40:] (zip files cannot overwrite: one write)
    a, data = _make(z, (45, 66), sharded=sharded, loc=layout.rsplit("-", 1)[-1],
                    blank=(slice(30, None), slice(40, None)))
    out, staged, _ = _staged_read(z, "arr", sel)
    np.testing.assert_array_equal(out, a[sel])
    assert isinstance(staged, StagedStore)


def test_cold_read_request_counts():
    z = CountingStore(MemoryStore())
    _make(z, (64, 64, 64), sharded=((64, 64, 64), (32, 32, 32)), name="s")
    _make(z, (64, 64, 64), sharded=None, name="u")
    zarr.create_array(z, name="u32", shape=(64, 64, 64), chunks=(32, 32, 32), dtype="u2")[:] = 1
    sel = (slice(0, 32), slice(32, 64), slice(0, 32))

    out, staged, reqs = _staged_read(z, "s", sel, before=z.reset)
    assert reqs == {"s/c/0/0/0": [2]}
    gets = z.chunk_gets()
    assert len(gets) == 2, gets  # the index (one suffix request) and the inner chunk
    assert isinstance(gets[0][1], ZSuffix) and isinstance(gets[1][1], ZRange)
    np.testing.assert_array_equal(out, zarr.open_array(z, path="s")[sel])
    assert len(z.chunk_gets()) > 2  # (zarr-python's own read)

    out, _, _ = _staged_read(z, "u32", sel, before=z.reset)
    assert len(z.chunk_gets()) == 1 and z.chunk_gets()[0][1] is None  # one whole chunk
    assert (out == 1).all()


def test_planner_reads_only_staged_bytes():
    """Every request of a staged read happens while staging; the planner's own reads (shard
    index by size + range, inner chunks by get_ranges_into) are served from memory."""
    z = CountingStore(MemoryStore())
    a, data = _make(z, (90, 90), sharded=((30, 30), (10, 10)), compressed=False)
    counts = []

    def reset():
        z.reset()

    sel = (slice(4, 77), slice(13, 61))
    out, staged, reqs = _staged_read(z, "arr", sel, before=reset)
    counts.append(len(z.chunk_gets()))

    async def again():
        meta = await _meta_async(z, "arr")
        z.reset()
        io = ArrayIO(staged, "arr", meta)
        staged.base.loop = asyncio.get_running_loop()
        return await asyncio.to_thread(zb_read.read, io, _indexer(sel, (90, 90)))

    out2 = asyncio.run(again())
    assert z.chunk_gets() == []  # a second read of the same selection needs no request at all
    np.testing.assert_array_equal(out, data[sel])
    np.testing.assert_array_equal(out2, data[sel])
    # 9 shards, 2 of them wanted whole (one request each); 7 read in part: their index, then
    # their wanted inner chunks, close together: one range each
    assert counts == [2 + 7 * 2]
    assert len(reqs) == 9


def test_whole_shard_in_one_request():
    z = CountingStore(MemoryStore())
    a, data = _make(z, (40, 40), sharded=((20, 20), (10, 10)))
    out, _, reqs = _staged_read(z, "arr", (slice(0, 20), slice(0, 40)), before=z.reset)
    assert reqs == {"arr/c/0/0": [0, 1, 2, 3], "arr/c/0/1": [0, 1, 2, 3]}
    assert [g[1] for g in z.chunk_gets()] == [None, None]
    np.testing.assert_array_equal(out, data[:20])


@pytest.mark.parametrize("limit", [4, None])
def test_staging_is_concurrent_and_bounded(limit):
    lat = LatencyStore(MemoryStore(), get_latency=0.05)
    z = CountingStore(lat)
    _make(z, (20, 16), sharded=None, compressed=False)  # 16x16 chunks: 2 chunks
    zarr.create_array(z, name="many", shape=(20, 10), chunks=(1, 10), dtype="i4")[:] = np.arange(200).reshape(20, 10)
    # 20 shards, one inner chunk wanted from each: 20 index + 20 range requests
    zarr.create_array(z, name="sh", shape=(20, 20), shards=(1, 20), chunks=(1, 10), dtype="i4")[:] = 5
    with zarr.config.set({"async.concurrency": 10}):
        out, _, reqs = _staged_read(z, "many", (slice(None), slice(None)), concurrency=limit, before=z.reset)
        assert len(reqs) == 20 and len(z.chunk_gets()) == 20
        want = 10 if limit is None else limit
        assert z.max_inflight == want  # all of them in flight, up to the bound
        np.testing.assert_array_equal(out, np.arange(200).reshape(20, 10))
        out, _, reqs = _staged_read(z, "sh", (slice(None), slice(0, 10)), concurrency=limit, before=z.reset)
        assert len(reqs) == 20 and len(z.chunk_gets()) == 40
        assert z.max_inflight == want
        assert (out == 5).all()


def test_staged_missing_keys_and_shards():
    z = CountingStore(MemoryStore())
    a, data = _make(z, (40, 40), sharded=((20, 20), (10, 10)))
    b, _ = _make(z, (40, 40), sharded=None, name="u")
    a[20:, :] = 3  # the lower shards hold only fill values: deleted
    b[16:, :] = 3
    out, staged, reqs = _staged_read(z, "arr", (slice(15, 35), slice(5, 30)), before=z.reset)
    assert not staged.exists("arr/c/1/0") and staged.get("arr/c/1/0") is None
    n = len(z.chunk_gets())
    np.testing.assert_array_equal(out, a[15:35, 5:30])
    assert n == 2 + 2 + 2  # 2 present shards (index + range), 2 absent ones (index request only)
    out, staged, reqs = _staged_read(z, "u", (slice(None), slice(None)), before=z.reset)
    assert len(z.chunk_gets()) == len(reqs) == 9
    np.testing.assert_array_equal(out, b[:])


class VanishingShardStore(CountingStore):
    """Its ranged reads find the key gone (as zarr-python's get_ranges reports it: a group holding
    FileNotFoundError), as when a shard is deleted between its index read and its data read."""

    def get_ranges(self, key, byte_ranges, **kw):
        async def gone():
            raise BaseExceptionGroup("ranged read failed", [FileNotFoundError(key)])  # noqa: F821 (py >= 3.11)
            yield  # an async generator, as zarr's

        return gone()


def test_shard_gone_after_its_index_reads_as_fill():
    z = VanishingShardStore(MemoryStore())
    a, data = _make(z, (40, 40), sharded=((20, 20), (10, 10)))
    out, staged, reqs = _staged_read(z, "arr", (slice(0, 5), slice(0, 5)), before=z.reset)
    assert staged.get("arr/c/0/0") is None  # absent, as a shard without an index
    np.testing.assert_array_equal(out, np.full((5, 5), a.fill_value, dtype=data.dtype))


def _corrupt(zstore, key, fn):
    buf = zstore._store_dict[key].to_bytes()
    zstore._store_dict[key] = default_buffer_prototype().buffer.from_bytes(fn(buf))


def _local_error(tmp_path, zmem, key, sel):
    """What zarrbolt raises reading the same (damaged) array from a LocalStore."""
    for k, v in zmem._store_dict.items():
        p = tmp_path / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(v.to_bytes())
    arr = zarrbolt.open_array(LocalStore(tmp_path), path="arr", mode="r")
    with pytest.raises(Exception) as info:
        arr[sel]
    return info.value


@pytest.mark.parametrize("damage", ["checksum", "truncated", "tiny"])
def test_staged_damaged_index_raises_like_local(tmp_path, damage):
    z = MemoryStore()
    _make(z, (40, 40), sharded=((20, 20), (10, 10)), compressed=False)
    key = "arr/c/0/0"
    nidx = 4 * 16 + 4
    if damage == "checksum":
        _corrupt(z, key, lambda b: b[:-nidx] + bytes([b[-nidx] ^ 1]) + b[-nidx + 1:])
    elif damage == "truncated":
        _corrupt(z, key, lambda b: b[:200] + b[-nidx:])  # index entries past the end
    else:
        _corrupt(z, key, lambda b: b[:10])
    sel = (slice(0, 10), slice(0, 10))
    if damage == "truncated":
        # an inner chunk past the new end (a staged read cannot know the shard's size from the
        # index request, so it finds the damage when the chunk's bytes come back short; chunks
        # still inside the shard read fine, as with zarr-python)
        sel = (slice(10, 20), slice(10, 20))
    want = _local_error(tmp_path, z, key, sel)
    assert isinstance(want, (CorruptChunkError, ChecksumError))
    with pytest.raises(type(want), match="arr/c/0/0"):
        _staged_read(z, "arr", sel)


def test_staged_store_failure_is_store_error():
    z = FailingStore(MemoryStore())
    _make(z, (40, 40), sharded=((20, 20), (10, 10)))
    with pytest.raises(StoreError, match=r"arr/c/0/0.*network down"):
        _staged_read(z, "arr", (slice(0, 10), slice(0, 10)))


def test_staged_store_serving():
    z = CountingStore(MemoryStore())
    a, data = _make(z, (40, 40), sharded=((40, 40), (10, 10)), compressed=False, dtype="u1")

    async def main():
        loop = asyncio.get_running_loop()
        meta = await _meta_async(z, "arr")
        io = ArrayIO(LoopBridge(z, loop), "arr", meta)
        z.reset()
        staged = await staged_read_store(z, loop, io, {"arr/c/0/0": [0, 5], "arr/zarr.json": None})
        assert len(z.gets) == 3  # the index, one range (the two chunks are close: coalesced), the metadata

        def work():
            out = {}
            size = staged.getsize("arr/c/0/0")
            out["size"] = size
            out["index"] = staged.get("arr/c/0/0", (size - 16 * 16 - 4, size)) is not None
            out["suffix"] = len(staged.get("arr/c/0/0", SuffixByteRequest(16 * 16 + 4)))
            buf = bytearray(200)
            # zarr-python lays inner chunks out in Morton order: flat 5 = (1, 1) is the 4th
            out["ranges"] = staged.get_ranges_into("arr/c/0/0", [(0, 100), (300, 400)], buf)
            out["chunks"] = bytes(buf)
            n0 = len(z.gets)
            out["fallthrough"] = bytes(staged.get("arr/c/0/0", (1500, 1510)))  # not staged: one more request
            out["extra"] = len(z.gets) - n0
            out["meta"] = json.loads(bytes(staged.get("arr/zarr.json")))["shape"]
            return out

        return await asyncio.to_thread(work)

    out = asyncio.run(main())
    assert out["size"] == 40 * 40 + 16 * 16 + 4  # the end of the last inner chunk, and the index
    assert out["index"] and out["suffix"] == 16 * 16 + 4
    assert out["ranges"] == [100, 100]
    assert out["chunks"] == data[:10, :10].tobytes() + data[10:20, 10:20].tobytes()
    assert out["fallthrough"] == data[30, 30:40].tobytes() and out["extra"] == 1
    assert out["meta"] == [40, 40]


# ---------------------------------------------------------------------------- deferred writes
def _write(zstore, path, sel, value, *, stage=False, check=None, staged_gets=None):
    """zarrbolt's write planner through a WriteBehindStore over a bridge, then flush (``staged_gets``
    collects the requests that staging made)."""
    staged_gets = [] if staged_gets is None else staged_gets

    async def main():
        loop = asyncio.get_running_loop()
        meta = await _meta_async(zstore, path)
        bridge = LoopBridge(zstore, loop)
        io0 = ArrayIO(bridge, path, meta)
        base = bridge
        if stage:  # the existing chunks / shards a partial write reads, staged
            reqs = write_requests(io0, basic_indexer(sel, tuple(meta.shape), io0.chunk_shape))
            base = await staged_read_store(zstore, loop, io0, reqs)
            staged_gets.extend(getattr(zstore, "gets", []))
        store = WriteBehindStore(base, bridge)
        io = ArrayIO(store, path, meta)
        chunk_shape = io.layout.shard_shape if io.sharding is not None else io.chunk_shape
        await asyncio.to_thread(zb_write.write, io, basic_indexer(sel, tuple(meta.shape), io.chunk_shape), value)
        if check is not None:
            await asyncio.to_thread(check, store, io)
        assert chunk_shape
        await store.aflush()
        assert store.pending == {}
        return store

    return asyncio.run(main())


@pytest.mark.parametrize("sharded", [False, True])
@pytest.mark.parametrize("stage", [False, True])
def test_deferred_writes_read_by_zarr(sharded, stage):
    z = CountingStore(MemoryStore())
    a, data = _make(z, (45, 66), sharded=((20, 20), (10, 10)) if sharded else None)
    sel = (slice(7, 33), slice(12, 59))
    new = np.arange(26 * 47, dtype="u2").reshape(26, 47)
    data[sel] = new
    z.reset()
    staged_gets: list = []
    _write(z, "arr", sel, new, stage=stage, staged_gets=staged_gets)
    assert z.sets and z.max_inflight >= 1
    if stage:  # only the chunks / shards written in part were read, each whole, while staging
        cs = (20, 20) if sharded else (16, 16)
        partial = {(i, j) for i in range(-(-45 // cs[0])) for j in range(-(-66 // cs[1]))
                   if not (7 <= i * cs[0] and min((i + 1) * cs[0], 45) <= 33
                           and 12 <= j * cs[1] and min((j + 1) * cs[1], 66) <= 59)
                   and i * cs[0] < 33 and (i + 1) * cs[0] > 7 and j * cs[1] < 59 and (j + 1) * cs[1] > 12}
        got = [g for g in staged_gets if not g[0].endswith("zarr.json")]
        assert sorted(g[0] for g in got) == sorted(f"arr/c/{i}/{j}" for i, j in partial)
        assert all(g[1] is None for g in got)
        assert z.chunk_gets() == got  # the write planner's reads were all served from the staged data
    np.testing.assert_array_equal(zarr.open_array(z, path="arr")[:], data)


def test_deferred_write_reads_see_pending_and_deletes():
    z = CountingStore(MemoryStore())
    a, data = _make(z, (32, 32), sharded=None)

    def check(store, io):
        # the whole first chunk row is fill now: its chunks are deleted (pending)
        assert store.get("arr/c/0/0") is None and not store.exists("arr/c/0/0")
        assert store.get("arr/c/1/1") is not None
        assert "arr/c/0/0" not in set(store.list_prefix("arr/c/"))
        store.set("arr/c/1/1", store.get("arr/c/1/0"))  # reads see the recorded value
        assert bytes(store.get("arr/c/1/1")) == bytes(store.get("arr/c/1/0"))
        assert z.sets == [] and z.deletes == []  # nothing applied before flush

    z.reset()
    _write(z, "arr", (slice(0, 16), slice(None)), 3, check=check)
    assert sorted(z.deletes) == ["arr/c/0/0", "arr/c/0/1"] and z.sets == ["arr/c/1/1"]
    data[:16] = 3
    data[16:, 16:] = data[16:, :16]
    np.testing.assert_array_equal(zarr.open_array(z, path="arr")[:], data)


def test_deferred_flush_is_bounded():
    z = CountingStore(MemoryStore(), latency=0.02)
    zarr.create_array(z, name="arr", shape=(30, 10), chunks=(1, 10), dtype="i4")
    z.reset()
    with zarr.config.set({"async.concurrency": 6}):
        _write(z, "arr", (slice(None), slice(None)), np.arange(300).reshape(30, 10))
    assert len(z.sets) == 30 and z.max_inflight == 6
    np.testing.assert_array_equal(zarr.open_array(z, path="arr")[:], np.arange(300).reshape(30, 10))


def test_deferred_flush_failure_keeps_failed_ops():
    class NoSet(WrapperStore):
        async def set(self, key, value):
            if key.endswith("c/1"):
                raise ConnectionError("nope")
            await self._store.set(key, value)

    mem = MemoryStore()
    z = NoSet(mem)
    zarr.create_array(z, name="arr", shape=(20,), chunks=(10,), dtype="i4")

    async def main():
        loop = asyncio.get_running_loop()
        bridge = LoopBridge(z, loop)
        store = WriteBehindStore(bridge, bridge)
        await asyncio.to_thread(store.set, "arr/c/0", b"x" * 40)
        await asyncio.to_thread(store.set, "arr/c/1", b"y" * 40)
        with pytest.raises(StoreError, match=r"arr/c/1.*nope"):
            await store.aflush()
        return store

    store = asyncio.run(main())
    assert list(store.pending) == ["arr/c/1"]
    assert mem._store_dict["arr/c/0"].to_bytes() == b"x" * 40
    with pytest.raises(ReadOnlyError):
        ro = LoopBridge(MemoryStore(read_only=True), asyncio.new_event_loop())
        WriteBehindStore(ro, ro).set("k", b"")


@pytest.mark.parametrize("kind", ["memory", "local"])
@pytest.mark.parametrize("sharded", [False, True])
def test_native_planner_writes_read_by_zarr(tmp_path, kind, sharded):
    z = MemoryStore() if kind == "memory" else ZLocalStore(tmp_path)
    a, data = _make(z, (45, 66), sharded=((20, 20), (10, 10)) if sharded else None)
    store = native_store(z)
    io = ArrayIO(store, "arr", _meta(z, "arr"))
    for sel, value in [((slice(None), slice(None)), data[::-1].copy()), ((slice(3, 30), slice(10, 50)), 3),
                       ((slice(41, 45), slice(0, 66)), np.arange(4 * 66).reshape(4, 66))]:
        zb_write.write(io, basic_indexer(sel, (45, 66), io.chunk_shape), value)
        if isinstance(value, np.ndarray) and value.shape == data.shape:
            data = value
        else:
            data[sel] = value
        np.testing.assert_array_equal(zarr.open_array(z, path="arr", mode="r")[:], data)
    if kind == "local":
        assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".zb-tmp-")]


def test_run_in_worker_does_not_starve_the_loops_executor(tmp_path):
    """zarr's LocalStore reads through the loop's default executor: planner threads taken from
    that executor and blocked on a LoopBridge would wait forever when it has one thread."""
    import contextvars

    from zarr.core.sync import sync

    from zarrbolt.zarr_python.stores import run_in_worker

    var = contextvars.ContextVar("var", default=0)
    z = LatencyStore(ZLocalStore(tmp_path))
    a, data = _make(z, (30, 30), sharded=((20, 20), (10, 10)))

    async def main():
        loop = asyncio.get_running_loop()
        io = ArrayIO(LoopBridge(z, loop), "arr", await _meta_async(z, "arr"))
        var.set(7)
        seen = await run_in_worker(var.get)
        out = await run_in_worker(zb_read.read, io, _indexer((slice(None), slice(None)), (30, 30)))
        return seen, out

    with zarr.config.set({"threading.max_workers": 1}):
        from zarr.core import sync as zsync

        zsync.cleanup_resources()  # a fresh executor of one thread
        try:
            seen, out = sync(main())
        finally:
            zsync.cleanup_resources()
    assert seen == 7
    np.testing.assert_array_equal(out, data)
