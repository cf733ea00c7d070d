"""Remote reads and writes through the read/write planners against a real S3 server: moto_server
on loopback behind the counting, fault-injecting proxy of tests/remote_helpers.py, with the real
ObjectStore (obstore).  Request counts are the proxy's."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

pytest.importorskip("obstore")

import zarrbolt  # noqa: E402
from remote_helpers import s3_object_store  # noqa: E402
from zarrbolt.errors import ConflictError, CorruptChunkError, StoreError, StorePermissionError, \
    StoreUnavailableError  # noqa: E402
from zarrbolt.pipeline import remote  # noqa: E402
from zarrbolt.pipeline.shard import INDEX_CACHE  # noqa: E402

DATA = ((np.arange(64 * 128 * 128, dtype="uint16").reshape(64, 128, 128) * 3) % 5001).astype("uint16")
BLOCK = (slice(32, 64), slice(32, 64), slice(32, 64))  # one 32^3 inner chunk / chunk


@pytest.fixture
def proxy(s3_proxy):
    INDEX_CACHE.clear()
    return s3_proxy


def _array(proxy, bucket, shards=(64, 128, 128), name="a", **kw):
    store = s3_object_store(proxy.endpoint, bucket, **kw)
    a = zarrbolt.create_array(store, name=name, shape=DATA.shape, dtype="uint16", chunks=(32, 32, 32),
                              shards=shards, fill_value=0)
    a[...] = DATA
    INDEX_CACHE.clear()
    r = zarrbolt.open_array(store, path=name, mode="r")
    proxy.reset()
    return a, r


def _gets(proxy):
    return proxy.requests("GET")


@pytest.mark.parametrize("shards", [None, (64, 128, 128)])
def test_reads_equal_local(proxy, s3_bucket, shards):
    _, r = _array(proxy, s3_bucket, shards)
    for sel in [(slice(None),) * 3, (slice(5, 60), slice(3, 100), slice(90, 128)), (3, slice(None), 7),
                (slice(None, None, 5), 17, slice(1, 128, 9))]:
        np.testing.assert_array_equal(r[sel], DATA[sel])


def test_request_counts_and_bytes(proxy, s3_bucket):
    _, r = _array(proxy, s3_bucket)
    np.testing.assert_array_equal(r[BLOCK], DATA[BLOCK])
    cold = _gets(proxy)
    assert len(cold) == 2 and cold[0][2].startswith("bytes=-")  # the index by one suffix request
    assert proxy.bytes_out["GET"] < 32 ** 3 * 2  # a few KB, not the 4 MB shard
    proxy.reset()
    np.testing.assert_array_equal(r[BLOCK], DATA[BLOCK])
    assert len(_gets(proxy)) == 1  # warm index
    assert proxy.counts["HEAD"] == 0
    _, c = _array(proxy, s3_bucket, None, name="c")
    np.testing.assert_array_equal(c[BLOCK], DATA[BLOCK])
    assert len(_gets(proxy)) == 1 and proxy.counts["HEAD"] == 0


def test_full_read_requests(proxy, s3_bucket):
    _, r = _array(proxy, s3_bucket, (32, 64, 128))
    np.testing.assert_array_equal(r[...], DATA)
    assert len(_gets(proxy)) == 2 * 2  # 4 shards, each no larger than a window: one GET each
    # shards larger than a window: one suffix GET per shard, then coalesced ranges
    INDEX_CACHE.clear()
    _, s = _array(proxy, s3_bucket, (32, 64, 128), name="w", max_bytes_in_flight=8 * 32 ** 3 * 2)
    np.testing.assert_array_equal(s[...], DATA)
    gets = _gets(proxy)
    suffix = [g for g in gets if g[2].startswith("bytes=-")]
    assert len(suffix) == 4
    assert len(gets) - len(suffix) == 4 * 2  # each shard: 8 inner chunks in 2 windows of 4, coalesced


def test_small_read_of_big_shard_fetches_little(proxy, s3_bucket):
    _, r = _array(proxy, s3_bucket)
    assert r[10, 40, 50] == DATA[10, 40, 50]
    assert len(_gets(proxy)) == 2
    assert proxy.bytes_out["GET"] < 8 * 1024


def test_absent_is_fill(proxy, s3_bucket):
    store = s3_object_store(proxy.endpoint, s3_bucket)
    a = zarrbolt.create_array(store, name="f", shape=DATA.shape, dtype="uint16", chunks=(32, 32, 32),
                              shards=(32, 64, 64), fill_value=7)
    a[0:32, 0:32, 0:32] = 1
    expect = np.full(DATA.shape, 7, "uint16")
    expect[0:32, 0:32, 0:32] = 1
    np.testing.assert_array_equal(a[...], expect)
    np.testing.assert_array_equal(a[20:40, 20:40, 20:70], expect[20:40, 20:40, 20:70])


def test_index_cache_invalidated_by_a_write(proxy, s3_bucket):
    a, r = _array(proxy, s3_bucket)
    r[BLOCK]
    a[0:32, 0:32, 0:32] = 11  # the same shard, rewritten by zarrbolt
    expect = DATA.copy()
    expect[0:32, 0:32, 0:32] = 11
    proxy.reset()
    np.testing.assert_array_equal(r[BLOCK], DATA[BLOCK])  # the new index is read
    assert len(_gets(proxy)) == 2
    np.testing.assert_array_equal(r[...], expect)


@pytest.mark.parametrize(("fault", "error"), [(403, StorePermissionError), (503, StoreUnavailableError),
                                              ("reset", StoreUnavailableError), ("truncate", StoreError)])
@pytest.mark.parametrize("shards", [None, (64, 128, 128)])
def test_faults_raise_typed_errors(proxy, s3_bucket, fault, error, shards):
    _, r = _array(proxy, s3_bucket, shards)
    proxy.inject(fault, times=100_000, method="GET", match="/c/")
    with pytest.raises(error) as info:
        r[BLOCK]
    assert "c/" in str(info.value)  # names the key
    with pytest.raises(error):
        r[...]
    proxy.clear_faults()
    np.testing.assert_array_equal(r[BLOCK], DATA[BLOCK])


def test_transient_faults_are_retried(proxy, s3_bucket):
    _, r = _array(proxy, s3_bucket)
    proxy.inject(503, times=2, method="GET", match="/c/")
    np.testing.assert_array_equal(r[...], DATA)


def test_damaged_shard_raises(proxy, s3_bucket):
    a, r = _array(proxy, s3_bucket)
    store = a.store
    store.set("a/c/0/0/0", b"\x00" * 100)  # smaller than its index
    with pytest.raises(CorruptChunkError, match="a/c/0/0/0"):
        r[BLOCK]


def test_ctrl_c_mid_read(proxy, s3_bucket, sigint_raises):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    _, r = _array(proxy, s3_bucket, None)
    proxy.latency = 3.0
    threads_before = {t.ident for t in threading.enumerate() if not t.daemon}
    timer = threading.Timer(0.4, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        r[...]
    assert time.perf_counter() - t0 < 2.5  # well before the 3 s each request takes
    proxy.latency = 0.0
    # nothing left running but idle threads of zarrbolt's stager pool
    new = [t for t in threading.enumerate() if not t.daemon and t.ident not in threads_before | {timer.ident}]
    assert all(t.name.startswith("zarrbolt-stage") for t in new)
    assert remote._stagers()._work_queue.qsize() == 0
    np.testing.assert_array_equal(r[BLOCK], DATA[BLOCK])  # the loop and the store still work


@pytest.mark.parametrize("shards", [None, (64, 128, 128)])
def test_concurrent_partial_writes_lose_nothing(proxy, s3_bucket, shards):
    a, _ = _array(proxy, s3_bucket, shards)
    expect = DATA.copy()
    barrier = threading.Barrier(4)
    errors: list = []

    def writer(i):
        try:
            barrier.wait()
            for j in range(3):
                a[i, j: j + 2, 0:4] = 100 + 10 * i + j  # all in chunk / shard 0
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    for i in range(4):
        for j in range(3):
            expect[i, j: j + 2, 0:4] = 100 + 10 * i + j
    np.testing.assert_array_equal(a[...], expect)


def test_conflict_is_raised_not_lost(proxy, s3_bucket):
    """A read-modify-write whose object keeps changing gives up with ConflictError; the other
    writer's updates all stay."""
    a, _ = _array(proxy, s3_bucket)
    store = a.store
    other = zarrbolt.open_array(s3_object_store(proxy.endpoint, s3_bucket), path="a", mode="r+")
    real = store.set_if_version
    n = [0]

    def racing(key, value, version):  # another writer updates the shard just before each try
        n[0] += 1
        other[5, 5, 5] = n[0]
        return real(key, value, version)

    store.set_if_version = racing
    try:
        with pytest.raises(ConflictError, match="another writer"):
            a[0, 0, 0:3] = 1
    finally:
        del store.set_if_version
    expect = DATA.copy()
    expect[5, 5, 5] = n[0]
    assert n[0] > 1
    np.testing.assert_array_equal(a[...], expect)


