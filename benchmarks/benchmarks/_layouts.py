"""The microscopy layouts of the anchors harness (``shared/bench/anchors_bench.py``, layouts a-e),
scaled down so that one asv run of a commit takes minutes: a 128x512x512 volume (64 MiB of
uint16) instead of the harness's gigabytes, shards of 128x256x256 instead of 256x512x512, the same
inner chunks and codec chains.

  a  chunks 64^3, blosc lz4 clevel 5 + byte shuffle
  b  shards with 64^3 inner chunks [bytes, blosc zstd clevel 3 bitshuffle], index [bytes, crc32c]
  c  chunks 128^3, gzip level 5
  d  as b, inner [transpose [2,1,0], bytes, zstd level 3]
  e  float32 (= uint16 / 4 + 100) through [scale_offset(100, 4), cast_value(uint16), bytes,
     blosc lz4 shuffle], chunks 64^3: the stored chunks hold the same bytes as layout a

Besides ``zarrbolt demo``'s smooth synthetic volume, the realistic datasets (``DATASETS``): a
fluorescence-like volume (cells over background, Poisson shot noise, 12-bit values) and a
light-sheet-like one with large empty regions, from benchmarks/realistic_volumes.py.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import numpy as np

SHAPE = (128, 512, 512)
SHARD = (128, 256, 256)
FLOAT_OFFSET, FLOAT_SCALE = 100.0, 4.0

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BLOSC_LZ4 = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2,
                                                "blocksize": 0}}
BLOSC_ZSTD_BIT = {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle",
                                                     "typesize": 2, "blocksize": 0}}
GZIP5 = {"name": "gzip", "configuration": {"level": 5}}
ZSTD3 = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
TRANSPOSE_ZYX = {"name": "transpose", "configuration": {"order": [2, 1, 0]}}
SCALE_OFFSET = {"name": "scale_offset", "configuration": {"offset": FLOAT_OFFSET, "scale": FLOAT_SCALE}}
CAST_U16 = {"name": "cast_value", "configuration": {"data_type": "uint16"}}


def sharded(inner: list, chunk_shape=(64, 64, 64)) -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(chunk_shape), "codecs": inner, "index_codecs": [LE, {"name": "crc32c"}],
        "index_location": "end"}}


# keyword arguments of zarrbolt.create_array for each layout
LAYOUTS = {
    "a": dict(dtype="uint16", chunks=(64, 64, 64), codecs=[LE, BLOSC_LZ4]),
    "b": dict(dtype="uint16", chunks=SHARD, codecs=[sharded([LE, BLOSC_ZSTD_BIT])]),
    "c": dict(dtype="uint16", chunks=(128, 128, 128), codecs=[LE, GZIP5]),
    "d": dict(dtype="uint16", chunks=SHARD, codecs=[sharded([TRANSPOSE_ZYX, LE, ZSTD3])]),
    "e": dict(dtype="float32", chunks=(64, 64, 64), fill_value=FLOAT_OFFSET,
              codecs=[SCALE_OFFSET, CAST_U16, LE, BLOSC_LZ4]),
}
NAMES = sorted(LAYOUTS)


def volume(shape=SHAPE) -> np.ndarray:
    """The synthetic microscopy-like uint16 volume of ``zarrbolt demo`` (deterministic)."""
    from zarrbolt.__main__ import synthetic_volume

    return synthetic_volume(shape)


# realistic volumes (benchmarks/realistic_volumes.py): camera data with shot noise, which compresses
# about 2x (fluorescence) and a light-sheet-like one with large empty regions; the uint16 layouts
DATASETS = ("fluorescence", "lightsheet")
UINT16_LAYOUTS = [n for n in NAMES if LAYOUTS[n]["dtype"] == "uint16"]


def realistic_volume(kind: str, shape=SHAPE, seed: int = 0) -> np.ndarray:
    """The realistic volume ``kind`` (deterministic for the shape and seed)."""
    import sys

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # benchmarks/
    if here not in sys.path:
        sys.path.insert(0, here)
    import realistic_volumes

    return np.asarray(realistic_volumes.VOLUMES[kind](shape, seed))


def layout_data(name: str, u16: np.ndarray) -> np.ndarray:
    """The values layout ``name`` stores: the uint16 volume, or its exact float32 image (e)."""
    if LAYOUTS[name]["dtype"] == "float32":
        return u16.astype(np.float32) / np.float32(FLOAT_SCALE) + np.float32(FLOAT_OFFSET)
    return u16


def data_root(tag: str) -> str:
    """A fresh directory for the benchmark data of one asv run: inside asv's environment when
    asv runs us (so each commit's run replaces the last one's data instead of filling /tmp),
    else a new temporary directory."""
    env = os.environ.get("ASV_ENV_DIR")
    if not env:
        return tempfile.mkdtemp(prefix=f"zb-asv-{tag}-")
    root = os.path.join(env, "zb-bench-data", tag)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    return root


def write_layouts(root: str, u16: np.ndarray, shape=SHAPE) -> None:
    import zarrbolt as zb

    for name, kw in LAYOUTS.items():
        a = zb.create_array(f"{root}/{name}.zarr", shape=shape, **kw)
        a[...] = layout_data(name, u16)
