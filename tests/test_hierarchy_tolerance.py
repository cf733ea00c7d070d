"""A node zarrbolt cannot open (unknown data type, unknown codec, damaged document) never breaks
the listing of its hierarchy; only opening it fails, with a typed error naming the node and what
is unsupported."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrbolt as zb
from zarrbolt.errors import MetadataError, UnknownCodecError, UnknownDataTypeError
from zarrbolt.unsupported import UnsupportedArray, UnsupportedNode


@pytest.fixture(params=["memory", "local"])
def hierarchy(request, tmp_path):
    st = zb.MemoryStore() if request.param == "memory" else zb.LocalStore(str(tmp_path / "h.zarr"))
    g = zb.open_group(st, mode="w")
    good = g.create_array("good", shape=(4,), dtype="i4", chunks=(2,))
    good[...] = np.arange(4)
    sub = g.create_group("sub", attributes={"k": 1})
    sub.create_array("inner", shape=(2, 2), dtype="f4", chunks=(2, 2))
    doc = json.loads(st.get("good/zarr.json"))
    st.set("baddt/zarr.json", json.dumps({**doc, "data_type": "fixed_length_ucs9", "attributes": {"a": 1}}).encode())
    bad_codecs = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "frobnicate"}]
    st.set("sub/badcodec/zarr.json", json.dumps({**doc, "codecs": bad_codecs}).encode())
    st.set("broken/zarr.json", b"{not json")
    st.set("badgroup/zarr.json", json.dumps({"zarr_format": 3, "node_type": "group", "wat": 1}).encode())
    return st, g


def test_members_list_every_node(hierarchy):
    st, g = hierarchy
    members = dict(g.members(max_depth=None))
    assert sorted(members) == ["baddt", "badgroup", "broken", "good", "sub", "sub/badcodec", "sub/inner"]
    assert isinstance(members["good"], zb.Array) and isinstance(members["sub"], zb.Group)
    dt = members["baddt"]
    assert isinstance(dt, UnsupportedArray)
    assert dt.shape == (4,) and dt.data_type == "fixed_length_ucs9" and dt.attrs == {"a": 1}
    assert dt.path == "baddt" and dt.document["data_type"] == "fixed_length_ucs9"
    assert "fixed_length_ucs9" in dt.reason and isinstance(dt.error, UnknownDataTypeError)
    codec = members["sub/badcodec"]
    assert isinstance(codec, UnsupportedArray) and isinstance(codec.error, UnknownCodecError)
    assert "frobnicate" in codec.reason
    broken = members["broken"]
    assert type(broken) is UnsupportedNode and broken.node_type is None and broken.document is None
    assert broken.raw == b"{not json"
    badgroup = members["badgroup"]
    assert type(badgroup) is UnsupportedNode and badgroup.node_type == "group"
    assert "wat" in badgroup.reason


def test_arrays_keys_tree_info(hierarchy):
    _, g = hierarchy
    assert list(g.array_keys()) == ["baddt", "good"]
    assert [n for n, _ in g.groups()] == ["sub"]
    assert len(g) == 5 and g.nmembers() == 5 and g.nmembers(max_depth=None) == 7
    tree = g.tree()
    assert "baddt (4,) 'fixed_length_ucs9' (unsupported: unknown data type 'fixed_length_ucs9')" in tree
    assert "badcodec" in tree and "frobnicate" in tree and "inner (2, 2) float32" in tree
    assert "broken (unsupported:" in tree
    info = g.info
    assert "No. members : 5" in info and "No. arrays  : 2" in info
    assert "baddt (unknown data type 'fixed_length_ucs9')" in info
    # the good siblings open and read as always
    np.testing.assert_array_equal(g["good"][...], np.arange(4))


@pytest.mark.parametrize(
    "name, err, words",
    [
        ("baddt", UnknownDataTypeError, ["/baddt", "fixed_length_ucs9"]),
        ("sub/badcodec", UnknownCodecError, ["/sub/badcodec", "frobnicate"]),
        ("broken", MetadataError, ["/broken", "not valid JSON"]),
        ("badgroup", MetadataError, ["/badgroup", "wat"]),
    ],
)
def test_only_opening_fails(hierarchy, name, err, words):
    st, g = hierarchy
    for opener in (lambda: g[name], lambda: zb.open(st, path=name, mode="r"),
                   lambda: dict(g.members(max_depth=None))[name].open()):
        with pytest.raises(err) as info:
            opener()
        for w in words:
            assert w in str(info.value)
    if name != "badgroup":
        with pytest.raises(err, match=words[1]):
            zb.open_array(st, path=name, mode="r")


def test_get_array_and_get_group(hierarchy):
    _, g = hierarchy
    assert g.get_array("sub/inner").shape == (2, 2)
    assert g.get_group("sub").attrs["k"] == 1
    with pytest.raises(zb.errors.ArrayNotFoundError):
        g.get_array("nothing")
    with pytest.raises(zb.errors.GroupNotFoundError):
        g.get_group("nothing")
    with pytest.raises(zb.errors.ContainsGroupError):
        g.get_array("sub")
    with pytest.raises(zb.errors.ContainsArrayError):
        g.get_group("good")
    with pytest.raises(UnknownDataTypeError):
        g.get_array("baddt")


def test_unsupported_nodes_are_consolidated_and_listed(hierarchy):
    st, _ = hierarchy
    # a document that is not JSON cannot be consolidated (typed error naming it)
    with pytest.raises(MetadataError, match="broken"):
        zb.consolidate_metadata(st)
    st.erase("broken/zarr.json")
    c = zb.consolidate_metadata(st)
    members = dict(c.members(max_depth=None))
    assert isinstance(members["baddt"], UnsupportedArray) and isinstance(members["sub/badcodec"], UnsupportedArray)
    with pytest.raises(UnknownCodecError, match="frobnicate"):
        c["sub"]["badcodec"]


def test_load_of_a_group_names_the_unsupported_array(hierarchy):
    st, _ = hierarchy
    with pytest.raises(UnknownDataTypeError, match="/baddt"):
        zb.load(st)
    np.testing.assert_array_equal(zb.load(st, "good"), np.arange(4))


def test_zarr_v2_hierarchy_with_an_unknown_compressor_and_dtype():
    st = zb.MemoryStore()
    g = zb.open_group(st, mode="w", zarr_format=2)
    g.create_array("good", shape=(3,), dtype="<i2", chunks=(3,))[...] = [1, 2, 3]
    arr = json.loads(st.get("good/.zarray"))
    st.set("comp/.zarray", json.dumps({**arr, "compressor": {"id": "frobnicate9"}}).encode())
    st.set("dt/.zarray", json.dumps({**arr, "dtype": "<q9"}).encode())
    st.set("dt/.zattrs", b'{"units": "m"}')
    members = dict(g.members())
    assert sorted(members) == ["comp", "dt", "good"]
    comp, dt = members["comp"], members["dt"]
    assert isinstance(comp, UnsupportedArray) and isinstance(dt, UnsupportedArray)
    assert comp.node_type == "array" and comp.shape == (3,) and "frobnicate9" in comp.reason
    assert "q9" in dt.reason and dt.document["dtype"] == "<q9"
    assert list(g.array_keys()) == ["comp", "dt", "good"]
    assert "comp (3,)" in g.tree()
    with pytest.raises(MetadataError, match="/comp.*frobnicate9"):
        g["comp"]
    with pytest.raises(MetadataError, match="/dt"):
        zb.open_array(st, path="dt", mode="r")
    np.testing.assert_array_equal(g["good"][...], [1, 2, 3])
    c = zb.consolidate_metadata(st)
    assert c.consolidated and isinstance(dict(c.members())["comp"], UnsupportedArray)
