"""scale_offset / cast_value / numcodecs.fixedscaleoffset as codecs of an array."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.errors import CodecError, MetadataError
from zarrbolt.storage import MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}


def so(offset=None, scale=None):
    conf = {}
    if offset is not None:
        conf["offset"] = offset
    if scale is not None:
        conf["scale"] = scale
    return {"name": "scale_offset", "configuration": conf}


def cv(dt, **kw):
    return {"name": "cast_value", "configuration": {"data_type": dt, **kw}}


def make(codecs, dtype="float32", shape=(40,), chunks=(16,), fill=None, store=None):
    return zarr.create_array(store or MemoryStore(), shape=shape, chunks=chunks, dtype=dtype, codecs=codecs,
                             fill_value=fill)


def test_quantised_float_roundtrip():
    a = make([so(100, 4), cv("uint16"), LE], fill=100.0)
    k = np.arange(40, dtype=np.float32) * 37
    data = k / np.float32(4) + np.float32(100)
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    raw = a.store.get("c/0")
    np.testing.assert_array_equal(np.frombuffer(raw, "<u2"), (k[:16]).astype(np.uint16))
    assert (a[...][:0] == 0).all()


def test_rounding_and_clamp_in_codec():
    a = make([cv("uint8", rounding="nearest-even", out_of_range="clamp"), {"name": "bytes"}], dtype="float64")
    a[:6] = [0.5, 1.5, 2.5, -3.0, 300.0, 254.6]
    np.testing.assert_array_equal(a[:6], [0, 2, 2, 0, 255, 255])
    b = make([cv("int8", rounding="towards-zero"), {"name": "bytes"}], dtype="float32")
    b[:4] = [1.9, -1.9, 127.4, -128.7]
    np.testing.assert_array_equal(b[:4], [1, -1, 127, -128])


def test_out_of_range_errors():
    a = make([cv("uint8"), {"name": "bytes"}], dtype="float32")
    with pytest.raises(CodecError):
        a[0] = 256.0
    with pytest.raises(CodecError):
        a[0] = np.nan  # NaN to an integer without a scalar_map
    w = make([cv("int8", out_of_range="wrap"), {"name": "bytes"}], dtype="int32")
    w[:3] = [128, -129, 300]
    np.testing.assert_array_equal(w[:3], [-128, 127, 44])


def test_scalar_map_nan():
    codecs = [so(-10, 0.1), cv("uint8", scalar_map={"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}), {"name": "bytes"}]
    a = make(codecs, dtype="float64", fill="NaN")
    assert np.isnan(a[...]).all()
    data = np.array([np.nan, 0.0, 10.0, 2540.0])
    a[:4] = data
    np.testing.assert_array_equal(a[:4], data)


def test_integer_scale_offset_overflow_is_an_error():
    a = make([so(0, 1000), LE], dtype="int16", fill=0)
    a[0] = 30
    assert a[0] == 30
    with pytest.raises(CodecError):
        a[0] = 100  # 100 * 1000 does not fit int16


@pytest.mark.parametrize("codecs,dtype,fill", [
    ([cv("uint8"), {"name": "bytes"}], "float32", -1.0),           # -1 is out of range for uint8
    ([cv("uint8"), {"name": "bytes"}], "float32", 0.5),            # 0.5 -> 0 -> 0.0 does not round-trip
    ([cv("int8", out_of_range="wrap"), {"name": "bytes"}], "int32", 1000),  # wraps: does not round-trip
    ([cv("uint8"), {"name": "bytes"}], "float32", "NaN"),          # NaN needs a scalar_map
    ([so(0, 0), LE], "float32", 0.0),                               # zero scale
    ([so("x", 1), LE], "float32", 0.0),
    ([cv("float32", out_of_range="wrap"), LE], "float64", 0.0),     # wrap needs an integer target
    ([cv("uint8", rounding="up"), {"name": "bytes"}], "float32", 0.0),
    ([cv("complex64"), LE], "float32", 0.0),
    ([so(1, 2), LE], "complex64", 0.0),
])
def test_invalid_configurations_refused_at_creation(codecs, dtype, fill):
    with pytest.raises(MetadataError):
        make(codecs, dtype=dtype, fill=fill)


def test_fixedscaleoffset_legacy():
    codecs = [{"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 1000, "scale": 10, "dtype": "<f8", "astype": "<u1"}},
              {"name": "bytes"}]
    a = make(codecs, dtype="float64", fill=1000.0)
    a[:3] = [1000.0, 1010.0, 1025.5]
    np.testing.assert_array_equal(a[:3], [1000.0, 1010.0, 1025.5])
    raw = np.frombuffer(a.store.get("c/0"), np.uint8)
    assert raw[:3].tolist() == [0, 100, 255]
    meta = json.loads(a.store.get("zarr.json"))
    assert meta["codecs"][0]["name"] == "numcodecs.fixedscaleoffset"


def test_chain_uses_the_fused_kernels_and_matches_two_steps(monkeypatch):
    from zarrbolt import kernels

    calls = {"enc": 0, "dec": 0}
    real_enc, real_dec = kernels.scale_offset_cast, kernels.cast_scale_offset_decode

    def enc(*a, **k):
        calls["enc"] += 1
        return real_enc(*a, **k)

    def dec(*a, **k):
        calls["dec"] += 1
        return real_dec(*a, **k)

    monkeypatch.setattr(kernels, "scale_offset_cast", enc)
    monkeypatch.setattr(kernels, "cast_scale_offset_decode", dec)
    codecs = [so(-10, 0.1), cv("uint8", scalar_map={"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}), {"name": "bytes"}]
    a = make(codecs, dtype="float64", fill="NaN", shape=(30,), chunks=(7,))
    data = np.arange(30, dtype=np.float64) * 10 + 20
    data[::4] = np.nan
    a[...] = data
    assert a._plan is not None  # reads run scale_offset + cast_value inside the C decode plan
    np.testing.assert_array_equal(a[...], data)
    assert calls["enc"] > 0 and calls["dec"] == 0
    with zarr.config.set(fused_pipeline=False):  # the per-codec path uses the fused kernel
        slow = zarr.Array.open(a.store)
    np.testing.assert_array_equal(slow[...], data)
    assert calls["dec"] > 0
    # the stored bytes equal the unfused two-step encoding
    raw = np.frombuffer(a.store.get("c/1"), np.uint8)
    step = kernels.cast_value(kernels.scale_offset_encode(data[7:14], -10.0, 0.1), np.uint8,
                              scalar_map=[(float("nan"), 0)])
    np.testing.assert_array_equal(raw, step)
