"""Chains with scale_offset / cast_value that the fused decode (test_fused.py) and the fused
encode (test_native_encode.py) are both checked with.  (tests/conftest.py puts this directory
on sys.path.)"""

import numpy as np

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}


def _so(offset, scale):
    return {"name": "scale_offset", "configuration": {"offset": offset, "scale": scale}}


def _cv(dtype, **kw):
    return {"name": "cast_value", "configuration": {"data_type": dtype, **kw}}


BLOSC_LZ4 = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2,
                                               "blocksize": 256}}
NUMERIC = {
    # name: (array dtype, fill, codecs, data maker)
    "so-cast-u16-blosc": ("float32", 100.0, [_so(100, 4), _cv("uint16"), LE, BLOSC_LZ4],
                          lambda n: (np.arange(n) % 3000) / np.float32(4) + np.float32(100)),
    "so-cast-u16-transpose": ("float32", 100.0, [_so(100, 4), _cv("uint16"), {"name": "transpose", "configuration": {"order": [2, 0, 1]}},
                                                 BE, {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
                              lambda n: (np.arange(n) % 3000) / np.float32(4) + np.float32(100)),
    "cast-u8-map-clamp": ("float32", -1.0, [_cv("uint8", rounding="nearest-away", out_of_range="clamp",
                                                  scalar_map={"encode": [["NaN", 255], [-1, 254]], "decode": [[255, "NaN"], [254, -1]]}),
                                              LE, {"name": "crc32c"}],
                          lambda n: np.where(np.arange(n) % 11 == 0, np.nan, (np.arange(n) % 400) * 0.75 - 20)),
    "so-only-f64-gzip": ("float64", 0.0, [_so(-3, 0.5), BE, {"name": "gzip", "configuration": {"level": 1}}],
                         lambda n: np.arange(n) * 0.125 - 7),
    "so-cast-i16-divide": ("float32", -7.5, [_so(-7.5, 3), _cv("int16"), LE, BLOSC_LZ4],
                           lambda n: ((np.arange(n) % 5000) - 2500) / np.float32(3) - np.float32(7.5)),
    "so-cast-u8-shuffle-none": ("float32", 1.0, [_so(1, 0.5), _cv("uint8"), LE],
                                lambda n: (np.arange(n) % 200) / np.float32(0.5) + np.float32(1)),
    "cast-i16-wrap": ("int32", 0, [_cv("int16", out_of_range="wrap"), LE, {"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
                      lambda n: (np.arange(n) * 977) % 40000 - 20000),
}
