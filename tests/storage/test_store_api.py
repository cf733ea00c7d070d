"""The abstract store interface on LocalStore and MemoryStore: ranges, listing, atomicity, keys."""

from __future__ import annotations

import os
import threading

import pytest

from zarrbolt.errors import InvalidKeyError, ReadOnlyError, StoreError
from zarrbolt.storage import (
    LocalStore,
    MemoryStore,
    OffsetByteRequest,
    RangeByteRequest,
    SuffixByteRequest,
    make_store,
)


@pytest.fixture(params=["memory", "local"])
def store(request, tmp_path):
    return MemoryStore() if request.param == "memory" else LocalStore(tmp_path / "root")


def test_get_set_and_ranges(store):
    assert store.get("a") is None
    store.set("a", b"0123456789")
    assert store.get("a") == b"0123456789"
    assert store.get("a", RangeByteRequest(2, 5)) == b"234"
    assert store.get("a", (2, 5)) == b"234"
    assert store.get("a", RangeByteRequest(8, 100)) == b"89"
    assert store.get("a", RangeByteRequest(20, 30)) == b""
    assert store.get("a", OffsetByteRequest(7)) == b"789"
    assert store.get("a", SuffixByteRequest(3)) == b"789"
    assert store.get("a", SuffixByteRequest(100)) == b"0123456789"
    assert store.getsize("a") == 10
    store.set("empty", b"")
    assert store.get("empty") == b""
    store.set("mv", memoryview(bytearray(b"xyz")))
    assert store.get("mv") == b"xyz"
    with pytest.raises(StoreError):
        store.getsize("missing")
    with pytest.raises(ValueError):
        RangeByteRequest(5, 2)


def test_partial_values_and_read_into(store):
    store.set("k/1", b"abcdef")
    store.set("k/2", b"uvwxyz")
    got = store.get_partial_values([("k/1", (0, 2)), ("k/2", SuffixByteRequest(2)), ("k/1", None), ("nope", None)])
    assert got == [b"ab", b"yz", b"abcdef", None]
    buf = bytearray(10)
    assert store.read_into("k/1", buf) == 6 and bytes(buf[:6]) == b"abcdef"
    assert store.read_into("k/1", bytearray(3)) == -6
    assert store.read_into("nope", buf) is None
    buf = bytearray(4)
    assert store.get_into("k/2", buf, offset=1) == 4 and bytes(buf) == b"vwxy"
    store.set_partial_values([("k/1", 2, b"ZZ"), ("new", 3, b"q")])
    assert store.get("k/1") == b"abZZef"
    assert store.get("new") == b"\x00\x00\x00q"


def test_listing_and_erase(store):
    for k in ("zarr.json", "a/zarr.json", "a/c/0/0", "a/c/0/1", "a/b/zarr.json", "ab"):
        store.set(k, b"x")
    assert sorted(store.list()) == ["a/b/zarr.json", "a/c/0/0", "a/c/0/1", "a/zarr.json", "ab", "zarr.json"]
    assert sorted(store.list_prefix("a/")) == ["a/b/zarr.json", "a/c/0/0", "a/c/0/1", "a/zarr.json"]
    assert sorted(store.list_prefix("a")) == ["a/b/zarr.json", "a/c/0/0", "a/c/0/1", "a/zarr.json", "ab"]
    assert sorted(store.list_dir("")) == ["a/", "ab", "zarr.json"]
    assert sorted(store.list_dir("a")) == ["a/b/", "a/c/", "a/zarr.json"]
    assert list(store.list_dir("missing/")) == []
    store.erase("a/c/0/0")
    store.erase("a/c/0/0")  # erasing a missing key is fine
    assert not store.exists("a/c/0/0") and store.exists("a/c/0/1")
    store.erase_values(["ab", "zarr.json"])
    store.erase_prefix("a/c/")
    assert sorted(store.list()) == ["a/b/zarr.json", "a/zarr.json"]
    store.erase_prefix("")
    assert list(store.list()) == []


@pytest.mark.parametrize("key", ["", "/abs", "../x", "a/../../x", "a/./b", "a//b", "a\\b", "C:/x", "x\x00", "a/"])
def test_invalid_keys(store, key):
    with pytest.raises(InvalidKeyError):
        store.set(key, b"1")
    with pytest.raises(InvalidKeyError):
        store.get(key)


def test_read_only(store):
    store.set("a", b"1")
    ro = store.with_read_only()
    assert ro.read_only and ro.get("a") == b"1"
    for op in (lambda: ro.set("b", b"2"), lambda: ro.erase("a"), lambda: ro.erase_prefix(""),
               lambda: ro.set_partial_values([("a", 0, b"x")]), lambda: ro.set_if_not_exists("c", b"1")):
        with pytest.raises(ReadOnlyError):
            op()
    store.set_if_not_exists("a", b"other")
    assert store.get("a") == b"1"
    store.set_if_not_exists("z", b"new")
    assert store.get("z") == b"new"


def test_local_atomic_write_failure_keeps_old_value(tmp_path, monkeypatch):
    st = LocalStore(tmp_path)
    st.set("c/0", b"old value")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(StoreError):
        st.set("c/0", b"new value that never lands")
    monkeypatch.undo()
    assert st.get("c/0") == b"old value"
    leftovers = [p for p in (tmp_path / "c").iterdir() if p.name != "0"]
    assert leftovers == []
    assert list(st.list()) == ["c/0"]


def test_local_paths_and_uris(tmp_path):
    st, path = make_store(tmp_path.as_uri() + "/x.zarr")
    assert isinstance(st, LocalStore) and path == ""
    st.set("k", b"v")
    assert (tmp_path / "x.zarr" / "k").read_bytes() == b"v"
    assert make_store(str(tmp_path / "x.zarr"), mode="r")[0].read_only
    assert isinstance(make_store(None)[0], MemoryStore)
    d: dict = {}
    ms, _ = make_store(d)
    ms.set("a", b"1")
    assert d == {"a": b"1"}
    with pytest.raises(StoreError, match="nosuchscheme"):
        make_store("nosuchscheme://bucket/x")  # s3:// etc. are remote stores (tests/storage/test_remote_*)
    with pytest.raises(StoreError):
        make_store(3.5)
    # a file where a directory is needed is a store error, not a crash
    (tmp_path / "f").write_bytes(b"")
    with pytest.raises(StoreError):
        LocalStore(tmp_path).set("f/child", b"1")


def test_threads_disjoint_and_same_key(store):
    def writer(i):
        for j in range(20):
            store.set(f"t/{i}/{j}", bytes([i, j]) * 100)
            store.set("shared", bytes([i]) * 1000)

    ts = [threading.Thread(target=writer, args=(i,)) for i in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for i in range(6):
        for j in range(20):
            assert store.get(f"t/{i}/{j}") == bytes([i, j]) * 100
    v = store.get("shared")
    assert len(v) == 1000 and len(set(v)) == 1  # one writer's whole value, never a mix
