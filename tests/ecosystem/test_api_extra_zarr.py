"""zarrbolt's additions to the zarr-python API, against zarr-python 3 itself: the same answers
for mask / fancy / block selections and nbytes_stored on the same stored arrays, the same
parameter names, and zarr-python's own objects (metadata, ArrayConfig) accepted."""

from __future__ import annotations

import inspect
import json
import warnings

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")

import zarrbolt as zb  # noqa: E402


@pytest.fixture(params=["plain", "sharded"])
def stored(request, tmp_path):
    data = np.arange(11 * 13, dtype="f8").reshape(11, 13)
    kw = {"shards": (4, 6)} if request.param == "sharded" else {}
    z = zarr.create_array(str(tmp_path / "a.zarr"), shape=data.shape, dtype="f8", chunks=(2, 3), **kw)
    z[...] = data
    return str(tmp_path / "a.zarr"), data


def _selections(data):
    rng = np.random.default_rng(0)
    mask = rng.random(data.shape) < 0.3
    rows = rng.random(data.shape[0]) < 0.5
    cols = rng.random(data.shape[1]) < 0.5
    return [mask, rows, (rows, slice(2, 9)), (3, cols), [0, 10, 4], (np.array([1, 9, 9]), np.array([0, 12, 3])),
            ([2, 5], [7, 1]), (slice(1, 8), [0, 3, 12])]


def test_getitem_selections_match_zarr_python(stored):
    path, data = stored
    z = zarr.open_array(path, mode="r")
    a = zb.open_array(path, mode="r")
    for sel in _selections(data):
        np.testing.assert_array_equal(a[sel], data[sel], err_msg=repr(sel))  # numpy's answer
        try:
            theirs = z[sel]
        except IndexError:  # zarr-python refuses a 1-D mask of a 2-D array; numpy (and zarrbolt) take it
            assert isinstance(sel, np.ndarray) and sel.dtype == bool and sel.ndim < data.ndim
            continue
        np.testing.assert_array_equal(a[sel], theirs, err_msg=repr(sel))


def test_setitem_selections_match_zarr_python(stored, tmp_path):
    path, data = stored
    for i, sel in enumerate(_selections(data)):
        z = zarr.open_array(path, mode="r+")
        a = zb.from_array(str(tmp_path / f"b{i}.zarr"), data=zb.open_array(path, mode="r"))
        ref = data.copy()
        ref[sel] = -1.0
        a[sel] = -1.0
        np.testing.assert_array_equal(a[...], ref, err_msg=repr(sel))
        try:
            z[sel] = -1.0
        except IndexError:
            continue
        np.testing.assert_array_equal(a[...], z[...], err_msg=repr(sel))
        z[...] = data


def test_blocks_match_zarr_python(stored):
    path, data = stored
    z = zarr.open_array(path, mode="r")
    a = zb.open_array(path, mode="r")
    for sel in [(0, 0), (-1, -1), (slice(1, 3),), (slice(None), 1), (1, slice(0, 2)), (Ellipsis, -1)]:
        np.testing.assert_array_equal(a.blocks[sel], z.blocks[sel], err_msg=repr(sel))
        np.testing.assert_array_equal(a.get_block_selection(sel), z.get_block_selection(sel))


def test_nbytes_stored_matches_zarr_python(stored, tmp_path):
    path, _ = stored
    assert zb.open_array(path).nbytes_stored() == zarr.open_array(path).nbytes_stored()
    g = zb.open_group(str(tmp_path / "g.zarr"), mode="w")
    g.create_array("x", shape=(10,), dtype="i4", chunks=(3,))[...] = np.arange(10)
    g.create_array("xy", shape=(4,), dtype="i4", chunks=(4,))[...] = 1
    zg = zarr.open_group(str(tmp_path / "g.zarr"), mode="r")
    assert g["x"].nbytes_stored() == zg["x"].nbytes_stored()


def _params(f):
    return [p for p in inspect.signature(f).parameters if p not in ("kwargs", "args")]


@pytest.mark.parametrize("name", ["from_array", "zeros_like", "ones_like", "full_like", "empty_like", "open_like",
                                  "save", "save_group", "save_array", "load", "tree", "create_hierarchy",
                                  "consolidate_metadata"])
def test_signatures_match_zarr_python(name):
    assert _params(getattr(zb, name)) == _params(getattr(zarr, name))


@pytest.mark.parametrize("name", ["require_groups", "nmembers", "get_array", "get_group"])
def test_group_method_signatures(name):
    assert _params(getattr(zb.Group, name)) == _params(getattr(zarr.Group, name))


@pytest.mark.parametrize("name", ["get_block_selection", "set_block_selection", "nbytes_stored", "with_config"])
def test_array_method_signatures(name):
    ours = _params(getattr(zb.Array, name))
    theirs = [p for p in _params(getattr(zarr.Array, name)) if p != "prototype"]
    assert ours == theirs


def test_from_array_of_a_zarr_python_array_matches_its_own(stored, tmp_path):
    path, data = stored
    zb.from_array(str(tmp_path / "ours.zarr"), data=zb.open_array(path, mode="r"))
    theirs = zarr.from_array(str(tmp_path / "theirs.zarr"), data=zarr.open_array(path, mode="r"))
    d1 = json.loads((tmp_path / "ours.zarr" / "zarr.json").read_text())
    d2 = json.loads((tmp_path / "theirs.zarr" / "zarr.json").read_text())
    for k in ("shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs"):
        assert d1[k] == d2[k], k
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "ours.zarr"))[...], theirs[...])


