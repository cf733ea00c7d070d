"""Interoperability cases shared by zarrbolt's tests and the reference-system worker.

This module is imported both by the test process and by ``ref_worker.py`` running under the
reference virtualenv (zarr-python, tensorstore), so it depends on numpy only.

Each case is a complete Zarr v3 array metadata document plus a deterministic data generator
and a list of chunks that are deliberately left unwritten (they must read as the fill value).
"""

from __future__ import annotations

import numpy as np


def _meta(shape, dtype, chunks, codecs, fill, *, cke=None, dims=None, attrs=None):
    m = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(shape),
        "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": cke or {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill,
        "codecs": codecs,
        "attributes": attrs or {},
    }
    if dims is not None:
        m["dimension_names"] = dims
    return m


BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}
BYTES_BE = {"name": "bytes", "configuration": {"endian": "big"}}

_DTYPE_FILL = {
    "bool": True,
    "int8": -7,
    "int16": -300,
    "int32": -70000,
    "int64": -(2**40),
    "uint8": 200,
    "uint16": 60000,
    "uint32": 4000000000,
    "uint64": 2**63 + 5,
    "float16": -1.5,
    "float32": "NaN",
    "float64": "-Infinity",
    "complex64": [1.5, "NaN"],
    "complex128": ["Infinity", -2.25],
}


