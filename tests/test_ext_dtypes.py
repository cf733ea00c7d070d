"""zarr-python's extension data types (metadata/dtypes_ext.py): JSON forms, fill values, the numpy
mapping, malformed metadata, arrays of each type through zarrbolt's read and write paths; and the
integer-overflow rule of writes."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

import zarrbolt
from zarrbolt.errors import (InvalidValueError, MetadataError, UnknownDataTypeError, ValueOverflowError,
                             ZarrboltError)
from zarrbolt.metadata.dtypes import DataType

SDT = np.dtypes.StringDType()


def dt_json(name, **conf):
    return {"name": name, "configuration": conf}


JSON_FORMS = [
    ("string", SDT, ""),
    ("variable_length_bytes", np.dtype(object), ""),
    (dt_json("fixed_length_utf32", length_bytes=12), np.dtype("U3"), ""),
    (dt_json("null_terminated_bytes", length_bytes=5), np.dtype("S5"), ""),
    (dt_json("raw_bytes", length_bytes=3), np.dtype("V3"), "AAAA"),
    (dt_json("numpy.datetime64", unit="ns", scale_factor=1), np.dtype("M8[ns]"), -(2**63)),
    (dt_json("numpy.datetime64", unit="s", scale_factor=10), np.dtype("M8[10s]"), -(2**63)),
    (dt_json("numpy.timedelta64", unit="ms", scale_factor=1), np.dtype("m8[ms]"), -(2**63)),
    (dt_json("numpy.datetime64", unit="generic", scale_factor=1), np.dtype("M8"), -(2**63)),
    (dt_json("struct", fields=[{"name": "a", "data_type": "int32"}, {"name": "b", "data_type": "float64"}]),
     np.dtype([("a", "<i4"), ("b", "<f8")]), {"a": 0, "b": 0.0}),
    (dt_json("structured", fields=[["a", "uint8"], ["b", "int16"]]), np.dtype([("a", "u1"), ("b", "<i2")]),
     "AAAA"),
]


@pytest.mark.parametrize("doc,npdt,default_fill", JSON_FORMS, ids=lambda x: json.dumps(x, default=str)[:40])
def test_json_forms(doc, npdt, default_fill):
    dt = DataType.parse(doc)
    assert dt.to_json() == doc
    assert dt.numpy_dtype == npdt
    assert DataType.parse(json.loads(json.dumps(doc))) is dt  # interned
    assert pickle.loads(pickle.dumps(dt)) is dt
    assert dt.fill_value_to_json(dt.default_fill_value()) == default_fill
    fv = dt.parse_fill_value(default_fill)
    assert dt.fill_value_to_json(fv) == default_fill


@pytest.mark.parametrize("given,expected", [
    (SDT, "string"), (str, "string"), ("str", "string"), ("string", "string"), (bytes, "variable_length_bytes"),
    ("bytes", "variable_length_bytes"), ("<U4", dt_json("fixed_length_utf32", length_bytes=16)),
    (">U2", dt_json("fixed_length_utf32", length_bytes=8)), ("S7", dt_json("null_terminated_bytes", length_bytes=7)),
    ("V4", dt_json("raw_bytes", length_bytes=4)), ("r32", "r32"),
    (">M8[us]", dt_json("numpy.datetime64", unit="us", scale_factor=1)),
    ("m8[25ms]", dt_json("numpy.timedelta64", unit="ms", scale_factor=25)),
    ([("x", ">i2"), ("y", "S3")], dt_json("struct", fields=[
        {"name": "x", "data_type": "int16"},
        {"name": "y", "data_type": dt_json("null_terminated_bytes", length_bytes=3)}])),
])
def test_from_numpy(given, expected):
    assert DataType.from_numpy(given).to_json() == expected


@pytest.mark.parametrize("bad", ["O", "U0", "S0", [("a", "u1", (2,))], np.dtypes.StringDType(na_object=None)])
def test_from_numpy_refusals(bad):
    with pytest.raises(UnknownDataTypeError):
        DataType.from_numpy(bad)


def test_microsecond_spelling_is_normalised():
    dt = DataType.parse(dt_json("numpy.datetime64", unit="μs", scale_factor=1))
    assert dt.configuration == {"unit": "us", "scale_factor": 1} and dt is DataType.from_numpy("M8[us]")


BAD_DTYPES = [
    dt_json("fixed_length_utf32"), dt_json("fixed_length_utf32", length_bytes=6),
    dt_json("fixed_length_utf32", length_bytes=0), dt_json("fixed_length_utf32", length_bytes="8"),
    dt_json("fixed_length_utf32", length_bytes=2**40), dt_json("fixed_length_utf32", length_bytes=8, x=1),
    dt_json("null_terminated_bytes", length_bytes=-1), dt_json("null_terminated_bytes", length_bytes=True),
    dt_json("raw_bytes", length_bytes=0), "fixed_length_utf32", "raw_bytes",
    dt_json("numpy.datetime64", unit="ns"), dt_json("numpy.datetime64", unit="fortnight", scale_factor=1),
    dt_json("numpy.datetime64", unit="ns", scale_factor=0), dt_json("numpy.datetime64", unit="ns", scale_factor=2**31),
    dt_json("numpy.timedelta64", unit="ns", scale_factor=1.5), dt_json("numpy.datetime64", unit="generic", scale_factor=2),
    dt_json("string", x=1), dt_json("variable_length_bytes", length_bytes=3),
    dt_json("struct", fields=[]), dt_json("struct", fields="a"), dt_json("struct", fields=[["a", "int8"]]),
    dt_json("struct", fields=[{"name": "a", "data_type": "int8"}, {"name": "a", "data_type": "int8"}]),
    dt_json("struct", fields=[{"name": "", "data_type": "int8"}]),
    dt_json("struct", fields=[{"name": "s", "data_type": "string"}]),
    dt_json("struct", fields=[{"name": "s", "data_type": "float128"}]),
    dt_json("structured", fields=[{"name": "a", "data_type": "int8"}]),
    {"name": "fixed_length_utf32", "configuration": "x"}, {"configuration": {"length_bytes": 4}},
    dt_json("no_such_type", a=1),
]


@pytest.mark.parametrize("doc", BAD_DTYPES, ids=lambda x: json.dumps(x)[:60])
def test_malformed_data_types(doc):
    with pytest.raises(MetadataError):
        DataType.parse(doc)


FILLS = [
    ("string", "abc", "abc"), ("variable_length_bytes", "YWI=", b"ab"),
    (dt_json("fixed_length_utf32", length_bytes=8), "é", "é"),
    (dt_json("null_terminated_bytes", length_bytes=3), "YWI=", b"ab"),
    (dt_json("raw_bytes", length_bytes=2), "YWI=", b"ab"),
    (dt_json("numpy.datetime64", unit="D", scale_factor=1), 18262, np.datetime64("2020-01-01")),
    (dt_json("numpy.timedelta64", unit="s", scale_factor=1), -5, np.timedelta64(-5, "s")),
    (dt_json("struct", fields=[{"name": "a", "data_type": "int8"}, {"name": "b", "data_type": "float32"}]),
     {"a": -3, "b": "NaN"}, None),
]


@pytest.mark.parametrize("doc,fill_json,value", FILLS, ids=lambda x: json.dumps(x, default=str)[:40])
def test_fill_values(doc, fill_json, value):
    dt = DataType.parse(doc)
    fv = dt.parse_fill_value(fill_json)
    assert dt.fill_value_to_json(fv) == fill_json
    if value is not None:
        assert (fv.tobytes() == value) if isinstance(fv, np.void) else (fv == value)
        assert dt.fill_value_to_json(dt.normalize_fill_value(value)) == fill_json


def test_datetime_nat_fill_forms():
    dt = DataType.from_numpy("M8[ns]")
    assert np.isnat(dt.parse_fill_value("NaT")) and np.isnat(dt.parse_fill_value(-(2**63)))
    assert dt.fill_value_to_json(dt.parse_fill_value("NaT")) == -(2**63)
    assert dt.fill_value_to_json(dt.normalize_fill_value("2020-01-01T00:00:00")) == 1577836800 * 10**9
    assert dt.fill_value_to_json(dt.normalize_fill_value(np.datetime64("2020-01-01", "D"))) == 1577836800 * 10**9


BAD_FILLS = [
    ("string", [3]), ("string", None), ("variable_length_bytes", "not base64!"), ("variable_length_bytes", 5),
    (dt_json("fixed_length_utf32", length_bytes=4), "ab"), (dt_json("fixed_length_utf32", length_bytes=4), 1),
    (dt_json("null_terminated_bytes", length_bytes=1), "YWI="), (dt_json("raw_bytes", length_bytes=3), "YWI="),
    (dt_json("raw_bytes", length_bytes=2), [1, 2]), (dt_json("numpy.datetime64", unit="s", scale_factor=1), 1.5),
    (dt_json("numpy.datetime64", unit="s", scale_factor=1), "2020-01-01"),
    (dt_json("numpy.datetime64", unit="s", scale_factor=1), 2**63), (dt_json("numpy.datetime64", unit="s", scale_factor=1), True),
    (dt_json("struct", fields=[{"name": "a", "data_type": "int8"}]), {"b": 1}),
    (dt_json("struct", fields=[{"name": "a", "data_type": "int8"}]), {"a": 300}),
    (dt_json("struct", fields=[{"name": "a", "data_type": "int8"}]), [1]),
    (dt_json("structured", fields=[["a", "int16"]]), "AA=="),
]


@pytest.mark.parametrize("doc,fill", BAD_FILLS, ids=lambda x: json.dumps(x)[:40])
def test_malformed_fill_values(doc, fill):
    with pytest.raises(MetadataError):
        DataType.parse(doc).parse_fill_value(fill)


@pytest.mark.parametrize("fill, text", [(0, "0"), (3, "3"), (1.5, "1.5"), ("x", "x")])
def test_string_fill_value_numbers_read_as_their_text(fill, text):
    """As zarr-python reads them (zarr-python 2 wrote 0 as the fill value of text arrays)."""
    dt = DataType.parse("string")
    assert dt.parse_fill_value(fill) == text
    assert dt.fill_value_to_json(dt.parse_fill_value(fill)) == text


# ---------------------------------------------------------------------------- arrays
ARRAYS = {
    "string": (np.array(["a", "bcd", "", "héllo", "日本", "x" * 100, "q"], dtype=SDT), str, "fill"),
    "bytes": (np.array([b"a", b"", b"\x00\xff", b"x" * 70, b"q", b"r", b"s"], dtype=object), bytes, b"\x01"),
    "U": (np.array(["a", "bcd", "", "héllo", "日本", "z", "y"]), "<U5", "ab"),
    "S": (np.array([b"a", b"bcd", b"", b"x\x00y", b"\xff", b"q", b"r"]), "S3", b"zz"),
    "M8": (np.array(["2020-01-01", "NaT", "1970-01-01", "2262-01-01", "1677-09-22", "2000-02-29", "NaT"], "M8[ns]"),
           "M8[ns]", None),
    "m8": (np.array([1, -2, 3, "NaT", 0, 2**40, 5], dtype="m8[10ms]"), "m8[10ms]", np.timedelta64(20, "ms")),
    "raw": (np.frombuffer(bytes(range(14)), "V2"), "V2", b"\xaa\xbb"),
    "struct": (np.array([(i, i / 2, b"s%d" % i) for i in range(7)], "<i4,>f8,S2"), "<i4,>f8,S2", None),
}


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "mM":
        return np.array_equal(a.view(np.int64), b.view(np.int64))
    if a.dtype.kind == "V" and a.dtype.fields is None:
        return a.tobytes() == b.tobytes()
    return a.shape == b.shape and bool((a == b).all())


@pytest.mark.parametrize("name", sorted(ARRAYS))
@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("shards", [None, (8, 6)])
def test_arrays_round_trip(tmp_path, name, where, shards):
    values, dt, fill = ARRAYS[name]
    store = {} if where == "memory" else str(tmp_path / "a")
    grid = np.resize(values, (5, 7))
    kw = {} if fill is None or fill == "fill" else {"fill_value": fill}
    if fill == "fill":
        kw["fill_value"] = "fill"
    a = zarrbolt.create_array(store, shape=(9, 7), chunks=(2, 3), shards=shards, dtype=dt, **kw)
    a[:5] = grid
    a[1:3, 2:5] = grid[3:5, :3]  # a partial update across chunks
    expected = np.empty((9, 7), dtype=a.dtype)
    expected[...] = a.fill_value
    expected[:5] = grid
    expected[1:3, 2:5] = grid[3:5, :3]
    b = zarrbolt.open_array(store)
    assert b.metadata.data_type == a.metadata.data_type
    got = b[...]
    assert got.dtype == expected.dtype
    assert _same(got, expected)
    assert _same(b[6:, 1:4], expected[6:, 1:4])  # chunks never written: the fill value
    assert _same(b.oindex[[0, 4], [1, 6]], expected[np.ix_([0, 4], [1, 6])])
    assert _same(b[3, 5], expected[3, 5])


def test_empty_string_chunks_are_not_stored():
    store: dict = {}
    a = zarrbolt.create_array(store, shape=(6,), chunks=(2,), dtype=str)
    a[:] = ["", "", "x", "", "", ""]
    assert sorted(k for k in store if k.startswith("c/")) == ["c/1"]


# ---------------------------------------------------------------------------- overflow rule
@pytest.fixture
def u16():
    return zarrbolt.create_array({}, shape=(4,), chunks=(2,), dtype="uint16")


@pytest.mark.parametrize("value,error", [
    (-1, ValueOverflowError), (70000, ValueOverflowError), (2**70, ValueOverflowError), ([0, -1], ValueOverflowError),
    (-1.0, ValueOverflowError), (float("inf"), ValueOverflowError), (float("nan"), InvalidValueError),
    ([float("nan"), 1.0], InvalidValueError),
])
def test_python_numbers_out_of_range_raise(u16, value, error):
    u16[:] = 7
    with pytest.raises(error) as info:
        u16[:2] = value
    assert isinstance(info.value, ZarrboltError)
    assert isinstance(info.value, OverflowError if error is ValueOverflowError else ValueError)
    assert (u16[:] == 7).all()  # nothing was written


def test_numpy_values_cast_as_numpy_does(u16):
    u16[0] = np.int64(-1)
    u16[1:] = np.array([70000, 1, 2])
    u16[3] = 2.9
    assert u16[:].tolist() == [65535, 4464, 1, 2]
    ref = np.zeros(4, np.uint16)
    ref[0] = np.int64(-1)
    ref[1:] = np.array([70000, 1, 2])
    ref[3] = 2.9
    assert u16[:].tolist() == ref.tolist()


def test_in_range_python_values_and_other_types(u16):
    u16[:] = [0, 65535, True, 3]
    assert u16[:].tolist() == [0, 65535, 1, 3]
    i8 = zarrbolt.create_array({}, shape=(2,), chunks=(2,), dtype="int8")
    with pytest.raises(OverflowError):
        i8[0] = 128
    i8[:] = [-128, 127]
    f = zarrbolt.create_array({}, shape=(2,), chunks=(2,), dtype="float32")
    f[:] = [float("nan"), 2**70]  # floats take NaN and large ints
    assert np.isnan(f[0]) and f[1] == np.float32(2**70)
    with pytest.raises(ValueOverflowError):
        u16.oindex[[0, 2]] = -5


@pytest.mark.parametrize("data_type,fill", [
    ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 7}}, ""),
    ({"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}, "yesterday"),
    ("string", {"a": 0}), ("variable_length_bytes", "@@@"),
    ({"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "nope"}]}}, {}),
])
def test_malformed_documents_fail_to_open(data_type, fill):
    doc = {"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": data_type,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
           "codecs": [{"name": "vlen-utf8"} if data_type == "string" else {"name": "bytes"}]}
    store = {"zarr.json": json.dumps(doc).encode()}
    with pytest.raises(MetadataError):
        zarrbolt.open_array(store, mode="r")


def test_wrong_serializer_for_the_type_fails_to_open():
    doc = {"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "string",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": "", "codecs": [{"name": "bytes"}]}
    with pytest.raises(MetadataError):
        zarrbolt.open_array({"zarr.json": json.dumps(doc).encode()}, mode="r")


@pytest.mark.parametrize("dt,zero,one", [("<U5", "0", "1"), (str, "0", "1"), ("S3", b"0", b"1"),
                                         ("M8[s]", 0, 1), ("m8[ms]", 0, 1)])
def test_zeros_and_ones_of_text_and_time_types_are_zarr_pythons(dt, zero, one):
    """zarr-python fills text arrays made by zeros()/ones() with "0" / "1" (str of the number)."""
    z = zarrbolt.zeros((2,), dtype=dt)
    o = zarrbolt.ones((2,), dtype=dt)
    if isinstance(zero, int):
        assert z[:].view(np.int64).tolist() == [zero] * 2 and o[:].view(np.int64).tolist() == [one] * 2
    else:
        assert z[:].tolist() == [zero] * 2 and o[:].tolist() == [one] * 2


@pytest.mark.parametrize("dt", [str, bytes, "<U3", "M8[s]"])
def test_transpose_codec_with_extension_types(dt):
    flat = np.arange(12).astype(str)
    if dt is bytes:
        vals = np.array([x.encode() for x in flat], dtype=object).reshape(3, 4)
    elif dt == "M8[s]":
        vals = np.arange(12).astype("M8[s]").reshape(3, 4)
    else:
        vals = flat.astype(DataType.from_numpy(dt).numpy_dtype).reshape(3, 4)
    a = zarrbolt.create_array({}, shape=(3, 4), chunks=(2, 3), dtype=dt,
                              filters=[{"name": "transpose", "configuration": {"order": [1, 0]}}])
    a[:] = vals
    a[1, 1:3] = vals[0, :2]
    vals[1, 1:3] = vals[0, :2]
    assert _same(a[:], vals)
