"""asv benchmarks of the numcodecs codecs: numcodecs.zlib (libdeflate), numcodecs.lz4 (liblz4) and
numcodecs.delta (C kernels), on a microscopy-like uint16 chunk and end to end.

Chunk-level: encode / decode of one 64x256x256 uint16 chunk (8 MiB, the synthetic volume of
``zarrbolt.__main__``), beside Python's zlib module (what numcodecs.Zlib runs) and numpy's
diff / cumsum (what numcodecs.Delta runs).  End to end: full reads, a plane and a region of a
128x512x512 array stored with each chain, sharded and not; ``time_*_per_codec_path`` reads
without the fused C plan, so the ratio shows what the codec-owned stages save once the plan
runs them (before that, both take the per-codec path)."""

import os
import shutil
import sys
import tempfile
import zlib

import numpy as np

import zarrbolt as zb
from zarrbolt.__main__ import synthetic_volume
from zarrbolt._ext import _deflate, _delta, _lz4

from ._layouts import data_root

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CHUNK = (64, 256, 256)
SHAPE = (128, 512, 512)
LE = {"name": "bytes", "configuration": {"endian": "little"}}
ZLIB1 = {"name": "numcodecs.zlib", "configuration": {"level": 1}}
LZ4 = {"name": "numcodecs.lz4", "configuration": {}}
DELTA = {"name": "numcodecs.delta", "configuration": {"dtype": "<u2"}}
CHAINS = {
    "zlib": [LE, ZLIB1],
    "lz4": [LE, LZ4],
    "delta-lz4": [DELTA, LE, LZ4],
    "delta-zlib": [DELTA, LE, ZLIB1],
}


def _chunk() -> np.ndarray:
    return synthetic_volume(CHUNK)


class ZlibChunk:
    params = [[1, 6]]
    param_names = ["level"]

    def setup(self, level):
        self.raw = _chunk().tobytes()
        self.enc = zlib.compress(self.raw, level)

    def time_zarrbolt_encode(self, level):
        _deflate.zlib_compress(self.raw, level)

    def time_python_zlib_encode(self, level):
        zlib.compress(self.raw, level)

    def time_zarrbolt_decode(self, level):
        _deflate.zlib_decompress(self.enc, len(self.raw))

    def time_python_zlib_decode(self, level):
        zlib.decompress(self.enc)

    def track_encoded_size(self, level):
        """Compressed bytes (lower is better, as asv's regression rule assumes; ratio = 8 MiB / this)."""
        return len(_deflate.zlib_compress(self.raw, level))

    track_encoded_size.unit = "bytes"


class LZ4Chunk:
    params = [[1, 8]]
    param_names = ["acceleration"]

    def setup(self, acceleration):
        self.raw = _chunk().tobytes()
        self.enc = _lz4.compress(self.raw, acceleration)

    def time_encode(self, acceleration):
        _lz4.compress(self.raw, acceleration)

    def time_decode(self, acceleration):
        _lz4.decompress(self.enc, len(self.raw))

    def time_decode_prefix_1_plane(self, acceleration):
        _lz4.decompress_prefix(self.enc, len(self.raw), len(self.raw) // CHUNK[0])

    def track_encoded_size(self, acceleration):
        """Compressed bytes (lower is better, as asv's regression rule assumes; ratio = 8 MiB / this)."""
        return len(self.enc)

    track_encoded_size.unit = "bytes"


class DeltaChunk:
    params = [["u2", "i4"]]
    param_names = ["astype"]

    def setup(self, astype):
        self.x = _chunk()
        self.enc = _delta.encode(self.x, astype)
        self.out = np.empty_like(self.x)
        self.enc_out = np.empty_like(self.enc)

    def time_zarrbolt_encode(self, astype):
        _delta.encode(self.x, astype, out=self.enc_out)

    def time_numpy_encode(self, astype):
        flat = self.x.reshape(-1)
        e = self.enc_out.reshape(-1)
        e[:1] = flat[:1]
        e[1:] = np.diff(flat)

    def time_zarrbolt_decode(self, astype):
        _delta.decode(self.enc, "u2", out=self.out)

    def time_numpy_decode(self, astype):
        np.cumsum(self.enc.reshape(-1), out=self.out.reshape(-1))


class ArrayRead:
    params = [sorted(CHAINS), [False, True]]
    param_names = ["chain", "sharded"]
    timeout = 300

    def setup_cache(self):
        root = data_root("numcodecs")
        data = synthetic_volume(SHAPE)
        for name, codecs in CHAINS.items():
            for sharded in (False, True):
                chunks = (64, 128, 128)
                if sharded:
                    codecs_ = [{"name": "sharding_indexed", "configuration": {
                        "chunk_shape": [64, 64, 64], "codecs": codecs, "index_codecs": [LE, {"name": "crc32c"}]}}]
                    chunks = (128, 256, 256)
                else:
                    codecs_ = codecs
                a = zb.create_array(f"{root}/{name}-{int(sharded)}.zarr", shape=SHAPE, dtype="uint16",
                                    chunks=chunks, codecs=codecs_)
                a[...] = data
        return root

    def setup(self, root, chain, sharded):
        self.path = f"{root}/{chain}-{int(sharded)}.zarr"
        self.arr = zb.open_array(self.path, mode="r")

    def time_full(self, root, chain, sharded):
        self.arr[...]

    def time_full_per_codec_path(self, root, chain, sharded):
        with zb.config.set(fused_pipeline=False):
            zb.open_array(self.path, mode="r")[...]

    def time_plane(self, root, chain, sharded):
        self.arr[70]

    def time_roi_64x256x256(self, root, chain, sharded):
        self.arr[30:94, 100:356, 200:456]


class ArrayWrite:
    params = [sorted(CHAINS)]
    param_names = ["chain"]
    timeout = 300

    def setup(self, chain):
        self.data = synthetic_volume((64, 512, 512))
        self.out = tempfile.mkdtemp(prefix="zb-asv-ncw-")

    def teardown(self, chain):
        shutil.rmtree(self.out, ignore_errors=True)

    def time_full(self, chain):
        a = zb.create_array(f"{self.out}/w.zarr", shape=self.data.shape, dtype="uint16", chunks=(64, 128, 128),
                            codecs=CHAINS[chain], overwrite=True)
        a[...] = self.data
