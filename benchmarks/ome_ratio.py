"""zarrbolt.ome: the pyramid writer's downsampling against numpy, and its peak memory.

1. Kernel ratio: for each dtype and method, the time numpy takes to halve one block the usual way
   (``a.reshape(z/2, 2, y/2, 2, x/2, 2).mean(axis=(1, 3, 5))``; ``.min``/``.max`` likewise;
   ``a[::2, ::2, ::2].copy()`` for nearest; mode has no numpy one-liner and is compared with the
   numpy mean) divided by zarrbolt.ome.downsample's time on the same block (goal: >= 5 for mean).
   Medians of ``--repeat`` runs, interleaved, with 1 thread and with ``--threads``.
2. Peak memory: write_image of a volume larger than its memory bound, in a fresh process each,
   from a zarrbolt array and (when dask is importable) from a dask array over it: peak resident
   memory growth (VmHWM) against the volume's size, the block's size, and the growth of the
   baseline ("copy": zarrbolt's own block-by-block copy of level 0, no pyramid); the pyramid's
   own share is stated as ~2.5 blocks on top of the baseline.

    python benchmarks/ome_ratio.py                          # both parts, default sizes
    python benchmarks/ome_ratio.py --part kernels --block 64,256,256 --repeat 7
    python benchmarks/ome_ratio.py --part memory --volume 128,1024,1024 --shards 64,256,256
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

DTYPES = ["uint8", "uint16", "int16", "uint32", "int32", "float32", "float64"]


def _block(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    rng = np.random.default_rng(0)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 200, shape).astype(dtype)


def _numpy_fn(method: str, a: np.ndarray):
    z, y, x = a.shape
    r = a.reshape(z // 2, 2, y // 2, 2, x // 2, 2)
    if method in ("mean", "mode"):
        return lambda: r.mean(axis=(1, 3, 5))
    if method == "min":
        return lambda: r.min(axis=(1, 3, 5))
    if method == "max":
        return lambda: r.max(axis=(1, 3, 5))
    return lambda: a[::2, ::2, ::2].copy()


def _median_times(fns: dict, repeat: int) -> dict:
    times: dict = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():  # interleaved: drift in machine load hits every contender alike
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def kernels(block: tuple[int, ...], repeat: int, threads: int,
            methods: tuple[str, ...] = ("mean", "nearest", "min", "max", "mode")) -> list[dict]:
    from zarrbolt.ome import downsample

    rows = []
    for dtype in DTYPES:
        a = _block(block, dtype)
        for method in methods:
            if method == "mode" and dtype.startswith("float"):
                continue
            halve = (True, True, True)
            fns = {"numpy": _numpy_fn(method, a),
                   "zb1": lambda m=method, a=a, h=halve: downsample(a, h, m, threads=1),
                   "zbN": lambda m=method, a=a, h=halve: downsample(a, h, m, threads=threads)}
            t = _median_times(fns, repeat)
            rows.append({"dtype": dtype, "method": method, "numpy_ms": t["numpy"] * 1e3, "zb1_ms": t["zb1"] * 1e3,
                         "zbN_ms": t["zbN"] * 1e3, "ratio_1": t["numpy"] / t["zb1"],
                         "ratio_N": t["numpy"] / t["zbN"], "GBps_N": a.nbytes / t["zbN"] / 1e9})
    return rows


CHILD = r"""
import json, sys
import numpy as np
import zarrbolt, zarrbolt.ome as ome

def peak():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024

src_path, dst, kind, chunks, shards = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), json.loads(sys.argv[5])
src = zarrbolt.open_array(src_path, mode="r")
src[(slice(0, 1),) * src.ndim]
ome.write_image(dst + "_warm", np.zeros((16, 16, 16), src.dtype), levels=2)  # imports, pool, buffers
data = src
if kind == "dask":
    import dask.array as da
    data = da.from_array(src, chunks=tuple(src.shards or src.chunks))
