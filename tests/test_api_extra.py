"""The zarr-python API calls zarrbolt added: mask and fancy indexing through [], block
selections, nbytes_stored, info, per-array and zarr-python config keys, from_array, *_like,
save/save_group/load, tree, create_hierarchy, Group.require_groups/nmembers/get_*."""

from __future__ import annotations

import json
import os
import pickle
import re

import numpy as np
import pytest

import zarrbolt as zb
from zarrbolt import config
from zarrbolt.errors import (
    ArrayNotFoundError,
    BoundsCheckError,
    ChunkNotFoundError,
    ContainsArrayError,
    GroupNotFoundError,
    MetadataError,
    UnknownConfigKeyError,
)


@pytest.fixture(params=["plain", "sharded"])
def arr(request):
    data = np.arange(7 * 9, dtype="i4").reshape(7, 9)
    kw = {"shards": (4, 6)} if request.param == "sharded" else {}
    a = zb.create_array(zb.MemoryStore(), shape=data.shape, dtype="i4", chunks=(2, 3), **kw)
    a[...] = data
    return a, data


def test_bool_mask_getitem_setitem(arr):
    a, data = arr
    mask = (data % 4) == 1
    np.testing.assert_array_equal(a[mask], data[mask])
    a[mask] = -1
    ref = data.copy()
    ref[mask] = -1
    np.testing.assert_array_equal(a[...], ref)
    a[mask] = data[mask]
    with pytest.raises(IndexError):
        a[np.ones((7, 8), bool)]  # a mask of another shape


def test_per_axis_masks_and_int_arrays(arr):
    a, data = arr
    rows = np.array([True, False, True, False, False, True, True])
    cols = np.arange(9) % 2 == 0
    np.testing.assert_array_equal(a[rows], data[rows])
    np.testing.assert_array_equal(a[rows, 2:5], data[rows, 2:5])
    np.testing.assert_array_equal(a[1, cols], data[1, cols])
    np.testing.assert_array_equal(a[[0, 6]], data[[0, 6]])
    np.testing.assert_array_equal(a[np.array([6, 0, 3]), np.array([1, 8, 2])], data[[6, 0, 3], [1, 8, 2]])
    np.testing.assert_array_equal(a[[0, 2], [1, 3]], data[[0, 2], [1, 3]])
    np.testing.assert_array_equal(a.oindex[rows, cols], data[np.ix_(rows, cols)])
    a[rows, 0] = 99
    ref = data.copy()
    ref[rows, 0] = 99
    np.testing.assert_array_equal(a[...], ref)
    b = zb.create_array(zb.MemoryStore(), shape=(5,), dtype="u1", chunks=(2,))
    b[[True, False, True, False, True]] = 7
    np.testing.assert_array_equal(b[...], [7, 0, 7, 0, 7])
    np.testing.assert_array_equal(b[[4, 0]], [7, 7])


