"""Zarr v2 interop with zarr-python (``zarr_format=2``), both ways: what zarr-python writes zarrbolt
reads, what zarrbolt writes zarr-python reads, for both memory orders, both dimension separators,
every dtype family, every compressor and filter id, the fill value encodings, scalar arrays,
partial edge chunks, and groups with attributes.  zarr-python runs with its own codec pipeline
here (the reference)."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")

import zarrbolt  # noqa: E402
from zarrbolt.codecs import registered_codecs  # noqa: E402

REFERENCE = {"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}
SHAPE, CHUNKS = (7, 5), (3, 2)  # edge chunks on both axes


@pytest.fixture(autouse=True)
def _reference_pipeline():
    with zarr.config.set(REFERENCE), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python's v2 / numcodecs-in-v3 notices
        yield


def _data(dtype, shape=SHAPE):
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    i = np.arange(n)
    if dt.kind == "b":
        v = i % 3 == 0
    elif dt.kind in "iu":
        v = (i * 37) % 120
    elif dt.kind == "f":
        v = i * 0.25 - 3
    elif dt.kind == "c":
        v = i * (0.5 - 1j)
    elif dt.kind == "S":
        v = np.array([str(x * 7)[: dt.itemsize] for x in i], dtype=dt)
    elif dt.kind == "U":
        v = np.array([("äb" + str(x))[: dt.itemsize // 4] for x in i], dtype=dt)
    elif dt.kind in "mM":
        v = (i * 1000).astype("i8").view(dt.newbyteorder("="))
    elif dt.fields is not None:
        v = np.zeros(n, dtype=dt)
        for name in dt.names:
            v[name] = _data(dt.fields[name][0], (n,)) if dt.fields[name][0].fields is not None else i % 50
    else:  # void
        v = np.frombuffer(bytes((j * 3) % 256 for j in range(n * dt.itemsize)), dtype=dt)
    return np.asarray(v).astype(dt).reshape(shape)


def _same(a, b):
    assert a.shape == b.shape
    if a.dtype.kind == "f" or a.dtype.kind == "c":
        np.testing.assert_array_equal(a, b)
    else:
        assert a.tolist() == b.tolist()


DTYPES = ["|b1", "|u1", "|i1", "<u2", ">u2", "<i4", ">i8", "<f2", ">f4", "<f8", "<c8", ">c16",
          "|S5", "<U3", ">U2", "<M8[ns]", ">M8[s]", "<m8[ms]", "|V4", [("a", "<i4"), ("b", "<f8")],
          [("a", ">i4"), ("b", ">f8")], [("a", "<u2"), ("n", [("x", "|u1"), ("y", "<f4")])]]


def _v2_json(fields):
    return [[name, _v2_json(t) if isinstance(t, list) else t] for name, t in fields]


def _ids(v):
    return json.dumps(v) if isinstance(v, list) else str(v)


# ---------------------------------------------------------------------------- dtypes, order, separator
@pytest.mark.parametrize("sep", [".", "/"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
def test_zarr_python_writes_zarrbolt_reads(tmp_path, dtype, order, sep):
    path = str(tmp_path / "a")
    z = zarr.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=dtype, order=order, zarr_format=2,
                          chunk_key_encoding={"name": "v2", "separator": sep})
    data = _data(z.dtype)
    z[...] = data
    a = zarrbolt.open_array(path, mode="r")
    assert a.metadata.zarr_format == 2 and a.order == order
    _same(a[...], data)
    _same(a[2:7, 1:4], data[2:7, 1:4])


@pytest.mark.parametrize("sep", [".", "/"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
def test_zarrbolt_writes_zarr_python_reads(tmp_path, dtype, order, sep):
    path = str(tmp_path / "a")
    dt = np.dtype(dtype)
    data = _data(dt)
    a = zarrbolt.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=dt, order=order, zarr_format=2,
                              dimension_separator=sep)
    a[...] = data
    a[0, 0] = data[0, 0]  # a partial chunk write (read-modify-write)
    z = zarr.open_array(path, mode="r")
    assert z.metadata.zarr_format == 2 and z.metadata.order == order
    assert z.metadata.dimension_separator == sep
    _same(z[...], data)
    written = json.loads((tmp_path / "a/.zarray").read_text())
    assert written["dtype"] == (_v2_json(dtype) if isinstance(dtype, list) else dt.str if dt.kind != "b" else "|b1")


def test_same_documents_as_zarr_python(tmp_path):
    """zarrbolt's .zarray for the same array is zarr-python's, member for member."""
    for i, (dtype, fill) in enumerate([("<f8", np.nan), (">i2", -3), ("|S4", b"ab"), ("<U2", "q"), ("|b1", True),
                                       ("<c8", 1 - 2j), ("<M8[us]", np.datetime64(7, "us")), ("<f4", -np.inf)]):
        kw = dict(shape=(4, 6), chunks=(2, 3), dtype=dtype, fill_value=fill, zarr_format=2, order="F",
                  compressors=numcodecs.Blosc("zstd", 3, shuffle=2), filters=None)
        zarr.create_array(str(tmp_path / f"z{i}"), **kw)
        kw["compressors"] = kw["compressors"].get_config()
        zarrbolt.create_array(str(tmp_path / f"b{i}"), **kw)
        z = json.loads((tmp_path / f"z{i}/.zarray").read_text())
        b = json.loads((tmp_path / f"b{i}/.zarray").read_text())
        assert b == z, dtype


# ---------------------------------------------------------------------------- codecs
BLOSC = [numcodecs.Blosc(c, lv, shuffle=s) for c, lv, s in
         [("lz4", 5, 1), ("zstd", 3, 2), ("blosclz", 1, 0), ("lz4hc", 9, -1), ("zlib", 4, 1)]]
COMPRESSORS = [*BLOSC, numcodecs.Zstd(3), numcodecs.Zstd(1, checksum=True), numcodecs.GZip(5), numcodecs.Zlib(2),
               numcodecs.LZ4(1), numcodecs.BZ2(3), None]
FILTERS = [
    ("<i4", [numcodecs.Delta("<i4")]),
    ("<u2", [numcodecs.Delta("<u2", astype="<i4")]),
    ("<f8", [numcodecs.FixedScaleOffset(offset=2, scale=100, dtype="<f8", astype="<i4")]),
    ("<f8", [numcodecs.FixedScaleOffset(offset=2, scale=10, dtype="<f8", astype="|u1")]),
    ("<f8", [numcodecs.Quantize(digits=2, dtype="<f8")]),
    ("<f4", [numcodecs.BitRound(keepbits=8)]),
    ("<i4", [numcodecs.Shuffle(4)]),
    ("<f8", [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")]),
    ("|b1", [numcodecs.PackBits()]),
    ("<i4", [numcodecs.CRC32()]),
    ("<i4", [numcodecs.Adler32()]),
    ("<i4", [numcodecs.Delta("<i4"), numcodecs.Shuffle(4)]),
]


def _needs(config):
    """Every numcodecs id these tests use has its zarrbolt codec."""
    cid = config["id"]
    assert cid in ("blosc", "zstd", "gzip") or f"numcodecs.{cid}" in registered_codecs(), cid


@pytest.mark.parametrize("compressor", COMPRESSORS, ids=lambda c: "none" if c is None else json.dumps(c.get_config()))
def test_compressors_both_ways(tmp_path, compressor):
    if compressor is not None:
        _needs(compressor.get_config())
    data = _data("<i4", (20, 30))
    z = zarr.create_array(str(tmp_path / "z"), shape=data.shape, chunks=(8, 8), dtype="<i4", zarr_format=2,
                          compressors=compressor)
    z[...] = data
    _same(zarrbolt.open_array(str(tmp_path / "z"), mode="r")[...], data)
    conf = None if compressor is None else compressor.get_config()
    b = zarrbolt.create_array(str(tmp_path / "b"), shape=data.shape, chunks=(8, 8), dtype="<i4", zarr_format=2,
                              compressor=conf)
    b[...] = data
    assert json.loads((tmp_path / "b/.zarray").read_text())["compressor"] == json.loads(
        (tmp_path / "z/.zarray").read_text())["compressor"]
    _same(zarr.open_array(str(tmp_path / "b"), mode="r")[...], data)


@pytest.mark.parametrize("dtype, filters", FILTERS, ids=lambda v: json.dumps([f.get_config() for f in v])
                         if isinstance(v, list) else str(v))
def test_filters_both_ways(tmp_path, dtype, filters):
    for f in filters:
        _needs(f.get_config())
    data = _data(dtype, (20, 30))
    z = zarr.create_array(str(tmp_path / "z"), shape=data.shape, chunks=(8, 8), dtype=dtype, zarr_format=2,
                          filters=filters, compressors=numcodecs.Zstd(1))
    z[...] = data
    want = z[...]  # lossy filters: what zarr-python itself reads back
    _same(zarrbolt.open_array(str(tmp_path / "z"), mode="r")[...], want)
    b = zarrbolt.create_array(str(tmp_path / "b"), shape=data.shape, chunks=(8, 8), dtype=dtype, zarr_format=2,
                              filters=[f.get_config() for f in filters], compressor=None)
    b[...] = data
    _same(zarr.open_array(str(tmp_path / "b"), mode="r")[...], want)
    # the filters' output is deterministic: the chunks are zarr-python's, byte for byte
    z2 = zarr.create_array(str(tmp_path / "z2"), shape=data.shape, chunks=(8, 8), dtype=dtype, zarr_format=2,
                           filters=filters, compressors=None)
    z2[...] = data
    for key in ("0.0", "2.3"):
        assert (tmp_path / "b" / key).read_bytes() == (tmp_path / "z2" / key).read_bytes()


def test_blosc_and_zstd_reads_are_fused(tmp_path):
    from zarrbolt.pipeline import read as planner

    for i, comp in enumerate([numcodecs.Blosc("lz4", 5, shuffle=1), numcodecs.Zstd(3)]):
        p = str(tmp_path / str(i))
        data = _data("<u2", (64, 64))
        zarr.create_array(p, shape=data.shape, chunks=(16, 16), dtype="<u2", zarr_format=2, order="F",
                          compressors=comp)[...] = data
        before = dict(planner.strategy_counts)
        _same(zarrbolt.open_array(p, mode="r")[...], data)
        after = dict(planner.strategy_counts)
        assert sum(after.get(k, 0) - before.get(k, 0) for k in after if k.startswith("fused")) >= 1
        assert after.get("per-codec", 0) == before.get("per-codec", 0)


# ---------------------------------------------------------------------------- object arrays
def test_vlen_strings_both_ways(tmp_path):
    words = np.array(["", "a", "äöü", "long " * 20, "x"] * 4, dtype=object).reshape(4, 5)
    z = zarr.create_array(str(tmp_path / "z"), shape=words.shape, chunks=(3, 2), dtype=str, zarr_format=2)
    z[...] = words
    got = zarrbolt.open_array(str(tmp_path / "z"), mode="r")[...]
    assert got.tolist() == words.tolist()
    b = zarrbolt.create_array(str(tmp_path / "b"), shape=words.shape, chunks=(3, 2), dtype=str, zarr_format=2)
    b[...] = words
    assert json.loads((tmp_path / "b/.zarray").read_text())["filters"] == [{"id": "vlen-utf8"}]
    assert zarr.open_array(str(tmp_path / "b"), mode="r")[...].tolist() == words.tolist()


def test_vlen_bytes_written_by_zarrbolt(tmp_path):
    items = np.array([b"", b"\x00\x01", b"abc" * 9, b"z"], dtype=object)
    b = zarrbolt.create_array(str(tmp_path / "b"), shape=(4,), chunks=(3,), dtype=bytes, zarr_format=2)
    b[...] = items
    assert json.loads((tmp_path / "b/.zarray").read_text())["dtype"] == "|O"
    assert zarr.open_array(str(tmp_path / "b"), mode="r")[...].tolist() == items.tolist()
    assert zarrbolt.open_array(str(tmp_path / "b"), mode="r")[...].tolist() == items.tolist()


# ---------------------------------------------------------------------------- fill values, scalars
@pytest.mark.parametrize("dtype, fill", [
    ("<f8", None), ("<f8", np.nan), ("<f4", np.inf), ("<f2", -np.inf), ("<i2", -7), ("|S3", b"xy"),
    ("|V2", b"\x01\x02"), ("<U2", "hé"), ("<c16", complex(np.nan, 2)), ("<M8[D]", np.datetime64(3, "D")),
])
def test_fill_values_both_ways(tmp_path, dtype, fill):
    z = zarr.create_array(str(tmp_path / "z"), shape=(5,), chunks=(2,), dtype=dtype, fill_value=fill, zarr_format=2)
    z[:2] = z[:2]  # one chunk written, the rest is fill
    doc = json.loads((tmp_path / "z/.zarray").read_text())
    a = zarrbolt.open_array(str(tmp_path / "z"), mode="a")
    _same(a[...], z[...])
    a.attrs["touched"] = True  # rewrites the documents: the fill value must survive as written
    assert json.loads((tmp_path / "z/.zarray").read_text()) == doc
    _same(zarr.open_array(str(tmp_path / "z"), mode="r")[...], z[...])
    zarrbolt.create_array(str(tmp_path / "b"), shape=(5,), chunks=(2,), dtype=dtype, fill_value=fill, zarr_format=2)
    if fill is not None:
        assert json.loads((tmp_path / "b/.zarray").read_text())["fill_value"] == doc["fill_value"]
    _same(zarr.open_array(str(tmp_path / "b"), mode="r")[...], z[...])


def test_scalar_arrays_both_ways(tmp_path):
    z = zarr.create_array(str(tmp_path / "z"), shape=(), dtype="<f4", fill_value=1.5, zarr_format=2)
    z[...] = 4.25
    assert zarrbolt.open_array(str(tmp_path / "z"), mode="r")[...] == 4.25
    b = zarrbolt.create_array(str(tmp_path / "b"), shape=(), dtype=">i8", fill_value=2, zarr_format=2)
    assert zarr.open_array(str(tmp_path / "b"), mode="r")[...] == 2
    b[...] = -9
    assert os.path.exists(tmp_path / "b" / "0")
    assert zarr.open_array(str(tmp_path / "b"), mode="r")[...] == -9


# ---------------------------------------------------------------------------- hierarchies
def test_groups_with_attributes_both_ways(tmp_path):
    p = str(tmp_path / "g")
    root = zarr.open_group(p, mode="w", zarr_format=2)
    root.attrs.update({"title": "t", "nested": {"k": [1, 2]}})
    root.create_group("sub").attrs["s"] = 1
    root.create_array("sub/arr", shape=(3,), dtype="<i4", attributes={"a": "b"})[...] = [1, 2, 3]
    g = zarrbolt.open_group(p, mode="r")
    assert g.metadata.zarr_format == 2 and dict(g.attrs) == {"title": "t", "nested": {"k": [1, 2]}}
    assert sorted(k for k, _ in g.members(max_depth=None)) == ["sub", "sub/arr"]
    assert dict(g["sub"].attrs) == {"s": 1} and dict(g["sub/arr"].attrs) == {"a": "b"}
    assert "sub" in g.tree()
    q = str(tmp_path / "q")
    bg = zarrbolt.create_group(q, zarr_format=2, attributes={"x": [1, None]})
    bg.create_group("c", attributes={"y": 2}).create_array("d", shape=(2, 2), dtype="|u1")[...] = 5
    zg = zarr.open_group(q, mode="r")
    assert zg.metadata.zarr_format == 2 and dict(zg.attrs) == {"x": [1, None]}
    assert dict(zg["c"].attrs) == {"y": 2} and zg["c/d"][...].tolist() == [[5, 5], [5, 5]]


def test_mode_a_writes_stay_v2_for_zarr_python(tmp_path):
    """The data hazard of issue 19: zarrbolt.open (mode "a") on v2 data, then writes."""
    p = str(tmp_path / "g")
    root = zarr.open_group(p, mode="w", zarr_format=2)
    root.create_array("x", shape=(4, 4), chunks=(2, 2), dtype="<f4", fill_value=0)[...] = 1
    node = zarrbolt.open(p)
    node["x"][1:3, 1:3] = 7
    node.attrs["after"] = "yes"
    zarrbolt.open_array(p, path="x")[0, 0] = 3
    node.create_array("y", shape=(2,), dtype="<u2")[...] = 9
    assert not any(f == "zarr.json" for _, _, files in os.walk(p) for f in files)
    zg = zarr.open_group(p, mode="r")
    assert zg.metadata.zarr_format == 2 and zg.attrs["after"] == "yes"
    want = np.ones((4, 4), dtype="<f4")
    want[1:3, 1:3] = 7
    want[0, 0] = 3
    np.testing.assert_array_equal(zg["x"][...], want)
    assert zg["y"].metadata.zarr_format == 2 and zg["y"][...].tolist() == [9, 9]


def test_migrated_hierarchy_reads_in_zarr_python(tmp_path):
    p = str(tmp_path / "g")
    root = zarr.open_group(p, mode="w", zarr_format=2)
    root.attrs["r"] = 1
    data = _data(">f8", (9, 6))
    root.create_array("a", shape=data.shape, chunks=(4, 4), dtype=">f8", order="F",
                      filters=[numcodecs.Delta(">f8")], compressors=numcodecs.Blosc("lz4", 5, shuffle=1),
                      attributes={"_ARRAY_DIMENSIONS": ["y", "x"]})[...] = data
    zarrbolt.migrate(p, str(tmp_path / "v3"))
    zg = zarr.open_group(str(tmp_path / "v3"), mode="r")
    assert zg.metadata.zarr_format == 3 and zg.attrs["r"] == 1
    np.testing.assert_array_equal(zg["a"][...], data)
    assert zg["a"].metadata.dimension_names == ("y", "x")
