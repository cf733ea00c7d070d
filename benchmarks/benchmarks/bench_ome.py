"""asv benchmarks of zarrbolt.ome: the pyramid writer's 2x downsampling against numpy's
``reshape(...).mean(...)`` of the same block (goal: >= 5x), and a whole small pyramid write
against writing its level 0 alone.
Speed goals are checked here and in ../ome_ratio.py, never in unit tests."""

import os
import shutil
import tempfile

import numpy as np

from zarrbolt.ome import downsample, write_image


class Downsample:
    params = [["uint8", "uint16", "int32", "float32", "float64"], ["mean", "nearest", "max"]]  # noqa: RUF012
    param_names = ["dtype", "method"]  # noqa: RUF012
    timeout = 120

    def setup(self, dtype, method):
        rng = np.random.default_rng(0)
        self.a = (rng.integers(0, 200, (64, 256, 256))).astype(dtype)
        self.r = self.a.reshape(32, 2, 128, 2, 128, 2)

    def time_zarrbolt(self, dtype, method):
        downsample(self.a, (True, True, True), method)

    def time_zarrbolt_1thread(self, dtype, method):
        downsample(self.a, (True, True, True), method, threads=1)

    def time_numpy(self, dtype, method):
        if method == "mean":
            self.r.mean(axis=(1, 3, 5))
        elif method == "max":
            self.r.max(axis=(1, 3, 5))
        else:
            self.a[::2, ::2, ::2].copy()


class WritePyramid:
    timeout = 300

    def setup(self):
        rng = np.random.default_rng(0)
        self.data = rng.integers(0, 4000, (64, 512, 512)).astype("uint16")
        self.tmp = tempfile.mkdtemp(prefix="bench_ome_")

    def teardown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_write_image(self):
        write_image(os.path.join(self.tmp, "img"), self.data, chunks=32, shards=128, overwrite=True)

    def time_write_level0_only(self):
        """The baseline: the same write without the smaller levels (the pyramid costs ~1.2x)."""
        write_image(os.path.join(self.tmp, "img0"), self.data, chunks=32, shards=128, levels=1, overwrite=True)
