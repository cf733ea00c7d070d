"""The remote stores on real servers on loopback: what each operation fetches (request counts
through a counting proxy in front of moto's S3 server), coalesced and bounded concurrent range
reads, conditional writes, the read-only HTTP stores on a Range-honouring HTTP server,
pickling, the async source, and that importing zarrbolt imports no remote client.

The generic store behaviour (every Store method) runs on the remote stores through the
``store`` fixture of tests/storage/conftest.py."""

from __future__ import annotations

import multiprocessing
import pickle
import subprocess
import sys
import threading

import pytest

import zarrbolt
from zarrbolt.errors import ConflictError, ReadOnlyError, StoreError
from zarrbolt.storage import OffsetByteRequest, RangeByteRequest, SuffixByteRequest

pytest.importorskip("obstore")
from remote_helpers import child_read, parse_range, s3_object_store  # noqa: E402

from zarrbolt.storage._async import AsyncSource, coalesce_ranges, run  # noqa: E402
from zarrbolt.storage.object_store import ObjectStore  # noqa: E402

VALUE = bytes(range(256)) * 40  # 10240 bytes


@pytest.fixture
def proxied(moto_server, s3_proxy):
    """``(store, proxy)``: an ObjectStore on a fresh bucket through the counting proxy, holding
    ``"k"`` = VALUE; the counters start at zero."""
    st = s3_object_store(s3_proxy.endpoint, moto_server.make_bucket(), "data")
    st.set("k", VALUE)
    s3_proxy.reset()
    return st, s3_proxy


# ---------------------------------------------------------------------------- what is fetched
@pytest.mark.parametrize("req, expected, header", [
    (SuffixByteRequest(100), VALUE[-100:], "bytes=-100"),
    (RangeByteRequest(10, 20), VALUE[10:20], "bytes=10-19"),
    (OffsetByteRequest(10000), VALUE[10000:], "bytes=10000-"),
])
def test_a_ranged_get_is_one_request(proxied, req, expected, header):
    st, proxy = proxied
    assert st.get("k", req) == expected
    assert proxy.counts == {"GET": 1}
    assert proxy.log[0][2] == header
    assert proxy.bytes_out["GET"] == len(expected)


def test_getsize_and_exists_are_one_head_never_a_download(proxied):
    st, proxy = proxied
    assert st.getsize("k") == len(VALUE)
    assert st.exists("k") and not st.exists("missing")
    assert proxy.counts == {"HEAD": 3} and proxy.bytes_out["GET"] == 0
    with pytest.raises(StoreError, match="'missing'"):
        st.getsize("missing")


def test_ranges_past_the_end_and_empty_objects(proxied):
    st, proxy = proxied
    st.set("empty", b"")
    assert st.get("k", RangeByteRequest(len(VALUE) + 5, len(VALUE) + 9)) == b""
    assert st.get("k", RangeByteRequest(len(VALUE) - 2, len(VALUE) + 9)) == VALUE[-2:]
    assert st.get("empty", SuffixByteRequest(4)) == b""
    assert st.get("empty", RangeByteRequest(0, 4)) == b""
    assert st.get("missing", RangeByteRequest(5, 9)) is None
    assert st.get("missing", SuffixByteRequest(9)) is None


def test_close_ranges_share_a_request_far_ones_run_concurrently(proxied):
    st, proxy = proxied
    ranges = [(0, 10), (20, 30), (5000, 5010), (10000, 10240)]
    buf = bytearray(sum(b - a for a, b in ranges))
    with zarrbolt.config.set(remote_coalesce_gap=100):
        assert st.get_ranges_into("k", ranges, buf) == [10, 10, 10, 240]
    assert bytes(buf) == b"".join(VALUE[a:b] for a, b in ranges)
    assert proxy.counts == {"GET": 3}  # (0, 30), (5000, 5010), (10000, 10240)
    assert sorted(r[2] for r in proxy.log) == ["bytes=0-29", "bytes=10000-10239", "bytes=5000-5009"]
    proxy.reset()
    with zarrbolt.config.set(remote_coalesce_gap=1 << 20):
        assert st.get_ranges_into("k", ranges, bytearray(len(buf))) == [10, 10, 10, 240]
    assert proxy.counts == {"GET": 1}
    assert st.get_ranges_into("missing", ranges, buf) is None


