"""Interop cases for the numcodecs codecs (numcodecs.zlib, numcodecs.lz4, numcodecs.delta), shared
by test_numcodecs_interop.py and, run as a script under the reference virtualenv, a zarr-python
worker:

    numcodecs_cases.py write ROOT   zarr-python writes every case under ROOT/<case>
    numcodecs_cases.py read ROOT    zarr-python reads every case under ROOT/<case>; prints JSON
                                    {case: "ok" | "mismatch: ..." | "error: ..."}

numpy only (plus zarr in the worker).  Each case is array metadata as zarr-python 3 writes it, or
an "api" case written through zarr-python's own API (``zarr.codecs.numcodecs``), with data that
the codecs store losslessly (delta with a narrower or float astype only loses nothing when the
differences fit, so the data are chosen that way).  The first chunk is left unwritten: it must
read as the fill value.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import _meta, fill_bits, missing_region, write_selections  # noqa: E402

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}


def zlib(level=None):
    return {"name": "numcodecs.zlib", "configuration": {} if level is None else {"level": level}}


def lz4(acc=None):
    return {"name": "numcodecs.lz4", "configuration": {} if acc is None else {"acceleration": acc}}


def delta(dtype, astype=None):
    return {"name": "numcodecs.delta", "configuration": {"dtype": dtype} | ({"astype": astype} if astype else {})}


def shard(chunk_shape, codecs, loc="end"):
    return {"name": "sharding_indexed", "configuration": {"chunk_shape": list(chunk_shape), "codecs": codecs,
                                                          "index_codecs": [LE, CRC], "index_location": loc}}


def make_cases() -> dict[str, dict]:
    c: dict[str, dict] = {}
    c["zlib-u16-edge"] = {"meta": _meta((37, 29), "uint16", (16, 16), [LE, zlib(3)], 0)}
    c["zlib-default-f64"] = {"meta": _meta((50,), "float64", (16,), [LE, zlib()], "NaN")}
    c["zlib-be-i32-level9"] = {"meta": _meta((30, 20), "int32", (8, 8), [BE, zlib(9)], -1)}
    c["zlib-level0"] = {"meta": _meta((40,), "uint8", (16,), [{"name": "bytes"}, zlib(0)], 3)}
    c["lz4-default-u16"] = {"meta": _meta((37, 29), "uint16", (16, 16), [LE, lz4()], 0)}
    c["lz4-accel-f32"] = {"meta": _meta((24, 40), "float32", (16, 16), [LE, lz4(10)], 1.5)}
    c["lz4-crc32c"] = {"meta": _meta((24, 40), "int16", (16, 16), [LE, lz4(1), CRC], 0)}
    c["delta-i16-zlib"] = {"meta": _meta((37, 29), "int16", (16, 16), [delta("<i2"), LE, zlib(1)], 0)}
    c["delta-u16-i32-lz4"] = {"meta": _meta((37, 29), "uint16", (16, 16), [delta("uint16", "int32"), LE, lz4()], 0)}
    c["delta-i64-lz4"] = {"meta": _meta((60,), "int64", (25,), [delta("i8"), LE, lz4()], -5)}
    c["delta-u8-i16"] = {"meta": _meta((30, 30), "uint8", (16, 16), [delta("|u1", "<i2"), LE, zlib()], 0)}
    c["delta-i16-i8"] = {"meta": _meta((30, 30), "int16", (16, 16), [delta("<i2", "<i1"), {"name": "bytes"}, lz4()], 0)}
    c["delta-u32-i64-be"] = {"meta": _meta((30, 30), "uint32", (16, 16), [delta("<u4", "<i8"), BE, lz4()], 0)}
    c["delta-f32-zlib"] = {"meta": _meta((30, 30), "float32", (16, 16), [delta("<f4"), LE, zlib()], 0.0)}
    c["delta-f64-f32"] = {"meta": _meta((30, 30), "float64", (16, 16), [delta("<f8", "<f4"), LE, zlib()], 0.0)}
    c["delta-f16-f32"] = {"meta": _meta((30, 30), "float16", (16, 16), [delta("<f2", "<f4"), LE, lz4()], 0.0)}
    c["delta-transpose"] = {"meta": _meta((12, 10, 8), "uint16", (5, 4, 8), [
        {"name": "transpose", "configuration": {"order": [2, 0, 1]}}, delta("<u2", "<i4"), LE, zlib(2)], 0)}
    c["shard-delta-lz4"] = {"meta": _meta((40, 50), "uint16", (20, 25), [shard((10, 5), [delta("<u2", "<i4"), LE, lz4()])], 0)}
    c["shard-zlib-start"] = {"meta": _meta((33, 47), "float32", (16, 16), [shard((8, 4), [LE, zlib(6)], loc="start")], "NaN")}
    c["shard-delta-zlib-edge"] = {"meta": _meta((33, 47), "int32", (16, 16), [shard((8, 4), [delta("<i4"), LE, zlib(1)])], 7)}
    # written through zarr-python's own API (zarr.codecs.numcodecs), read by zarrbolt
    c["api-delta-lz4-sharded"] = {"api": "delta-lz4-sharded", "meta": _meta((40, 50), "uint16", (20, 25), [], 0)}
    c["api-zlib"] = {"api": "zlib", "meta": _meta((37, 29), "int32", (16, 16), [], 0)}
    return c


def case_data(name: str, meta: dict) -> np.ndarray:
    """Deterministic data each case stores losslessly (numpy >= 1.17)."""
    shape = tuple(meta["shape"])
    dt = np.dtype(meta["data_type"])
    n = int(np.prod(shape))
    rng = np.random.default_rng(sum(name.encode()) * 131 + len(name))
    if "delta" in name and dt.kind == "f":
        # multiples of 1/4 with small steps: every difference and running sum is exact in float16+
        a = np.cumsum(rng.integers(-8, 9, size=n)) * 0.25
    elif "delta" in name and ("i8" in name or "-i16-i8" in name or "u8-i16" in name):
        a = np.cumsum(rng.integers(-60, 61, size=n)) % 100  # differences fit int8
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
        a[:3] = [info.min, info.max, 0]
    else:
        a = rng.standard_normal(n) * 1000
        a[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return np.asarray(a).astype(dt).reshape(shape)


def expected_array(name: str, meta: dict) -> np.ndarray:
    a = case_data(name, meta).copy()
    reg = missing_region(meta)
    if reg is not None:
        a[reg] = fill_bits(meta)
    return a


# ----------------------------------------------------------------------------- zarr-python worker


def _write_api(path: str, name: str, case: dict) -> None:
    import zarr
    import zarr.codecs.numcodecs as nc

    meta = case["meta"]
    kw = {"shape": tuple(meta["shape"]), "dtype": meta["data_type"],
          "chunks": tuple(meta["chunk_grid"]["configuration"]["chunk_shape"]), "fill_value": meta["fill_value"]}
    if case["api"] == "delta-lz4-sharded":
        arr = zarr.create_array(path, shards=kw.pop("chunks"), chunks=(10, 5), filters=[nc.Delta(dtype="u2", astype="i4")],
                                compressors=[nc.LZ4()], **kw)
    else:
        arr = zarr.create_array(path, filters=[], compressors=[nc.Zlib(level=4)], **kw)
    data = case_data(name, meta)
    for sel in write_selections(meta):
        arr[sel] = data[sel]


def _write(path: str, name: str, case: dict) -> None:
    import zarr

    if "api" in case:
        return _write_api(path, name, case)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "zarr.json"), "w") as f:
        json.dump(case["meta"], f)
    arr = zarr.open_array(path, mode="r+")
    data = case_data(name, case["meta"])
    for sel in write_selections(case["meta"]):
        arr[sel] = data[sel]


def _read(path: str, name: str, case: dict) -> str:
    import zarr

    got = np.asarray(zarr.open_array(path, mode="r")[...])
    exp = expected_array(name, case["meta"])
    if got.shape != exp.shape or got.dtype != exp.dtype:
        return f"mismatch: {got.shape} {got.dtype} != {exp.shape} {exp.dtype}"
    if got.tobytes() == exp.tobytes():
        return "ok"
    if exp.dtype.kind == "f":
        gn, en = np.isnan(got), np.isnan(exp)
        if np.array_equal(gn, en) and got[~gn].tobytes() == exp[~en].tobytes():
            return "ok"
    return "mismatch: values differ"


def main() -> None:
    import warnings

    warnings.simplefilter("ignore")  # zarr-python warns that numcodecs codecs are not in the spec
    op, root = sys.argv[1:3]
    results = {}
    for name, case in make_cases().items():
        path = os.path.join(root, name)
        try:
            if op == "write":
                _write(path, name, case)
                results[name] = "ok"
            elif not os.path.exists(os.path.join(path, "zarr.json")):
                results[name] = "missing"
            else:
                results[name] = _read(path, name, case)
        except Exception as e:  # noqa: BLE001 - reported to the test process
            results[name] = "error: " + traceback.format_exception_only(type(e), e)[-1].strip()[:500]
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