def test_like_functions_match_zarr_python(stored, tmp_path):
    path, _ = stored
    src_zb, src_z = zb.open_array(path, mode="r"), zarr.open_array(path, mode="r")
    for fn in ("zeros_like", "ones_like", "empty_like"):
        ours = getattr(zb, fn)(src_zb, store=str(tmp_path / f"o_{fn}.zarr"))
        theirs = getattr(zarr, fn)(src_z, store=str(tmp_path / f"t_{fn}.zarr"))
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype and ours.chunks == theirs.chunks
        d1 = json.loads((tmp_path / f"o_{fn}.zarr" / "zarr.json").read_text())
        d2 = json.loads((tmp_path / f"t_{fn}.zarr" / "zarr.json").read_text())
        assert d1["codecs"] == d2["codecs"] and d1["fill_value"] == d2["fill_value"], fn


def test_create_hierarchy_takes_zarr_python_metadata(tmp_path):
    z = zarr.create_array(zarr.storage.MemoryStore(), shape=(3,), dtype="i2", chunks=(3,), attributes={"a": 1})
    g = zarr.create_group(zarr.storage.MemoryStore(), attributes={"k": 2})
    nodes = {"grp": g.metadata, "grp/arr": z.metadata}
    created = dict(zb.create_hierarchy(store=str(tmp_path / "h.zarr"), nodes=nodes))
    assert sorted(created) == ["grp", "grp/arr"]
    zg = zarr.open_group(str(tmp_path / "h.zarr"), mode="r")
    assert zg["grp"].attrs["k"] == 2 and zg["grp/arr"].attrs["a"] == 1 and zg["grp/arr"].shape == (3,)


def test_zarr_python_array_config_accepted(tmp_path):
    from zarr.core.array_spec import ArrayConfig

    a = zb.create_array(str(tmp_path / "c.zarr"), shape=(4, 4), dtype="f4", chunks=(2, 2),
                        config=ArrayConfig(order="F", write_empty_chunks=True))
    assert a.order == "F" and a.config.write_empty_chunks is True


def test_tree_function_warnings_free():
    g = zb.open_group(zb.MemoryStore(), mode="w")
    g.create_array("x", shape=(1,), dtype="i1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "x (1,) int8" in zb.tree(g)


def _codec_objects():
    from numcodecs import zarr3 as nz3
    from zarr import codecs as zc
    from zarr.codecs import numcodecs as zcn

    return [
        ({"compressors": [zc.BloscCodec(cname="lz4", clevel=5)]}, "u2"),  # typesize and shuffle tuned to the items
        ({"compressors": zc.BloscCodec(cname="zstd")}, "u1"),
        ({"compressors": [zc.BloscCodec(cname="lz4", shuffle="noshuffle", typesize=4)]}, "i4"),
        ({"serializer": zc.BytesCodec(), "compressors": zc.ZstdCodec(level=2)}, "f4"),
        ({"filters": [zc.TransposeCodec(order=(1, 0))], "compressors": [zc.GzipCodec(level=3)]}, "u2"),
        ({"filters": [nz3.Delta(dtype="<u2")], "compressors": nz3.Zstd(level=3)}, "u2"),
        ({"compressors": [nz3.Blosc(cname="zstd", clevel=3)]}, "f8"),
        ({"filters": [nz3.FixedScaleOffset(offset=0, scale=1, dtype="<i4")]}, "i4"),
        ({"compressors": [zcn.Zstd(level=4)], "filters": [zcn.Delta(dtype="<i2")]}, "i2"),  # numcodecs.zarr3's successor
    ]


@pytest.mark.parametrize("case", range(9))
def test_create_array_takes_zarr_python_codec_objects(tmp_path, case):
    """zarr-python's codec objects (zarr.codecs.*, numcodecs.zarr3.*) as zarr-python takes them:
    the same metadata and values as zarr-python's create_array with the same arguments."""
    kw, dtype = _codec_objects()[case]
    data = (np.arange(6 * 10) % 50).astype(dtype).reshape(6, 10)
    docs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python's notice that numcodecs.zarr3 is unstable
        for lib, name in ((zarr, "ref"), (zb, "zb")):
            a = lib.create_array(str(tmp_path / name), shape=data.shape, chunks=(3, 5), dtype=dtype, **kw)
            a[...] = data
            docs.append(json.loads((tmp_path / name / "zarr.json").read_text())["codecs"])
            np.testing.assert_array_equal(zarr.open_array(str(tmp_path / name), mode="r")[...], data)
    assert docs[0] == docs[1]


def test_legacy_create_takes_zarr_python_codec_objects(tmp_path):
    from zarr import codecs as zc

    docs = []
    for lib, name in ((zarr, "ref"), (zb, "zb")):
        a = lib.create(shape=(10,), store=str(tmp_path / name), chunks=(5,), dtype="u2", zarr_format=3,
                       codecs=[zc.BytesCodec(), zc.BloscCodec(cname="zstd")])
        a[:] = np.arange(10)
        docs.append(json.loads((tmp_path / name / "zarr.json").read_text())["codecs"])
    assert docs[0] == docs[1]
    np.testing.assert_array_equal(zb.open_array(str(tmp_path / "zb"), mode="r")[:], np.arange(10))
