"""Full writes with the fused C encode vs the per-codec path, interleaved and paired.

    python benchmarks/write_paired.py [DATA_DIR] [LAYOUTS] [ROUNDS] [OUT_DIR]

DATA_DIR is an anchors_bench data directory (default /tmp/bench_data/256x1024x1024_seed42); each
layout's array is read once, then written ROUNDS times each way (the order alternating between
rounds) into OUT_DIR (default a temporary directory), each copy deleted after its write.  Prints
the median times and the median of the per-round ratios fused / per-codec."""

import json
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

import zarrbolt as zb
from zarrbolt.metadata import DataType

root = sys.argv[1] if len(sys.argv) > 1 else "/tmp/bench_data/256x1024x1024_seed42"
layouts = sys.argv[2] if len(sys.argv) > 2 else "ab"
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 6
out = sys.argv[4] if len(sys.argv) > 4 else tempfile.mkdtemp(prefix="zb-wpair-")
os.makedirs(out, exist_ok=True)

for lay in layouts:
    p = f"{root}/layout_{lay}.zarr"
    data = np.array(zb.open_array(p, mode="r")[...])
    with open(f"{p}/zarr.json") as f:
        meta = json.load(f)
    dt = DataType.parse(meta["data_type"])

    def write(path):
        a = zb.create_array(path, shape=tuple(meta["shape"]), dtype=dt,
                            chunks=tuple(meta["chunk_grid"]["configuration"]["chunk_shape"]), codecs=meta["codecs"],
                            fill_value=dt.parse_fill_value(meta["fill_value"]),
                            chunk_key_encoding=meta.get("chunk_key_encoding"), overwrite=True)
        a[...] = data

    times = {True: [], False: []}
    for i in range(rounds):
        for fused in ((True, False) if i % 2 else (False, True)):
            dest = f"{out}/{lay}_{i}_{int(fused)}.zarr"
            with zb.config.set(fused_pipeline=fused):
                t = time.perf_counter()
                write(dest)
                times[fused].append(time.perf_counter() - t)
            shutil.rmtree(dest, ignore_errors=True)
    ratios = [a / b for a, b in zip(times[True], times[False])]
    print(f"{lay}: fused {statistics.median(times[True]) * 1e3:.0f} ms, per-codec "
          f"{statistics.median(times[False]) * 1e3:.0f} ms, paired ratio {statistics.median(ratios):.3f}")
