"""Plane reads ``arr[z]`` with the fused pipeline (partial blosc decode) vs the general path.

    python benchmarks/plane_reads.py /tmp/bench_data/256x1024x1024_seed42   # anchors_bench data dir
"""

import sys
import time

import zarrbolt as zb

root = sys.argv[1] if len(sys.argv) > 1 else "/tmp/bench_data/256x1024x1024_seed42"
for lay in sys.argv[2] if len(sys.argv) > 2 else "ab":
    p = f"{root}/layout_{lay}.zarr"
    for fused in (True, False):
        with zb.config.set(fused_pipeline=fused):
            a = zb.open_array(p, mode="r")
        ts = []
        for z in range(5, a.shape[0], max(1, a.shape[0] // 12)):
            t = time.perf_counter()
            a[z]
            ts.append(time.perf_counter() - t)
        print(lay, "fused" if fused else "general", f"plane median {sorted(ts)[len(ts) // 2] * 1e3:.1f} ms")