def test_coalescing_keeps_the_order_and_overlaps():
    groups = coalesce_ranges([(50, 60), (0, 10), (5, 8), (12, 20), (1000, 1001)], max_gap=2)
    assert groups == [(0, 20, [1, 2, 3]), (50, 60, [0]), (1000, 1001, [4])]
    assert coalesce_ranges([], 10) == []


def test_async_source_ranges_are_views_of_one_buffer(proxied):
    st, proxy = proxied
    src = st.async_source()
    assert isinstance(src, AsyncSource)
    parts = src.run(src.aget_ranges("k", [(100, 110), (0, 4), (200, 200), (120, 130)], max_gap=96))
    assert [bytes(p) for p in parts] == [VALUE[100:110], VALUE[:4], b"", VALUE[120:130]]
    assert proxy.counts == {"GET": 1}
    assert src.run(src.aget_ranges("missing", [(0, 4)], max_gap=0)) is None
    assert bytes(src.run(src.aget("k", SuffixByteRequest(3)))) == VALUE[-3:]
    src.run(src.aset("k2", b"abc"))
    assert st.get("k2") == b"abc"
    src.run(src.adelete("k2"))
    src.run(src.adelete("k2"))  # deleting a missing key is fine
    assert not st.exists("k2")


def test_the_async_source_runs_on_any_event_loop(proxied):
    import asyncio

    st, proxy = proxied
    src = st.async_source()

    async def on_my_loop():
        a, b = await asyncio.gather(src.aget_ranges("k", [(0, 4)], max_gap=0), src.aget("k", RangeByteRequest(4, 8)))
        return bytes(a[0]) + bytes(b)

    assert asyncio.run(on_my_loop()) == VALUE[:8]  # e.g. zarr-python's loop
    assert bytes(src.run(src.aget("k", RangeByteRequest(0, 2)))) == VALUE[:2]  # and zarrbolt's again


def test_requests_in_flight_are_bounded(moto_server, s3_proxy):
    bucket = moto_server.make_bucket()
    writer = s3_object_store(moto_server.endpoint, bucket)
    for i in range(12):
        writer.set(f"c/{i}", bytes([i]) * 100)
    st = s3_object_store(s3_proxy.endpoint, bucket, concurrency=3)
    s3_proxy.latency = 0.05
    got = st.get_partial_values([(f"c/{i}", None) for i in range(12)])
    assert got == [bytes([i]) * 100 for i in range(12)]
    assert s3_proxy.counts == {"GET": 12}
    assert 2 <= s3_proxy.max_active <= 3
    # a byte budget smaller than two requests lets one run at a time
    s3_proxy.reset()
    st = s3_object_store(s3_proxy.endpoint, bucket, max_bytes_in_flight=150)
    got = st.get_partial_values([(f"c/{i}", RangeByteRequest(0, 100)) for i in range(6)])
    assert got == [bytes([i]) * 100 for i in range(6)]
    assert s3_proxy.max_active == 1


def test_run_on_the_loop_thread_is_refused(proxied):
    st, _ = proxied

    async def nested():
        return st.get("k")  # a synchronous store call from inside the loop would deadlock

    with pytest.raises(StoreError, match="event-loop thread"):
        run(nested())


def _in_forked_child(store):
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=child_read, args=(store, q))
    p.start()
    try:
        return q.get(timeout=60)
    finally:
        p.join(60)
        assert p.exitcode == 0


def test_a_forked_child_gets_its_own_loop():
    fsspec = pytest.importorskip("fsspec")
    from zarrbolt.storage.fsspec_store import FsspecStore

    st = FsspecStore(fsspec.filesystem("memory"), path=f"/fork-{id(VALUE)}")
    st.set("k", VALUE)
    assert st.get("k", RangeByteRequest(0, 8)) == VALUE[:8]  # the parent's loop is running
    assert _in_forked_child(st) == ("ok", VALUE[:8])


def test_obstore_in_a_forked_child_is_an_error_not_a_hang(proxied):
    st, _ = proxied
    assert st.get("k", RangeByteRequest(0, 8)) == VALUE[:8]
    kind, msg = _in_forked_child(st)
    assert kind == "StoreError" and "fork" in msg
    # a store pickled into a spawned process works (that is what dask does)
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=child_read, args=(st, q))
    p.start()
    try:
        assert q.get(timeout=120) == ("ok", VALUE[:8])
    finally:
        p.join(60)


