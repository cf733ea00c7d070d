"""``zarrbolt demo``: write and read a synthetic microscopy volume and print throughput."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def synthetic_volume(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """A microscopy-like uint16 volume: camera offset + shot-noise-like texture + bright blobs
    ("nuclei") of varied size and intensity on a slowly varying background."""
    rng = np.random.default_rng(seed)
    z, y, x = shape[-3:]
    vol = np.empty(shape, dtype=np.uint16)
    flat = vol.reshape((-1, z, y, x))
    # background: offset 100 + low-frequency illumination falloff + noise (0..31)
    yy = np.linspace(-1, 1, y, dtype=np.float32)[:, None]
    xx = np.linspace(-1, 1, x, dtype=np.float32)[None, :]
    illum = (200 * np.exp(-(yy**2 + xx**2))).astype(np.uint16)
    for v in range(flat.shape[0]):
        for k in range(z):
            plane = flat[v, k]
            plane[...] = rng.integers(0, 32, size=(y, x), dtype=np.uint16)
            plane += 100
            plane += illum
    # blobs
    nblobs = max(1, (z * y * x) // 200_000)
    centers = rng.uniform(0, 1, size=(nblobs, 3)) * np.array([z, y, x])
    radii = rng.uniform(3, 12, size=nblobs)
    peaks = rng.uniform(500, 3000, size=nblobs)
    for (cz, cy, cx), r, pk in zip(centers, radii, peaks):
        lo = [max(0, int(c - 3 * r)) for c in (cz, cy, cx)]
        hi = [min(n, int(c + 3 * r) + 1) for c, n in zip((cz, cy, cx), (z, y, x))]
        gz, gy, gx = np.ogrid[lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]]
        d2 = ((gz - cz) ** 2 + (gy - cy) ** 2 + (gx - cx) ** 2) / (r * r)
        blob = (pk * np.exp(-d2)).astype(np.uint16)
        region = flat[:, lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]]
        np.add(region, blob, out=region, casting="unsafe")
    return vol


def _gbps(nbytes: int, seconds: float) -> str:
    return f"{nbytes / seconds / 1e9:6.2f} GB/s"


def run(args: argparse.Namespace) -> int:
    import zarrbolt as zb

    shape = tuple(int(s) for s in args.shape.split(","))
    chunks = tuple(int(s) for s in args.chunks.split(","))
    shards = tuple(int(s) for s in args.shards.split(",")) if args.shards else None
    if args.threads:
        zb.config.set(threads=args.threads)
    tmp = None
    if args.path:
        path = Path(args.path)
    else:
        tmp = tempfile.mkdtemp(prefix="zarrbolt-demo-")
        path = Path(tmp) / "volume.zarr"
    try:
        print(f"zarrbolt {zb.__version__} demo: synthetic microscopy volume {shape} uint16 "
              f"({np.prod(shape) * 2 / 2**20:.0f} MiB), chunks {chunks}, shards {shards}, blosc zstd+shuffle, "
              f"{zb.config.get('threads')} threads")
        t = time.perf_counter()
        data = synthetic_volume(shape)
        print(f"  generated in {time.perf_counter() - t:.1f} s")
        compressors = [{"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "shuffle",
                                                            "typesize": 2, "blocksize": 0}}]
        arr = zb.create_array(str(path), shape=shape, chunks=chunks, shards=shards, dtype="uint16", compressors=compressors,
                              dimension_names=["z", "y", "x"][-len(shape):] if len(shape) <= 3 else None,
                              overwrite=True)
        t = time.perf_counter()
        arr[...] = data
        tw = time.perf_counter() - t
        stored = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
        print(f"  write  full volume : {tw:7.3f} s  {_gbps(data.nbytes, tw)}  "
              f"(stored {stored / 2**20:.0f} MiB, ratio {data.nbytes / max(stored, 1):.2f})")
        arr = zb.open_array(str(path), mode="r")
        best = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            back = arr[...]
            best = min(best, time.perf_counter() - t)
        print(f"  read   full volume : {best:7.3f} s  {_gbps(data.nbytes, best)}  (best of {args.repeat})")
        if not np.array_equal(back, data):
            print("  VERIFY FAILED: data read back differs from data written", file=sys.stderr)
            return 1
        print("  verify             : OK (bit-exact)")
        rng = np.random.default_rng(1)
        zs = rng.integers(0, shape[0], size=8)
        t = time.perf_counter()
        for z in zs:
            plane = arr[int(z)]
            if not np.array_equal(plane, data[int(z)]):
                print("  VERIFY FAILED: plane differs", file=sys.stderr)
                return 1
        tp = (time.perf_counter() - t) / len(zs)
        print(f"  read   one plane   : {tp * 1e3:7.2f} ms  {_gbps(data[0].nbytes, tp)}")
        if len(shape) == 3:
            roi = tuple(slice(0, min(s, 64)) for s in shape)
            t = time.perf_counter()
            r = arr[roi]
            tr = time.perf_counter() - t
            assert np.array_equal(r, data[roi])
            print(f"  read   ROI {tuple(s.stop for s in roi)} : {tr * 1e3:7.2f} ms")
        return 0
    finally:
        if tmp is not None and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    d = sub.add_parser("demo", help="write and read a synthetic microscopy volume and print throughput")
    d.add_argument("--shape", default="128,1024,1024", help="volume shape (default 128,1024,1024 = 256 MiB)")
    d.add_argument("--chunks", default="64,64,64", help="(inner) chunk shape")
    d.add_argument("--shards", default="128,512,512", help="shard shape ('' for an unsharded array)")
    d.add_argument("--path", default=None, help="where to write (default: a temporary directory)")
    d.add_argument("--threads", type=int, default=0, help="worker threads (default: all cores)")
    d.add_argument("--repeat", type=int, default=3, help="full reads to time (best is reported)")
    d.add_argument("--keep", action="store_true", help="keep the temporary directory")
    d.set_defaults(func=run)
