"""Speedup of 1 -> 2 threads of every harness workload, and of two arrays read from two Python threads.

For each layout of the anchors harness data, one process times every workload (full read, 64³
blocks, planes, 64×512×512 regions, full write) with ``threads=1`` and ``threads=2``,
interleaved round by round (the order alternates), and reports the median of the per-round
ratios t(1 thread) / t(2 threads) (goal: >= 1.8 on full reads and writes).  Before every round a
probe times GIL-free work (sha256) in 1 and 2 threads: its 2-thread speedup says how much of the
second core was free (~2.0 idle, ~1.0 when another process keeps a core busy); the table gives
its median next to the ratios.

``--two-arrays``: two independent arrays (two handles of the layout) read in full, once one
after the other on one thread and once at the same time from two Python threads, each with
``threads=1``: the ratio sequential / concurrent is ~2 when nothing global serializes them.

    python benchmarks/thread_scaling.py                                # /tmp/bench_data/256x1024x1024_seed42
    python benchmarks/thread_scaling.py /tmp/bench_data/128x512x1024_seed42 --layouts ab --rounds 9
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness_workloads as hw  # noqa: E402


def scaling(path: str, layout: str, workloads: list[str], rounds: int) -> dict:
    import zarrbolt as zb

    a = zb.open_array(path, mode="r")
    root = os.path.dirname(path)
    data = hw.reference(root, layout) if "write" in workloads else None
    out_dir = tempfile.mkdtemp(prefix="zb-threads-")
    res: dict = {wl: {"ratios": [], 1: [], 2: []} for wl in workloads}
    probes = []
    try:
        for wl in workloads:  # warm up: pools, buffers, page cache
            sels = hw.selections(a.shape, wl, hw.reads_per_round(wl)) if wl != "write" else []
            for t in (1, 2):
                with zb.config.set(threads=t):
                    hw.run_round(a, path, wl, sels, data, out_dir)
        for r in range(rounds):
            probes.append(hw.load_probe())
            for wl in workloads:
                sels = hw.selections(a.shape, wl, hw.reads_per_round(wl), seed=r) if wl != "write" else []
                t = {}
                for n in ((1, 2) if r % 2 == 0 else (2, 1)):
                    with zb.config.set(threads=n):
                        t[n] = hw.run_round(a, path, wl, sels, data, out_dir)
                res[wl][1].append(t[1])
                res[wl][2].append(t[2])
                res[wl]["ratios"].append(t[1] / t[2])
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    return {"workloads": res, "probe": probes}


def two_arrays(path: str, rounds: int, threads: int = 1) -> dict:
    """Sequential vs concurrent full reads of two independent arrays (``threads`` each)."""
    import zarrbolt as zb

    arrs = [zb.open_array(path, mode="r"), zb.open_array(path, mode="r")]
    ratios, probes = [], []
    with zb.config.set(threads=threads):
        for a in arrs:
            a[...]
        for r in range(rounds):
            probes.append(hw.load_probe())
            t = {}
            for how in (("seq", "par") if r % 2 == 0 else ("par", "seq")):
                t0 = time.perf_counter()
                if how == "seq":
                    for a in arrs:
                        a[...]
                else:
                    ts = [threading.Thread(target=a.__getitem__, args=(Ellipsis,)) for a in arrs]
                    for th in ts:
                        th.start()
                    for th in ts:
                        th.join()
                t[how] = time.perf_counter() - t0
            ratios.append(t["seq"] / t["par"])
    return {"ratios": ratios, "probe": probes}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", nargs="?", default=hw.DEFAULT_ROOT, help="anchors_bench data dir")
    ap.add_argument("--layouts", default="abcde")
    ap.add_argument("--workloads", default=",".join(hw.WORKLOADS))
    ap.add_argument("--write-layouts", default="ab", help="layouts the write workload runs on (the harness's)")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median of per-round ratios)")
    ap.add_argument("--two-arrays", default="abc", help="layouts for the two-arrays test ('' to skip)")
    args = ap.parse_args()
    paths = hw.layouts(args.root, args.layouts)
    if not paths:
        sys.exit(f"no harness layouts under {args.root} (run anchors_bench.py --size ... once)")
    wls = args.workloads.split(",")
    print(f"{args.root}: t(1 thread) / t(2 threads), median of {args.rounds} interleaved rounds "
          f"(min-max); probe: sha256 2-thread speedup (2.0 = second core free); cpus {os.cpu_count()}, "
          f"load average at start {os.getloadavg()[0]:.1f}")
    print("| layout | workload | 1 thread | 2 threads | speedup | min-max | probe |")
    print("|---|---|---|---|---|---|---|")
    for layout, p in paths.items():
        mine = [wl for wl in wls if wl != "write" or layout in args.write_layouts]
        r = scaling(p, layout, mine, args.rounds)
        probe = statistics.median(r["probe"])
        for wl in mine:
            w = r["workloads"][wl]
            print(f"| {layout} | {wl} | {statistics.median(w[1]) * 1e3:.2f} ms | {statistics.median(w[2]) * 1e3:.2f} ms "
                  f"| {statistics.median(w['ratios']):.2f} | {min(w['ratios']):.2f}-{max(w['ratios']):.2f} "
                  f"| {probe:.2f} |", flush=True)
    if args.two_arrays:
        print("\nTwo independent arrays, full reads, threads=1 each: t(one after the other) / t(two Python "
              "threads at once)")
        print("| layout | sequential / concurrent | min-max | probe |")
        print("|---|---|---|---|")
        for layout, p in hw.layouts(args.root, args.two_arrays).items():
            r = two_arrays(p, args.rounds)
            print(f"| {layout} | {statistics.median(r['ratios']):.2f} | {min(r['ratios']):.2f}-{max(r['ratios']):.2f} "
                  f"| {statistics.median(r['probe']):.2f} |", flush=True)
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
