"""LocalStore and MemoryStore: atomic writes, threads, MemoryStore specifics, make_store, both
stores against a dict model, and the portable (Windows) code paths."""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

from zarrbolt.errors import StoreError
from zarrbolt.storage import (
    LocalStore,
    MemoryStore,
    OffsetByteRequest,
    RangeByteRequest,
    Store,
    SuffixByteRequest,
    make_store,
)
from zarrbolt.storage import files as files_mod
from zarrbolt.storage import local as local_mod


from store_helpers import VALUE, files_under, temp_files_under


# --------------------------------------------------------------------------------------- atomicity
def test_failed_replace_keeps_old_value(tmp_path, monkeypatch):
    st = LocalStore(tmp_path)
    st.set("c/0", b"old value")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(StoreError, match="disk full"):
        st.set("c/0", b"new value that never lands")
    with pytest.raises(StoreError):
        st.set("c/new", b"never")
    monkeypatch.undo()
    assert st.get("c/0") == b"old value"
    assert files_under(tmp_path) == ["c/0"]
    assert temp_files_under(tmp_path) == []


@pytest.mark.parametrize("exc", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_failed_write_leaves_no_torn_or_temp_file(tmp_path, monkeypatch, exc):
    st = LocalStore(tmp_path)
    st.set("k", b"old")
    real_write = os.write
    calls = []

    def half_write(fd, data):
        calls.append(1)
        if len(calls) == 1:
            return real_write(fd, bytes(data)[: len(data) // 2])  # a short write, then failure
        raise exc

    monkeypatch.setattr(os, "write", half_write)
    with pytest.raises(StoreError if isinstance(exc, OSError) else KeyboardInterrupt):
        st.set("k", b"a much longer new value")
    with pytest.raises(StoreError if isinstance(exc, OSError) else KeyboardInterrupt):
        calls.clear()
        st.set_if_not_exists("other", b"a much longer new value")
    monkeypatch.undo()
    assert st.get("k") == b"old"
    assert not st.exists("other")
    assert files_under(tmp_path) == ["k"]


def test_short_writes_are_completed(tmp_path, monkeypatch):
    st = LocalStore(tmp_path)
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data)[:3]))
    st.set("k", VALUE)
    monkeypatch.undo()
    assert st.get("k") == VALUE


def test_set_parts_every_store(store):
    parts = [b"ab", bytearray(b""), memoryview(b"cdef"), np.arange(3, dtype=np.uint16), b"g" * 5000]
    store.set_parts("p/k", parts)
    assert store.get("p/k") == b"".join(bytes(memoryview(p).cast("B")) for p in parts)


@pytest.mark.skipif(not hasattr(os, "writev"), reason="writev only")
@pytest.mark.parametrize("nparts", [2, 5, 1500])
def test_set_parts_short_and_failed_writev(tmp_path, monkeypatch, nparts):
    """writev that writes a few bytes at a time (across and inside pieces, more pieces than
    one call takes) completes the value; one that fails leaves the old value and no temp file."""
    st = LocalStore(tmp_path)
    parts = [bytes([i % 251]) * (1 + i % 7) for i in range(nparts)]
    real = os.writev
    monkeypatch.setattr(os, "writev", lambda fd, bufs: real(fd, [bytes(memoryview(bufs[0]).cast("B"))[:3]] + []))
    st.set_parts("k", parts)
    assert st.get("k") == b"".join(parts)

    def fail(fd, bufs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "writev", fail)
    with pytest.raises(StoreError):
        st.set_parts("k", parts)
    monkeypatch.undo()
    assert st.get("k") == b"".join(parts)
    assert files_under(tmp_path) == ["k"]


# ------------------------------------------------------------------------------------------ threads
def test_threads_disjoint_keys_and_same_key(store):
    n, m = 8, 25
    errors: list[BaseException] = []
    seen_shared: list[bytes] = []

    def worker(i):
        try:
            for j in range(m):
                key = f"t/{i}/{j}"
                store.set(key, bytes([i, j]) * 64)
                assert store.get(key) == bytes([i, j]) * 64
                assert store.get(key, RangeByteRequest(2, 4)) == bytes([i, j])
                store.set("shared", bytes([i]) * 4096)
                v = store.get("shared")
                seen_shared.append(v)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    for i in range(n):
        for j in range(m):
            assert store.get(f"t/{i}/{j}") == bytes([i, j]) * 64
    assert len(list(store.list_prefix("t/"))) == n * m
    for v in seen_shared + [store.get("shared")]:
        assert len(v) == 4096 and len(set(v)) == 1  # one writer's whole value, never a mix
    if isinstance(store, LocalStore):
        assert temp_files_under(store.root) == []


def test_threads_set_and_erase_siblings(store):
    """Erasing the last key of a directory prunes it; concurrent writers there must not fail."""
    errors: list[BaseException] = []

    def worker(i):
        try:
            for _j in range(40):
                key = f"d/e/{i}"
                store.set(key, b"x")
                store.erase(key)
            store.set(f"d/e/{i}", bytes([i]))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    assert sorted(store.list()) == sorted(f"d/e/{i}" for i in range(6))
    assert all(store.get(f"d/e/{i}") == bytes([i]) for i in range(6))


