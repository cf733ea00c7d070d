"""LocalStore and MemoryStore against the abstract store interface (core spec) and the file
system store spec: reads with every byte-request kind, partial reads/writes, listing, erasing,
read-only views, key validation, roots and file:// URIs."""

from __future__ import annotations

import array
import os
from pathlib import Path

import numpy as np
import pytest

from zarrbolt.errors import InvalidKeyError, ReadOnlyError, StoreError
from zarrbolt.storage import (
    LocalStore,
    MemoryStore,
    OffsetByteRequest,
    RangeByteRequest,
    SuffixByteRequest,
)
from zarrbolt.storage import local as local_mod


from store_helpers import TMP, VALUE, files_under, temp_files_under


# ---------------------------------------------------------------------------------------- get / set
def test_missing_key_and_lazy_root(store, tmp_path):
    assert store.get("a") is None
    assert store.get("a", RangeByteRequest(0, 3)) is None
    assert store.get("a/b/c", SuffixByteRequest(1)) is None
    assert not store.exists("a")
    assert list(store.list()) == []
    assert list(store.list_dir("")) == []
    assert list(store.list_prefix("a/")) == []
    if isinstance(store, LocalStore):
        assert not store.root.exists()  # reading never creates the root
        store.set("k", b"v")
        assert store.root.is_dir() and (store.root / "k").read_bytes() == b"v"


@pytest.mark.parametrize(
    "value",
    [
        b"abc",
        bytearray(b"abc"),
        memoryview(b"xabcx")[1:4],
        array.array("B", b"abc"),
        np.frombuffer(b"abc", dtype=np.uint8),
        np.frombuffer(b"aXbXcX", dtype=np.uint8)[::2],  # not contiguous
    ],
    ids=["bytes", "bytearray", "memoryview", "array", "numpy", "numpy-strided"],
)
def test_set_bytes_likes(store, value):
    store.set("k", value)
    got = store.get("k")
    assert type(got) is bytes and got == b"abc"


def test_set_multibyte_items_and_immutability(store):
    a = np.arange(4, dtype="<u2")
    store.set("u2", a)
    assert store.get("u2") == a.tobytes()
    src = bytearray(b"old")
    store.set("k", src)
    src[:] = b"new"  # mutating the source after set must not change the stored value
    assert store.get("k") == b"old"
    with pytest.raises(TypeError):
        store.set("bad", 12345)
    with pytest.raises(TypeError):
        store.set("bad", "text")
    assert not store.exists("bad")


def test_overwrite_and_empty_value(store):
    store.set("k", b"first value")
    store.set("k", b"2nd")
    assert store.get("k") == b"2nd"
    store.set("empty", b"")
    assert store.get("empty") == b""
    assert store.exists("empty")
    assert store.getsize("empty") == 0
    assert store.get("empty", SuffixByteRequest(5)) == b""


RANGE_CASES = [
    (None, VALUE),
    (RangeByteRequest(0, 10), VALUE),
    (RangeByteRequest(2, 5), b"234"),
    (RangeByteRequest(4, 4), b""),
    (RangeByteRequest(8, 100), b"89"),  # clipped at the end
    (RangeByteRequest(10, 12), b""),
    (RangeByteRequest(20, 30), b""),  # starts past the end
    ((2, 5), b"234"),
    ((3, None), b"3456789"),
    ((0, 1 << 40), VALUE),
    (OffsetByteRequest(0), VALUE),
    (OffsetByteRequest(7), b"789"),
    (OffsetByteRequest(10), b""),
    (OffsetByteRequest(50), b""),
    (SuffixByteRequest(0), b""),
    (SuffixByteRequest(3), b"789"),
    (SuffixByteRequest(10), VALUE),
    (SuffixByteRequest(100), VALUE),  # longer than the value: all of it
]


@pytest.mark.parametrize("request_, expected", RANGE_CASES, ids=[repr(r) for r, _ in RANGE_CASES])
def test_byte_ranges(store, request_, expected):
    store.set("a/b", VALUE)
    assert store.get("a/b", request_) == expected
    store.set("e", b"")
    assert store.get("e", request_) == b""


