"""Groups: creation with implicit parents, members, attributes, node names, erase."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.errors import (
    ContainsArrayError,
    ContainsGroupError,
    GroupNotFoundError,
    MetadataError,
    NodeNotFoundError,
    ReadOnlyError,
)
from zarrbolt.storage import LocalStore, MemoryStore


@pytest.fixture(params=["memory", "local"])
def store(request, tmp_path):
    return MemoryStore() if request.param == "memory" else LocalStore(tmp_path / "h.zarr")


def test_create_group_makes_parents(store):
    g = zarr.create_group(store, path="a/b/c", attributes={"x": 1})
    assert g.path == "a/b/c" and g.attrs["x"] == 1
    for p in ("zarr.json", "a/zarr.json", "a/b/zarr.json", "a/b/c/zarr.json"):
        doc = json.loads(store.get(p))
        assert doc["zarr_format"] == 3 and doc["node_type"] == "group"
    root = zarr.open_group(store, mode="r")
    assert list(root.keys()) == ["a"]
    assert isinstance(root["a/b"], zarr.Group)


def test_members_arrays_groups_tree(store):
    root = zarr.group(store)
    root.create_group("g1").create_array("arr", shape=(4,), dtype="u1")
    root.create_array("top", shape=(2, 2), dtype="f4")
    root.create_group("g2")
    assert sorted(root.keys()) == ["g1", "g2", "top"]
    assert sorted(k for k, _ in root.arrays()) == ["top"]
    assert sorted(k for k, _ in root.groups()) == ["g1", "g2"]
    deep = dict(root.members(max_depth=None))
    assert set(deep) == {"g1", "g1/arr", "g2", "top"}
    assert "arr" in root.tree() and "g2" in root.tree()
    assert "top" in root and "nope" not in root
    assert root["g1//arr"].shape == (4,)  # empty path segments collapse, as in zarr-python
    assert len(root) == 3


def test_group_attributes_and_reopen(store):
    g = zarr.create_group(store, attributes={"a": 1})
    g.attrs["b"] = {"c": [1, 2]}
    g.update_attributes({"a": 2})
    del g.attrs["b"]
    assert zarr.open_group(store).attrs.asdict() == {"a": 2}


@pytest.mark.parametrize("bad", ["", ".", "..", "a/../b", "__zarr_x", "a/./b", "x\\y"])
def test_node_name_rules(store, bad):
    root = zarr.group(store)
    with pytest.raises((MetadataError, ValueError)):
        root.create_group(bad)


def test_erase_and_conflicts(store):
    root = zarr.group(store)
    sub = root.create_group("sub")
    a = sub.create_array("x", shape=(3,), dtype="i1")
    a[...] = 1
    with pytest.raises(ContainsArrayError):
        sub.create_array("x", shape=(3,), dtype="i1")
    with pytest.raises((ContainsGroupError, ContainsArrayError)):
        root.create_group("sub")
    sub.create_array("x", shape=(5,), dtype="i1", overwrite=True)
    assert sub["x"].shape == (5,)
    del root["sub"]
    assert "sub" not in root
    assert not any(k.startswith("sub/") for k in store.list())
    with pytest.raises((NodeNotFoundError, KeyError)):
        root["sub"]


def test_open_missing_group_and_read_only(store):
    with pytest.raises(GroupNotFoundError):
        zarr.open_group(store, mode="r")
    zarr.group(store)
    ro = zarr.open_group(store, mode="r")
    with pytest.raises(ReadOnlyError):
        ro.create_group("x")
    with pytest.raises(ReadOnlyError):
        ro.attrs["x"] = 1


def test_require_and_open_dispatch(store):
    root = zarr.group(store)
    g = root.require_group("r")
    assert root.require_group("r").path == g.path
    a = root.require_array("arr", shape=(3,), dtype="u2")
    assert root.require_array("arr", shape=(3,), dtype="u2").shape == (3,)
    assert isinstance(zarr.open(store, path="arr"), zarr.Array)
    assert isinstance(zarr.open(store, path="r"), zarr.Group)
    a[...] = np.arange(3)
    np.testing.assert_array_equal(zarr.load(store, path="arr"), np.arange(3))
