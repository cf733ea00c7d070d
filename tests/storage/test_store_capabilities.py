"""The store capabilities the fused pipeline uses: batched byte-range reads into one buffer
(``Store.get_ranges_into``, every store) and native file access (``LocalStore.native_files``)."""

from __future__ import annotations

import os

import pytest

from zarrbolt.errors import InvalidKeyError
from zarrbolt.storage import LocalStore, MemoryStore, NativeFiles, Store
from zarrbolt.storage.local import TMP_PREFIX

VALUE = bytes(range(256)) * 4  # 1024 bytes


class DictStore(Store):
    """The smallest store: only the abstract methods, so every other one is the ABC's default."""

    def __init__(self):
        super().__init__()
        self.data: dict[str, bytes] = {}
        self.gets = 0

    def get(self, key, byte_range=None):
        from zarrbolt.storage._base import resolve_range

        self.gets += 1
        v = self.data.get(key)
        if v is None:
            return None
        a, b = resolve_range(byte_range, len(v))
        return v[a:b]

    def exists(self, key):
        return key in self.data

    def set(self, key, value):
        self.data[key] = bytes(value)

    def erase(self, key):
        self.data.pop(key, None)

    def list(self):
        return iter(list(self.data))

    def with_read_only(self, read_only=True):
        return self


@pytest.fixture(params=["local", "memory", "default"])
def store(request, tmp_path):
    s = {"local": lambda: LocalStore(tmp_path / "s"), "memory": MemoryStore, "default": DictStore}[request.param]()
    s.set("a/b", VALUE)
    s.set("empty", b"")
    return s


def test_ranges_land_one_after_another(store):
    ranges = [(10, 20), (0, 4), (1000, 1024), (500, 500), (300, 364)]
    buf = bytearray(4 + 10 + 24 + 64 + 7)
    got = store.get_ranges_into("a/b", ranges, buf)
    assert got == [10, 4, 24, 0, 64]
    expect = b"".join(VALUE[a:b] for a, b in ranges)
    assert bytes(buf[: len(expect)]) == expect
    assert bytes(buf[len(expect):]) == bytes(7)  # nothing written past the ranges


def test_ranges_are_clipped_at_the_value_end(store):
    buf = bytearray(100)
    got = store.get_ranges_into("a/b", [(1020, 1030), (2000, 2010), (0, 2)], memoryview(buf))
    assert got == [4, 0, 2]
    assert bytes(buf[:4]) == VALUE[1020:]
    assert bytes(buf[20:22]) == VALUE[:2]  # range 3 lands after the requested 10 + 10 bytes
    assert store.get_ranges_into("empty", [(0, 5)], bytearray(5)) == [0]


def test_missing_keys_and_no_ranges(store):
    assert store.get_ranges_into("nope", [(0, 4)], bytearray(4)) is None
    assert store.get_ranges_into("a/nope", [], bytearray(0)) is None
    assert store.get_ranges_into("a/b", [], bytearray(0)) == []


def test_bad_requests_are_refused(store):
    with pytest.raises(ValueError, match="buffer"):
        store.get_ranges_into("a/b", [(0, 10), (20, 30)], bytearray(19))
    for bad in ([(-1, 3)], [(5, 4)], [(1, 2, 3)], [7]):
        with pytest.raises(ValueError):
            store.get_ranges_into("a/b", bad, bytearray(64))
    with pytest.raises(TypeError):
        store.get_ranges_into("a/b", [(0.5, 3)], bytearray(64))
    with pytest.raises(TypeError):
        store.get_ranges_into("a/b", [(0, 4)], b"read-only")
    if not isinstance(store, DictStore):  # the smallest store checks no keys at all
        with pytest.raises(InvalidKeyError):
            store.get_ranges_into("../x", [(0, 4)], bytearray(4))


def test_memory_store_serves_all_ranges_with_one_lookup():
    s = MemoryStore()
    s.set("k", VALUE)
    buf = bytearray(30)
    assert s.get_ranges_into("k", [(0, 10), (10, 20), (100, 110)], buf) == [10, 10, 10]
    assert bytes(buf) == VALUE[:20] + VALUE[100:110]


def test_local_store_opens_the_file_once(tmp_path, monkeypatch):
    s = LocalStore(tmp_path)
    s.set("x/y", VALUE)
    opened = []
    real = os.open
    monkeypatch.setattr(os, "open", lambda p, *a, **k: (opened.append(p), real(p, *a, **k))[1])
    buf = bytearray(40)
    assert s.get_ranges_into("x/y", [(0, 10), (30, 40), (1000, 1020)], buf) == [10, 10, 20]
    assert bytes(buf) == VALUE[:10] + VALUE[30:40] + VALUE[1000:1020]
    assert len(opened) == 1


# ---------------------------------------------------------------------------- native files
def test_native_files_of_a_local_store(tmp_path):
    s = LocalStore(tmp_path / "root", fsync=True)
    nf = s.native_files()
    assert isinstance(nf, NativeFiles) and nf.fsync
    assert s.native_files() is nf  # made once
    s.set("c/0/1", b"abc")
    (path,) = nf.paths(["c/0/1"])
    assert isinstance(path, bytes)
    with open(path, "rb") as f:
        assert f.read() == b"abc"
    paths, tmps = nf.write_paths(["d/0/0", "d/1/0", "c/0/1"])
    assert [os.fsdecode(p) for p in paths] == [str(tmp_path / "root" / "d" / "0" / "0"),
                                               str(tmp_path / "root" / "d" / "1" / "0"),
                                               str(tmp_path / "root" / "c" / "0" / "1")]
    assert len(set(tmps)) == 3
    for p, t in zip(paths, tmps):
        assert os.path.isdir(os.path.dirname(p))  # the directories are made
        assert os.path.dirname(t) == os.path.dirname(p) and os.path.basename(t).startswith(os.fsencode(TMP_PREFIX))
        with open(t, "wb") as f:
            f.write(b"new")
        os.replace(t, p)
    nf.sync_dirs(["d/0/0", "c/0/1"])
    assert s.get("d/1/0") == b"new" and s.get("c/0/1") == b"new"
    assert sorted(s.list()) == ["c/0/1", "d/0/0", "d/1/0"]
    with pytest.raises(InvalidKeyError):
        nf.write_paths(["../escape"])
    with pytest.raises(InvalidKeyError):
        nf.write_paths([f"c/{TMP_PREFIX}x"])


def test_write_paths_refuse_a_file_in_the_way(tmp_path):
    s = LocalStore(tmp_path)
    s.set("c", b"a file where a directory is wanted")
    with pytest.raises(OSError):
        s.native_files().write_paths(["c/0"])


def test_only_plain_local_stores_have_native_files(tmp_path):
    class Sub(LocalStore):
        pass

    assert Sub(tmp_path).native_files() is None
    assert MemoryStore().native_files() is None
    assert DictStore().native_files() is None
    assert LocalStore(tmp_path, read_only=True).native_files() is not None
