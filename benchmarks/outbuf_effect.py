"""Time and peak memory of every harness workload with the output cache off and on.

The output cache (``output_cache_bytes``, zarrbolt/pipeline/outbuf.py) keeps the memory of large
results the program dropped, for the next large read.  This runs each workload of the anchors
harness (full read, 64³ blocks, planes, 64×512×512 regions, full write) in fresh processes with
``output_cache_bytes=0`` and with ``"auto"`` (the default), interleaved, and prints the median
time per read / write and the peak resident memory the workload added (VmHWM after minus the
resident memory before it; a write's input volume is loaded before that).

    python benchmarks/outbuf_effect.py                                 # /tmp/bench_data/256x1024x1024_seed42
    python benchmarks/outbuf_effect.py /tmp/bench_data/128x512x1024_seed42 --layouts ab --reps 3

A process runs ``--rounds`` rounds of its workload back to back (what a long-lived program
does): the cache can only help from the second full read on.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness_workloads as hw  # noqa: E402

MiB = 1 << 20


def child(path: str, layout: str, workload: str, cache: str, threads: int, rounds: int) -> dict:
    import zarrbolt as zb

    zb.config.set(threads=threads, output_cache_bytes=0 if cache == "off" else "auto")
    root = os.path.dirname(path)
    a = zb.open_array(path, mode="r")
    a[tuple(slice(0, 8) for _ in a.shape)]  # pools and per-thread buffers exist
    data = hw.reference(root, layout) if workload == "write" else None
    sels = hw.selections(a.shape, workload, hw.reads_per_round(workload)) if workload != "write" else []
    out_dir = tempfile.mkdtemp(prefix="zb-outbuf-")
    times = []
    hw.reset_peak()
    before = hw.peak_rss()
    for _ in range(rounds):
        times.append(hw.run_round(a, path, workload, sels, data, out_dir))
    after = hw.peak_rss()
    import shutil

    shutil.rmtree(out_dir, ignore_errors=True)
    from zarrbolt.pipeline import outbuf

    return {"time": statistics.median(times), "times": times, "added": after - before, "peak": after,
            "held": outbuf.held_bytes(), "limit": outbuf.limit()}


def run_child(path, layout, workload, cache, threads, rounds) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", path, layout, workload, cache, str(threads),
           str(rounds)]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        path, layout, workload, cache, threads, rounds = sys.argv[2:8]
        print(json.dumps(child(path, layout, workload, cache, int(threads), int(rounds))))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", nargs="?", default=hw.DEFAULT_ROOT, help="anchors_bench data dir")
    ap.add_argument("--layouts", default="abcde")
    ap.add_argument("--workloads", default=",".join(hw.WORKLOADS))
    ap.add_argument("--write-layouts", default="ab", help="layouts the write workload runs on (the harness's)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=4, help="rounds per process (the cache helps from the 2nd on)")
    ap.add_argument("--reps", type=int, default=2, help="processes per (layout, workload, setting), interleaved")
    ap.add_argument("--json", help="also write the raw results here")
    args = ap.parse_args()
    paths = hw.layouts(args.root, args.layouts)
    if not paths:
        sys.exit(f"no harness layouts under {args.root} (run anchors_bench.py --size ... once)")
    res: dict = {}
    wls = args.workloads.split(",")
    k = 0
    for _ in range(args.reps):
        for layout, p in paths.items():
            for wl in wls:
                if wl == "write" and layout not in args.write_layouts:
                    continue
                k += 1  # which setting goes first alternates
                for cache in (("off", "on") if k % 2 else ("on", "off")):
                    r = run_child(p, layout, wl, cache, args.threads, args.rounds)
                    res.setdefault((layout, wl, cache), []).append(r)
    print(f"{args.root}, {args.threads} threads, {args.rounds} rounds per process, {args.reps} processes each; "
          "time: median per read (per write); added: peak RSS the workload added")
    print("| layout | workload | time, cache off | time, cache on | on/off | added peak, off | added peak, on |")
    print("|---|---|---|---|---|---|---|")
    for layout in paths:
        for wl in wls:
            if (layout, wl, "off") not in res:
                continue
            off, on = res[(layout, wl, "off")], res[(layout, wl, "on")]
            t_off = statistics.median(r["time"] for r in off)
            t_on = statistics.median(r["time"] for r in on)
            a_off = max(r["added"] for r in off) / MiB
            a_on = max(r["added"] for r in on) / MiB
            print(f"| {layout} | {wl} | {t_off * 1e3:.2f} ms | {t_on * 1e3:.2f} ms | {t_on / t_off:.2f} "
                  f"| {a_off:.0f} MiB | {a_on:.0f} MiB |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"|".join(k): v for k, v in res.items()}, f, indent=1)


if __name__ == "__main__":
    main()
