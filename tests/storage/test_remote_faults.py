"""Faults of remote stores, injected by a real proxy on loopback (tests/remote_helpers.py) in
front of moto's S3 server or a Range-honouring HTTP server: each one becomes its typed
``zarrbolt.errors`` exception naming the key, 5xx / resets / timeouts / truncated bodies are
retried a bounded number of times, a missing object is None (a missing chunk reads as the fill
value) and nothing else is ever read as missing, and Ctrl-C stops a read at once."""

from __future__ import annotations

import signal
import threading
import time

import numpy as np
import pytest

import zarrbolt
from zarrbolt.errors import StoreError, StorePermissionError, StoreUnavailableError
from zarrbolt.storage import RangeByteRequest, SuffixByteRequest

pytest.importorskip("obstore")
from remote_helpers import FaultProxy, s3_object_store  # noqa: E402

VALUE = bytes(range(256)) * 16


@pytest.fixture
def faulty(moto_server, s3_proxy):
    """``(store, proxy)``: an ObjectStore through the fault proxy (1 s timeout, fast backoff),
    holding ``"a/k"`` = VALUE."""
    st = s3_object_store(s3_proxy.endpoint, moto_server.make_bucket(), "p", timeout="1s")
    st.async_source().backoff = 0.01
    st.set("a/k", VALUE)
    s3_proxy.reset()
    return st, s3_proxy


FAULTS = [
    (403, StorePermissionError, "permission"),
    (500, StoreUnavailableError, "4 attempts"),
    (503, StoreUnavailableError, "4 attempts"),
    ("reset", StoreUnavailableError, "4 attempts"),
    ("truncate", StoreError, "truncated"),
]


@pytest.mark.parametrize("fault, error, words", FAULTS)
def test_each_fault_of_a_read_is_its_typed_error_naming_the_key(faulty, fault, error, words):
    st, proxy = faulty
    proxy.inject(fault, times=100, method="GET")
    for call in (lambda: st.get("a/k"), lambda: st.get("a/k", SuffixByteRequest(10)),
                 lambda: st.get_ranges_into("a/k", [(0, 4), (2000, 2004)], bytearray(8))):
        with pytest.raises(error, match="'a/k'") as info:
            call()
        assert words in str(info.value)
        if fault == "truncate":
            assert not isinstance(info.value, StoreUnavailableError)
    expected_attempts = 1 if fault == 403 else 4  # remote_retries = 3
    assert proxy.counts["GET"] == expected_attempts * 3  # the two ranges share one request


@pytest.mark.parametrize("fault, error", [(403, StorePermissionError), (503, StoreUnavailableError),
                                          ("reset", StoreUnavailableError)])
def test_faults_of_head_put_delete_and_list(faulty, fault, error):
    st, proxy = faulty
    # (obstore deletes S3 objects with a POST ?delete)
    for method, call in [("HEAD", lambda: st.getsize("a/k")), ("HEAD", lambda: st.exists("a/k")),
                         ("PUT", lambda: st.set("a/new", b"x")), ("POST", lambda: st.erase("a/k")),
                         ("GET", lambda: list(st.list_dir("a/")))]:
        proxy.clear_faults()
        proxy.inject(fault, times=100, method=method)
        with pytest.raises(error):
            call()
    proxy.clear_faults()
    assert st.get("a/k") == VALUE  # nothing was changed by the failed writes
    assert not st.exists("a/new")


def test_a_timeout_is_retried_then_unavailable(faulty):
    st, proxy = faulty
    proxy.inject("delay", times=1, method="GET", delay=2.5)
    assert st.get("a/k", RangeByteRequest(0, 4)) == VALUE[:4]  # the retry gets through
    assert st.async_source().stats["retries"] == 1
    proxy.inject("delay", times=100, method="GET", delay=2.5)
    with zarrbolt.config.set(remote_retries=1):
        st = s3_object_store(proxy.endpoint, st.store.config["bucket"], "p", timeout="1s")
    t0 = time.monotonic()
    with pytest.raises(StoreUnavailableError, match="'a/k'.*2 attempts"):
        st.get("a/k")
    assert time.monotonic() - t0 < 10


def test_a_transient_failure_is_retried_and_counted(faulty):
    st, proxy = faulty
    proxy.inject(503, times=2, method="GET")
    assert st.get("a/k") == VALUE
    assert proxy.counts["GET"] == 3 and [r[3] for r in proxy.log] == [503, 503, 200]
    assert st.async_source().stats["retries"] == 2
    proxy.reset()
    proxy.inject("truncate", times=1, method="GET")
    assert st.get("a/k") == VALUE  # a truncated body is never returned: fetched again
    assert proxy.counts["GET"] == 2
    proxy.reset()
    proxy.inject("reset", times=1, method="PUT")
    st.set("a/k2", b"written once the connection works")
    assert st.get("a/k2") == b"written once the connection works"


def test_retries_are_bounded_by_config(moto_server, s3_proxy):
    bucket = moto_server.make_bucket()
    with zarrbolt.config.set(remote_retries=0):
        st = s3_object_store(s3_proxy.endpoint, bucket)
    st.set("k", b"v")
    s3_proxy.reset()
    s3_proxy.inject(503, times=1, method="GET")
    with pytest.raises(StoreUnavailableError, match="1 attempt"):
        st.get("k")
    assert s3_proxy.counts["GET"] == 1
    assert st.get("k") == b"v"


