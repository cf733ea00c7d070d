"""Pickling arrays, groups, stores and codecs (what dask.distributed and multiprocessing need).

Nodes pickle as store + path + metadata document + read_only; stores as their root and mode
(LocalStore) or a copy of their contents (MemoryStore); caches, compiled plans and native file
access are never pickled."""

import copy
import pickle
import threading

import numpy as np
import pytest

import zarrbolt
from zarrbolt.codecs import parse_codecs
from zarrbolt.codecs.chain import CodecChain
from zarrbolt.errors import ArrayNotFoundError, MetadataError, ReadOnlyError
from zarrbolt.storage import LocalStore, MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
PROTOCOLS = list(range(2, pickle.HIGHEST_PROTOCOL + 1))

# name: (dtype, codecs of a chunk (the inner chunks when sharded), fill value)
CHAINS = {
    "bytes-le": ("uint16", [LE], 0),
    "bytes-be-crc32c": ("int32", [BE, {"name": "crc32c"}], -1),
    "transpose-gzip": ("float32", [{"name": "transpose", "configuration": {"order": [1, 0]}}, LE,
                                   {"name": "gzip", "configuration": {"level": 1}}], 0.0),
    "reshape": ("uint8", [{"name": "reshape", "configuration": {"shape": [[0, 1]]}}, LE], 3),
    "zstd": ("float64", [LE, {"name": "zstd", "configuration": {"level": 1, "checksum": True}}], np.nan),
    "blosc-lz4": ("uint16", [LE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                                     "shuffle": "shuffle", "typesize": 2}}], 7),
    "scale-offset-cast": ("float32", [{"name": "scale_offset", "configuration": {"offset": 0, "scale": 8}},
                                      {"name": "cast_value", "configuration": {"data_type": "uint16"}}, LE], 1.0),
    "numcodecs-delta-lz4": ("uint16", [{"name": "numcodecs.delta", "configuration": {"dtype": "<u2"}}, LE,
                                       {"name": "numcodecs.lz4", "configuration": {}}], 0),
    "numcodecs-zlib": ("int16", [LE, {"name": "numcodecs.zlib", "configuration": {"level": 1}}], 0),
    "fixedscaleoffset": ("float64", [{"name": "numcodecs.fixedscaleoffset",
                                      "configuration": {"offset": 0, "scale": 8, "dtype": "<f8", "astype": "<i4"}},
                                     LE], 0.0),
}


def _data(dtype, shape):
    n = int(np.prod(shape))
    if np.dtype(dtype).kind == "f":
        return (np.arange(n) % 1000 / 8).astype(dtype).reshape(shape)
    return (np.arange(n) % 200).astype(dtype).reshape(shape)


def _store(kind, tmp_path):
    return LocalStore(tmp_path / "data.zarr") if kind == "local" else MemoryStore()


def _make(store, name, sharded, index_location="end"):
    dtype, codecs, fill = CHAINS[name]
    if sharded:
        codecs = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [8, 8], "codecs": codecs, "index_location": index_location,
            "index_codecs": [LE, {"name": "crc32c"}]}}]
        chunks = (16, 16)
    else:
        chunks = (8, 8)
    arr = zarrbolt.create_array(store, name="a", shape=(30, 20), chunks=chunks, dtype=dtype,
                                codecs=codecs, fill_value=fill)
    arr[:] = _data(dtype, arr.shape)
    return arr


def _round_trip(obj, protocol=pickle.HIGHEST_PROTOCOL):
    return pickle.loads(pickle.dumps(obj, protocol=protocol))


@pytest.mark.parametrize("kind", ["local", "memory"])
@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
@pytest.mark.parametrize("name", sorted(CHAINS))
def test_array_round_trip_reads_and_writes(tmp_path, kind, sharded, name):
    arr = _make(_store(kind, tmp_path), name, sharded)
    expect = arr[:]  # reads first: plans compiled, caches filled
    b = _round_trip(arr)
    assert type(b) is zarrbolt.Array
    assert (b.shape, b.chunks, b.shards, b.dtype, b.path) == (arr.shape, arr.chunks, arr.shards, arr.dtype, arr.path)
    assert b.metadata == arr.metadata
    np.testing.assert_array_equal(b[:], expect)
    np.testing.assert_array_equal(b[3:17, 5:19], expect[3:17, 5:19])
    new = _data(arr.dtype, (10, 10))[::-1]
    b[4:14, 6:16] = new
    want = expect.copy()
    want[4:14, 6:16] = new
    np.testing.assert_array_equal(b[:], want)
    if kind == "local":  # the same files: the original sees the write
        np.testing.assert_array_equal(arr[:], want)
    else:  # a MemoryStore pickles as a copy
        np.testing.assert_array_equal(arr[:], expect)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_protocol_and_index_at_start(tmp_path, protocol):
    arr = _make(LocalStore(tmp_path), "zstd", True, index_location="start")
    b = _round_trip(arr, protocol)
    np.testing.assert_array_equal(b[:], arr[:])
    assert b.store == arr.store