# ---------------------------------------------------------------------------- conditional writes
def test_conditional_writes_detect_a_concurrent_update(moto_server):
    bucket = moto_server.make_bucket()
    a = s3_object_store(moto_server.endpoint, bucket)
    b = s3_object_store(moto_server.endpoint, bucket)
    assert a.supports_conditional_writes
    assert a.get_versioned("shard") == (None, None)
    a.set_if_version("shard", b"v1", None)  # create only
    with pytest.raises(ConflictError, match="'shard'"):
        b.set_if_version("shard", b"other", None)
    value, etag = a.get_versioned("shard")
    assert value == b"v1" and isinstance(etag, str)
    b.set("shard", b"v2 by another writer")  # between a's read and a's write
    with pytest.raises(ConflictError, match="'shard'"):
        a.set_if_version("shard", b"v1 + a's change", etag)
    assert a.get("shard") == b"v2 by another writer"  # nothing lost
    value, etag = a.get_versioned("shard")
    a.set_if_version("shard", value + b" + a's change", etag)
    assert b.get("shard") == b"v2 by another writer + a's change"
    a.set_if_not_exists("shard", b"ignored")
    assert a.get("shard").endswith(b"a's change")
    with pytest.raises(StoreError):
        a.set_if_version("shard", b"x", 12345)