before = peak()
if kind == "copy":  # the baseline: zarrbolt's own block-by-block copy of level 0, no pyramid
    from zarrbolt.ome.pyramid import blocks
    out = zarrbolt.create_array(dst, shape=src.shape, dtype=src.dtype, chunks=chunks, shards=shards, overwrite=True)
    for region in blocks(src.shape, shards):
        out[region] = src[region]
    nlevels = 1
else:
    nlevels = len(ome.write_image(dst, data, chunks=chunks, shards=shards, overwrite=True))
after = peak()
print(json.dumps({"before": before, "after": after, "levels": nlevels}))
"""


def memory(volume: tuple[int, ...], chunks: tuple[int, ...], shards: tuple[int, ...], kinds: list[str]) -> list[dict]:
    import zarrbolt
    from zarrbolt.__main__ import synthetic_volume

    rows = []
    with tempfile.TemporaryDirectory(prefix="ome_ratio_") as tmp:
        src_path = os.path.join(tmp, "src.zarr")
        src = zarrbolt.create_array(src_path, shape=volume, dtype="uint16", chunks=chunks, shards=shards)
        slab = max(1, shards[0])
        for z in range(0, volume[0], slab):  # written slab by slab: the volume never sits in memory
            n = min(slab, volume[0] - z)
            src[z:z + n] = synthetic_volume((n,) + tuple(volume[1:]), seed=z)
        nbytes = int(np.prod(volume)) * 2
        block = int(np.prod(shards)) * 2
        for kind in kinds:
            dst = os.path.join(tmp, f"dst_{kind}")
            res = subprocess.run([sys.executable, "-c", CHILD, src_path, dst, kind, json.dumps(list(chunks)),
                                  json.dumps(list(shards))], capture_output=True, text=True, check=True)
            r = json.loads(res.stdout.strip().splitlines()[-1])
            growth = r["after"] - r["before"]
            rows.append({"source": kind, "volume_MiB": nbytes / 2**20, "block_MiB": block / 2**20,
                         "peak_growth_MiB": growth / 2**20, "growth/volume": growth / nbytes,
                         "growth/block": growth / block, "levels": r["levels"]})
    return rows


def _tuple(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(","))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--part", choices=("kernels", "memory", "all"), default="all")
    p.add_argument("--block", type=_tuple, default=(64, 256, 256))
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--methods", default="mean,nearest,min,max,mode", help="comma-separated")
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--volume", type=_tuple, default=(128, 1024, 1024))
    p.add_argument("--chunks", type=_tuple, default=(32, 64, 64))
    p.add_argument("--shards", type=_tuple, default=(64, 256, 256))
    args = p.parse_args()
    if args.part in ("kernels", "all"):
        print(f"block {args.block}, medians of {args.repeat}, N = {args.threads} threads")
        print(f"{'dtype':8} {'method':8} {'numpy ms':>9} {'zb 1t ms':>9} {'zb Nt ms':>9} {'ratio 1t':>9} "
              f"{'ratio Nt':>9} {'GB/s Nt':>8}")
        for r in kernels(args.block, args.repeat, args.threads, tuple(args.methods.split(","))):
            print(f"{r['dtype']:8} {r['method']:8} {r['numpy_ms']:9.2f} {r['zb1_ms']:9.2f} {r['zbN_ms']:9.2f} "
                  f"{r['ratio_1']:9.1f} {r['ratio_N']:9.1f} {r['GBps_N']:8.2f}")
    if args.part in ("memory", "all"):
        try:
            import dask.array  # noqa: F401

            kinds = ["copy", "zarrbolt", "dask"]
        except ImportError:
            kinds = ["copy", "zarrbolt"]
        print(f"\nwrite_image peak memory: volume {args.volume} uint16, chunks {args.chunks}, shards {args.shards}")
        for r in memory(args.volume, args.chunks, args.shards, kinds):
            print(f"  {r['source']:8}: volume {r['volume_MiB']:.0f} MiB, block {r['block_MiB']:.0f} MiB, "
                  f"peak growth {r['peak_growth_MiB']:.0f} MiB = {r['growth/volume']:.2f} x volume = "
                  f"{r['growth/block']:.1f} x block ({r['levels']} levels)")


if __name__ == "__main__":
    main()