def test_pickle_carries_no_caches(tmp_path):
    arr = _make(LocalStore(tmp_path), "blosc-lz4", True)
    small = len(pickle.dumps(arr))
    for i in range(20):  # fill every cache there is: plans, encode plans, native files, layouts
        arr[i:i + 3, :] = arr[i:i + 3, :]
        arr.oindex[[1, 5, 9], :]
    assert arr.store.native_files() is not None
    data = pickle.dumps(arr)
    assert len(data) == small
    assert len(data) < len(arr.metadata.to_bytes()) + 600
    for banned in (b"NativeFiles", b"SpecCache\x94\x8c", b"_plan", b"eplans", b"Lock"):
        assert banned not in data
    b = pickle.loads(data)
    assert b.store._native is not arr.store._native  # made again by the unpickled array
    np.testing.assert_array_equal(b[:], arr[:])


def test_codec_chains_pickle_without_their_caches():
    codecs = parse_codecs([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4], "codecs": [LE, {"name": "gzip", "configuration": {"level": 1}}],
        "index_codecs": [LE, {"name": "crc32c"}]}}])
    meta = zarrbolt.create_array(None, shape=(16,), chunks=(8,), dtype="uint16", codecs=[c.to_json() for c in codecs]).metadata
    chain = meta.bound_codecs.chain
    assert len(chain._binds) == 1 and len(chain.ab._layouts) == 1
    c2 = _round_trip(chain)
    assert isinstance(c2, CodecChain) and c2 == chain
    assert len(c2._binds) == 0 and len(c2.ab._layouts) == 0
    bound = c2.bind(meta.chunk_spec())  # rebuilt on use
    raw = meta.bound_codecs.encode(np.arange(8, dtype="uint16"))
    np.testing.assert_array_equal(bound.decode(raw), np.arange(8))
    assert len(c2._binds) == 1 and len(c2.ab._layouts) == 1


def test_read_only_is_kept(tmp_path):
    _make(LocalStore(tmp_path), "bytes-le", False)
    ro = zarrbolt.open_array(str(tmp_path), path="a", mode="r")
    b = _round_trip(ro)
    assert b.read_only and b.store.read_only
    with pytest.raises(ReadOnlyError):
        b[0, 0] = 1
    # an array opened read-only over a writable store stays read-only too
    rw_store = LocalStore(tmp_path)
    c = _round_trip(zarrbolt.Array.open(rw_store, "a", read_only=True))
    assert c.read_only and not c.store.read_only
    with pytest.raises(ReadOnlyError):
        c[0, 0] = 1


def test_resized_after_pickling_is_refused(tmp_path):
    arr = _make(LocalStore(tmp_path), "bytes-le", True)
    data = pickle.dumps(arr)
    arr.resize((40, 20))
    b = pickle.loads(data)  # unpickling reads nothing ...
    with pytest.raises(MetadataError, match="changed since it was pickled"):
        b[:]  # ... the first read checks the metadata once
    with pytest.raises(MetadataError, match="changed since it was pickled"):
        pickle.loads(data)[0, 0] = 5
    np.testing.assert_array_equal(_round_trip(arr)[:30], _data("uint16", (30, 20)))


def test_attributes_changed_after_pickling_are_taken_over(tmp_path):
    arr = _make(LocalStore(tmp_path), "bytes-le", False)
    data = pickle.dumps(arr)
    arr.attrs["units"] = "nm"
    b = pickle.loads(data)
    b.attrs["scale"] = 2  # writes merge with the store's attributes, never the stale ones
    assert zarrbolt.open_array(str(tmp_path), path="a").attrs.asdict() == {"units": "nm", "scale": 2}
    c = pickle.loads(data)
    np.testing.assert_array_equal(c[:], arr[:])
    assert c.attrs.asdict() == {"units": "nm", "scale": 2}


