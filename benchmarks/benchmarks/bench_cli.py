"""asv benchmarks of ``zarrbolt cp`` (:func:`zarrbolt.copy_array`): layout a (unsharded 64^3
blosc-lz4) converted to layout b (shards of 64^3 blosc-zstd bitshuffle) on the scaled-down
volume of ``_layouts.py``, beside zarrbolt's own full read of a plus full write of b (the issue's
goal: ``track_ratio`` = (read + write) / cp >= 0.8), at two memory budgets, and its peak memory.
The full-size measurement is ``benchmarks/cp_ratio.py``."""

import shutil
import tempfile
import time

import numpy as np

import zarrbolt as zb

from ._layouts import (
    BLOSC_ZSTD_BIT,
    LAYOUTS,
    SHAPE,
    SHARD,
    data_root,
    volume,
    write_layouts,
)


class CopyAtoB:
    params = [["64M", "1G"]]
    param_names = ["max_memory"]
    timeout = 300
    rounds = 1
    repeat = (1, 5, 4.0)

    def setup_cache(self):
        root = data_root("cli")
        u16 = volume(SHAPE)
        write_layouts(root, u16)
        return root

    def setup(self, root, max_memory):
        self.src = zb.open_array(f"{root}/a.zarr", mode="r")
        self.out = tempfile.mkdtemp(prefix="zb-asv-cp-")
        self.budget = {"64M": 64 << 20, "1G": 1 << 30}[max_memory]

    def teardown(self, root, max_memory):
        shutil.rmtree(self.out, ignore_errors=True)

    def _cp(self):
        zb.copy_array(self.src, f"{self.out}/b.zarr", shards=SHARD, codecs=[BLOSC_ZSTD_BIT],
                      max_memory=self.budget, overwrite=True)

    def time_cp(self, root, max_memory):
        self._cp()

    def peakmem_cp(self, root, max_memory):
        self._cp()

    def track_ratio(self, root, max_memory):
        """(full read of a + full write of b) / cp, medians of 3 interleaved runs."""
        rw, cp = [], []
        for _ in range(3):
            t = time.perf_counter()
            data = self.src[...]
            r = time.perf_counter() - t
            b = zb.create_array(f"{self.out}/w.zarr", shape=SHAPE, overwrite=True, **LAYOUTS["b"])
            t = time.perf_counter()
            b[...] = data
            rw.append(r + time.perf_counter() - t)
            del data
            t = time.perf_counter()
            self._cp()
            cp.append(time.perf_counter() - t)
        return float(np.median(rw) / np.median(cp))

    track_ratio.unit = "ratio"