@pytest.mark.parametrize(
    "make, exc",
    [
        (lambda: RangeByteRequest(5, 2), ValueError),
        (lambda: RangeByteRequest(-1, 2), ValueError),
        (lambda: OffsetByteRequest(-1), ValueError),
        (lambda: SuffixByteRequest(-1), ValueError),
        (lambda: RangeByteRequest(1.5, 2), TypeError),
        (lambda: SuffixByteRequest("3"), TypeError),
    ],
)
def test_invalid_byte_requests(make, exc):
    with pytest.raises(exc):
        make()


def test_byte_requests_are_frozen_and_accept_numpy_ints():
    r = RangeByteRequest(np.int64(1), np.int32(3))
    assert (r.start, r.end) == (1, 3) and type(r.start) is int
    with pytest.raises(AttributeError):
        r.start = 0  # type: ignore[misc]
    assert RangeByteRequest(1, 3) == r and hash(RangeByteRequest(1, 3)) == hash(r)


@pytest.mark.parametrize("bad", [(5, 2), (-1, 3), (1, 2, 3), "ab", [0, 2], 3])
def test_invalid_range_arguments(store, bad):
    store.set("k", VALUE)
    with pytest.raises((ValueError, TypeError)):
        store.get("k", bad)


def test_getsize(store):
    store.set("k", VALUE)
    store.set("d/x", b"1")
    assert store.getsize("k") == 10
    with pytest.raises(StoreError):
        store.getsize("missing")
    with pytest.raises(StoreError):
        store.getsize("d")  # a prefix, not a key


def test_prefix_is_not_a_key(store):
    store.set("a/b", b"x")
    for r in (None, RangeByteRequest(0, 0), SuffixByteRequest(0), OffsetByteRequest(0)):
        assert store.get("a", r) is None
    assert not store.exists("a")
    assert store.get_partial_values([("a", (0, 0))]) == [None]
    assert store.get_into("a", bytearray(4)) is None
    assert store.read_into("a", bytearray(4)) is None


# ---------------------------------------------------------------------------------- partial values
def test_get_partial_values(store):
    store.set("k/1", b"abcdef")
    store.set("k/2", b"uvwxyz")
    req = [
        ("k/1", (0, 2)),
        ("k/2", SuffixByteRequest(2)),
        ("k/1", None),
        ("nope", None),
        ("k/1", OffsetByteRequest(4)),
        ("k/1", RangeByteRequest(5, 50)),
        ("k/2", RangeByteRequest(9, 10)),
        ("nope", (0, 1)),
    ]
    assert store.get_partial_values(req) == [b"ab", b"yz", b"abcdef", None, b"ef", b"f", b"", None]
    assert store.get_partial_values(iter(req[:2])) == [b"ab", b"yz"]  # any iterable
    assert store.get_partial_values([]) == []
    with pytest.raises(InvalidKeyError):
        store.get_partial_values([("k/1", None), ("../x", None)])


def test_local_partial_values_open_each_file_once(tmp_path, monkeypatch):
    st = LocalStore(tmp_path)
    st.set("a", VALUE)
    st.set("b", VALUE)
    opened: list[str] = []
    real_open = os.open

    def counting_open(path, *args, **kw):
        opened.append(os.path.basename(path))
        return real_open(path, *args, **kw)

    monkeypatch.setattr(os, "open", counting_open)
    got = st.get_partial_values([("a", (0, 1)), ("b", (1, 2)), ("a", (2, 3)), ("a", SuffixByteRequest(1)), ("c", None)])
    assert got == [b"0", b"1", b"2", b"9", None]
    assert sorted(opened) == ["a", "b", "c"]


def test_local_ranges_read_only_the_requested_bytes(tmp_path, monkeypatch):
    st = LocalStore(tmp_path)
    big = bytes(range(256)) * 4096  # 1 MiB
    st.set("big", big)
    asked: list[int] = []
    if local_mod._HAS_PREAD:
        real = os.pread

        def spy(fd, n, off):
            asked.append(n)
            return real(fd, n, off)

        monkeypatch.setattr(os, "pread", spy)
    else:  # pragma: no cover - platforms without pread
        real = os.read

        def spy(fd, n):
            asked.append(n)
            return real(fd, n)

        monkeypatch.setattr(os, "read", spy)
    assert st.get("big", RangeByteRequest(1000, 1010)) == big[1000:1010]
    assert st.get("big", SuffixByteRequest(7)) == big[-7:]
    assert st.get("big", OffsetByteRequest(len(big) - 3)) == big[-3:]
    assert st.get_partial_values([("big", (5, 9)), ("big", SuffixByteRequest(2))]) == [big[5:9], big[-2:]]
    assert max(asked) <= 10