def make_cases() -> dict[str, dict]:
    cases: dict[str, dict] = {}
    # every core dtype, little and big endian, with a non-default fill value and an edge chunk
    for dt, fill in _DTYPE_FILL.items():
        for name, ser in (("le", BYTES_LE), ("be", BYTES_BE)):
            if dt in ("bool", "int8", "uint8") and name == "be":
                continue
            cases[f"dtype-{dt}-{name}"] = {"meta": _meta((13, 7), dt, (5, 4), [ser], fill)}
    cases["dtype-uint8-noendian"] = {"meta": _meta((9,), "uint8", (4,), [{"name": "bytes"}], 3)}
    # fill values that must survive bit-exactly
    cases["fill-nan-payload-f32"] = {"meta": _meta((6, 6), "float32", (4, 4), [BYTES_LE], "0x7fc00001")}
    cases["fill-nan-payload-f64"] = {"meta": _meta((6, 6), "float64", (4, 4), [BYTES_LE], "0x7ff8000000000123")}
    cases["fill-neg-zero"] = {"meta": _meta((6,), "float64", (4,), [BYTES_LE], -0.0)}
    cases["fill-hex-f16"] = {"meta": _meta((5,), "float16", (2,), [BYTES_LE], "0x7e01")}
    cases["fill-inf-f32"] = {"meta": _meta((5,), "float32", (2,), [BYTES_LE], "Infinity")}
    # codecs
    cases["codec-gzip"] = {"meta": _meta((20, 30), "int32", (8, 16), [BYTES_LE, {"name": "gzip", "configuration": {"level": 5}}], 0)}
    cases["codec-zstd"] = {"meta": _meta((20, 30), "float64", (8, 16), [BYTES_LE, {"name": "zstd", "configuration": {"level": 3, "checksum": False}}], 0.0)}
    cases["codec-zstd-checksum"] = {"meta": _meta((20, 30), "uint16", (8, 16), [BYTES_LE, {"name": "zstd", "configuration": {"level": 1, "checksum": True}}], 0)}
    cases["codec-crc32c"] = {"meta": _meta((20, 30), "uint16", (8, 16), [BYTES_LE, {"name": "crc32c"}], 0)}
    cases["codec-gzip-crc32c"] = {"meta": _meta((20, 30), "int16", (8, 16), [BYTES_LE, {"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}], 0)}
    for cname in ("lz4", "lz4hc", "blosclz", "zstd", "zlib"):
        for shuffle in ("noshuffle", "shuffle", "bitshuffle"):
            cases[f"codec-blosc-{cname}-{shuffle}"] = {
                "meta": _meta((24, 40), "uint16", (16, 16), [BYTES_LE, {"name": "blosc", "configuration": {
                    "cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": 2, "blocksize": 0}}], 0)}
    cases["codec-blosc-f64-blocksize"] = {"meta": _meta((64, 64), "float64", (32, 32), [BYTES_LE, {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 9, "shuffle": "shuffle", "typesize": 8, "blocksize": 4096}}], 0.0)}
    cases["codec-transpose"] = {"meta": _meta((10, 12, 14), "uint16", (4, 5, 6), [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, BYTES_LE], 0)}
    cases["codec-transpose-be-zstd"] = {"meta": _meta((10, 12, 14), "float32", (4, 5, 6), [{"name": "transpose", "configuration": {"order": [1, 2, 0]}}, BYTES_BE, {"name": "zstd", "configuration": {"level": 1, "checksum": False}}], 0.0)}
    cases["codec-transpose-2x"] = {"meta": _meta((9, 11), "int64", (4, 3), [{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "transpose", "configuration": {"order": [1, 0]}}, BYTES_LE], 0)}
    # chunk key encodings
    cases["cke-default-dot"] = {"meta": _meta((10, 10), "uint8", (3, 3), [{"name": "bytes"}], 0, cke={"name": "default", "configuration": {"separator": "."}})}
    cases["cke-v2-dot"] = {"meta": _meta((10, 10), "uint8", (3, 3), [{"name": "bytes"}], 0, cke={"name": "v2", "configuration": {"separator": "."}})}
    cases["cke-v2-slash"] = {"meta": _meta((10, 10), "uint8", (3, 3), [{"name": "bytes"}], 0, cke={"name": "v2", "configuration": {"separator": "/"}})}
    # shapes
    cases["shape-0d"] = {"meta": _meta((), "float64", (), [BYTES_LE], 0.0)}
    cases["shape-0d-v2key"] = {"meta": _meta((), "int32", (), [BYTES_LE], 0, cke={"name": "v2", "configuration": {"separator": "."}})}
    cases["shape-zero-length"] = {"meta": _meta((0, 5), "uint16", (3, 3), [BYTES_LE], 0)}
    cases["shape-chunk-larger"] = {"meta": _meta((5, 3), "int16", (8, 8), [BYTES_LE], 0)}
    cases["shape-5d"] = {"meta": _meta((2, 3, 5, 6, 7), "uint16", (1, 2, 4, 4, 4), [BYTES_LE, {"name": "zstd", "configuration": {"level": 0, "checksum": False}}], 0)}
    # names and attributes
    cases["dims-attrs"] = {"meta": _meta((4, 6), "float32", (2, 3), [BYTES_LE], 0.0, dims=["y", None],
                                         attrs={"units": "um", "nested": {"a": [1, 2.5, None, True]}, "ünï": "çødé"})}
    # sharding_indexed: index at the end and at the start, compressed inner chunks, nested
    # shards, transposes inside and before the shard, non-default index codecs, edge shards
    def shard(chunk_shape, codecs, index_codecs=None, loc="end"):
        return {"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunk_shape), "codecs": codecs,
            "index_codecs": index_codecs or [BYTES_LE, {"name": "crc32c"}], "index_location": loc}}

    zstd1 = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
    cases["shard-end-zstd"] = {"meta": _meta((40, 50), "uint16", (20, 25), [shard((10, 5), [BYTES_LE, zstd1])], 0)}
    cases["shard-start-blosc"] = {"meta": _meta((33, 47), "float32", (16, 16), [shard((8, 4), [BYTES_LE, {"name": "blosc", "configuration": {
        "cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}}], loc="start")], "NaN")}
    cases["shard-index-noncrc"] = {"meta": _meta((24, 24), "int32", (12, 12), [shard((4, 6), [BYTES_BE], [BYTES_LE])], -1)}
    cases["shard-nested"] = {"meta": _meta((32, 30), "uint8", (16, 30), [shard((8, 10), [shard((4, 5), [{"name": "bytes"}])])], 7)}
    cases["shard-transpose-inside"] = {"meta": _meta((20, 16, 12), "uint16", (10, 8, 12), [shard((5, 4, 6), [
        {"name": "transpose", "configuration": {"order": [2, 1, 0]}}, BYTES_LE, zstd1])], 0)}
    cases["shard-transpose-before"] = {"meta": _meta((20, 16, 12), "int16", (10, 8, 12), [
        {"name": "transpose", "configuration": {"order": [2, 0, 1]}}, shard((4, 5, 4), [BYTES_LE])], 0)}
    cases["shard-gzip-crc-inner"] = {"meta": _meta((64,), "float64", (32,), [shard((8,), [BYTES_LE, {"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}])], "-Infinity")}
    # scale_offset + cast_value (lossless data: see case_data), as in OME-Zarr quantised images
    so = {"name": "scale_offset", "configuration": {"offset": -10, "scale": 0.1}}
    cv = {"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": "nearest-even",
                                                   "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}}
    cases["numeric-so-cast-f64-u8"] = {"meta": _meta((30, 20), "float64", (16, 8), [so, cv, {"name": "bytes"}], "NaN")}
    cases["numeric-so-cast-f32-u16"] = {"meta": _meta((40, 24), "float32", (16, 16), [
        {"name": "scale_offset", "configuration": {"offset": 100, "scale": 4}},
        {"name": "cast_value", "configuration": {"data_type": "uint16"}}, BYTES_LE,
        {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}], 100.0)}
    cases["numeric-cast-i32-i8-wrap"] = {"meta": _meta((50,), "int32", (16,), [
        {"name": "cast_value", "configuration": {"data_type": "int8", "out_of_range": "wrap"}}, {"name": "bytes"}], 0)}
    cases["numeric-so-int"] = {"meta": _meta((50,), "int16", (16,), [
        {"name": "scale_offset", "configuration": {"offset": 5, "scale": 3}}, BYTES_LE], 5)}
    # chunks large enough (360 KiB) for partial decodes: planes and regions near a chunk's start
    # stop gzip / zstd streams early and decode only part of an LZ4 blosc block
    for pname, comp in (("gzip", {"name": "gzip", "configuration": {"level": 5}}),
                        ("zstd", {"name": "zstd", "configuration": {"level": 0, "checksum": False}}),
                        ("blosc-lz4", {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                                          "typesize": 2, "blocksize": 0}}),
                        ("blosc-zstd", {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle",
                                                                           "typesize": 2, "blocksize": 0}})):
        cases[f"partial-{pname}"] = {"meta": _meta((40, 96, 96), "uint16", (20, 96, 96), [BYTES_LE, comp], 0)}
    for c in cases.values():
        c.setdefault("missing", True)
    return cases


# Regions read from the "partial-*" cases besides the whole array.
PARTIAL_SELECTIONS = [20, 21, 27, 39, (slice(21, 24), slice(5, 50), slice(7, 90)), (slice(18, 23),), (25, slice(None), 3)]


def case_data(name: str, meta: dict) -> np.ndarray:
    """Deterministic test data for a case (identical in any numpy >= 1.17)."""
    shape = tuple(meta["shape"])
    dt = meta["data_type"]
    seed = sum(name.encode()) * 7919 + len(name)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    if name.startswith("numeric-"):
        return _numeric_case_data(name, rng, n).reshape(shape)
    if dt == "bool":
        a = rng.integers(0, 2, size=n).astype(bool)
    elif dt.startswith(("int", "uint")):
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
        a[: min(n, 3)] = [info.min, info.max, 0][: min(n, 3)]
    elif dt.startswith("float"):
        a = (rng.standard_normal(n) * 1000).astype(dt)
        special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype=dt)
        a[: min(n, 5)] = special[: min(n, 5)]
    elif dt.startswith("complex"):
        a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
        if n > 2:
            a[0] = complex(np.nan, 1.0)
            a[1] = complex(np.inf, -np.inf)
    else:
        raise ValueError(dt)
    return a.reshape(shape)


def _numeric_case_data(name: str, rng, n: int) -> np.ndarray:
    """Data the numeric codecs store losslessly, computed exactly as their decoders do."""
    if name == "numeric-so-cast-f64-u8":
        k = rng.integers(1, 256, size=n).astype(np.float64)  # 0 is reserved for NaN by the scalar map
        a = k / np.float64(0.1) + np.float64(-10)
        a[::7] = np.nan
        return a
    if name == "numeric-so-cast-f32-u16":
        k = rng.integers(0, 65536, size=n).astype(np.float32)
        return k / np.float32(4) + np.float32(100)
    if name == "numeric-cast-i32-i8-wrap":
        return rng.integers(-128, 128, size=n).astype(np.int32)  # wrap is lossless inside int8's range
    if name == "numeric-so-int":
        return (rng.integers(-3000, 3000, size=n) * 3 // 3 + 5).astype(np.int16)
    raise ValueError(name)


def missing_region(meta: dict):
    """The selection of the first chunk, which is left unwritten (reads as fill); None for 0-d."""
    shape = meta["shape"]
    if not shape or 0 in shape:
        return None
    chunks = meta["chunk_grid"]["configuration"]["chunk_shape"]
    return tuple(slice(0, min(c, s)) for c, s in zip(chunks, shape))


def expected_array(name: str, meta: dict, fill: np.ndarray) -> np.ndarray:
    """The data written (everything but the first chunk) with the fill value in the first chunk.

    ``fill`` is a 0-d array of the dtype holding the exact fill bits."""
    a = case_data(name, meta).copy()
    reg = missing_region(meta)
    if reg is not None:
        a[reg] = fill
    return a


def write_selections(meta: dict):
    """Selections that together write every chunk except the first one."""
    shape = meta["shape"]
    reg = missing_region(meta)
    if reg is None:
        return [()] if not shape else []
    sels = []
    for d, s in enumerate(shape):
        # everything with index >= chunk end along dim d, and < chunk end along dims before d
        if reg[d].stop >= s:
            continue
        sel = [slice(None)] * len(shape)
        for e in range(d):
            sel[e] = reg[e]
        sel[d] = slice(reg[d].stop, s)
        sels.append(tuple(sel))
    return sels


def fill_bits(meta: dict) -> np.ndarray:
    """The fill value of ``meta`` as a 0-d numpy array with exact bits (numpy-only parser)."""
    dt = np.dtype(meta["data_type"])
    f = meta["fill_value"]

    def one(v, fdt):
        if isinstance(v, str):
            if v.startswith("0x"):
                bits = int(v, 16)
                return np.array(bits, dtype=f"u{fdt.itemsize}").view(fdt)
            return np.array({"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}[v], dtype=fdt)
        return np.array(v, dtype=fdt)

    if dt.kind == "c":
        fdt = np.dtype(f"f{dt.itemsize // 2}")
        out = np.zeros(1, dtype=dt)
        parts = out.view(fdt)
        parts[0] = one(f[0], fdt)
        parts[1] = one(f[1], fdt)
        return out.reshape(())
    return one(f, dt)
