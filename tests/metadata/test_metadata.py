"""Array/group metadata, data types, fill values, chunk grid and chunk key encodings."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from zarrbolt.errors import MetadataError, UnknownCodecError, UnknownDataTypeError
from zarrbolt.metadata import (
    ArrayMetadata,
    DataType,
    DefaultChunkKeyEncoding,
    GroupMetadata,
    RegularChunkGrid,
    V2ChunkKeyEncoding,
    parse_chunk_key_encoding,
    parse_node_metadata,
)

BASE = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [10, 20],
    "data_type": "uint16",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 8]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": 0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
}


def doc(**changes):
    d = copy.deepcopy(BASE)
    for k, v in changes.items():
        if v is ...:
            d.pop(k, None)
        else:
            d[k] = v
    return d


def parse(d) -> ArrayMetadata:
    return parse_node_metadata(json.dumps(d).encode())


# ---------------------------------------------------------------------------- data types
CORE = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", CORE)
def test_core_dtypes_roundtrip(name):
    dt = DataType.parse(name)
    assert dt.to_json() == name
    assert DataType.from_numpy(dt.numpy_dtype) is dt
    assert dt.numpy_dtype.isnative
    assert dt.itemsize == dt.numpy_dtype.itemsize


@pytest.mark.parametrize("bits", [8, 16, 24, 40, 128])
def test_raw_dtypes(bits):
    dt = DataType.parse(f"r{bits}")
    assert dt.kind == "raw" and dt.itemsize == bits // 8
    assert dt.numpy_dtype == np.dtype(f"V{bits // 8}")
    assert DataType.from_numpy(f"r{bits}") is dt
    # numpy void dtypes become zarr-python's raw_bytes (zarr-python 3.4.2 cannot read r*)
    assert DataType.from_numpy(f"V{bits // 8}") is DataType("raw_bytes", {"length_bytes": bits // 8})
    fill = dt.parse_fill_value(list(range(bits // 8)))
    assert fill.tobytes() == bytes(range(bits // 8))
    assert dt.fill_value_to_json(fill) == list(range(bits // 8))
    assert dt.default_fill_value().tobytes() == bytes(bits // 8)


@pytest.mark.parametrize("bad", ["r7", "r0", "r", "float128", "strings", "int", "R8", "uint16 "])
def test_unknown_dtypes(bad):
    with pytest.raises(UnknownDataTypeError):
        DataType.parse(bad)


def test_from_numpy_byte_order_and_refusals():
    assert DataType.from_numpy(">u2") is DataType("uint16")
    assert DataType.from_numpy(np.float32) is DataType("float32")
    assert DataType.from_numpy("bool") is DataType("bool")
    for bad in ("U0", "S0", "O", [("a", "u1", (2,))], "f16" if hasattr(np, "float128") else "O"):
        with pytest.raises(UnknownDataTypeError):
            DataType.from_numpy(bad)


def test_dtype_object_form():
    assert DataType.parse({"name": "int32"}) is DataType("int32")
    with pytest.raises(MetadataError):
        DataType.parse({"configuration": {}})
    with pytest.raises(UnknownDataTypeError):
        DataType.parse({"name": "int32", "configuration": {"x": 1}})
    with pytest.raises(MetadataError):
        DataType.parse(5)


# ---------------------------------------------------------------------------- fill values
def bits(x) -> bytes:
    return np.asarray(x).tobytes()


@pytest.mark.parametrize(
    "name,json_value,expected_bits",
    [
        ("float32", "NaN", (0x7FC00000).to_bytes(4, "little")),
        ("float32", "0x7fc00001", (0x7FC00001).to_bytes(4, "little")),
        ("float32", "0xffc00000", (0xFFC00000).to_bytes(4, "little")),
        ("float64", "NaN", (0x7FF8000000000000).to_bytes(8, "little")),
        ("float64", "0x7ff0000000000001", (0x7FF0000000000001).to_bytes(8, "little")),
        ("float16", "NaN", (0x7E00).to_bytes(2, "little")),
        ("float16", "0x7c01", (0x7C01).to_bytes(2, "little")),
        ("float32", -0.0, (0x80000000).to_bytes(4, "little")),
        ("float32", "Infinity", np.float32(np.inf).tobytes()),
        ("float64", "-Infinity", np.float64(-np.inf).tobytes()),
        ("float32", "0x3f800000", np.float32(1.0).tobytes()),
    ],
)
def test_float_fill_bits(name, json_value, expected_bits):
    dt = DataType(name)
    v = dt.parse_fill_value(json_value)
    import sys

    want = expected_bits if sys.byteorder == "little" else expected_bits[::-1]
    assert bits(v) == want
    # serialising gives back a form that parses to the same bits
    assert bits(dt.parse_fill_value(dt.fill_value_to_json(v))) == bits(v)
    if isinstance(json_value, str) and np.isnan(v) or np.isinf(v):
        assert dt.fill_value_to_json(v) == json_value


def test_float_numbers_round_to_nearest():
    assert DataType("float32").parse_fill_value(0.1) == np.float32(0.1)
    assert DataType("float16").parse_fill_value(65520) == np.float16(np.inf)
    assert DataType("float64").parse_fill_value(10**400) == np.inf
    assert DataType("float32").fill_value_to_json(np.float32(0.1)) == float(np.float32(0.1))


def test_complex_fill():
    dt = DataType("complex64")
    v = dt.parse_fill_value(["-Infinity", "0x7fc00005"])
    parts = np.asarray(v).reshape(1).view(np.uint32)
    assert np.isneginf(v.real) and parts[1] == 0x7FC00005
    assert dt.fill_value_to_json(v) == ["-Infinity", "0x7fc00005"]
    assert DataType("complex128").parse_fill_value([1, 2]) == 1 + 2j
    for bad in ([1], [1, 2, 3], 1.0, "NaN", [True, 1]):
        with pytest.raises(MetadataError):
            dt.parse_fill_value(bad)


@pytest.mark.parametrize(
    "name,value",
    [
        ("bool", 0), ("bool", "false"), ("bool", None),
        ("int8", 128), ("int8", -129), ("uint8", -1), ("uint64", 2**64), ("int64", 2**63),
        ("int32", 1.0), ("int32", 1.5), ("int32", True), ("int32", "0"), ("uint16", None),
        ("float32", "nan"), ("float32", "inf"), ("float32", "0x"), ("float32", "0x123456789"),
        ("float32", "0xzz"), ("float32", True), ("float32", None), ("float32", [1]),
        ("r16", [1]), ("r16", [1, 256]), ("r16", [1, -1]), ("r16", "0x0000"), ("r16", [True, 0]),
    ],
)
def test_bad_fill_values(name, value):
    with pytest.raises(MetadataError):
        DataType(name).parse_fill_value(value)


def test_int_fill_limits():
    assert DataType("uint64").parse_fill_value(2**64 - 1) == np.uint64(2**64 - 1)
    assert DataType("int64").parse_fill_value(-(2**63)) == np.int64(-(2**63))
    assert DataType("bool").parse_fill_value(True) == np.True_


def test_normalize_user_fill_values():
    f32 = DataType("float32")
    nan = np.array([0x7FC00123], dtype=np.uint32).view(np.float32)[0]
    assert bits(f32.normalize_fill_value(nan)) == bits(nan)
    assert np.isnan(f32.normalize_fill_value("NaN"))
    assert np.isnan(f32.normalize_fill_value(float("nan")))
    assert f32.normalize_fill_value(None) == 0
    assert DataType("int16").normalize_fill_value(3.0) == 3
    with pytest.raises(MetadataError):
        DataType("int16").normalize_fill_value(3.5)
    with pytest.raises(MetadataError):
        DataType("uint8").normalize_fill_value(300)
    assert DataType("r16").normalize_fill_value(b"\x01\x02").tobytes() == b"\x01\x02"
    assert DataType("complex64").normalize_fill_value(1 + 2j) == np.complex64(1 + 2j)
    assert DataType("bool").normalize_fill_value(1) == np.True_


# ---------------------------------------------------------------------------- grid and keys
def test_regular_grid():
    g = RegularChunkGrid.from_json({"name": "regular", "configuration": {"chunk_shape": [5, 20, 400]}})
    assert g.grid_shape((10, 200, 3000)) == (2, 10, 8)
    assert g.chunk_region((1, 9, 7), (10, 200, 3000)) == (slice(5, 10), slice(180, 200), slice(2800, 3000))
    assert g.grid_shape((0, 1, 1)) == (0, 1, 1)
    assert RegularChunkGrid(()).grid_shape(()) == ()
    for bad in (
        {"name": "rectangular", "configuration": {"chunk_shape": [1]}},
        {"name": "regular", "configuration": {}},
        {"name": "regular", "configuration": {"chunk_shape": [0]}},
        {"name": "regular", "configuration": {"chunk_shape": [1.5]}},
        {"name": "regular", "configuration": {"chunk_shape": "1"}},
        {"name": "regular", "configuration": {"chunk_shape": [1], "x": 1}},
        {"name": "regular", "configuration": [1]},
    ):
        with pytest.raises(MetadataError):
            RegularChunkGrid.from_json(bad)


def test_chunk_key_encodings():
    d = parse_chunk_key_encoding({"name": "default"})
    assert d == DefaultChunkKeyEncoding("/")
    assert d.encode_chunk_key((1, 23, 45)) == "c/1/23/45"
    assert d.encode_chunk_key(()) == "c"
    assert DefaultChunkKeyEncoding(".").encode_chunk_key((1, 23, 45)) == "c.1.23.45"
    assert d.decode_chunk_key("c/1/23/45") == (1, 23, 45)
    assert d.decode_chunk_key("c") == ()
    v2 = parse_chunk_key_encoding("v2")
    assert v2 == V2ChunkKeyEncoding(".")
    assert v2.encode_chunk_key((1, 23, 45)) == "1.23.45"
    assert v2.encode_chunk_key(()) == "0"
    assert V2ChunkKeyEncoding("/").encode_chunk_key((1, 2)) == "1/2"
    assert v2.decode_chunk_key("1.23.45") == (1, 23, 45)
    for bad in ("c/x", "d/1", "c/-1", "c/01"):
        with pytest.raises(MetadataError):
            d.decode_chunk_key(bad)
    for bad in ({"name": "default", "configuration": {"separator": "-"}}, {"name": "v3"}, 5,
                {"name": "default", "configuration": {"sep": "/"}}):
        with pytest.raises(MetadataError):
            parse_chunk_key_encoding(bad)


# ---------------------------------------------------------------------------- array documents
def test_parse_minimal_and_roundtrip():
    m = parse(BASE)
    assert m.shape == (10, 20) and m.chunks == (4, 8)
    assert m.data_type is DataType("uint16")
    assert m.fill_value == 0 and m.attributes == {} and m.dimension_names is None
    again = parse_node_metadata(m.to_bytes())
    assert again == m
    out = json.loads(m.to_bytes())
    assert out["fill_value"] == 0 and out["codecs"] == BASE["codecs"]
    assert out["storage_transformers"] == []


def test_optional_fields():
    m = parse(doc(attributes={"a": [1, 2], "b": {"c": None}}, dimension_names=["z", None],
                  storage_transformers=[]))
    assert m.attributes == {"a": [1, 2], "b": {"c": None}}
    assert m.dimension_names == ("z", None)
    assert json.loads(m.to_bytes())["dimension_names"] == ["z", None]


def test_short_hand_codec_and_extension_keys():
    m = parse(doc(data_type="uint8", codecs=["bytes"]))
    assert m.codecs[0].to_json() == {"name": "bytes"}
    m = parse(doc(my_extension={"name": "x", "must_understand": False}))
    assert json.loads(m.to_bytes())["my_extension"] == {"name": "x", "must_understand": False}
    # an unknown storage transformer that may be ignored is ignored
    m = parse(doc(storage_transformers=[{"name": "foo", "must_understand": False}]))
    assert m.storage_transformers == ()
    # an unknown codec that may be ignored is dropped
    m = parse(doc(codecs=[BASE["codecs"][0], {"name": "foo", "must_understand": False}]))
    assert len(m.codecs) == 1


@pytest.mark.parametrize(
    "changes,exc",
    [
        (dict(zarr_format=2), MetadataError),
        (dict(zarr_format="3"), MetadataError),
        (dict(zarr_format=True), MetadataError),
        (dict(zarr_format=...), MetadataError),
        (dict(node_type="arrays"), MetadataError),
        (dict(shape=...), MetadataError),
        (dict(shape=[10, -1]), MetadataError),
        (dict(shape=[10, 2.0]), MetadataError),
        (dict(shape="10"), MetadataError),
        (dict(shape=[10]), MetadataError),  # chunk_shape has two dims
        (dict(data_type="uint17"), UnknownDataTypeError),
        (dict(data_type=...), MetadataError),
        (dict(chunk_grid=...), MetadataError),
        (dict(chunk_grid={"name": "irregular"}), MetadataError),
        (dict(chunk_key_encoding=...), MetadataError),
        (dict(chunk_key_encoding={"name": "default", "configuration": {"separator": ":"}}), MetadataError),
        (dict(fill_value=...), MetadataError),
        (dict(fill_value=-1), MetadataError),
        (dict(fill_value="NaN"), MetadataError),
        (dict(fill_value=None), MetadataError),
        (dict(codecs=...), MetadataError),
        (dict(codecs=[]), MetadataError),
        (dict(codecs={"name": "bytes"}), MetadataError),
        (dict(codecs=[{"name": "foo"}]), UnknownCodecError),
        (dict(codecs=[{"name": "foo", "must_understand": True}]), UnknownCodecError),
        (dict(codecs=[{"name": "bytes"}]), MetadataError),  # endian required for uint16
        (dict(codecs=[{"name": "bytes", "configuration": {"endian": "middle"}}]), MetadataError),
        (dict(codecs=[{"name": "gzip", "configuration": {"level": 1}}]), MetadataError),  # no array->bytes
        (dict(codecs=[{"name": "gzip", "configuration": {"level": 1}}, BASE["codecs"][0]]), MetadataError),
        (dict(codecs=[BASE["codecs"][0], {"name": "transpose", "configuration": {"order": [1, 0]}}]), MetadataError),
        (dict(codecs=[BASE["codecs"][0], BASE["codecs"][0]]), MetadataError),
        (dict(codecs=[{"name": "transpose", "configuration": {"order": [0, 1, 2]}}, BASE["codecs"][0]]), MetadataError),
        (dict(codecs=[{"name": "transpose", "configuration": {"order": [0, 0]}}, BASE["codecs"][0]]), MetadataError),
        (dict(codecs=[BASE["codecs"][0], {"name": "gzip", "configuration": {"level": 10}}]), MetadataError),
        (dict(codecs=[BASE["codecs"][0], {"name": "gzip"}]), MetadataError),
        (dict(codecs=[BASE["codecs"][0], {"name": "blosc", "configuration": {"cname": "lz5", "clevel": 1, "shuffle": "noshuffle"}}]), MetadataError),
        (dict(codecs=[BASE["codecs"][0], {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "shuffle"}}]), MetadataError),
        (dict(codecs=[BASE["codecs"][0], {"name": "zstd", "configuration": {"level": "high"}}]), MetadataError),
        (dict(codecs=[BASE["codecs"][0], {"name": "crc32c", "configuration": {"x": 1}}]), MetadataError),
        (dict(codecs=[{"name": "bytes", "configuration": {"endian": "little"}, "extra": 1}]), MetadataError),
        (dict(attributes=[1]), MetadataError),
        (dict(dimension_names=["a"]), MetadataError),
        (dict(dimension_names="ab"), MetadataError),
        (dict(dimension_names=["a", 1]), MetadataError),
        (dict(storage_transformers=[{"name": "sharding"}]), MetadataError),
        (dict(storage_transformers={}), MetadataError),
        (dict(unknown_key=1), MetadataError),
        (dict(unknown_key={"name": "x"}), MetadataError),
        (dict(unknown_key={"name": "x", "must_understand": True}), MetadataError),
    ],
)
def test_array_metadata_errors(changes, exc):
    with pytest.raises(exc):
        parse(doc(**changes))


@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b"null", b"\xff\xfe", b'{"zarr_format": 3}', b'"x"',
                                 b'{"zarr_format": 3, "node_type": "foo"}', b"[" * 100000])
def test_malformed_json(raw):
    with pytest.raises(MetadataError):
        parse_node_metadata(raw)


def test_group_metadata():
    g = parse_node_metadata(b'{"zarr_format": 3, "node_type": "group", "attributes": {"a": 1}}')
    assert isinstance(g, GroupMetadata) and g.attributes == {"a": 1}
    assert parse_node_metadata(g.to_bytes()) == g
    # zarr-python writes consolidated_metadata: null
    g = parse_node_metadata(b'{"zarr_format": 3, "node_type": "group", "consolidated_metadata": null}')
    assert g.attributes == {}
    for bad in (b'{"zarr_format": 3, "node_type": "group", "attributes": 1}',
                b'{"zarr_format": 3, "node_type": "group", "foo": 1}',
                b'{"zarr_format": 2, "node_type": "group"}'):
        with pytest.raises(MetadataError):
            parse_node_metadata(bad)


def test_nan_fill_survives_metadata_roundtrip():
    m = parse(doc(data_type="float32", fill_value="0x7fc0beef", codecs=[BASE["codecs"][0]]))
    assert json.loads(m.to_bytes())["fill_value"] == "0x7fc0beef"
    m2 = m.evolve(shape=(30, 40))
    assert json.loads(m2.to_bytes())["fill_value"] == "0x7fc0beef"


def test_zero_dim_and_zero_length():
    m = parse(doc(shape=[], chunk_grid={"name": "regular", "configuration": {"chunk_shape": []}}))
    assert m.shape == () and m.nchunks() == 1
    m = parse(doc(shape=[0, 20]))
    assert m.nchunks() == 0