def test_blocks(arr):
    a, data = arr
    grid = a.metadata.chunk_grid.chunk_shape  # blocks are the chunk grid's (shards when sharded)
    g0, g1 = grid
    np.testing.assert_array_equal(a.blocks[0, 0], data[:g0, :g1])
    np.testing.assert_array_equal(a.blocks[-1, -1], data[(-(-7 // g0) - 1) * g0:, (-(-9 // g1) - 1) * g1:])
    np.testing.assert_array_equal(a.blocks[1:], data[g0:])
    np.testing.assert_array_equal(a.blocks[..., 1], data[:, g1:2 * g1])
    np.testing.assert_array_equal(a.get_block_selection((slice(0, 2), 0)), data[:2 * g0, :g1])
    a.blocks[0, 1] = np.full(a.blocks[0, 1].shape, -5)
    ref = data.copy()
    ref[:g0, g1:2 * g1] = -5
    np.testing.assert_array_equal(a[...], ref)
    a.set_block_selection((1, slice(None)), 3)
    ref[g0:2 * g0] = 3
    np.testing.assert_array_equal(a[...], ref)
    with pytest.raises(BoundsCheckError):
        a.blocks[100, 0]
    with pytest.raises(IndexError):
        a.blocks[::2]
    with pytest.raises(IndexError):
        a.blocks[0, 0, 0]
    with pytest.raises(IndexError):
        a.blocks[0.5]


def test_nbytes_stored_and_info(arr):
    a, data = arr
    st = a.store
    expected = sum(len(st.get(k)) for k in st.list_prefix(""))
    assert a.nbytes_stored() == expected and expected > len(st.get("zarr.json"))
    info = repr(a.info)
    if a.shards is not None:
        assert re.search(r"Shard shape +: \(4, 6\)", info) and re.search(r"Chunk shape +: \(2, 3\)", info)
    else:
        assert "Shard shape" not in info
    for text in (info, repr(a.info_complete())):
        assert re.search(rf"No. bytes stored +: {expected} ", text), text
        assert re.search(rf"Storage ratio +: {a.nbytes / expected:.1f}\b", text), text
    assert "Chunks Initialized" in repr(a.info_complete()) and "Chunks Initialized" not in info


def test_nbytes_stored_of_a_child_counts_only_it():
    g = zb.open_group(zb.MemoryStore(), mode="w")
    a = g.create_array("a", shape=(4,), dtype="u1", chunks=(2,))
    b = g.create_array("ab", shape=(4,), dtype="u1", chunks=(2,))
    b[...] = 1
    assert a.nbytes_stored() == len(g.store.get("a/zarr.json"))


# ---------------------------------------------------------------------------- config
def test_array_config_order_and_write_empty():
    st = zb.MemoryStore()
    a = zb.create_array(st, shape=(4, 4), dtype="f8", chunks=(2, 2), config={"order": "F", "write_empty_chunks": True})
    a[...] = 0
    assert a.order == "F" and a[...].flags.f_contiguous and not a[...].flags.c_contiguous
    assert a.config.write_empty_chunks is True
    assert sum(1 for k in st.list_prefix("c/")) == 4  # empty chunks stored as asked
    b = zb.open_array(st, mode="r+")
    b[...] = 0
    assert b.order == "C" and b[...].flags.c_contiguous
    assert sum(1 for k in st.list_prefix("c/")) == 0  # the global default (False) again
    c = b.with_config({"write_empty_chunks": True})
    c[0:2, 0:2] = 0
    assert list(st.list_prefix("c/")) == ["c/0/0"]
    d = zb.open_array(st, mode="r", config={"order": "F"})
    assert d.order == "F" and d.config.order == "F"
    e = pickle.loads(pickle.dumps(a))
    assert e.config == a.config
    with config.set({"array.order": "F"}):
        assert b.order == "F" and b[...].flags.f_contiguous
    assert zb.create_array(zb.MemoryStore(), shape=(2, 2), dtype="i1", order="F").order == "F"


def test_read_missing_chunks_off():
    st = zb.MemoryStore()
    a = zb.create_array(st, shape=(4,), dtype="i2", chunks=(2,), config={"read_missing_chunks": False})
    a[0:2] = 1
    np.testing.assert_array_equal(a[0:2], [1, 1])
    with pytest.raises(ChunkNotFoundError, match="c/1"):
        a[...]
    s = zb.create_array(zb.MemoryStore(), shape=(8,), dtype="i2", chunks=(2,), shards=(4,),
                        config={"read_missing_chunks": False})
    s[0:4] = 1
    with pytest.raises(ChunkNotFoundError):
        s[4:]
    with config.set({"array.read_missing_chunks": False}):
        with pytest.raises(ChunkNotFoundError):
            zb.open_array(st, mode="r")[...]


def test_bad_array_config_is_typed():
    with pytest.raises(UnknownConfigKeyError, match="write_empty"):
        zb.create_array(zb.MemoryStore(), shape=(2,), dtype="i1", config={"write_empty": True})
    with pytest.raises(KeyError):  # also a KeyError
        zb.create_array(zb.MemoryStore(), shape=(2,), dtype="i1", config={"sharding_coalesce_max_bytes": 1})
    with pytest.raises(MetadataError):
        zb.create_array(zb.MemoryStore(), shape=(2,), dtype="i1", config={"order": "K"})
    with pytest.raises(MetadataError):
        zb.create_array(zb.MemoryStore(), shape=(2,), dtype="i1", config={"write_empty_chunks": "yes"})
    with pytest.raises(MetadataError):
        zb.create_array(zb.MemoryStore(), shape=(2,), dtype="i1", config=5)
    with pytest.raises(MetadataError, match="contradicts"):
        zb.create_array(zb.MemoryStore(), shape=(2,), dtype="i1", order="C", config={"order": "F"})
    st = zb.MemoryStore()
    with pytest.raises(UnknownConfigKeyError):
        zb.open_array(st, mode="w", shape=(2,), dtype="i1", config={"nope": 1})
    assert list(st.list()) == []  # checked before anything was written


def test_zarr_python_config_keys():
    old_threads = config.get("threads")
    with config.set({"array.write_empty_chunks": True, "threading.max_workers": 3}):
        assert config.get("write_empty_chunks") is True and config.get("threads") == 3
        assert config.get("array.write_empty_chunks") is True
        st = zb.MemoryStore()
        a = zb.create_array(st, shape=(4,), dtype="u1", chunks=(2,))
        a[...] = 0
        assert sorted(st.list_prefix("c/")) == ["c/0", "c/1"]  # honoured
    assert config.get("threads") == old_threads and config.get("write_empty_chunks") is False
    with config.set({"threading.max_workers": None}):
        assert config.get("threads") == (os.cpu_count() or 1)
    with config.override(**{"array.order": "F"}):
        assert config.get("order") == "F"
    assert config.get("order") == "C"
    with pytest.raises(UnknownConfigKeyError):
        config.set({"array.nothing": 1})
    with pytest.raises(KeyError):
        config.get("nothing")
    with pytest.raises(MetadataError):
        config.set({"array.order": "X"})
    if "remote_concurrency" in config._values:  # the remote stores' option (their branch)
        with config.set({"async.concurrency": 7}):
            assert config.get("remote_concurrency") == 7
    else:
        with pytest.raises(UnknownConfigKeyError, match="remote_concurrency"):
            config.set({"async.concurrency": 7})


# ---------------------------------------------------------------------------- creation helpers
def test_from_array_keeps_a_zarrbolt_arrays_layout():
    st = zb.MemoryStore()
    src = zb.create_array(st, name="src", shape=(10, 8), chunks=(2, 2), shards=(4, 4), dtype="f4",
                          fill_value=3.5, attributes={"u": 1}, dimension_names=["y", "x"],
                          compressors={"name": "gzip", "configuration": {"level": 1}})
    src[...] = np.arange(80, dtype="f4").reshape(10, 8)
    b = zb.from_array(st, data=src, name="copy")
    assert (b.shards, b.chunks, b.fill_value) == ((4, 4), (2, 2), 3.5)
    assert b.attrs.asdict() == {"u": 1} and b.metadata.dimension_names == ("y", "x")
    assert json.loads(st.get("copy/zarr.json"))["codecs"] == json.loads(st.get("src/zarr.json"))["codecs"]
    np.testing.assert_array_equal(b[...], src[...])
    c = zb.from_array(st, data=src, name="rechunked", chunks=(5, 8), shards=None, compressors=None, fill_value=0)
    assert c.shards is None and c.chunks == (5, 8) and c.compressors == () and c.fill_value == 0
    np.testing.assert_array_equal(c[...], src[...])
    d = zb.from_array(st, data=src, name="empty", write_data=False)
    assert d.nchunks_initialized == 0
    with pytest.raises(zb.errors.ContainsArrayError):
        zb.from_array(st, data=src, name="copy")
    zb.from_array(st, data=src[...] * 2, name="copy", overwrite=True)
    np.testing.assert_array_equal(zb.open_array(st, path="copy")[...], src[...] * 2)


def test_from_array_copies_an_array_like_in_pieces(monkeypatch):
    import zarrbolt.api.sugar as ax

    class Source:  # an array-like that records the slices read from it
        def __init__(self, data):
            self.data, self.shape, self.dtype, self.reads = data, data.shape, data.dtype, []

        def __getitem__(self, sel):
            self.reads.append(sel)
            return self.data[sel]

    monkeypatch.setattr(ax, "_COPY_BYTES", 4 * 9 * 4)  # 4 rows per piece
    src = Source(np.arange(90, dtype="i4").reshape(10, 9))
    a = zb.from_array(zb.MemoryStore(), data=src, chunks=(2, 9))
    np.testing.assert_array_equal(a[...], src.data)
    assert src.reads == [slice(0, 4), slice(4, 8), slice(8, 10)]  # whole chunk rows, never all at once
    assert zb.from_array(zb.MemoryStore(), data=[[1, 2], [3, 4]])[1, 1] == 4


def test_like_constructors():
    st = zb.MemoryStore()
    a = zb.create_array(st, name="a", shape=(6, 4), chunks=(2, 2), shards=(2, 4), dtype="u2", fill_value=9)
    z = zb.zeros_like(a, store=st, path="z")
    assert (z.shape, z.chunks, z.shards, z.dtype, z.fill_value) == ((6, 4), (2, 2), (2, 4), np.dtype("u2"), 0)
    assert zb.ones_like(a, store=st, path="o")[0, 0] == 1
    assert zb.full_like(a, store=st, path="f")[0, 0] == 9
    assert zb.full_like(a, store=st, path="f7", fill_value=7)[5, 3] == 7
    e = zb.empty_like(a, store=st, path="e", dtype="f4", compressors=None)
    assert e.dtype == np.float32 and e.fill_value == 9 and e.compressors == ()
    n = zb.zeros_like(np.ones((3, 5), dtype="i8"))
    assert n.shape == (3, 5) and n.dtype == np.int64 and n[...].sum() == 0
    with pytest.raises(MetadataError):
        zb.full_like(np.ones(3))
    with pytest.raises(MetadataError):
        zb.zeros_like(a, zarr_format=2)


def test_open_like(tmp_path):
    a = zb.create_array(zb.MemoryStore(), shape=(6, 4), chunks=(3, 2), dtype="i4", fill_value=-1)
    o = zb.open_like(a, str(tmp_path / "x.zarr"))
    assert (o.shape, o.chunks, o.fill_value) == ((6, 4), (3, 2), -1)
    o[...] = 5
    again = zb.open_like(a, str(tmp_path / "x.zarr"))
    assert again[0, 0] == 5  # opened, not recreated


def test_save_and_load():
    st = zb.MemoryStore()
    zb.save(st, np.arange(3), path="one")
    np.testing.assert_array_equal(zb.load(st, path="one"), np.arange(3))
    zb.save(st, np.arange(3), np.ones(2), named=np.zeros(4, "u1"), path="grp")
    out = zb.load(st, path="grp")
    assert sorted(out) == ["arr_0", "arr_1", "named"] and out["named"].dtype == np.uint8
    zb.save_group(st, x=np.eye(2), path="grp")  # replaces the group
    assert sorted(zb.load(st, path="grp")) == ["x"]
    with pytest.raises(MetadataError):
        zb.save(st, path="nothing")
    with pytest.raises(MetadataError):
        zb.save_group(st, np.arange(2), bad="not an array", path="grp")
    assert sorted(zb.load(st, path="grp")) == ["x"]  # nothing removed by the failed call
    with pytest.raises(MetadataError):
        zb.save_group(st, np.array([object()]), path="grp")


def test_tree_function():
    g = zb.open_group(zb.MemoryStore(), mode="w")
    g.create_group("s").create_array("a", shape=(2,), dtype="i1")
    assert zb.tree(g) == g.tree() and "a (2,) int8" in zb.tree(g)
    assert zb.tree(g, level=1) == "/\n└── s"
    with pytest.raises(MetadataError):
        zb.tree("not a group")


def test_create_hierarchy():
    st = zb.MemoryStore()
    template = zb.create_array(zb.MemoryStore(), shape=(3,), dtype="i2", chunks=(3,)).metadata
    nodes = {
        "a/b": template,
        "g": {"zarr_format": 3, "node_type": "group", "attributes": {"k": 1}},
        "/g/c": json.loads(template.to_bytes()),
    }
    created = dict(zb.create_hierarchy(store=st, nodes=nodes))
    assert sorted(created) == ["a/b", "g", "g/c"]
    root = zb.open_group(st, mode="r")
    assert sorted(n for n, _ in root.members(max_depth=None)) == ["a", "a/b", "g", "g/c"]
    assert root["g"].attrs["k"] == 1 and root["a/b"].shape == (3,)
    with pytest.raises(ContainsArrayError):
        zb.create_hierarchy(store=st, nodes={"a/b": template})
    dict(zb.create_hierarchy(store=st, nodes={"a/b": {"zarr_format": 3, "node_type": "group"}}, overwrite=True))
    assert isinstance(zb.open_group(st)["a/b"], zb.Group)
    with pytest.raises(ContainsArrayError):
        zb.create_hierarchy(store=zb.MemoryStore(), nodes={"x": template, "x/y": template})
    with pytest.raises(MetadataError):
        zb.create_hierarchy(store=zb.MemoryStore(), nodes={"x": 3})
    with pytest.raises(MetadataError):
        zb.create_hierarchy(store=zb.MemoryStore(), nodes={"x": {"zarr_format": 3, "node_type": "array"}})


def test_group_helpers_and_not_found_errors():
    g = zb.open_group(zb.MemoryStore(), mode="w")
    a, b = g.require_groups("a", "b")
    assert (a.path, b.path) == ("a", "b") and g.require_groups("a")[0].path == "a"
    a.create_array("x", shape=(2,), dtype="i1")
    assert g.nmembers() == 2 and g.nmembers(max_depth=None) == 3
    assert g.get_array("a/x").shape == (2,) and g.get_group("a").path == "a"
    for err in (ArrayNotFoundError, GroupNotFoundError):
        assert issubclass(err, FileNotFoundError) and issubclass(err, KeyError)
    with pytest.raises(FileNotFoundError):
        zb.open_array(zb.MemoryStore(), mode="r")
    with pytest.raises(FileNotFoundError):
        zb.open_group(zb.MemoryStore(), mode="r")
    with pytest.raises(ContainsArrayError):
        g.require_groups("c", "a/x")