def test_stores_without_conditional_writes_fall_back_to_plain_writes(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    from zarrbolt.storage.fsspec_store import FsspecStore

    st = FsspecStore(fsspec.filesystem("memory"), path=f"/cond-{id(tmp_path)}")
    assert not st.supports_conditional_writes
    st.set("k", b"1")
    assert st.get_versioned("k") == (b"1", None)
    st.set_if_version("k", b"2", None)
    assert st.get("k") == b"2"
    st.set_if_not_exists("k", b"3")
    assert st.get("k") == b"2"
    obstore = pytest.importorskip("obstore")
    local = ObjectStore(obstore.store.LocalStore(str(tmp_path)))
    assert not local.supports_conditional_writes
    local.set("a", b"1")
    assert local.get_versioned("a") == (b"1", None)
    local.set_if_version("a", b"2", "whatever")
    assert local.get("a") == b"2"


# ---------------------------------------------------------------------------- pickling, equality
def test_object_store_pickles_with_its_configuration(proxied):
    st, _ = proxied
    clone = pickle.loads(pickle.dumps(st))
    assert clone == st and hash(clone) == hash(st) and clone.token() == st.token()
    assert clone.get("k", SuffixByteRequest(5)) == VALUE[-5:]
    assert clone.async_source() is not st.async_source()
    ro = pickle.loads(pickle.dumps(st.with_read_only()))
    assert ro.read_only and ro != st
    with pytest.raises(ReadOnlyError):
        ro.set("k", b"x")


def test_obstore_memory_store_pickles_as_a_copy():
    obstore = pytest.importorskip("obstore")
    st = ObjectStore(obstore.store.MemoryStore(), prefix="p")
    st.set("a/b", b"1")
    clone = pickle.loads(pickle.dumps(st))
    assert clone.get("a/b") == b"1" and list(clone.list()) == ["a/b"]
    clone.set("c", b"2")
    assert not st.exists("c") and clone != st


def test_object_store_refuses_what_is_not_an_obstore_store():
    with pytest.raises(StoreError, match="obstore store"):
        ObjectStore({"not": "a store"})
    obstore = pytest.importorskip("obstore")
    with pytest.raises(StoreError):
        ObjectStore(obstore.store.MemoryStore(), prefix="../up")


# ---------------------------------------------------------------------------- HTTP (read-only)
def _http_stores(server):
    fsspec = pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    from zarrbolt.storage.fsspec_store import FsspecStore

    st_obs, _ = zarrbolt.storage.make_store(server.url + "/data")
    st_fs = FsspecStore(fsspec.filesystem("http"), path=server.url + "/data")
    return [st_obs, st_fs]


def test_http_stores_read_ranges_and_are_read_only(http_server):
    (http_server.root / "data" / "a").mkdir(parents=True)
    (http_server.root / "data" / "a" / "k").write_bytes(VALUE)
    for st in _http_stores(http_server):
        assert st.read_only
        http_server.reset()
        assert st.get("a/k", SuffixByteRequest(7)) == VALUE[-7:]
        assert http_server.counts == {"GET": 1} and http_server.log[0][2] == "bytes=-7", st
        assert st.get("a/k", RangeByteRequest(3, 9)) == VALUE[3:9]
        assert st.get("a/k") == VALUE
        assert st.get("a/k", RangeByteRequest(len(VALUE) + 1, len(VALUE) + 5)) == b""
        assert st.get("a/missing") is None and st.get("a/missing", SuffixByteRequest(3)) is None
        http_server.reset()
        assert st.getsize("a/k") == len(VALUE)
        assert http_server.counts.get("GET", 0) == 0 or http_server.bytes_out["GET"] == 0
        buf = bytearray(8)
        assert st.get_ranges_into("a/k", [(0, 4), (100, 104)], buf) == [4, 4]
        assert bytes(buf) == VALUE[:4] + VALUE[100:104]
        with pytest.raises(ReadOnlyError):
            st.set("a/k", b"x")
        with pytest.raises(ReadOnlyError):
            st.with_read_only(False).erase("a/k")


def test_the_range_server_follows_rfc_9110():
    assert parse_range("bytes=0-3", 10) == (0, 4)
    assert parse_range("bytes=7-", 10) == (7, 10)
    assert parse_range("bytes=-3", 10) == (7, 10)
    assert parse_range("bytes=-30", 10) == (0, 10)
    assert parse_range("bytes=5-100", 10) == (5, 10)
    assert parse_range("bytes=10-", 10) == "unsatisfiable"
    assert parse_range("bytes=-0", 10) == "unsatisfiable"
    assert parse_range("items=1-2", 10) is None


# ---------------------------------------------------------------------------- imports
def test_importing_zarrbolt_imports_no_remote_client():
    code = ("import sys, zarrbolt, zarrbolt.storage; "
            "print(sorted(m for m in ('obstore', 'fsspec', 'aiohttp', 'botocore', 's3fs', 'zarr') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_missing_client_says_what_to_install():
    code = ("import sys; sys.modules['obstore'] = None; sys.modules['fsspec'] = None\n"
            "from zarrbolt.errors import StoreError\n"
            "from zarrbolt.storage import make_store\n"
            "try:\n    make_store('s3://bucket/x')\nexcept StoreError as e:\n    print('StoreError', e)\n"
            "from zarrbolt.storage.object_store import ObjectStore\n"
            "try:\n    ObjectStore(object())\nexcept ImportError as e:\n    print('ImportError', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "StoreError" in out.stdout and "zarrbolt[remote]" in out.stdout
    assert "ImportError" in out.stdout and "pip install" in out.stdout


def test_a_store_is_usable_from_many_threads(proxied):
    st, proxy = proxied
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(5):
                assert st.get("k", RangeByteRequest(i * 10 + j, i * 10 + j + 5)) == VALUE[i * 10 + j: i * 10 + j + 5]
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and proxy.counts == {"GET": 40}


def test_the_byte_budget_is_fair_and_survives_cancellation():
    import asyncio

    from zarrbolt.storage._async import ByteBudget

    async def scenario():
        budget = ByteBudget(100)
        assert await budget.acquire(60) == 60
        order = []

        async def want(n, tag):
            got = await budget.acquire(n)
            order.append(tag)
            return got

        big = asyncio.ensure_future(want(500, "big"))  # more than the budget: waits to run alone
        small = asyncio.ensure_future(want(10, "small"))  # queued behind it (first come, first served)
        doomed = asyncio.ensure_future(want(50, "doomed"))
        await asyncio.sleep(0)
        doomed.cancel()
        budget.release(60)
        assert await big == 100 and order == ["big"] and budget.used == 100
        budget.release(100)
        assert await small == 10 and budget.used == 10
        assert doomed.cancelled()
        budget.release(10)
        assert budget.used == 0 and not budget._waiters

    asyncio.run(scenario())


def test_remote_config_from_the_environment():
    code = "import zarrbolt; c = zarrbolt.config; print(c.get('remote_concurrency'), c.get('remote_retries'))"
    env = {**__import__("os").environ, "ZARRBOLT_REMOTE_CONCURRENCY": "5", "ZARRBOLT_REMOTE_RETRIES": "0"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["5", "0"]
    env["ZARRBOLT_REMOTE_CONCURRENCY"] = "many"
    bad = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert bad.returncode != 0 and "ZARRBOLT_REMOTE_CONCURRENCY" in bad.stderr
    with pytest.raises(zarrbolt.errors.MetadataError):
        zarrbolt.config.set(remote_concurrency=0)
