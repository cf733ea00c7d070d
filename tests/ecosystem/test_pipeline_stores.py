"""zarrbolt's read and write planners on zarr-python 3 stores, through the adapters of
``zarrbolt.codec_pipeline.stores`` / ``staging``: arrays written by zarr-python read by zarrbolt
(and back), request counts and concurrency measured with a counting wrapper store."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")

from zarr.abc.store import OffsetByteRequest as ZOffset  # noqa: E402
from zarr.abc.store import RangeByteRequest as ZRange  # noqa: E402
from zarr.abc.store import SuffixByteRequest as ZSuffix  # noqa: E402
from zarr.core.buffer.core import default_buffer_prototype  # noqa: E402
from zarr.storage import LocalStore as ZLocalStore  # noqa: E402
from zarr.storage import ManagedMemoryStore, MemoryStore, WrapperStore  # noqa: E402
from zarr.testing.store import LatencyStore  # noqa: E402

import zarrbolt  # noqa: E402
from zarrbolt.codec_pipeline.stores import (  # noqa: E402
    DeferredWriteStore,
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
