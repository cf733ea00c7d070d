"""Zarr v2 arrays and groups through zarrbolt's API: create, read, write, format detection,
mode ``a`` never writing v3 metadata into v2 data, the fused C plans, pickling, migrate."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

import zarrbolt
from zarrbolt.errors import ContainsArrayError, CorruptChunkError, MetadataError, NodeNotFoundError
from zarrbolt.pipeline import read as read_planner


def _docs(store, prefix=""):
    return {k: json.loads(bytes(store.get(k))) for k in store.list_prefix(prefix) if k.rsplit("/", 1)[-1].startswith(".")}


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("sep", [".", "/"])
@pytest.mark.parametrize("dtype", ["<u2", ">i4", "|u1", "<f8", ">f4", "|b1", "<c16", "|V3"])
def test_round_trip(tmp_path, order, sep, dtype):
    dt = np.dtype(dtype)
    shape, chunks = (7, 5, 3), (3, 2, 3)  # partial edge chunks
    rng = np.random.default_rng(0)
    data = rng.integers(0, 200, size=shape).astype(dt) if dt.kind != "V" else \
        rng.integers(0, 255, size=shape + (3,), dtype=np.uint8).view("V3")[..., 0]
    a = zarrbolt.create_array(str(tmp_path), shape=shape, chunks=chunks, dtype=dtype, order=order,
                              zarr_format=2, dimension_separator=sep)
    a[...] = data
    zarray = json.loads((tmp_path / ".zarray").read_text())
    assert zarray["dtype"] == dt.str and zarray["order"] == order and zarray["dimension_separator"] == sep
    assert not (tmp_path / "zarr.json").exists()
    key = "2/2/0" if sep == "/" else "2.2.0"
    assert (tmp_path / key).exists()
    b = zarrbolt.open_array(str(tmp_path), mode="r")
    assert b.metadata.zarr_format == 2 and b.order == order
    np.testing.assert_array_equal(b[...], data)
    np.testing.assert_array_equal(b[1:6, ::2, 1], data[1:6, ::2, 1])


def test_chunk_bytes_are_v2_layout(tmp_path):
    """Bytes on disk: F order is the chunk transposed, big-endian swaps; checked by hand."""
    data = np.arange(12, dtype=">u2").reshape(3, 4)
    zarrbolt.create_array(str(tmp_path), data=data, chunks=(3, 4), order="F", compressor=None, zarr_format=2)
    raw = (tmp_path / "0.0").read_bytes()
    assert raw == np.asfortranarray(data).tobytes(order="F")


@pytest.mark.parametrize("compressor", [
    {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
    {"id": "zstd", "level": 3},
    {"id": "gzip", "level": 1},
    {"id": "zlib", "level": 1},
    {"id": "lz4", "acceleration": 1},
])
def test_c_codecs_are_fused(tmp_path, compressor):
    data = np.arange(64 * 64, dtype="<i4").reshape(64, 64)
    a = zarrbolt.create_array(str(tmp_path), data=data, chunks=(16, 16), compressor=compressor, zarr_format=2)
    before = dict(read_planner.strategy_counts)
    np.testing.assert_array_equal(zarrbolt.open_array(str(tmp_path), mode="r")[...], data)
    after = dict(read_planner.strategy_counts)
    fused = sum(after.get(k, 0) - before.get(k, 0) for k in after if k.startswith("fused"))
    assert fused >= 1 and after.get("per-codec", 0) == before.get("per-codec", 0)
    assert a.metadata.compressor == compressor


def test_filters_and_fill_values(tmp_path):
    data = np.linspace(0, 10, 50).reshape(5, 10)
    a = zarrbolt.create_array(str(tmp_path / "f"), data=data, chunks=(2, 4), zarr_format=2,
                              filters=[{"id": "fixedscaleoffset", "offset": 0, "scale": 100, "dtype": "<f8", "astype": "<i4"},
                                       {"id": "delta", "dtype": "<i4"}])
    np.testing.assert_allclose(zarrbolt.open_array(str(tmp_path / "f"))[...], data, atol=0.006)
    assert [f["id"] for f in a.metadata.filters] == ["fixedscaleoffset", "delta"]
    n = zarrbolt.create_array(str(tmp_path / "n"), shape=(4,), chunks=(2,), dtype="<f4", fill_value=np.nan, zarr_format=2)
    n[:2] = 1
    assert json.loads((tmp_path / "n/.zarray").read_text())["fill_value"] == "NaN"
    assert np.isnan(zarrbolt.open_array(str(tmp_path / "n"))[2:]).all()


def test_scalar_array(tmp_path):
    a = zarrbolt.create_array(str(tmp_path), shape=(), dtype="<i8", fill_value=-5, zarr_format=2)
    assert a[...] == -5
    a[...] = 42
    assert (tmp_path / "0").exists()
    assert zarrbolt.open_array(str(tmp_path))[...] == 42


def test_mode_a_keeps_v2(tmp_path):
    root = zarrbolt.create_group(str(tmp_path), zarr_format=2, attributes={"a": 1})
    arr = root.create_array("x", shape=(4,), chunks=(2,), dtype="<u2")
    arr[...] = [1, 2, 3, 4]
    node = zarrbolt.open(str(tmp_path))  # the default mode, "a"
    assert isinstance(node, zarrbolt.Group) and node.metadata.zarr_format == 2
    node["x"][0] = 9
    node.attrs["b"] = 2
    sub = node.create_group("sub")
    sub.create_array("y", shape=(2,), dtype="|u1")[...] = 7
    zarrbolt.open_group(str(tmp_path), mode="a").attrs["c"] = 3
    assert not list(tmp_path.rglob("zarr.json"))
    assert (tmp_path / "sub/.zgroup").exists() and (tmp_path / "sub/y/.zarray").exists()
    g = zarrbolt.open_group(str(tmp_path), mode="r")
    assert dict(g.attrs) == {"a": 1, "b": 2, "c": 3}
    assert sorted(g.keys()) == ["sub", "x"] and "x" in g and "nope" not in g
    assert list(g["x"][...]) == [9, 2, 3, 4] and list(g["sub/y"][...]) == [7, 7]
    assert "Zarr format : 2" in g.info
    del node["sub"]
    assert not (tmp_path / "sub").exists()


def test_zarr_format_3_on_v2_data_names_the_document(tmp_path):
    zarrbolt.create_array(str(tmp_path / "a"), shape=(2,), dtype="|u1", zarr_format=2)
    for call in (lambda: zarrbolt.open_array(str(tmp_path / "a"), zarr_format=3),
                 lambda: zarrbolt.open(str(tmp_path / "a"), zarr_format=3, mode="r")):
        with pytest.raises(MetadataError, match=r"\.zarray.*zarr_format=2"):
            call()
    zarrbolt.create_group(str(tmp_path / "g"), zarr_format=2)
    with pytest.raises(MetadataError, match=r"\.zgroup"):
        zarrbolt.open_group(str(tmp_path / "g"), zarr_format=3, mode="a")
    assert not (tmp_path / "g/zarr.json").exists()
    with pytest.raises(ContainsArrayError):
        zarrbolt.create_array(str(tmp_path / "a"), shape=(2,), dtype="|u1")
    with pytest.raises(NodeNotFoundError):
        zarrbolt.open(str(tmp_path / "a"), zarr_format=2, mode="r", path="missing")
    with pytest.raises(MetadataError, match="zarr_format"):
        zarrbolt.open(str(tmp_path / "a"), zarr_format=4)


def test_attributes_only_in_zattrs(tmp_path):
    a = zarrbolt.create_array(str(tmp_path), shape=(2,), dtype="|u1", zarr_format=2, attributes={"k": "v"})
    docs = _docs(a.store)
    assert docs[".zattrs"] == {"k": "v"} and "attributes" not in docs[".zarray"]
    del a.attrs["k"]
    assert not (tmp_path / ".zattrs").exists()
    a.attrs.put({"n": [1, None]})
    assert zarrbolt.open_array(str(tmp_path)).attrs.asdict() == {"n": [1, None]}


def test_resize_and_pickle(tmp_path):
    a = zarrbolt.create_array(str(tmp_path), shape=(5, 5), chunks=(2, 2), dtype=">i2", zarr_format=2,
                              order="F", attributes={"p": 1})
    a[...] = np.arange(25).reshape(5, 5)
    a.resize(3, 7)
    assert json.loads((tmp_path / ".zarray").read_text())["shape"] == [3, 7]
    b = pickle.loads(pickle.dumps(a))
    assert b.metadata == a.metadata and b.attrs["p"] == 1 and b.metadata.zarr_format == 2
    np.testing.assert_array_equal(b[:, :5], np.arange(25).reshape(5, 5)[:3])
    assert (b[:, 5:] == 0).all()
    g = zarrbolt.open_group(str(tmp_path / "g"), zarr_format=2, mode="w", attributes={"q": 2})
    assert pickle.loads(pickle.dumps(g)).attrs["q"] == 2


def test_corrupt_chunk_is_typed(tmp_path):
    zarrbolt.create_array(str(tmp_path), shape=(4,), chunks=(4,), dtype="<u4", zarr_format=2,
                          compressor={"id": "zstd", "level": 1})[...] = 1
    (tmp_path / "0").write_bytes(b"garbage")
    with pytest.raises(CorruptChunkError):
        zarrbolt.open_array(str(tmp_path))[...]


def test_memory_store_and_nested_paths():
    store = zarrbolt.MemoryStore()
    a = zarrbolt.create_array(store, name="a/b/c", shape=(3,), dtype="<f8", zarr_format=2)
    a[...] = 1.5
    assert set(k for k in store.list() if k.endswith((".zgroup", ".zarray"))) == {".zgroup", "a/.zgroup", "a/b/.zgroup", "a/b/c/.zarray"}
    assert zarrbolt.open_group(store, mode="r")["a/b/c"][1] == 1.5


def test_create_v2_rejects_v3_only_settings(tmp_path):
    for kw in ({"shards": (4,)}, {"codecs": ["bytes"]}, {"dimension_names": ["x"]},
               {"compressors": [{"id": "zstd"}, {"id": "gzip"}]}, {"order": "K"},
               {"compressors": {"name": "crc32c"}}, {"chunk_key_encoding": {"name": "default"}},
               {"dimension_separator": "-"}, {"serializer": "bytes"}):
        with pytest.raises(MetadataError):
            zarrbolt.create_array(str(tmp_path), shape=(4,), chunks=(2,), dtype="<u2", zarr_format=2, overwrite=True, **kw)
    with pytest.raises(MetadataError, match="dimension_separator"):
        zarrbolt.create_array(str(tmp_path / "v3"), shape=(4,), dtype="<u2", dimension_separator="/")


@pytest.mark.parametrize("cke", ["v2", "default"])
def test_migrate(tmp_path, cke):
    src = tmp_path / "src"
    g = zarrbolt.create_group(str(src), zarr_format=2, attributes={"title": "t"})
    data = np.arange(30, dtype=">f4").reshape(5, 6)
    g.create_array("a", data=data, chunks=(2, 4), order="F", attributes={"_ARRAY_DIMENSIONS": ["y", "x"]},
                   compressor={"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2})
    g.create_group("s").create_array("z", shape=(), dtype="<i2", fill_value=4)
    out = zarrbolt.migrate(str(src), str(tmp_path / "dst"), chunk_key_encoding=cke)
    assert out.metadata.zarr_format == 3 and dict(out.attrs) == {"title": "t"}
    a = out["a"]
    np.testing.assert_array_equal(a[...], data)
    assert a.metadata.dimension_names == ("y", "x") and "_ARRAY_DIMENSIONS" not in a.attrs
    assert out["s/z"][...] == 4
    assert (src / ".zgroup").exists() and not (src / "zarr.json").exists()  # the source is unchanged
    zarrbolt.migrate(str(src), chunk_key_encoding=cke)  # in place
    assert not list(src.rglob(".z*"))
    back = zarrbolt.open_group(str(src), mode="r", zarr_format=3)
    np.testing.assert_array_equal(back["a"][...], data)
    chunk_names = sorted(p.relative_to(src / "a").as_posix() for p in (src / "a").rglob("*") if p.is_file())
    assert ("c/0/0" in chunk_names) == (cke == "default")
    with pytest.raises(MetadataError, match=r"zarr\.json.*Zarr v3"):
        zarrbolt.migrate(str(src))  # nothing v2 left


def test_migrate_command_line(tmp_path):
    from zarrbolt.__main__ import main

    zarrbolt.create_array(str(tmp_path / "a"), shape=(3,), dtype="<i2", zarr_format=2)[...] = [1, 2, 3]
    assert main(["migrate", str(tmp_path / "a"), str(tmp_path / "b"), "--chunk-key-encoding", "default"]) == 0
    b = zarrbolt.open_array(str(tmp_path / "b"), mode="r")
    assert b.metadata.zarr_format == 3 and list(b[...]) == [1, 2, 3] and (tmp_path / "b/c/0").exists()
    assert main(["migrate", str(tmp_path / "a")]) == 0
    assert (tmp_path / "a/zarr.json").exists() and not (tmp_path / "a/.zarray").exists()


def test_fixedscaleoffset_fill_the_integer_type_cannot_carry(tmp_path):
    """numcodecs has no fill value: fill 0 with offset 2, scale 10 into uint8 must not refuse the
    array (zarr-python writes such arrays); chunks never written read as the fill value."""
    data = np.linspace(2, 20, 12)
    a = zarrbolt.create_array(str(tmp_path), shape=(24,), chunks=(12,), dtype="<f8", zarr_format=2, fill_value=0,
                              filters=[{"id": "fixedscaleoffset", "offset": 2, "scale": 10, "dtype": "<f8",
                                        "astype": "|u1"}])
    a[:12] = data
    b = zarrbolt.open_array(str(tmp_path), mode="r")
    np.testing.assert_allclose(b[:12], data, atol=0.051)
    assert (b[12:] == 0).all()


def test_info_names_the_format_and_order(tmp_path):
    a = zarrbolt.create_array(str(tmp_path), shape=(4, 4), dtype="<u2", zarr_format=2, order="F")
    text = repr(a.info)
    assert [ln.split(":")[1].strip() for ln in text.splitlines() if ln.startswith("Zarr format")] == ["2"]
    assert [ln.split(":")[1].strip() for ln in text.splitlines() if ln.startswith("Order")] == ["F"]


def test_new_nodes_inside_v2_hierarchies_are_v2(tmp_path):
    zarrbolt.create_group(str(tmp_path), zarr_format=2)
    a = zarrbolt.open(str(tmp_path), path="deep/arr", shape=(3,), dtype="<u2")  # mode "a", nothing there yet
    g = zarrbolt.open_group(str(tmp_path), path="other", mode="a")
    h = zarrbolt.group(str(tmp_path), path="third")
    w = zarrbolt.open_array(str(tmp_path), path="deep/arr", mode="w", shape=(2,), dtype="|u1")
    assert [n.metadata.zarr_format for n in (a, g, h, w)] == [2, 2, 2, 2]
    assert (tmp_path / "deep/.zgroup").exists() and not list(tmp_path.rglob("zarr.json"))
    # the root itself has no ancestor: mode "w" there makes what is asked (v3 by default)
    assert zarrbolt.open(str(tmp_path), mode="w").metadata.zarr_format == 3
    assert zarrbolt.open_group(str(tmp_path / "n"), mode="a").metadata.zarr_format == 3


def test_codecs_given_as_zarrbolt_objects_or_v3_json(tmp_path):
    from zarrbolt.codecs.blosc import BloscCodec

    a = zarrbolt.create_array(str(tmp_path / "a"), shape=(8,), dtype="<i4", zarr_format=2,
                              compressors=BloscCodec("zstd", 3, "bitshuffle"),
                              filters=[{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}])
    a[...] = np.arange(8)
    doc = json.loads((tmp_path / "a/.zarray").read_text())
    assert doc["compressor"] == {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0}
    assert doc["filters"] == [{"id": "delta", "dtype": "<i4"}]
    assert list(zarrbolt.open_array(str(tmp_path / "a"))[...]) == list(range(8))
    zarrbolt.create_array(str(tmp_path / "b"), shape=(8,), dtype="<i4", zarr_format=2,
                              compressors={"name": "numcodecs.zlib", "configuration": {"level": 4}})
    assert json.loads((tmp_path / "b/.zarray").read_text())["compressor"] == {"id": "zlib", "level": 4}
    with pytest.raises(MetadataError, match="no Zarr v2 form"):
        zarrbolt.create_array(str(tmp_path / "c"), shape=(8,), dtype="<i4", zarr_format=2, compressors="crc32c")


@pytest.mark.parametrize("compressor", [None, {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
                                        {"id": "zstd", "level": 1}, {"id": "gzip", "level": 1},
                                        {"id": "zlib", "level": 1}, {"id": "lz4"}])
@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "extended"])
def test_damaged_chunks_are_typed_errors(tmp_path, compressor, damage):
    """Every damaged v2 chunk is a CorruptChunkError naming the chunk, on every read path."""
    from zarrbolt.errors import CodecError

    data = np.arange(4 * 6, dtype="<f8").reshape(4, 6)
    zarrbolt.create_array(str(tmp_path), data=data, chunks=(4, 3), order="F", compressor=compressor, zarr_format=2)
    good = (tmp_path / "0.1").read_bytes()
    bad = {"garbage": bytes(range(7, 107)), "truncated": good[: len(good) // 2], "empty": b"",
           "extended": good + b"\0" * 9}[damage]
    (tmp_path / "0.1").write_bytes(bad)
    a = zarrbolt.open_array(str(tmp_path), mode="r")
    for sel in (Ellipsis, (slice(1, 3), 4)):
        with pytest.raises(CodecError, match=r"0\.1"):
            a[sel]
    np.testing.assert_array_equal(a[:, :3], data[:, :3])  # the intact chunk still reads


def test_migrate_consolidated_group(tmp_path):
    g = zarrbolt.create_group(str(tmp_path / "s"), zarr_format=2, attributes={"t": 1})
    g.create_array("a", shape=(3,), dtype="<i2")[...] = [1, 2, 3]
    g.create_group("sub").create_array("b", shape=(2,), dtype="|u1")[...] = 4
    zarrbolt.consolidate_metadata(str(tmp_path / "s"))
    assert (tmp_path / "s/.zmetadata").exists()
    out = zarrbolt.migrate(str(tmp_path / "s"), str(tmp_path / "d"))
    doc = json.loads((tmp_path / "d/zarr.json").read_text())
    assert sorted(doc["consolidated_metadata"]["metadata"]) == ["a", "sub", "sub/b"]
    assert list(out["a"][...]) == [1, 2, 3]
    zarrbolt.migrate(str(tmp_path / "s"))
    assert not list((tmp_path / "s").rglob(".z*"))
    c = zarrbolt.open_consolidated(str(tmp_path / "s"), mode="r")
    assert c.metadata.zarr_format == 3 and list(c["sub/b"][...]) == [4, 4]


def test_zarr_format_2_on_v3_data_names_the_document(tmp_path):
    zarrbolt.create_group(str(tmp_path))
    for call in (lambda: zarrbolt.open_group(str(tmp_path), zarr_format=2, mode="a"),
                 lambda: zarrbolt.open(str(tmp_path), zarr_format=2, mode="r"),
                 lambda: zarrbolt.migrate(str(tmp_path))):
        with pytest.raises(MetadataError, match=r"zarr\.json.*zarr_format=2"):
            call()
    assert not (tmp_path / ".zgroup").exists()
    with pytest.raises(NodeNotFoundError):
        zarrbolt.open(str(tmp_path), zarr_format=2, mode="r", path="nothing")


def test_unsupported_v2_nodes_do_not_break_listing():
    """A v2 node with an unknown codec, a bad dtype or broken JSON is listed as unsupported;
    only opening it fails, with the typed error naming its document."""
    store = zarrbolt.MemoryStore()
    g = zarrbolt.create_group(store, zarr_format=2)
    g.create_array("ok", shape=(2,), dtype="<u2")
    base = {"zarr_format": 2, "shape": [3], "chunks": [3], "dtype": "<u2", "compressor": None, "fill_value": 0,
            "order": "C", "filters": None}
    store.set("codec/.zarray", json.dumps({**base, "compressor": {"id": "nonexistent"}}).encode())
    store.set("dtype/.zarray", json.dumps({**base, "dtype": "<u2[s]"}).encode())
    store.set("json/.zarray", b"{not json")
    g = zarrbolt.open_group(store, mode="r")
    assert sorted(g.keys()) == ["codec", "dtype", "json", "ok"]
    kinds = {name: type(node).__name__ for name, node in g.members()}
    assert kinds == {"codec": "UnsupportedArray", "dtype": "UnsupportedArray", "json": "UnsupportedArray", "ok": "Array"}
    bad = dict(g.members())["codec"]
    assert bad.shape == (3,) and bad.zarr_format == 2 and bad.metadata["compressor"] == {"id": "nonexistent"}
    tree = g.tree()
    assert "codec (3,) '<u2' (unsupported" in tree and "dtype (3,) '<u2[s]' (unsupported" in tree
    assert "json None None (unsupported" in tree
    from zarrbolt.errors import UnknownCodecError

    with pytest.raises(UnknownCodecError, match="nonexistent"):
        g["codec"]
    with pytest.raises(MetadataError, match=r"dtype/\.zarray"):
        g["dtype"]
    with pytest.raises(MetadataError, match=r"json/\.zarray.*not valid JSON"):
        g["json"]


def test_migrate_keeps_xarray_missing_values(tmp_path):
    """xarray masks by a v2 array's fill value, by a v3 array's _FillValue attribute (xarray's
    encoding): migrate writes that attribute for xarray arrays, and only for them."""
    import base64
    import struct

    g = zarrbolt.create_group(str(tmp_path / "s"), zarr_format=2)
    g.create_array("f", shape=(2,), dtype="<f4", fill_value=-999.0, attributes={"_ARRAY_DIMENSIONS": ["x"]})
    g.create_array("i", shape=(2,), dtype="<i2", fill_value=-1, attributes={"_ARRAY_DIMENSIONS": ["x"]})
    g.create_array("plain", shape=(2,), dtype="<f4", fill_value=5.0)
    out = zarrbolt.migrate(str(tmp_path / "s"), str(tmp_path / "d"))
    assert out["f"].attrs["_FillValue"] == base64.standard_b64encode(struct.pack("<d", -999.0)).decode()
    assert out["i"].attrs["_FillValue"] == -1 and out["i"].metadata.dimension_names == ("x",)
    assert "_FillValue" not in out["plain"].attrs


def test_empty_v3_group_shadowing_v2_data_is_warned(tmp_path):
    """What earlier zarrbolt versions left behind (issue 19's data hazard): an empty v3 group
    zarr.json written next to a .zarray.  Opening warns and names both; zarr_format=2 opens the
    array; migrate is not fooled either."""
    zarrbolt.create_array(str(tmp_path), shape=(3,), dtype="<u2", zarr_format=2)[...] = 5
    (tmp_path / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group", "attributes": {}}')
    with pytest.warns(UserWarning, match=r"zarr\.json.*\.zarray"):
        assert isinstance(zarrbolt.open(str(tmp_path), mode="r"), zarrbolt.Group)
    assert list(zarrbolt.open_array(str(tmp_path), mode="r", zarr_format=2)[...]) == [5, 5, 5]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zarrbolt.create_group(str(tmp_path / "g"), attributes={"a": 1})
        zarrbolt.open(str(tmp_path / "g"), mode="r")  # no v2 document: no warning