def test_get_into_and_read_into(store):
    store.set("k", VALUE)
    buf = bytearray(4)
    assert store.get_into("k", buf) == 4 and bytes(buf) == b"0123"
    assert store.get_into("k", buf, offset=3) == 4 and bytes(buf) == b"3456"
    buf = bytearray(b"........")
    assert store.get_into("k", buf, offset=7) == 3 and bytes(buf) == b"789....."
    assert store.get_into("k", buf, offset=10) == 0
    assert store.get_into("k", buf, offset=99) == 0
    assert store.get_into("missing", buf) is None
    out = np.zeros(10, dtype=np.uint8)
    assert store.get_into("k", out) == 10 and out.tobytes() == VALUE
    wide = np.zeros(3, dtype="<u4")  # any writable buffer, viewed as bytes
    assert store.get_into("k", wide, offset=2) == 8 and wide.tobytes()[:8] == b"23456789"
    with pytest.raises(ValueError):
        store.get_into("k", buf, offset=-1)
    with pytest.raises(TypeError):
        store.get_into("k", b"read-only buffer")

    arena = bytearray(16)
    assert store.read_into("k", arena) == 10 and bytes(arena[:10]) == VALUE
    assert store.read_into("k", bytearray(9)) == -10
    assert store.read_into("missing", arena) is None
    store.set("e", b"")
    assert store.read_into("e", bytearray(0)) == 0


def test_set_partial_values(store):
    store.set("k", b"abcdef")
    store.set_partial_values([("k", 2, b"ZZ"), ("new", 3, b"q"), ("k", 5, b"XYZ"), ("k", 0, bytearray(b"!"))])
    assert store.get("k") == b"!bZZeXYZ"
    assert store.get("new") == b"\x00\x00\x00q"
    store.set_partial_values([("new", 10, np.frombuffer(b"end", np.uint8))])
    assert store.get("new") == b"\x00\x00\x00q" + bytes(6) + b"end"
    store.set_partial_values([])
    with pytest.raises(ValueError):
        store.set_partial_values([("k", -1, b"x")])
    # every triple is checked before anything is written
    with pytest.raises(InvalidKeyError):
        store.set_partial_values([("k", 0, b"????"), ("a//b", 0, b"x")])
    assert store.get("k") == b"!bZZeXYZ"


def test_set_if_not_exists(store):
    store.set_if_not_exists("a/b", b"first")
    store.set_if_not_exists("a/b", b"second")
    assert store.get("a/b") == b"first"
    store.set("a/b", b"third")
    assert store.get("a/b") == b"third"


# ------------------------------------------------------------------------------ listing and erasing
SPEC_KEYS = ["a/b", "a/c", "a/d/e", "a/f/g", "e/f/g"]


def test_listing_spec_examples(store):
    for k in SPEC_KEYS:
        store.set(k, k.encode())
    assert sorted(store.list()) == sorted(SPEC_KEYS)
    # core spec: list_prefix("a/") of "a/b", "a/c/d", "e/f/g" gives "a/b" and "a/c/d"
    assert sorted(store.list_prefix("a/")) == ["a/b", "a/c", "a/d/e", "a/f/g"]
    # core spec: list_dir("a/") gives keys "a/b", "a/c" and prefixes "a/d/", "a/f/"
    assert sorted(store.list_dir("a/")) == ["a/b", "a/c", "a/d/", "a/f/"]
    assert sorted(store.list_dir("a")) == ["a/b", "a/c", "a/d/", "a/f/"]  # trailing "/" implied
    assert list(store.list_dir("b/")) == []
    assert sorted(store.list_dir("")) == ["a/", "e/"]
    assert sorted(store.list_dir("e/f")) == ["e/f/g"]
    assert list(store.list_dir("a/b")) == []  # a key is not a directory


