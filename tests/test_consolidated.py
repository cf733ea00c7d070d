"""Consolidated metadata: read (v3 inline, v2 .zmetadata), used instead of listing the store,
written by consolidate_metadata, and kept current when zarrbolt changes the hierarchy."""

from __future__ import annotations

import json
import pickle
from collections import Counter

import numpy as np
import pytest

import zarrbolt as zb
from zarrbolt.errors import MetadataError, NodeNotFoundError


class CountingStore(zb.MemoryStore):
    """A MemoryStore that counts the store operations that would be requests on an object store."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.calls: Counter = Counter()

    def _value(self, key):
        self.calls["get"] += 1
        return super()._value(key)

    def exists(self, key):
        self.calls["exists"] += 1
        return super().exists(key)

    def list_prefix(self, prefix):
        self.calls["list"] += 1
        return super().list_prefix(prefix)

    def with_read_only(self, read_only=True):
        s = CountingStore(self._data, read_only=read_only)
        s._lock, s.calls = self._lock, self.calls
        return s

    def total(self) -> int:
        return sum(self.calls.values())


def build(st) -> zb.Group:
    g = zb.open_group(st, mode="w", attributes={"root": True})
    a = g.create_array("a", shape=(4,), dtype="i4", chunks=(2,))
    a[...] = [1, 2, 3, 4]
    s = g.create_group("s", attributes={"x": 1})
    s.create_array("b", shape=(3, 3), dtype="f8", chunks=(2, 2), shards=(2, 2))
    s.create_group("t").create_array("c", shape=(2,), dtype="u1", chunks=(2,))
    return g


def cm_keys(st, path="") -> list[str]:
    doc = json.loads(st.get(f"{path}/zarr.json" if path else "zarr.json"))
    return sorted(doc["consolidated_metadata"]["metadata"])


def test_consolidate_writes_inline_form():
    st = zb.MemoryStore()
    build(st)
    g = zb.consolidate_metadata(st)
    assert g.consolidated and isinstance(g, zb.Group)
    doc = json.loads(st.get("zarr.json"))
    cm = doc["consolidated_metadata"]
    assert cm["kind"] == "inline" and cm["must_understand"] is False
    assert sorted(cm["metadata"]) == ["a", "s", "s/b", "s/t", "s/t/c"]
    assert cm["metadata"]["a"] == json.loads(st.get("a/zarr.json"))
    # child groups: their own document plus an empty consolidated_metadata (zarr-python's form),
    # while their stored zarr.json stays without one
    assert cm["metadata"]["s"]["consolidated_metadata"] == {"kind": "inline", "must_understand": False, "metadata": {}}
    assert cm["metadata"]["s"]["attributes"] == {"x": 1}
    assert "consolidated_metadata" not in json.loads(st.get("s/zarr.json"))
    assert doc["attributes"] == {"root": True}


def test_open_uses_consolidated_metadata_not_the_store():
    st = CountingStore()
    build(st)
    zb.consolidate_metadata(st)
    st.calls.clear()
    g = zb.open_group(st, mode="r")
    assert g.consolidated
    assert st.total() == 1  # the root zarr.json
    members = dict(g.members(max_depth=None))
    assert sorted(members) == ["a", "s", "s/b", "s/t", "s/t/c"]
    assert members["s/b"].shards == (2, 2) and members["s"].attrs["x"] == 1
    g.tree()
    g.info  # noqa: B018
    list(g.array_keys())
    assert g["s"]["t"]["c"].shape == (2,) and "a" in g and "s/t" in g
    assert st.total() == 1, st.calls  # listing and opening members read nothing more
    np.testing.assert_array_equal(g["a"][...], [1, 2, 3, 4])  # data still comes from the store
    # without consolidated metadata the same walk lists and reads node by node
    st.calls.clear()
    g2 = zb.open_group(st, mode="r", use_consolidated=False)
    assert not g2.consolidated
    dict(g2.members(max_depth=None))
    assert st.calls["list"] >= 3 and st.calls["get"] >= 6


def test_use_consolidated_semantics():
    st = zb.MemoryStore()
    build(st)
    assert not zb.open_group(st, mode="r").consolidated  # None: used when present
    with pytest.raises(MetadataError, match="consolidated metadata requested"):
        zb.open_group(st, mode="r", use_consolidated=True)
    with pytest.raises(MetadataError, match="consolidated metadata requested"):
        zb.open_consolidated(st, mode="r")
    zb.consolidate_metadata(st)
    assert zb.open_group(st, mode="r").consolidated
    assert zb.open_consolidated(st, mode="r").consolidated
    assert not zb.open_group(st, mode="r", use_consolidated=False).consolidated
    assert zb.open(st, mode="r").consolidated
    with pytest.raises(MetadataError):
        zb.open_consolidated(st, use_consolidated=False)
    with pytest.raises(MetadataError, match="Zarr format 2"):
        zb.open_group(st, mode="r", use_consolidated=".zmetadata")
    with pytest.raises(MetadataError):
        zb.open_group(st, mode="r", use_consolidated=1)


def test_consolidate_a_subgroup_and_errors():
    st = zb.MemoryStore()
    build(st)
    s = zb.consolidate_metadata(st, path="s")
    assert s.path == "s" and sorted(n for n, _ in s.members(max_depth=None)) == ["b", "t", "t/c"]
    assert "consolidated_metadata" not in json.loads(st.get("zarr.json"))
    with pytest.raises(zb.errors.ContainsArrayError):
        zb.consolidate_metadata(st, path="a")
    with pytest.raises(zb.errors.GroupNotFoundError):
        zb.consolidate_metadata(st, path="nothing")
    with pytest.raises(MetadataError, match="format 3"):
        zb.consolidate_metadata(st, zarr_format=2)
    with pytest.raises(zb.errors.ReadOnlyError):
        zb.consolidate_metadata(st.with_read_only())


@pytest.mark.parametrize("through", ["group", "api", "other handle"])
def test_changes_update_consolidated_metadata(through):
    st = zb.MemoryStore()
    build(st)
    g = zb.consolidate_metadata(st)
    other = zb.open_group(st, mode="r+", use_consolidated=False)
    if through == "group":
        g["s"].create_array("new", shape=(5,), dtype="i2")
    elif through == "api":
        zb.create_array(st, name="s/deep/new", shape=(5,), dtype="i2")
    else:
        other["s"].create_array("new", shape=(5,), dtype="i2")
    keys = cm_keys(st)
    new = "s/deep/new" if through == "api" else "s/new"
    assert new in keys
    if through == "api":
        assert "s/deep" in keys  # the implicit parent group too
    assert json.loads(st.get("zarr.json"))["consolidated_metadata"]["metadata"][new]["shape"] == [5]
    # the live handle's view follows, and a fresh open agrees with the store
    assert new in dict(g.members(max_depth=None))
    assert new in dict(zb.open_consolidated(st, mode="r").members(max_depth=None))


def test_attrs_resize_delete_update_it():
    st = zb.MemoryStore()
    build(st)
    g = zb.consolidate_metadata(st)
    zb.consolidate_metadata(st, path="s")  # a nested consolidation is kept current too
    a = g["a"]
    a.attrs["unit"] = "m"
    a.resize((10,))
    meta = json.loads(st.get("zarr.json"))["consolidated_metadata"]["metadata"]
    assert meta["a"]["attributes"] == {"unit": "m"} and meta["a"]["shape"] == [10]
    assert g["a"].shape == (10,) and g["a"].attrs["unit"] == "m"  # the view, without a store read
    g["s"]["t"].attrs.update({"y": 2})
    assert json.loads(st.get("zarr.json"))["consolidated_metadata"]["metadata"]["s/t"]["attributes"] == {"y": 2}
    assert json.loads(st.get("s/zarr.json"))["consolidated_metadata"]["metadata"]["t"]["attributes"] == {"y": 2}
    del g["s"]["t"]
    assert cm_keys(st) == ["a", "s", "s/b"] and cm_keys(st, "s") == ["b"]
    assert sorted(n for n, _ in g.members(max_depth=None)) == ["a", "s", "s/b"]
    with pytest.raises(NodeNotFoundError):
        g["s"]["t"]
    # the root's own attributes change: its consolidated metadata (current in the store) stays
    stale = zb.open_group(st, mode="r+")
    g["s"].create_group("later")
    stale.attrs["root"] = False
    assert "s/later" in cm_keys(st)
    assert json.loads(st.get("zarr.json"))["attributes"] == {"root": False}


def test_overwrite_and_recreate():
    st = zb.MemoryStore()
    build(st)
    zb.consolidate_metadata(st)
    zb.create_array(st, name="s", shape=(2,), dtype="f4", overwrite=True)  # a group replaced by an array
    assert cm_keys(st) == ["a", "s"]
    g = zb.open_group(st, mode="r")
    assert isinstance(g["s"], zb.Array) and g["s"].dtype == np.float32
    # overwriting the consolidated root itself leaves a plain group
    zb.open_group(st, mode="w")
    assert not zb.open_group(st, mode="r").consolidated


def test_pickled_group_keeps_consolidated_view():
    st = zb.MemoryStore()
    build(st)
    g = zb.consolidate_metadata(st)
    g2 = pickle.loads(pickle.dumps(g))
    assert g2.consolidated and sorted(n for n, _ in g2.members(max_depth=None)) == ["a", "s", "s/b", "s/t", "s/t/c"]


def test_external_additions_found_by_getitem_but_not_listed():
    """A node written by another program after consolidation: listing follows the consolidated
    metadata (as zarr-python does); opening it by name still finds it in the store."""
    st = zb.MemoryStore()
    build(st)
    zb.consolidate_metadata(st)
    raw = st.get("a/zarr.json")
    st.set("ext/zarr.json", raw)  # behind zarrbolt's back
    g = zb.open_group(st, mode="r")
    assert "ext" not in dict(g.members())
    assert g["ext"].shape == (4,) and "ext" in g
    assert "ext" in dict(zb.consolidate_metadata(st).members())


def test_malformed_consolidated_metadata_is_a_typed_error():
    st = zb.MemoryStore()
    build(st)
    doc = json.loads(st.get("zarr.json"))
    for bad in ({"kind": "other", "must_understand": False, "metadata": {}},
                {"kind": "inline", "must_understand": False, "metadata": []},
                {"kind": "inline", "must_understand": False, "metadata": {"a": 3}},
                {"kind": "inline", "must_understand": False, "metadata": {"/abs": {}}}):
        st.set("zarr.json", json.dumps({**doc, "consolidated_metadata": bad}).encode())
        with pytest.raises(MetadataError, match="consolidated"):
            zb.open_group(st, mode="r")
        assert not zb.open_group(st, mode="r", use_consolidated=False).consolidated


def test_nested_form_is_read():
    """Consolidated metadata written nested (children inside their group's entry) reads the same."""
    st = zb.MemoryStore()
    build(st)
    zb.consolidate_metadata(st)
    doc = json.loads(st.get("zarr.json"))
    flat = doc["consolidated_metadata"]["metadata"]
    s_entry = dict(flat["s"])
    s_entry["consolidated_metadata"] = {"kind": "inline", "must_understand": False,
                                        "metadata": {"b": flat["s/b"], "t": flat["s/t"], "t/c": flat["s/t/c"]}}
    doc["consolidated_metadata"]["metadata"] = {"a": flat["a"], "s": s_entry}
    st.set("zarr.json", json.dumps(doc).encode())
    g = zb.open_group(st, mode="r")
    assert sorted(n for n, _ in g.members(max_depth=None)) == ["a", "s", "s/b", "s/t", "s/t/c"]


def _write_v2_hierarchy(st) -> None:
    arr = {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4", "fill_value": 0, "order": "C",
           "filters": None, "compressor": None, "dimension_separator": "."}
    st.set(".zgroup", b'{"zarr_format": 2}')
    st.set(".zattrs", b'{"title": "v2"}')
    st.set("x/.zarray", json.dumps(arr).encode())
    st.set("x/.zattrs", b'{"units": "m"}')
    st.set("g/.zgroup", b'{"zarr_format": 2}')
    st.set("g/y/.zarray", json.dumps({**arr, "shape": [3]}).encode())


def test_consolidate_v2_writes_zmetadata():
    st = zb.MemoryStore()
    _write_v2_hierarchy(st)
    from zarrbolt.metadata import consolidated

    assert consolidated.consolidate(st, "") == 2
    doc = json.loads(st.get(".zmetadata"))
    assert doc["zarr_consolidated_format"] == 1
    assert sorted(doc["metadata"]) == [".zattrs", ".zgroup", "g/.zgroup", "g/y/.zarray", "x/.zarray", "x/.zattrs"]
    assert doc["metadata"]["x/.zattrs"] == {"units": "m"} and doc["metadata"]["g/y/.zarray"]["shape"] == [3]
    view = consolidated.parse_zmetadata(st, "", st.get(".zmetadata"))
    assert view.zarr_format == 2 and view.child_names("") == ["g", "x"] and view.child_names("g") == ["y"]
    assert view.node_documents("x")[".zattrs"] == {"units": "m"}
    # zarr-python 3 writes an inline consolidated_metadata member into v2 groups' entries: not
    # part of the group's own document
    doc["metadata"]["g/.zgroup"] = {"zarr_format": 2, "consolidated_metadata": {"kind": "inline", "metadata": {}}}
    view = consolidated.parse_zmetadata(st, "", json.dumps(doc).encode())
    assert view.node_documents("g") == {".zgroup": {"zarr_format": 2}}
    for bad in (b"[]", b'{"metadata": {}}', b'{"metadata": [], "zarr_consolidated_format": 1}', b"\xff"):
        with pytest.raises(MetadataError):
            consolidated.parse_zmetadata(st, "", bad)


def test_v2_consolidated_group_opens():
    pytest.importorskip("zarrbolt.metadata.v2")  # Zarr v2 reading (its own branch)
    st = CountingStore()
    _write_v2_hierarchy(st)
    from zarrbolt.metadata import consolidated

    consolidated.consolidate(st, "")
    st.calls.clear()
    g = zb.open_group(st, mode="r")
    assert g.consolidated
    n = st.total()
    members = dict(g.members(max_depth=None))
    assert sorted(members) == ["g", "g/y", "x"] and members["x"].attrs["units"] == "m"
    assert st.total() == n


def test_object_store_requests(s3_bucket, s3_proxy):
    """On S3 (moto behind a counting proxy, loopback): opening and listing a consolidated
    hierarchy is one GET; the same walk without it lists and reads node by node."""
    pytest.importorskip("obstore")
    from remote_helpers import s3_object_store

    store = s3_object_store(s3_proxy.endpoint, s3_bucket)
    g = zb.open_group(store, mode="w")
    for i in range(3):
        s = g.create_group(f"g{i}")
        for j in range(4):
            s.create_array(f"a{j}", shape=(4,), dtype="f4", chunks=(2,))
    zb.consolidate_metadata(store)
    s3_proxy.reset()
    c = zb.open_group(store, mode="r")
    names = sorted(n for n, _ in c.members(max_depth=None))
    assert len(names) == 15 and c["g2"]["a3"].shape == (4,)
    assert sum(s3_proxy.counts.values()) == 1 and s3_proxy.counts["GET"] == 1
    s3_proxy.reset()
    p = zb.open_group(store, mode="r", use_consolidated=False)
    assert sorted(n for n, _ in p.members(max_depth=None)) == names
    assert sum(s3_proxy.counts.values()) >= 15  # a listing per group, a read per node