def test_threads_set_if_not_exists_single_winner(store):
    winners = []
    barrier = threading.Barrier(6)

    def worker(i):
        barrier.wait()
        store.set_if_not_exists("once", bytes([i]) * 100)
        winners.append(store.get("once"))

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    final = store.get("once")
    assert len(final) == 100 and len(set(final)) == 1
    assert all(w == final for w in winners)


def test_memory_set_partial_values_is_atomic_per_call():
    st = MemoryStore()
    st.set("k", bytes(64))

    def worker(i):
        for _ in range(50):
            st.set_partial_values([("k", i, bytes([i + 1]))])

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(64)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert st.get("k") == bytes(range(1, 65))


# ------------------------------------------------------------------------------------ MemoryStore
def test_memory_store_dict_is_shared_and_values_are_bytes():
    d: dict = {"pre": bytearray(b"abc")}  # a caller's dict may hold other bytes-likes
    st = MemoryStore(d)
    assert st.get("pre") == b"abc" and type(st.get("pre")) is bytes
    assert st.get("pre", (1, 2)) == b"b" and st.getsize("pre") == 3
    st.set("k", bytearray(b"v"))
    assert type(d["k"]) is bytes and d["k"] == b"v"
    assert st == MemoryStore(d) and st != MemoryStore({}) and st != MemoryStore(d, read_only=True)
    assert st.with_read_only() == MemoryStore(d, read_only=True)
    assert "2 keys" in repr(st)
    with pytest.raises(StoreError):
        MemoryStore([1, 2])  # type: ignore[arg-type]


def test_context_manager_and_close(store):
    with store as s:
        assert s is store
        s.set("k", b"1")
    store.close()
    assert store.get("k") == b"1"


# -------------------------------------------------------------------------------------- make_store
def test_make_store_forms(tmp_path):
    mem = MemoryStore()
    assert make_store(mem) == (mem, "") and make_store(mem)[0] is mem
    ro, path = make_store(mem, mode="r")
    assert ro.read_only and path == "" and not mem.read_only
    mem.set("k", b"1")
    assert ro.get("k") == b"1"  # a read-only view over the same data
    already_ro = MemoryStore(read_only=True)
    assert make_store(already_ro, mode="r")[0] is already_ro

    st, path = make_store(str(tmp_path / "s.zarr"))
    assert isinstance(st, LocalStore) and path == "" and st.root == tmp_path / "s.zarr" and not st.read_only
    st.set("a", b"1")
    st2, _ = make_store(tmp_path / "s.zarr", mode="r")
    assert isinstance(st2, LocalStore) and st2.read_only and st2.get("a") == b"1"
    st3, _ = make_store((tmp_path / "s.zarr").as_uri())
    assert st3 == st
    for mode in ("a", "w", "w-", "r+"):
        assert not make_store(tmp_path / "s.zarr", mode=mode)[0].read_only

    d: dict = {}
    ms, path = make_store(d)
    assert isinstance(ms, MemoryStore) and path == ""
    ms.set("a", b"1")
    assert d == {"a": b"1"}
    assert make_store(d, mode="r")[0].read_only
    fresh, _ = make_store(None)
    assert isinstance(fresh, MemoryStore) and list(fresh.list()) == []
    assert make_store(None, mode="r")[0].read_only


@pytest.mark.parametrize("url", ["nosuch://bucket/x.zarr", "zb-unknown://example.com/a.zarr"])
def test_make_store_unsupported_schemes(url):
    # s3://, gs://, az://, http(s)://, memory:// are remote stores (tests/storage/test_remote_*)
    scheme = url.split("://")[0]
    with pytest.raises(StoreError, match=scheme):
        make_store(url)


@pytest.mark.parametrize("bad", [3.5, 7, [1, 2], object()])
def test_make_store_unsupported_types(bad):
    with pytest.raises(StoreError):
        make_store(bad)


# ------------------------------------------------------------------- both stores against a model
_keys = hst.sampled_from(["a", "b", "a/b", "a/c", "a/b/c", "ab", "b/a/x", "c/0/0", "c/0/1", "c/1/0"])
_prefixes = hst.sampled_from(["", "a", "a/", "a/b", "a/b/", "b/", "c/", "c/0", "c/0/", "z/"])
_ops = hst.lists(
    hst.one_of(
        hst.tuples(hst.just("set"), _keys, hst.binary(max_size=12)),
        hst.tuples(hst.just("erase"), _keys),
        hst.tuples(hst.just("erase_prefix"), _prefixes),
        hst.tuples(hst.just("partial"), _keys, hst.integers(0, 14), hst.binary(min_size=1, max_size=4)),
    ),
    max_size=14,
)