def test_deleted_after_pickling(tmp_path):
    arr = _make(LocalStore(tmp_path), "bytes-le", False)
    data = pickle.dumps(arr)
    del zarrbolt.open_group(str(tmp_path))["a"]
    with pytest.raises(ArrayNotFoundError):
        pickle.loads(data)[:]


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_group_round_trip(tmp_path, kind):
    store = _store(kind, tmp_path)
    g = zarrbolt.create_group(store, attributes={"a": 1})
    sub = g.create_group("sub", attributes={"b": [1, 2]})
    sub.create_array("x", shape=(5,), chunks=(2,), dtype="int8")[:] = np.arange(5)
    g2 = _round_trip(g)
    assert type(g2) is zarrbolt.Group and g2.attrs.asdict() == {"a": 1} and not g2.read_only
    assert sorted(n for n, _ in g2.members(max_depth=None)) == ["sub", "sub/x"]
    np.testing.assert_array_equal(g2["sub/x"][:], np.arange(5))
    s2 = _round_trip(sub)
    assert s2.path == "sub" and s2.attrs["b"] == [1, 2]
    s2.create_group("new")
    assert ("new" in sub) == (kind == "local")
    ro = _round_trip(zarrbolt.Group.open(store, read_only=True))
    assert ro.read_only
    with pytest.raises(ReadOnlyError):
        ro.create_group("nope")


def test_local_store_round_trip(tmp_path):
    s = LocalStore(tmp_path, fsync=True)
    s.set("k/v", b"123")
    s.native_files()
    for t in (s, s.with_read_only()):
        u = _round_trip(t)
        assert type(u) is LocalStore and u == t and u.fsync and u.read_only == t.read_only
        assert u.get("k/v") == b"123" and u._native is None
    u = _round_trip(s)
    u.set("k/w", b"4")
    assert s.get("k/w") == b"4"


def test_memory_store_is_a_copy(tmp_path):
    backing = {}
    s = MemoryStore(backing)
    s.set("a", b"1")
    s.set("b/c", bytearray(b"22"))
    u = _round_trip(s)
    assert type(u) is MemoryStore and not u.read_only
    assert sorted(u.list()) == ["a", "b/c"] and u.get("b/c") == b"22"
    u.set("a", b"9")
    u.erase("b/c")
    assert s.get("a") == b"1" and backing["b/c"] == b"22"
    ro = _round_trip(s.with_read_only())
    assert ro.read_only and ro.get("a") == b"1"
    with pytest.raises(ReadOnlyError):
        ro.set("a", b"x")
    assert copy.copy(s)._data is backing and copy.deepcopy(s)._data is not backing
    # the unpickled store has its own working lock
    threads = [threading.Thread(target=lambda i=i: u.set(f"t/{i}", b"x")) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(list(u.list_prefix("t/"))) == 8


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_pickling_while_another_thread_reads(tmp_path, kind):
    arr = _make(_store(kind, tmp_path), "blosc-lz4", True)
    expect = arr[:]
    stop = threading.Event()
    errors = []

    def reader():
        try:
            while not stop.is_set():
                np.testing.assert_array_equal(arr[2:29, 1:19], expect[2:29, 1:19])
                arr[0:16, 0:16] = expect[0:16, 0:16]
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for _ in range(40):
            b = _round_trip(arr)
            np.testing.assert_array_equal(b[:], expect)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors


def test_dask_token_is_deterministic(tmp_path):
    arr = _make(LocalStore(tmp_path), "bytes-le", False)
    same = zarrbolt.open_array(str(tmp_path), path="a")
    assert arr.__dask_tokenize__() == same.__dask_tokenize__() == _round_trip(arr).__dask_tokenize__()
    m = _make(MemoryStore(), "bytes-le", False)
    assert m.__dask_tokenize__() != arr.__dask_tokenize__()
    assert m.__dask_tokenize__() == zarrbolt.Array.open(m.store, "a").__dask_tokenize__()


def test_bad_pickled_state_is_a_typed_error():
    for state in ({}, None, {"store": 1, "path": "", "metadata": b"{}", "read_only": False}):
        a = zarrbolt.Array.__new__(zarrbolt.Array)
        with pytest.raises(MetadataError):
            a.__setstate__(state)
    g = zarrbolt.create_group(MemoryStore())
    state = g.__getstate__()
    arr = zarrbolt.Array.__new__(zarrbolt.Array)
    with pytest.raises(MetadataError, match="carries group metadata"):
        arr.__setstate__(state)
    state["metadata"] = b"not json"
    with pytest.raises(MetadataError):
        zarrbolt.Group.__new__(zarrbolt.Group).__setstate__(state)