def test_listing_nested_and_prefix_forms(store):
    keys = ["zarr.json", "a/zarr.json", "a/c/0/0", "a/c/0/1", "a/b/zarr.json", "ab", "abc/x",
            "d/e/f/g/h/i/j", "x.y", "a/c/10/0"]
    for k in keys:
        store.set(k, b"x")
    assert sorted(store.list()) == sorted(keys)
    assert sorted(store.list_prefix("")) == sorted(keys)
    assert sorted(store.list_prefix("a/")) == ["a/b/zarr.json", "a/c/0/0", "a/c/0/1", "a/c/10/0", "a/zarr.json"]
    assert sorted(store.list_prefix("a")) == ["a/b/zarr.json", "a/c/0/0", "a/c/0/1", "a/c/10/0", "a/zarr.json",
                                              "ab", "abc/x"]
    assert sorted(store.list_prefix("a/c/1")) == ["a/c/10/0"]
    assert sorted(store.list_prefix("a/c/0/")) == ["a/c/0/0", "a/c/0/1"]
    assert sorted(store.list_prefix("d/e/f/g/h/")) == ["d/e/f/g/h/i/j"]
    assert list(store.list_prefix("zz")) == []
    assert list(store.list_prefix("zarr.json/")) == []
    assert sorted(store.list_dir("")) == ["a/", "ab", "abc/", "d/", "x.y", "zarr.json"]
    assert sorted(store.list_dir("a/c")) == ["a/c/0/", "a/c/10/"]
    assert sorted(store.list_dir("d/e/f/g/h/i")) == ["d/e/f/g/h/i/j"]


def test_erase(store):
    for k in ("a/b", "a/c/d", "f", "g"):
        store.set(k, b"1")
    store.erase("a/b")
    store.erase("a/b")  # a missing key is fine
    store.erase("never/was/here")
    store.erase("f/child")  # below a key: missing, fine
    store.erase("a")  # a prefix, not a key: nothing happens
    assert sorted(store.list()) == ["a/c/d", "f", "g"]
    store.erase_values(["f", "missing", "g"])
    assert list(store.list()) == ["a/c/d"]
    with pytest.raises(InvalidKeyError):
        store.erase_values(["a/c/d", "../x"])  # all keys are checked before anything is erased
    assert list(store.list()) == ["a/c/d"]
    store.erase("a/c/d")
    assert list(store.list()) == []
    assert list(store.list_dir("")) == []  # no empty "directories" are left behind


@pytest.mark.parametrize(
    "prefix, left",
    [
        ("", []),
        ("a/", ["ab", "b/x"]),
        ("a", ["b/x"]),
        ("a/c/", ["a/b", "a/cd", "ab", "b/x"]),
        ("a/c", ["a/b", "ab", "b/x"]),
        ("a/c/0/", ["a/b", "a/c/1", "a/cd", "ab", "b/x"]),
        ("zz", ["a/b", "a/c/0/0", "a/c/0/1", "a/c/1", "a/cd", "ab", "b/x"]),
        ("zz/", ["a/b", "a/c/0/0", "a/c/0/1", "a/c/1", "a/cd", "ab", "b/x"]),
        ("ab/", ["a/b", "a/c/0/0", "a/c/0/1", "a/c/1", "a/cd", "ab", "b/x"]),
    ],
)
def test_erase_prefix(store, prefix, left):
    for k in ("a/b", "a/c/0/0", "a/c/0/1", "a/c/1", "a/cd", "ab", "b/x"):
        store.set(k, b"v")
    store.erase_prefix(prefix)
    assert sorted(store.list()) == left
    expected_dirs = sorted({k.split("/")[0] + ("/" if "/" in k else "") for k in left})
    assert sorted(store.list_dir("")) == expected_dirs
    if isinstance(store, LocalStore):
        assert store.root.is_dir()  # the root itself stays
        # no empty directories remain
        assert all(any(d.iterdir()) for d in store.root.rglob("*") if d.is_dir())


def test_local_keys_are_files_and_listing_skips_temp_files(tmp_path):
    st = LocalStore(tmp_path)
    st.set("a/b/c", b"1")
    st.set("z", b"2")
    assert files_under(tmp_path) == ["a/b/c", "z"]
    # stray temp files (from a crashed writer) never appear as keys
    (tmp_path / f"{TMP}abc").write_bytes(b"x")
    (tmp_path / "a" / f"{TMP}def").write_bytes(b"x")
    (tmp_path / "a" / f"{TMP}dir").mkdir()
    assert sorted(st.list()) == ["a/b/c", "z"]
    assert sorted(st.list_prefix("a/")) == ["a/b/c"]
    assert sorted(st.list_prefix("")) == ["a/b/c", "z"]
    assert sorted(st.list_dir("")) == ["a/", "z"]
    assert sorted(st.list_dir("a/")) == ["a/b/"]
    # files written by other tools are keys (the file system spec's key translation)
    (tmp_path / "a" / "ext").write_bytes(b"external")
    assert st.get("a/ext") == b"external"
    assert sorted(st.list_prefix("a/")) == ["a/b/c", "a/ext"]
    # an empty directory made by another tool is a child prefix (file system spec list_dir)
    (tmp_path / "empty").mkdir()
    assert sorted(st.list_dir("")) == ["a/", "empty/", "z"]
    st.erase_prefix("")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------- read-only