def _model_apply(model: dict, op: tuple) -> None:
    kind = op[0]
    if kind == "set":
        model[op[1]] = op[2]
    elif kind == "erase":
        model.pop(op[1], None)
    elif kind == "erase_prefix":
        for k in [k for k in model if k.startswith(op[1])]:
            del model[k]
    else:
        cur = bytearray(model.get(op[1], b""))
        end = op[2] + len(op[3])
        cur.extend(bytes(max(0, end - len(cur))))
        cur[op[2]:end] = op[3]
        model[op[1]] = bytes(cur)


def _store_apply(st: Store, op: tuple) -> None:
    kind = op[0]
    if kind == "set":
        st.set(op[1], op[2])
    elif kind == "erase":
        st.erase(op[1])
    elif kind == "erase_prefix":
        st.erase_prefix(op[1])
    else:
        st.set_partial_values([(op[1], op[2], op[3])])


def _model_list_dir(model: dict, prefix: str) -> list[str]:
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    out = set()
    for k in model:
        if k.startswith(prefix):
            rest = k[len(prefix):]
            out.add(prefix + (rest.split("/", 1)[0] + "/" if "/" in rest else rest))
    return sorted(out)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_ops, probes=hst.lists(hst.tuples(hst.integers(0, 15), hst.integers(0, 15)), max_size=3))
def test_stores_match_a_dict_model(ops, probes):
    with tempfile.TemporaryDirectory() as d:
        for st in (MemoryStore(), LocalStore(d)):
            model: dict = {}
            for op in ops:
                k = op[1]
                # a key cannot also be a "directory" on a file system; keep the model to valid trees
                if op[0] in ("set", "partial") and any(
                    m.startswith(k + "/") or k.startswith(m + "/") for m in model
                ):
                    continue
                _model_apply(model, op)
                _store_apply(st, op)
            assert sorted(st.list()) == sorted(model)
            for p in ("", "a", "a/", "b/", "c/", "c/0/", "z/"):
                assert sorted(st.list_prefix(p)) == sorted(k for k in model if k.startswith(p))
                assert sorted(st.list_dir(p)) == _model_list_dir(model, p)
            for k, v in model.items():
                assert st.get(k) == v and st.getsize(k) == len(v)
                for a, b in probes:
                    lo, hi = min(a, b), max(a, b)
                    assert st.get(k, (lo, hi)) == v[lo:hi]
                    assert st.get(k, SuffixByteRequest(lo)) == (v[max(0, len(v) - lo):] if lo else b"")
                    assert st.get(k, OffsetByteRequest(lo)) == v[lo:]


# ------------------------------------------------------------- portable code paths (Windows etc.)
@pytest.mark.parametrize("pread, preadv", [(False, False), (True, False), (False, True)])
def test_local_reads_without_pread(tmp_path, monkeypatch, pread, preadv):
    """The seek+read fallbacks used where ``os.pread``/``os.preadv`` do not exist (Windows)."""
    monkeypatch.setattr(local_mod, "_HAS_PREAD", pread and hasattr(os, "pread"))
    monkeypatch.setattr(local_mod, "_HAS_PREADV", preadv and hasattr(os, "preadv"))
    st = LocalStore(tmp_path)
    big = bytes(range(256)) * 64
    st.set("k", big)
    assert st.get("k") == big
    assert st.get("k", RangeByteRequest(100, 5000)) == big[100:5000]
    assert st.get("k", SuffixByteRequest(9)) == big[-9:]
    assert st.get_partial_values([("k", (1, 3)), ("k", OffsetByteRequest(len(big) - 1))]) == [big[1:3], big[-1:]]
    buf = bytearray(300)
    assert st.get_into("k", buf, offset=len(big) - 200) == 200 and bytes(buf[:200]) == big[-200:]
    arena = bytearray(len(big) + 5)
    assert st.read_into("k", arena) == len(big) and bytes(arena[: len(big)]) == big


def test_windows_replace_retries_while_target_is_open(tmp_path, monkeypatch):
    monkeypatch.setattr(files_mod, "_WINDOWS", True)
    st = LocalStore(tmp_path)
    st.set("k", b"old")
    real = os.replace
    fails = [PermissionError(13, "in use"), PermissionError(13, "in use")]

    def flaky(src, dst):
        if fails:
            raise fails.pop()
        return real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    st.set("k", b"new")
    assert st.get("k") == b"new" and temp_files_under(tmp_path) == []
    monkeypatch.setattr(os, "replace", lambda s, d: (_ for _ in ()).throw(PermissionError(13, "in use")))
    monkeypatch.setattr(files_mod.time, "sleep", lambda s: None)
    with pytest.raises(StoreError):
        st.set("k", b"never")
    assert st.get("k") == b"new" and temp_files_under(tmp_path) == []


def test_windows_file_uri_drive_letters(monkeypatch):
    monkeypatch.setattr(local_mod, "_WINDOWS", True)
    # the spec's example: "c:\\my data" has the canonical URI "file:///c:/my%20data"
    assert str(local_mod.path_from_uri("file:///c:/my%20data")) == str(Path("c:/my data"))
