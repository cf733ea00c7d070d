"""End-to-end asv benchmarks: the anchors-harness workloads on a smaller synthetic volume.

Layouts follow ``../shared/bench/anchors_bench.py`` (a: 64^3 blosc-lz4 chunks; b: 64^3 inner chunks
in shards, blosc-zstd bitshuffle; c: 128^3 gzip; d: shards with a transposed zstd inner chain),
on a 128x512x512 uint16 volume (64 MiB) so a run stays short.  Full read, full write, a 2-D
plane ``arr[z]``, a 64x256x256 region of interest and an unaligned 64^3 block."""

import os
import shutil
import sys
import tempfile

import numpy as np

import zarrbolt as zb
from zarrbolt.__main__ import synthetic_volume

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SHAPE = (128, 512, 512)
LE = {"name": "bytes", "configuration": {"endian": "little"}}
LAYOUTS = {
    "a": dict(chunks=(64, 64, 64), codecs=[LE, {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}]),
    "b": dict(chunks=(128, 256, 256), codecs=[{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [64, 64, 64], "index_codecs": [LE, {"name": "crc32c"}], "index_location": "end",
        "codecs": [LE, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle",
                                                          "typesize": 2, "blocksize": 0}}]}}]),
    "c": dict(chunks=(128, 128, 128), codecs=[LE, {"name": "gzip", "configuration": {"level": 5}}]),
    "d": dict(chunks=(128, 256, 256), codecs=[{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [64, 64, 64], "index_codecs": [LE, {"name": "crc32c"}], "index_location": "end",
        "codecs": [{"name": "transpose", "configuration": {"order": [2, 1, 0]}}, LE,
                   {"name": "zstd", "configuration": {"level": 3, "checksum": False}}]}}]),
}


class _Volume:
    params = [sorted(LAYOUTS)]
    param_names = ["layout"]
    timeout = 300

    def setup_cache(self):
        root = tempfile.mkdtemp(prefix="zb-asv-")
        data = synthetic_volume(SHAPE)
        for name, lay in LAYOUTS.items():
            a = zb.create_array(f"{root}/{name}.zarr", shape=SHAPE, dtype="uint16", **lay)
            a[...] = data
        np.save(f"{root}/ref.npy", data)
        return root

    def setup(self, root, layout):
        self.root = root
        self.arr = zb.open_array(f"{root}/{layout}.zarr", mode="r")
        self.rng = np.random.default_rng(0)


class Read(_Volume):
    def time_full(self, root, layout):
        self.arr[...]

    def time_plane(self, root, layout):
        self.arr[int(self.rng.integers(0, SHAPE[0]))]

    def time_roi_64x256x256(self, root, layout):
        z, y, x = (int(self.rng.integers(0, s - c)) for s, c in zip(SHAPE, (64, 256, 256)))
        self.arr[z:z + 64, y:y + 256, x:x + 256]

    def time_block_64(self, root, layout):
        z, y, x = (int(self.rng.integers(0, s - 64)) for s in SHAPE)
        self.arr[z:z + 64, y:y + 64, x:x + 64]

    def time_open(self, root, layout):
        zb.open_array(f"{root}/{layout}.zarr", mode="r")

    def peakmem_full(self, root, layout):
        self.arr[...]

    def track_peak_ratio_full(self, root, layout):
        """Peak memory a full read adds, as a multiple of the output size (target <= 1.2)."""
        from _peak import measure

        return measure(f"{root}/{layout}.zarr", 2)["ratio"]

    track_peak_ratio_full.unit = "x output"


class Write(_Volume):
    def setup(self, root, layout):
        super().setup(root, layout)
        self.data = np.load(f"{root}/ref.npy")
        self.out = tempfile.mkdtemp(prefix="zb-asv-w-")

    def teardown(self, root, layout):
        shutil.rmtree(self.out, ignore_errors=True)

    def time_full(self, root, layout):
        a = zb.create_array(f"{self.out}/w.zarr", shape=SHAPE, dtype="uint16", overwrite=True, **LAYOUTS[layout])
        a[...] = self.data

    def time_full_per_codec_path(self, root, layout):
        """The same write without the fused C encode (each chunk through the Python codec
        chain): the ratio to time_full is what csrc/encode.c saves."""
        with zb.config.set(fused_pipeline=False):
            a = zb.create_array(f"{self.out}/w.zarr", shape=SHAPE, dtype="uint16", overwrite=True, **LAYOUTS[layout])
            a[...] = self.data
