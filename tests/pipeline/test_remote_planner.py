"""The remote read and write planners (pipeline/remote.py, pipeline/writers.py, storage/write_behind.py) on an
in-memory store with an async face (tests/async_double.py: counts every request, injects
latency and faults).  The same behaviour against a real S3 server: test_remote_reads.py."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import zarrbolt
from async_double import AsyncMemoryStore, conflict_error
from zarrbolt.errors import CorruptChunkError, StoreError
from zarrbolt.pipeline import read as read_mod
from zarrbolt.pipeline import remote
from zarrbolt.pipeline.shard import INDEX_CACHE

DATA = (np.arange(64 * 128 * 96, dtype="uint16").reshape(64, 128, 96) * 7) % 6007
INNER = 16 * 32 * 16 * 2


@pytest.fixture
def store():
    st = AsyncMemoryStore()
    INDEX_CACHE.clear()
    yield st
    st.close()


def _make(st, shards=(32, 64, 48), name="a", data=DATA, **kw):
    a = zarrbolt.create_array(st, name=name, shape=data.shape, dtype=data.dtype, chunks=(16, 32, 16),
                              shards=shards, fill_value=0, **kw)
    a[...] = data
    st.reset()
    INDEX_CACHE.clear()
    return zarrbolt.open_array(st, path=name, mode="r+")


SELECTIONS = [
    (slice(None),) * 3,
    (slice(3, 50), slice(10, 100), slice(5, 90)),
    (7, slice(None), slice(None)),
    (slice(None), 64, 3),
    (slice(None, None, 3), slice(1, 120, 7), 5),
]


@pytest.mark.parametrize("shards", [None, (32, 64, 48)])
@pytest.mark.parametrize("sel", SELECTIONS)
def test_reads_equal_local(store, shards, sel):
    a = _make(store, shards)
    np.testing.assert_array_equal(a[sel], DATA[sel])
    np.testing.assert_array_equal(a.oindex[[1, 40, 63], :, [0, 95]], DATA[[1, 40, 63]][:, :, [0, 95]])


def test_index_at_start(store):
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [16, 32, 16], "index_location": "start",
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}
    a = zarrbolt.create_array(store, name="s", shape=DATA.shape, dtype=DATA.dtype, chunks=(32, 64, 48),
                              codecs=[sharding], fill_value=0)
    assert a._io.sharding.index_location == "start"
    a[...] = DATA
    store.reset()
    INDEX_CACHE.clear()
    np.testing.assert_array_equal(a[0:16, 0:32, 0:16], DATA[0:16, 0:32, 0:16])
    gets = store.chunk_gets()
    assert len(gets) == 2 and gets[0][1].start == 0  # the index by one prefix request


def test_request_counts(store):
    a = _make(store)
    sel = (slice(16, 32), slice(32, 64), slice(16, 32))  # one inner chunk
    np.testing.assert_array_equal(a[sel], DATA[sel])
    cold = store.chunk_gets()
    assert len(cold) == 2 and type(cold[0][1]).__name__ == "SuffixByteRequest"
    assert store.bytes_got < INNER + 4096  # not the shard
    store.reset()
    np.testing.assert_array_equal(a[sel], DATA[sel])
    assert len(store.chunk_gets()) == 1  # warm index: the inner chunk alone
    b = _make(store, None, name="b")
    np.testing.assert_array_equal(b[sel], DATA[sel])
    assert len(store.chunk_gets()) == 1


def test_full_read_of_sharded_array(store):
    a = _make(store)
    np.testing.assert_array_equal(a[...], DATA)
    assert len(store.chunk_gets()) == 8  # shards no larger than a window: one request each
    # shards larger than a window: the index by one suffix request, inner chunks coalesced
    small = AsyncMemoryStore(max_bytes_in_flight=4 * INNER)
    try:
        b = _make(small)
        before = remote.remote_counts["shard-windows"]
        remote.remote_counts["max_window_bytes"] = 0
        out = np.full(DATA.shape, 60000, DATA.dtype)  # every element must be written
        b.get_basic_selection(..., out=out)
        np.testing.assert_array_equal(out, DATA)
        gets = small.chunk_gets()
        suffixes = [g for g in gets if type(g[1]).__name__ == "SuffixByteRequest"]
        assert len(suffixes) == 8  # one index request per shard (then cached)
        assert remote.remote_counts["shard-windows"] - before == 96 // 2  # two inner chunks a window
        assert remote.remote_counts["max_window_bytes"] <= 2 * INNER  # half the bytes in flight
    finally:
        small.close()


def test_per_codec_sharded_read_is_windowed():
    small = AsyncMemoryStore(max_bytes_in_flight=4 * INNER)
    try:
        a = _make(small)
        remote.remote_counts["max_window_bytes"] = 0
        sel = (slice(None, None, 2), slice(None), slice(1, None, 3))  # steps: the per-codec path
        np.testing.assert_array_equal(a[sel], DATA[sel])
        assert remote.remote_counts["max_window_bytes"] <= 2 * INNER
    finally:
        small.close()


def test_chunked_read_is_windowed(store):
    small = AsyncMemoryStore(max_bytes_in_flight=8 * INNER)
    try:
        a = _make(small, None)
        remote.remote_counts["max_window_bytes"] = 0
        out = np.full(DATA.shape, 60000, DATA.dtype)
        a.get_basic_selection(..., out=out)
        np.testing.assert_array_equal(out, DATA)
        assert remote.remote_counts["max_window_bytes"] <= 4 * INNER
        assert len(small.chunk_gets()) == 4 * 4 * 6
    finally:
        small.close()


def test_concurrency_is_bounded():
    st = AsyncMemoryStore(latency=0.01, concurrency=5)
    try:
        a = _make(st, None)
        np.testing.assert_array_equal(a[...], DATA)
        assert st.max_seen == 5
    finally:
        st.close()


def test_absent_shards_and_inner_chunks_fill(store):
    a = zarrbolt.create_array(store, name="a", shape=DATA.shape, dtype=DATA.dtype, chunks=(16, 32, 16),
                              shards=(32, 64, 48), fill_value=9)
    a[0:16, 0:32, 0:16] = 1  # one inner chunk of one shard
    expect = np.full(DATA.shape, 9, DATA.dtype)
    expect[0:16, 0:32, 0:16] = 1
    np.testing.assert_array_equal(a[...], expect)
    np.testing.assert_array_equal(a[10:40, 20:40, 10:20], expect[10:40, 20:40, 10:20])
    missing: set = set()
    read_mod.read(a._io, lambda cs: __import__("zarrbolt").indexing.basic_indexer((slice(None),) * 3, a.shape, cs),
                  missing=missing)
    assert "a/c/0/0/0" not in missing and "a/c/1/1/1" in missing


def test_faults_raise_never_fill(store):
    a = _make(store)
    store.faults["a/c/0/0/0"] = StoreError("injected 503 for 'a/c/0/0/0'")
    with pytest.raises(StoreError, match="a/c/0/0/0"):
        a[0:4, 0:4, 0:4]
    with pytest.raises(StoreError):
        a[...]
    store.faults.clear()
    store._data["a/c/1/1/1"] = store._data["a/c/1/1/1"][:100]  # truncated below its index
    with pytest.raises(CorruptChunkError, match="a/c/1/1/1"):
        a[40:41, 70:71, 50:51]
    b = _make(store, None, name="b")
    store.faults["b/c/0/0/0"] = PermissionError("403")
    with pytest.raises(PermissionError):
        b[...]


def test_index_cache_invalidated_by_writes(store):
    a = _make(store)
    sel = (slice(0, 16), slice(0, 32), slice(0, 16))
    a[sel]
    a[sel]
    assert len(store.chunk_gets()) == 3  # cold 2, warm 1
    a[0:16, 0:32, 16:32] = 5  # rewrites shard 0/0/0: its cached index is dropped
    expect = DATA.copy()
    expect[0:16, 0:32, 16:32] = 5
    store.reset()
    np.testing.assert_array_equal(a[sel], expect[sel])
    assert len(store.chunk_gets()) == 2
    np.testing.assert_array_equal(a[...], expect)


@pytest.mark.parametrize("shards", [None, (32, 64, 48)])
def test_writes_are_concurrent_and_exact(shards):
    st = AsyncMemoryStore(latency=0.005, concurrency=6)
    try:
        a = zarrbolt.create_array(st, name="a", shape=DATA.shape, dtype=DATA.dtype, chunks=(16, 32, 16),
                                  shards=shards, fill_value=0)
        st.reset()
        a[...] = DATA
        assert st.max_seen == 6 or len(st.puts) < 6
        assert len(st.puts) == (8 if shards else 96)
        np.testing.assert_array_equal(a[...], DATA)
        a[0:16, 0:32, 0:16] = 0  # all fill: erased (a whole chunk / inner chunk)
        expect = DATA.copy()
        expect[0:16, 0:32, 0:16] = 0
        np.testing.assert_array_equal(a[...], expect)
    finally:
        st.close()


@pytest.mark.parametrize("shards", [None, (32, 64, 48)])
def test_concurrent_partial_writes_lose_nothing(shards):
    st = AsyncMemoryStore(latency=0.002)
    try:
        a = zarrbolt.create_array(st, name="a", shape=DATA.shape, dtype=DATA.dtype, chunks=(16, 32, 16),
                                  shards=shards, fill_value=0)
        a[...] = DATA
        expect = DATA.copy()
        barrier = threading.Barrier(6)
        errors = []

        def writer(i):
            try:
                barrier.wait()
                for j in range(3):
                    a[i * 2 + j % 2, j: j + 3, 0:5] = 1000 + 10 * i + j
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        ts = [threading.Thread(target=writer, args=(i,)) for i in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors
        for i in range(6):
            for j in range(3):
                expect[i * 2 + j % 2, j: j + 3, 0:5] = 1000 + 10 * i + j
        np.testing.assert_array_equal(a[...], expect)
    finally:
        st.close()


def test_conflicts_exhausted_raise(store):
    a = _make(store)

    def always_conflict(key, value, version):
        raise conflict_error()(f"{key!r}: changed")

    store.set_if_version = always_conflict
    with pytest.raises(conflict_error(), match="another writer"):
        a[0, 0, 0:3] = 1


def test_unconditional_store_partial_writes(store):
    st = AsyncMemoryStore(conditional=False)
    try:
        a = _make(st)
        a[1:3, 2:5, 7:9] = 3
        expect = DATA.copy()
        expect[1:3, 2:5, 7:9] = 3
        np.testing.assert_array_equal(a[...], expect)
    finally:
        st.close()


def test_ctrl_c_mid_read_is_prompt_and_leaves_nothing_running(sigint_raises):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    st = AsyncMemoryStore(concurrency=2)
    try:
        a = _make(st, None)
        st.latency = 0.5
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        t0 = time.perf_counter()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            a[...]
        assert time.perf_counter() - t0 < 1.5  # not the ~24 s the read would take
        deadline = time.time() + 2
        while st.in_flight and time.time() < deadline:
            time.sleep(0.01)
        assert st.in_flight == 0  # the fetches were cancelled
        st.latency = 0
        np.testing.assert_array_equal(a[0:5, 0:5, 0:5], DATA[0:5, 0:5, 0:5])  # the store still works
    finally:
        st.close()