def test_read_only_refuses_every_write(store):
    store.set("a/b", b"1")
    store.set("c", b"2")
    ro = store.with_read_only()
    assert ro.read_only and not store.read_only
    assert ro.get("a/b") == b"1" and ro.exists("c") and ro.getsize("c") == 1
    assert sorted(ro.list()) == ["a/b", "c"] and sorted(ro.list_dir("")) == ["a/", "c"]
    assert ro.get_partial_values([("a/b", (0, 1))]) == [b"1"]
    writes = [
        lambda: ro.set("new", b"x"),
        lambda: ro.set("c", b"x"),
        lambda: ro.set_if_not_exists("new", b"x"),
        lambda: ro.set_partial_values([("c", 0, b"x")]),
        lambda: ro.set_partial_values([]),
        lambda: ro.erase("c"),
        lambda: ro.erase("missing"),
        lambda: ro.erase_values(["c"]),
        lambda: ro.erase_values([]),
        lambda: ro.erase_prefix(""),
        lambda: ro.erase_prefix("a/"),
    ]
    for op in writes:
        with pytest.raises(ReadOnlyError):
            op()
    assert sorted(store.list()) == ["a/b", "c"] and store.get("c") == b"2"
    # the view shares the data: writes through the writable store are visible
    store.set("d", b"3")
    assert ro.get("d") == b"3"
    rw = ro.with_read_only(False)
    rw.set("e", b"4")
    assert store.get("e") == b"4"


def test_read_only_error_types(store):
    ro = store.with_read_only(True)
    with pytest.raises(StoreError):
        ro.set("k", b"1")
    with pytest.raises(PermissionError):
        ro.set("k", b"1")


def test_local_read_only_does_not_create_root(tmp_path):
    ro = LocalStore(tmp_path / "nothing", read_only=True)
    assert ro.get("k") is None and list(ro.list()) == []
    with pytest.raises(ReadOnlyError):
        ro.set("k", b"1")
    assert not (tmp_path / "nothing").exists()


# ------------------------------------------------------------------------------------------- keys
INVALID_KEYS = [
    "", "/", "/a", "a/", "a//b", ".", "..", "./a", "a/.", "../a", "a/..", "a/../b", "a/../../x",
    "a\\b", "\\a", "..\\x", "C:", "C:/x", "c:x", "C:\\x", "a/C:/b", "a/d:", "a\x00b", "\x00",
]
BAD_KEY_TYPES = [None, 5, b"a", Path("a")]


@pytest.mark.parametrize("key", INVALID_KEYS + BAD_KEY_TYPES, ids=repr)
def test_invalid_keys_everywhere(store, key):
    store.set("ok", b"1")
    ops = [
        lambda: store.get(key),
        lambda: store.get(key, (0, 1)),
        lambda: store.exists(key),
        lambda: store.getsize(key),
        lambda: store.set(key, b"1"),
        lambda: store.set_if_not_exists(key, b"1"),
        lambda: store.set_partial_values([(key, 0, b"1")]),
        lambda: store.erase(key),
        lambda: store.erase_values([key]),
        lambda: store.get_partial_values([(key, None)]),
        lambda: store.get_into(key, bytearray(2)),
        lambda: store.read_into(key, bytearray(2)),
    ]
    for op in ops:
        with pytest.raises(InvalidKeyError):
            op()
    assert list(store.list()) == ["ok"]
    if isinstance(store, LocalStore):
        assert files_under(store.root) == ["ok"]


@pytest.mark.parametrize("prefix", ["/", "/a", "a//", "../", "a/../", "./", "a\\", "C:/", "a/C:", "\x00/", None, 3])
def test_invalid_prefixes(store, prefix):
    store.set("a/b", b"1")
    for op in (lambda: list(store.list_prefix(prefix)), lambda: list(store.list_dir(prefix)),
               lambda: store.erase_prefix(prefix)):
        with pytest.raises(InvalidKeyError):
            op()
    assert list(store.list()) == ["a/b"]