def test_writes_go_out_concurrently(proxy, s3_bucket):
    store = s3_object_store(proxy.endpoint, s3_bucket)
    a = zarrbolt.create_array(store, name="p", shape=DATA.shape, dtype="uint16", chunks=(32, 32, 32),
                              fill_value=0)
    proxy.reset()
    proxy.latency = 0.05
    t0 = time.perf_counter()
    a[...] = DATA
    took = time.perf_counter() - t0
    proxy.latency = 0.0
    assert proxy.counts["PUT"] == 2 * 4 * 4
    assert took < 32 * 0.05 / 2  # not one after another
    np.testing.assert_array_equal(a[...], DATA)
    assert remote.remote_counts["chunk-windows"] > 0


def test_fsspec_store_reads_and_writes(proxy, s3_bucket, moto_server):
    """The planners on FsspecStore (s3fs): same requests, no conditional writes (last writer wins)."""
    s3fs = pytest.importorskip("s3fs")
    from zarrbolt.storage import FsspecStore

    fs = s3fs.S3FileSystem(key="testing", secret="testing", skip_instance_cache=True,
                           client_kwargs={"endpoint_url": proxy.endpoint, "region_name": "us-east-1"})
    store = FsspecStore(fs, path=f"{s3_bucket}/fs")
    assert store.async_source() is not None and not store.supports_conditional_writes
    a = zarrbolt.create_array(store, name="a", shape=DATA.shape, dtype="uint16", chunks=(32, 32, 32),
                              shards=(64, 128, 128), fill_value=0)
    a[...] = DATA
    a[1:3, 5:9, 7:60] = 4  # unguarded read-modify-write
    expect = DATA.copy()
    expect[1:3, 5:9, 7:60] = 4
    INDEX_CACHE.clear()
    proxy.reset()
    np.testing.assert_array_equal(a[BLOCK], expect[BLOCK])
    assert len(_gets(proxy)) == 2
    proxy.reset()
    np.testing.assert_array_equal(a[BLOCK], expect[BLOCK])
    assert len(_gets(proxy)) == 1
    np.testing.assert_array_equal(a[...], expect)

