"""Peak memory of a full-volume read, as a multiple of the output array's size (target <= 1.2).

Each measurement runs in a fresh Python process: it imports zarrbolt, opens the array, reads one
small region (so lazily created state such as the thread pool and the per-thread buffers already
exists), records the process's peak resident memory, then reads the whole array and records the
peak again.  The ratio is ``(peak after - peak before) / output nbytes``: everything the read
allocates on top of its result, as the operating system sees it (C allocations included, which
tracemalloc would miss).

    python benchmarks/peak_memory.py                                  # anchors_bench data, layouts a-e
    python benchmarks/peak_memory.py /tmp/bench_data/256x1024x1024_seed42 ab --threads 2
    python benchmarks/peak_memory.py --generate 128x512x512           # own synthetic volume

Linux and macOS (peak RSS from getrusage); on Linux VmHWM from /proc is used.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "benchmarks"))
from _peak import measure  # noqa: E402  (shared with the asv benchmarks)

def generate(shape: tuple[int, ...], root: str) -> dict[str, str]:
    import zarrbolt as zb
    from bench_io import LAYOUTS  # the asv layouts (a-d)
    from zarrbolt.__main__ import synthetic_volume

    data = synthetic_volume(shape)
    paths = {}
    for name, lay in LAYOUTS.items():
        chunks = tuple(min(c, s) for c, s in zip(lay["chunks"], shape))
        p = f"{root}/{name}.zarr"
        zb.create_array(p, shape=shape, dtype="uint16", **{**lay, "chunks": chunks})[...] = data
        paths[name] = p
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", nargs="?", default="/tmp/bench_data/256x1024x1024_seed42",
                    help="anchors_bench data dir (layout_<x>.zarr inside)")
    ap.add_argument("layouts", nargs="?", default="abcde")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--generate", metavar="ZxYxX", help="write the asv layouts a-d of this shape to a temp dir")
    ap.add_argument("--limit", type=float, default=1.2, help="exit 1 when a ratio is above this")
    args = ap.parse_args()
    if args.generate:
        tmp = tempfile.mkdtemp(prefix="zb-peakmem-")
        paths = generate(tuple(int(v) for v in args.generate.split("x")), tmp)
    else:
        paths = {k: f"{args.root}/layout_{k}.zarr" for k in args.layouts
                 if os.path.isdir(f"{args.root}/layout_{k}.zarr")}
    if not paths:
        sys.exit(f"no layouts found under {args.root}")
    worst = 0.0
    print(f"| layout | output | peak before | peak after | (after - before) / output, {args.threads} threads |")
    print("|---|---|---|---|---|")
    for name, p in sorted(paths.items()):
        r = measure(p, args.threads)
        worst = max(worst, r["ratio"])
        mib = 1 << 20
        print(f"| {name} | {r['nbytes'] / mib:.0f} MiB | {r['before'] / mib:.0f} MiB | {r['after'] / mib:.0f} MiB "
              f"| {r['ratio']:.3f} |")
    sys.exit(0 if worst <= args.limit else 1)


if __name__ == "__main__":
    main()