def test_missing_objects_are_none_but_a_missing_bucket_is_an_error(faulty, moto_server):
    st, proxy = faulty
    proxy.inject(404, times=1, method="GET")
    assert st.get("a/k") is None  # a 404 is "absent", by definition
    assert st.get("a/missing") is None and st.get("a/missing", SuffixByteRequest(4)) is None
    assert not st.exists("a/missing")
    nb = s3_object_store(moto_server.endpoint, "no-such-bucket-zb")
    for call in (lambda: nb.get("k"), lambda: nb.get("k", SuffixByteRequest(4)), lambda: nb.set("k", b"1"),
                 lambda: list(nb.list())):
        with pytest.raises(StoreError, match="no-such-bucket-zb.*does not exist"):
            call()


def test_bad_credentials_are_a_permission_error(moto_server, s3_proxy):
    st = s3_object_store(s3_proxy.endpoint, moto_server.make_bucket())
    s3_proxy.inject(403, times=100)
    with pytest.raises(StorePermissionError, match="'zarr.json'"):
        zarrbolt.open_array(st, mode="r")


# ---------------------------------------------------------------------------- arrays
@pytest.fixture
def s3_array(moto_server, s3_proxy):
    """A sharded array written directly to moto, opened through the fault proxy."""
    bucket = moto_server.make_bucket()
    direct = s3_object_store(moto_server.endpoint, bucket)
    data = np.arange(32 * 32, dtype="i4").reshape(32, 32)
    zarrbolt.create_array(direct, name="v", shape=data.shape, chunks=(8, 8), shards=(16, 16), dtype="i4",
                          fill_value=-1)[:] = data
    direct.erase("v/c/1/1")  # one shard missing: reads as the fill value
    st = s3_object_store(s3_proxy.endpoint, bucket, timeout="1s")
    st.async_source().backoff = 0.01
    return zarrbolt.open_array(st, path="v", mode="r"), data, s3_proxy


def test_array_reads_never_turn_a_fault_into_fill_values(s3_array):
    arr, data, proxy = s3_array
    expected = data.copy()
    expected[16:, 16:] = -1
    np.testing.assert_array_equal(arr[:], expected)
    for fault, error in [(503, StoreUnavailableError), (403, StorePermissionError), ("reset", StoreUnavailableError),
                         ("truncate", StoreError)]:
        proxy.clear_faults()
        proxy.inject(fault, times=1000, method="GET", match="/v/c/0/1")
        with pytest.raises(error, match="c/0/1"):
            arr[:]
        with pytest.raises(error, match="c/0/1"):
            arr[0, 20]
    proxy.clear_faults()
    proxy.inject(503, times=2, method="GET", match="/v/c/0/1")
    np.testing.assert_array_equal(arr[:], expected)  # retried through


def test_ctrl_c_stops_a_remote_read_promptly(faulty, sigint_raises):
    st, proxy = faulty
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    proxy.inject("delay", times=1, method="GET", delay=30)
    fast = s3_object_store(proxy.endpoint, st.store.config["bucket"], "p", timeout="60s")
    main = threading.main_thread().ident
    timer = threading.Timer(0.5, lambda: signal.pthread_kill(main, signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            fast.get("a/k")
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 5
    assert fast.get("a/k", RangeByteRequest(0, 3)) == VALUE[:3]  # the store still works


def test_ctrl_c_stops_an_array_read(s3_array, sigint_raises):
    arr, data, proxy = s3_array
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    proxy.latency = 0.0
    proxy.inject("delay", times=1000, method="GET", delay=30)
    main = threading.main_thread().ident
    timer = threading.Timer(0.5, lambda: signal.pthread_kill(main, signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            arr[:]
    finally:
        timer.cancel()
        proxy.clear_faults()
    assert time.monotonic() - t0 < 5


# ---------------------------------------------------------------------------- fsspec over HTTP
def test_fsspec_http_faults_are_typed(http_server):
    fsspec = pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    from zarrbolt.storage.fsspec_store import FsspecStore

    (http_server.root / "k").write_bytes(VALUE)
    with FaultProxy(http_server.url) as proxy:
        st = FsspecStore(fsspec.filesystem("http", skip_instance_cache=True), path=proxy.endpoint, retries=1)
        st.async_source().backoff = 0.01
        assert st.get("k", SuffixByteRequest(5)) == VALUE[-5:]
        assert st.get("missing") is None
        for fault, error in [(403, StorePermissionError), (503, StoreUnavailableError),
                             ("reset", StoreUnavailableError), ("truncate", StoreError)]:
            proxy.clear_faults()
            proxy.inject(fault, times=100, method="GET")
            with pytest.raises(error, match="'k'"):
                st.get("k", RangeByteRequest(0, 100))
        proxy.clear_faults()
        proxy.reset()
        proxy.inject(503, times=1, method="GET")
        assert st.get("k", RangeByteRequest(0, 4)) == VALUE[:4]
        assert proxy.counts["GET"] == 2