@pytest.mark.parametrize("key", ["a.b", "..a", "a..", ".zattrs", "a b", "ü/ß/€", "ab:c", "1:2", "c/0.0.0", "-", "_/~"])
def test_unusual_valid_keys(store, key):
    store.set(key, key.encode())
    assert store.get(key) == key.encode()
    assert list(store.list()) == [key]
    assert list(store.list_prefix(key)) == [key]
    store.erase(key)
    assert not store.exists(key)


def test_keys_are_case_sensitive(store):
    store.set("foo", b"a")
    store.set("FOO", b"b")
    if isinstance(store, LocalStore) and (store.root / "foo").read_bytes() == b"b":
        pytest.skip("case-insensitive file system (a documented limitation of the file system store)")
    assert store.get("foo") == b"a" and store.get("FOO") == b"b"


def test_local_refuses_temp_file_names(tmp_path):
    st = LocalStore(tmp_path)
    for key in (f"{TMP}x", f"a/{TMP}x/b"):
        with pytest.raises(InvalidKeyError):
            st.set(key, b"1")
        with pytest.raises(InvalidKeyError):
            st.get(key)
    with pytest.raises(InvalidKeyError):
        list(st.list_dir(f"{TMP}x/"))


# ------------------------------------------------------------------------------- roots and URIs
def test_file_uris(tmp_path):
    a = LocalStore(tmp_path.as_uri() + "/x.zarr")
    assert a.root == tmp_path / "x.zarr"
    a.set("k", b"v")
    assert (tmp_path / "x.zarr" / "k").read_bytes() == b"v"
    # the canonical URI (RFC 8089) names the same store
    assert str(a).startswith("file:///") and LocalStore(str(a)) == a
    spaced = LocalStore(tmp_path.as_uri() + "/my%20data")
    spaced.set("k", b"1")
    assert (tmp_path / "my data" / "k").read_bytes() == b"1"
    assert str(spaced).endswith("/my%20data")
    assert LocalStore("file://localhost" + tmp_path.as_posix() + "/x.zarr").get("k") == b"v"
    assert LocalStore("FILE://" + tmp_path.as_posix() + "/x.zarr").get("k") == b"v"
    with pytest.raises(StoreError):
        LocalStore("file://otherhost/data")
    with pytest.raises(StoreError):
        LocalStore("")


def test_local_roots(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rel = LocalStore("rel.zarr")
    assert rel.root == tmp_path / "rel.zarr" and rel.root.is_absolute()
    assert LocalStore(tmp_path / "p") == LocalStore(str(tmp_path / "p"))
    assert LocalStore(os.fsencode(str(tmp_path / "p"))).root == tmp_path / "p"
    assert LocalStore(tmp_path) != LocalStore(tmp_path, read_only=True)
    assert LocalStore(tmp_path) != MemoryStore()
    assert len({LocalStore(tmp_path), LocalStore(str(tmp_path))}) == 1
    assert "file://" in repr(LocalStore(tmp_path))


def test_local_file_in_the_way(tmp_path):
    (tmp_path / "f").write_bytes(b"file")
    st = LocalStore(tmp_path)
    with pytest.raises(StoreError):
        st.set("f/child", b"1")  # a parent component is a file
    with pytest.raises(StoreError):
        st.set("f/a/b", b"1")
    assert st.get("f/child") is None
    st.set("d/x", b"1")
    with pytest.raises(StoreError):
        st.set("d", b"1")  # a directory is at that key
    assert st.get("d/x") == b"1"
    assert temp_files_under(tmp_path) == []
    # a root that is a file: reads find nothing, writes fail cleanly
    rf = LocalStore(tmp_path / "f")
    assert rf.get("k") is None and list(rf.list()) == [] and list(rf.list_dir("")) == []
    with pytest.raises(StoreError):
        rf.set("k", b"1")
    assert (tmp_path / "f").read_bytes() == b"file"


def test_fsync_option(tmp_path):
    st = LocalStore(tmp_path, fsync=True)
    st.set("a/b", b"durable")
    st.set_if_not_exists("a/c", b"also")
    assert st.get("a/b") == b"durable" and st.get("a/c") == b"also"
    assert st.with_read_only().fsync
