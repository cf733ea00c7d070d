"""``zarrbolt cp`` against zarrbolt's own full read + full write (issue 23's speed goal), and the
peak memory of ``cp`` at several ``--max-memory`` budgets.

The source is the demo volume (``zarrbolt demo``'s synthetic microscopy data, 128x1024x1024
uint16 = 256 MiB by default) in layout a (unsharded 64^3 chunks, blosc lz4 + shuffle); the
destination is layout b (shards of 256x512x512 holding 64^3 chunks, blosc zstd level 3 +
bitshuffle, crc32c index).  Times, medians of ``--repeat`` interleaved runs:

  R  = full read of the source (``a[...]``)
  W  = full write of the volume into a new layout-b array (``b[...] = data``)
  C  = ``zarrbolt.copy_array(a, dst, shards=..., codecs=...)``

goal: (R + W) / C >= 0.8, in wall time and in CPU time of the process (all threads; steadier
than wall time on a shared machine).  Peak memory: each ``cp`` runs in a child process, which reports its
peak resident set (``VmHWM``, Linux) minus its resident set just before the copy, beside the
``--max-memory`` given (a line "needs" when the copy said the budget is too small for one shard).

    PYTHONPATH=src python benchmarks/cp_ratio.py [--shape 128,1024,1024] [--repeat 3]
        [--memory 128M,256M,512M,1G,2G] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SHARD = (256, 512, 512)
CHUNK = (64, 64, 64)
LE = {"name": "bytes", "configuration": {"endian": "little"}}
LZ4 = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2,
                                          "blocksize": 0}}
ZSTD_BIT = {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle",
                                               "typesize": 2, "blocksize": 0}}

CHILD = r"""
import json, sys, time
import zarrbolt as zb
src, dst, mem, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) or None
def status(field):
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss of the forking parent across exec
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
before = status("VmRSS")
t = time.perf_counter()
rep = zb.copy_array(src, dst, shards=%r, codecs=[%r], max_memory=mem, threads=threads, overwrite=True)
dt = time.perf_counter() - t
peak = status("VmHWM")
print(json.dumps({"seconds": dt, "peak": peak, "before": before, "block": rep.max_block_bytes, "notes": rep.notes}))
""" % (SHARD, ZSTD_BIT)  # noqa: UP031 - the child script is full of braces


def _bytes(text: str) -> int:
    t = text.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1], 1)
    return int(float(t[:-1] if t[-1] in "KMG" else t) * mult)


def make_source(root: str, shape: tuple[int, ...]):
    import zarrbolt as zb
    from zarrbolt.cli.demo import synthetic_volume

    data = synthetic_volume(shape)
    a = zb.create_array(os.path.join(root, "a.zarr"), shape=shape, dtype="uint16", chunks=CHUNK,
                        codecs=[LE, LZ4], overwrite=True)
    a[...] = data
    return data


def _cpu() -> float:
    """CPU seconds of this process, all threads (user + system)."""
    t = os.times()
    return t.user + t.system


def _timed(fn) -> tuple[float, float]:
    c, t = _cpu(), time.perf_counter()
    fn()
    return time.perf_counter() - t, _cpu() - c


def time_read_write_copy(root: str, data, threads: int | None) -> tuple[tuple[float, float], ...]:
    """((wall, cpu) of the read, of the write, of the copy)."""
    import zarrbolt as zb

    src = zb.open_array(os.path.join(root, "a.zarr"), mode="r")
    r = _timed(lambda: src[...])
    inner = [LE, ZSTD_BIT]
    b = zb.create_array(os.path.join(root, "b_write.zarr"), shape=data.shape, dtype="uint16", chunks=CHUNK,
                        shards=SHARD, serializer=inner[0], compressors=[inner[1]], overwrite=True)

    def write():
        b[...] = data

    w = _timed(write)
    c = _timed(lambda: zb.copy_array(src, os.path.join(root, "b_cp.zarr"), shards=SHARD, codecs=[ZSTD_BIT],
                                     overwrite=True, threads=threads))
    return r, w, c


def peak_memory(root: str, mem: int, threads: int | None) -> dict:
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-c", CHILD, os.path.join(root, "a.zarr"), os.path.join(root, "m.zarr"),
                          str(mem), str(threads or 0)], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", default="128,1024,1024")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--memory", default="128M,256M,512M,1G,2G")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--root", default=None, help="working directory (default: a temporary one)")
    args = p.parse_args()
    import zarrbolt as zb

    if args.threads:
        zb.config.set(threads=args.threads)
    shape = tuple(int(s) for s in args.shape.split(","))
    root = args.root or tempfile.mkdtemp(prefix="zb-cp-ratio-")
    try:
        data = make_source(root, shape)
        runs = [time_read_write_copy(root, data, args.threads) for _ in range(args.repeat)]
        med = [[statistics.median(run[i][j] for run in runs) for j in (0, 1)] for i in range(3)]
        (r, rc), (w, wc), (c, cc) = med
        mib = data.nbytes / 2**20
        print(f"zarrbolt {zb.__version__}, volume {shape} uint16 ({mib:.0f} MiB), {zb.config.get('threads')} threads, "
              f"a (64^3 blosc-lz4) -> b (shards {SHARD} of 64^3 blosc-zstd bitshuffle); medians of {args.repeat}")
        print("                         wall s    cpu s")
        print(f"  read  a[...]        : {r:7.3f}  {rc:7.3f}")
        print(f"  write b[...] = data : {w:7.3f}  {wc:7.3f}")
        print(f"  cp a -> b           : {c:7.3f}  {cc:7.3f}")
        print(f"  (read + write) / cp : {(r + w) / c:7.2f}  {(rc + wc) / cc:7.2f}   (goal >= 0.8)")
        print("  wall (read, write, cp) per run:",
              ", ".join(f"({a[0]:.2f}, {b[0]:.2f}, {x[0]:.2f})" for a, b, x in runs))
        del data
        print("  --max-memory   peak RSS above the start   largest block   cp time")
        for text in args.memory.split(","):
            m = peak_memory(root, _bytes(text), args.threads)
            print(f"  {text:>12}   {(m['peak'] - m['before']) / 2**20:10.0f} MiB              "
                  f"{m['block'] / 2**20:7.0f} MiB   {m['seconds']:6.2f} s")
            for note in m["notes"]:
                print(f"                 needs: {note.split('needs about ')[1].split(' (')[0]}")
    finally:
        if args.root is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
