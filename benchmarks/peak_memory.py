"""Peak memory of a full-volume read and of a read-then-write round trip, against the goals.

Each measurement runs in a fresh Python process: it imports zarrbolt, opens the array, reads one
small region (so lazily created state such as the thread pool and the per-thread buffers already
exists), records its resident memory, then reads the whole array (and, for the round trip,
writes the result to a new array of the same metadata) and records the peak resident memory
(VmHWM on Linux, reset before the operation; getrusage elsewhere).  C allocations count too
(tracemalloc would miss them).

Goals (issue 22), on what the operation adds to the process's resident memory at its peak
(``added``: peak - resident before; the interpreter, numpy and zarrbolt are ~40-60 MiB before):
a full read at most 1.1 x the output + 64 MiB; a round trip at most 1.3 x the volume.

    python benchmarks/peak_memory.py                                  # anchors_bench data, layouts a-e
    python benchmarks/peak_memory.py /tmp/bench_data/128x512x1024_seed42 ab --threads 2
    python benchmarks/peak_memory.py --generate 128x512x512           # own synthetic volume
    python benchmarks/peak_memory.py --cache off                      # with output_cache_bytes=0

Exits 1 when a peak is over its goal.
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
    ap.add_argument("--cache", default="default", help="output_cache_bytes: default, off, or bytes")
    ap.add_argument("--modes", default="read,roundtrip")
    args = ap.parse_args()
    if args.generate:
        tmp = tempfile.mkdtemp(prefix="zb-peakmem-")
        paths = generate(tuple(int(v) for v in args.generate.split("x")), tmp)
    else:
        paths = {k: f"{args.root}/layout_{k}.zarr" for k in args.layouts
                 if os.path.isdir(f"{args.root}/layout_{k}.zarr")}
    if not paths:
        sys.exit(f"no layouts found under {args.root}")
    ok = True
    mib = 1 << 20
    print(f"{args.threads} threads, output cache {args.cache}; peak = the process's peak resident memory")
    print("| layout | operation | volume | resident before | peak | added | added / volume | goal (added) | within |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, p in sorted(paths.items()):
        for mode in args.modes.split(","):
            r = measure(p, args.threads, mode, args.cache)
            ok &= r["ok"]
            print(f"| {name} | {mode} | {r['nbytes'] / mib:.0f} MiB | {r['before'] / mib:.0f} MiB "
                  f"| {r['after'] / mib:.0f} MiB | {r['added'] / mib:.0f} MiB | {r['ratio']:.3f} "
                  f"| {r['goal'] / mib:.0f} MiB "
                  f"| {'yes' if r['ok'] else 'NO'} |")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
