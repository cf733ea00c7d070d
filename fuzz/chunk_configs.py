"""Arrays whose stored chunks fuzz_chunk_read replaces: one per codec chain of untrusted chunk
bytes (shared with make_corpus.py, which writes their valid chunks as seeds)."""

from __future__ import annotations

from typing import Any

import numpy as np

import zarrbolt

SHAPE = (40, 24)
CHUNKS = (20, 24)


def _b(endian: str = "little") -> dict[str, Any]:
    return {"name": "bytes", "configuration": {"endian": endian}}


def _blosc(cname: str, shuffle: str, typesize: int) -> dict[str, Any]:
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": 5, "shuffle": shuffle,
                                               "typesize": typesize, "blocksize": 0}}


def _shard(inner: list[dict[str, Any]], location: str = "end") -> dict[str, Any]:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [5, 8], "codecs": inner, "index_location": location,
        "index_codecs": [_b(), {"name": "crc32c"}]}}


# name -> (dtype, create_array keyword arguments)
CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "gzip": ("int16", {"codecs": [_b(), {"name": "gzip", "configuration": {"level": 5}}]}),
    "zstd": ("float32", {"codecs": [_b("big"), {"name": "zstd", "configuration": {"level": 3, "checksum": True}}]}),
    "blosc_lz4": ("int16", {"codecs": [_b(), _blosc("lz4", "shuffle", 2)]}),
    "blosc_bitshuffle": ("uint16", {"codecs": [_b(), _blosc("zstd", "bitshuffle", 2)]}),
    "crc32c": ("int32", {"codecs": [_b(), {"name": "crc32c"}]}),
    "transpose_zstd": ("int64", {"codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}}, _b(),
                                            {"name": "zstd", "configuration": {"level": 1}}]}),
    "shard_blosc": ("uint8", {"codecs": [_shard([_b(), _blosc("lz4", "noshuffle", 1)])]}),
    "shard_gzip_start": ("int32", {"codecs": [_shard([_b(), {"name": "gzip", "configuration": {"level": 1}}],
                                                     "start")]}),
    "vlen_utf8": ("string", {"codecs": [{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 1}}]}),
    "numeric": ("float64", {"codecs": [{"name": "scale_offset", "configuration": {"offset": 1000, "scale": 10}},
                                       {"name": "cast_value", "configuration": {"data_type": "int16",
                                                                                "out_of_range": "clamp"}},
                                       _b(), {"name": "zstd", "configuration": {"level": 1}}]}),
    "v2_blosc_delta": ("int16", {"zarr_format": 2, "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5,
                                                                  "shuffle": 1},
                                 "filters": [{"id": "delta", "dtype": "<i2"}]}),
    "v2_lz4_fletcher": ("int32", {"zarr_format": 2, "compressor": {"id": "lz4", "acceleration": 1},
                                  "filters": [{"id": "fletcher32"}]}),
    "v2_zlib_vlen": ("bytes", {"zarr_format": 2, "compressor": {"id": "zlib", "level": 1},
                               "filters": [{"id": "vlen-bytes"}]}),
    "numcodecs_checksums": ("uint16", {"codecs": [_b(), {"name": "numcodecs.jenkins_lookup3"},
                                                  {"name": "numcodecs.adler32"}]}),
}


def sample(dtype: str) -> np.ndarray:
    n = SHAPE[0] * SHAPE[1]
    if dtype == "string":
        return np.array([f"v{i * 7919 % 1000}" * (i % 4) for i in range(n)], dtype=object).reshape(SHAPE)
    if dtype == "bytes":
        return np.array([bytes([i % 256]) * (i % 5) for i in range(n)], dtype=object).reshape(SHAPE)
    x = np.arange(n, dtype=np.float64).reshape(SHAPE)
    return (x % 97 if np.dtype(dtype).kind != "f" else x / 8 - 20).astype(dtype)


def create(store: Any, name: str) -> tuple[Any, str]:
    """The array of config ``name`` in ``store``, data written; and the key of its first chunk."""
    dtype, kw = CONFIGS[name]
    kw = dict(kw)
    if kw.get("zarr_format") != 2 and "string" not in dtype and "bytes" not in dtype:
        kw.setdefault("fill_value", 0)
    arr = zarrbolt.create_array(store, shape=SHAPE, chunks=CHUNKS, dtype=dtype if dtype not in ("string", "bytes") else
                                ("str" if dtype == "string" else "bytes"), **kw)
    arr[...] = sample(dtype)
    keys = sorted(k for k in store.list() if not k.rsplit("/", 1)[-1].startswith((".z", "zarr.json")))
    return arr, keys[0]
