"""Zarr v2 documents (``.zarray`` / ``.zgroup`` / ``.zattrs``): parsing, the codec chain they
become, the JSON written back, and a typed error naming the document and member for every
malformed one."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from zarrbolt.errors import MetadataError, UnknownCodecError, UnknownDataTypeError
from zarrbolt.metadata.v2 import (
    V2ArrayMetadata,
    V2GroupMetadata,
    parse_v2_array,
    parse_v2_dtype,
    parse_v2_group,
    read_v2_node,
    v2_documents,
)


def doc(**changes):
    d = {
        "zarr_format": 2,
        "shape": [10, 7],
        "chunks": [4, 3],
        "dtype": "<u2",
        "compressor": {"id": "zstd", "level": 3},
        "fill_value": 0,
        "order": "C",
        "filters": None,
        "dimension_separator": ".",
    }
    d.update(changes)
    return {k: v for k, v in d.items() if v is not ...}


# ---------------------------------------------------------------------------- data types
@pytest.mark.parametrize(
    "s, expected",
    [
        ("|b1", "?"), ("|u1", "u1"), ("|i1", "i1"), ("<u2", "<u2"), (">u2", ">u2"), (">i8", ">i8"),
        ("<f2", "<f2"), (">f4", ">f4"), ("<f8", "<f8"), ("<c8", "<c8"), (">c16", ">c16"),
        ("|S5", "S5"), ("<U3", "<U3"), (">U2", ">U2"), ("|V7", "V7"), ("<M8[ns]", "<M8[ns]"),
        ("<m8[s]", "<m8[s]"), (">M8[D]", ">M8[D]"), ("<M8[10ms]", "<M8[10ms]"), ("|O", "O"),
    ],
)
def test_dtype_strings(s, expected):
    assert parse_v2_dtype(s) == np.dtype(expected)


def test_structured_dtype():
    dt = parse_v2_dtype([["x", "<f4"], ["y", ">i2", [2, 3]], ["z", [["a", "|u1"]]]])
    assert dt.names == ("x", "y", "z")
    assert dt["y"].shape == (2, 3) and dt["y"].base == np.dtype(">i2")


@pytest.mark.parametrize(
    "bad",
    ["u2", "=u2", "<u3", "<f1", "<c4", "|u2", "<M8", "<M8[xs]", "<u2[s]", "|S0", "|S", "<S4", "|S99999999",
     "<O", "|O4", "float32", "", 5, None, {"a": 1}, [], [["a"]], [["a", "<f4"], ["a", "<f4"]],
     [["a", "<f4", [0]]], [["", "<f4"]], [["a", "|O"]], [[1, "<f4"]]],
)
def test_bad_dtypes(bad):
    with pytest.raises(MetadataError, match="dtype"):
        parse_v2_dtype(bad, "'.zarray' dtype")


# ---------------------------------------------------------------------------- arrays
def test_chain_and_keys():
    m = parse_v2_array(doc(order="F", dtype=">i4", filters=[{"id": "delta", "dtype": ">i4"}],
                           compressor={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1},
                           dimension_separator="/"))
    assert isinstance(m, V2ArrayMetadata) and m.zarr_format == 2
    names = [c.to_json()["name"] for c in m.codecs]
    assert names == ["transpose", "numcodecs.delta", "bytes", "blosc"]
    assert m.codecs[0].order == (1, 0)
    assert m.codecs[2].endian == "big"
    blosc = m.codecs[3]
    assert (blosc.shuffle, blosc.typesize) == ("shuffle", 4)  # -1: byte shuffle for 4-byte items
    assert m.chunk_key_encoding.encode_chunk_key((2, 1)) == "2/1"
    assert m.dtype == np.dtype("int32") and m.chunks == (4, 3) and m.order == "F"
    assert m.bound_codecs is not None


def test_one_byte_and_scalar():
    m = parse_v2_array(doc(shape=[], chunks=[], dtype="|u1", compressor=None))
    assert [c.to_json() for c in m.codecs] == [{"name": "bytes"}]
    assert m.chunk_key_encoding.encode_chunk_key(()) == "0"
    m = parse_v2_array(doc(dtype="|b1", fill_value=True, compressor={"id": "blosc", "shuffle": -1}))
    assert m.codecs[-1].shuffle == "bitshuffle"  # -1 with 1-byte items


def test_round_trip_keeps_everything():
    d = doc(dtype=">f8", fill_value="NaN", order="F", filters=[{"id": "delta", "dtype": ">f8", "astype": ">f8"}],
            compressor={"id": "blosc", "cname": "zstd", "clevel": 1, "shuffle": 2, "blocksize": 0},
            dimension_separator="/", my_key={"kept": True})
    m = parse_v2_array(d, {"a": 1})
    assert m.to_json() == d
    assert json.loads(m.to_bytes()) == d
    assert v2_documents(m) == {".zarray": d, ".zattrs": {"a": 1}}
    d2 = doc(filters=[], fill_value=None)
    del d2["dimension_separator"]
    out = parse_v2_array(d2).to_json()
    assert out["filters"] == [] and out["fill_value"] is None and out["dimension_separator"] == "."
    # evolve keeps the v2 form
    m2 = m.evolve(shape=(3, 3))
    assert m2.to_json() == {**d, "shape": [3, 3]} and m2.attributes == {"a": 1}
    assert m2 != m and m.evolve() == m


@pytest.mark.parametrize(
    "dtype, fv, expected",
    [
        ("<f8", "NaN", math.nan), ("<f4", "Infinity", math.inf), ("<f2", "-Infinity", -math.inf),
        ("<f8", 1.5, 1.5), ("<i8", -3, -3), ("|u1", 255, 255), ("<i4", 2.0, 2),
        ("|b1", True, True), ("<c8", [1.0, "NaN"], complex(1, math.nan)),
        ("|S4", "YWI=", b"ab"), ("<U3", "xy", "xy"), ("<M8[s]", 5, np.datetime64(5, "s")),
        ("<m8[ms]", -9223372036854775808, np.timedelta64("NaT")), ("|V2", "AQI=", b"\x01\x02"),
    ],
)
def test_fill_values(dtype, fv, expected):
    m = parse_v2_array(doc(dtype=dtype, fill_value=fv))
    got = m.fill_value
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(got)
    elif isinstance(expected, complex):
        assert got.real == expected.real and math.isnan(got.imag)
    elif isinstance(expected, np.timedelta64) and np.isnat(expected):
        assert np.isnat(got)
    elif isinstance(expected, bytes):
        assert bytes(np.asarray(got).tobytes()).rstrip(b"\0") == expected
    else:
        assert got == expected
    assert m.to_json()["fill_value"] == fv if not isinstance(fv, float) or fv != 2.0 else 2


def test_null_fill_value_reads_as_default():
    m = parse_v2_array(doc(fill_value=None))
    assert m.fill_value == 0 and m.fill_value_null
    assert m.to_json()["fill_value"] is None


def test_group_documents():
    g = parse_v2_group({"zarr_format": 2}, {"x": [1, 2]})
    assert isinstance(g, V2GroupMetadata) and g.zarr_format == 2
    assert v2_documents(g) == {".zgroup": {"zarr_format": 2}, ".zattrs": {"x": [1, 2]}}
    assert g.evolve(attributes={"y": 1}).attributes == {"y": 1}


def test_read_v2_node_prefers_array_and_reads_attributes():
    store = {"a/.zarray": json.dumps(doc()).encode(), "a/.zattrs": b'{"k": NaN}', ".zgroup": b'{"zarr_format": 2}'}
    m = read_v2_node(store.get, "a")
    assert isinstance(m, V2ArrayMetadata) and math.isnan(m.attributes["k"])
    assert isinstance(read_v2_node(store.get, ""), V2GroupMetadata)
    assert read_v2_node(store.get, "b") is None


# ---------------------------------------------------------------------------- malformed documents
MALFORMED = [
    (["not", "an", "object"], "must hold a JSON object"),
    (doc(zarr_format=...), "zarr_format"),
    (doc(zarr_format=3), "zarr_format must be 2"),
    (doc(zarr_format=True), "zarr_format must be 2"),
    (doc(shape=...), "'shape'"),
    (doc(shape="10"), "'shape'"),
    (doc(shape=[10, -1]), "'shape'"),
    (doc(shape=[10, 1.5]), "'shape'"),
    (doc(shape=[10, True]), "'shape'"),
    (doc(chunks=...), "'chunks'"),
    (doc(chunks=[4, 0]), "'chunks'"),
    (doc(chunks=[4, -3]), "'chunks'"),
    (doc(chunks=[4]), "'chunks'"),
    (doc(chunks=None), "'chunks'"),
    (doc(dtype=...), "'dtype'"),
    (doc(dtype="u2"), "dtype"),
    (doc(dtype=12), "dtype"),
    (doc(fill_value=...), "'fill_value'"),
    (doc(fill_value="zero"), "fill_value"),
    (doc(fill_value=-1), "fill_value"),
    (doc(fill_value=70000), "fill_value"),
    (doc(fill_value=[1]), "fill_value"),
    (doc(dtype="<f4", fill_value="nan"), "fill_value"),
    (doc(dtype="<f4", fill_value=True), "fill_value"),
    (doc(dtype="|b1", fill_value=2), "fill_value"),
    (doc(dtype="<c8", fill_value=1.0), "fill_value"),
    (doc(dtype="|V2", fill_value="AQID"), "fill_value"),
    (doc(dtype="|V2", fill_value="***"), "base64"),
    (doc(dtype="<U2", fill_value="abc"), "fill_value"),
    (doc(dtype="<M8[s]", fill_value="2020"), "fill_value"),
    (doc(order=...), "'order'"),
    (doc(order="K"), "'order'"),
    (doc(order=None), "'order'"),
    (doc(dimension_separator="-"), "dimension_separator"),
    (doc(dimension_separator=None), "dimension_separator"),
    (doc(filters={"id": "delta"}), "'filters'"),
    (doc(filters=["delta"]), "filters\\[0\\]"),
    (doc(filters=[{"dtype": "<u2"}]), "filters\\[0\\]"),
    (doc(compressor="zstd"), "'compressor'"),
    (doc(compressor={"level": 1}), "compressor"),
    (doc(compressor={"id": "zstd", "level": "high"}), "compressor"),
    (doc(compressor={"id": "zstd", "levle": 1}), "compressor"),
    (doc(compressor={"id": "blosc", "cname": "nope"}), "compressor"),
    (doc(compressor={"id": "blosc", "shuffle": 5}), "compressor"),
    (doc(compressor={"id": "blosc", "clevel": 10}), "compressor"),
    (doc(compressor={"id": "gzip", "level": 11}), "compressor"),
    # numcodecs takes the chunk's bytes as the filter's dtype: 3 x 3 uint16 are not whole int32
    (doc(chunks=[3, 3], filters=[{"id": "delta", "dtype": "<i4"}]), "filters\\[0\\].*not whole"),
    (doc(dtype=">u2", filters=[{"id": "delta", "dtype": "<u2"}]), "byte order"),
    (doc(dtype="|O", filters=None, fill_value=None), "vlen"),
]


@pytest.mark.parametrize("d, match", MALFORMED)
def test_malformed_zarray(d, match):
    key = "grp/arr/.zarray"
    with pytest.raises(MetadataError, match=match) as ei:
        parse_v2_array(d, key=key)
    assert key in str(ei.value)


@pytest.mark.parametrize("cid", ["nonexistent", "vlen-array", "pickle", "json2"])
def test_unknown_codec_id_named(cid):
    with pytest.raises(UnknownCodecError, match=cid) as ei:
        parse_v2_array(doc(compressor={"id": cid}), key="x/.zarray")
    assert "x/.zarray" in str(ei.value) and "compressor" in str(ei.value)
    with pytest.raises(UnknownCodecError, match="filters\\[1\\]"):
        parse_v2_array(doc(filters=[{"id": "delta", "dtype": "<u2"}, {"id": cid}]))


@pytest.mark.parametrize(
    "raw, match",
    [(b"{", "not valid JSON"), (b"\xff\xfe", "not valid JSON"), (b"[1]", "JSON object"), (b'"x"', "JSON object")],
)
def test_malformed_json_and_attributes(raw, match):
    good = json.dumps(doc()).encode()
    with pytest.raises(MetadataError, match=match) as ei:
        read_v2_node({"a/.zarray": raw}.get, "a")
    assert "a/.zarray" in str(ei.value)
    with pytest.raises(MetadataError, match=match) as ei:
        read_v2_node({"a/.zarray": good, "a/.zattrs": raw}.get, "a")
    assert "a/.zattrs" in str(ei.value)
    with pytest.raises(MetadataError, match=match):
        read_v2_node({".zgroup": raw}.get, "")


@pytest.mark.parametrize("d", [[], {"zarr_format": 3}, {"zarr_format": "2"}, {}])
def test_malformed_zgroup(d):
    with pytest.raises(MetadataError, match="g/.zgroup"):
        parse_v2_group(d, key="g/.zgroup")


def test_records_zarrbolt_cannot_hold_are_named():
    with pytest.raises(UnknownDataTypeError, match=r"a/\.zarray"):
        parse_v2_array(doc(dtype=[["x", "<f4", [2]]], fill_value=None), key="a/.zarray")  # a subarray field
    with pytest.raises(MetadataError, match="mix byte orders"):
        parse_v2_array(doc(dtype=[["x", "<f4"], ["y", ">i2"]], fill_value=None), key="a/.zarray")


def test_records_round_trip():
    m = parse_v2_array(doc(dtype=[["x", ">f4"], ["n", [["a", "|u1"], ["b", ">i2"]]]], fill_value="P4AAAAcAAQ=="))
    assert m.codecs[0].to_json() == {"name": "bytes", "configuration": {"endian": "big"}}
    assert m.to_json()["dtype"] == [["x", ">f4"], ["n", [["a", "|u1"], ["b", ">i2"]]]]
    assert m.to_json()["fill_value"] == "P4AAAAcAAQ=="
    assert float(m.fill_value["x"]) == 1.0 and int(m.fill_value["n"]["b"]) == 1
