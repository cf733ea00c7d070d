"""Before / after in one run of the cross-system harness (``benchmarks/anchors_bench.py``):
two zarrbolt checkouts as two systems, timed in the same interleaved rounds, compared cell by cell.

Adapters (each loads zarrbolt from its checkout's ``src``, built in place for the harness's Python):

    ZB_BEFORE=/path/to/old/checkout ZB_AFTER=/path/to/new/checkout \\
    python benchmarks/anchors_bench.py --systems "" \\
        --adapter benchmarks/anchors_ab.py:make_before --adapter benchmarks/anchors_ab.py:make_after \\
        --size 128x512x1024 --layouts a,b,c,d,e --write-layouts a,b,c,d,e --threads 2 --skip-micro \\
        --workloads full_read,block64,plane_z,plane_z_slice,roi_64x512x512,write --out AB.json

Summary (``python benchmarks/anchors_ab.py AB.json``): per layout and workload the medians, the
median of the per-round ratios after / before (rounds are interleaved, so machine noise hits both
alike; latency workloads pair the reads of the same random positions) and the noise of that ratio
(half the spread between its 25th and 75th percentiles).  A cell is flagged ``SLOWER`` when the
median ratio exceeds 1 + ``--tolerance`` (default 3 %) plus that noise.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import sys
from typing import Any


def _make(which: str, threads: int) -> Any:
    root = os.environ.get(f"ZB_{which.upper()}")
    if not root:
        raise SystemExit(f"set ZB_{which.upper()} to the zarrbolt checkout of the {which!r} system")
    sys.path.insert(0, os.path.join(root, "src"))
    spec = importlib.util.spec_from_file_location(f"zb_anchors_adapter_{which}",
                                                  os.path.join(root, "benchmarks", "anchors_adapter.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    adapter = mod.make_adapter(threads)
    import zarrbolt

    if not os.path.realpath(zarrbolt.__file__).startswith(os.path.realpath(root)):
        raise SystemExit(f"zarrbolt came from {zarrbolt.__file__}, not {root}")
    return dataclasses.replace(adapter, name=f"zarrbolt-{which}")


def make_before(threads: int) -> Any:
    """The ``zarrbolt-before`` system: zarrbolt of ``$ZB_BEFORE``."""
    return _make("before", threads)


def make_after(threads: int) -> Any:
    """The ``zarrbolt-after`` system: zarrbolt of ``$ZB_AFTER``."""
    return _make("after", threads)


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def _fmt(t: float) -> str:
    return f"{t * 1e3:.3g} ms" if t < 1 else f"{t:.3g} s"


def summarize(path: str, tolerance: float) -> int:
    d = json.load(open(path))
    rows = [(w["layout"], w["workload"], w["system"], w["samples"]) for w in d["workloads"]]
    rows += [(w["layout"], "write", w["system"], w["samples"]) for w in d["writes"] if w.get("verified", True)
             or "differ" in str(w.get("verify_detail", ""))]
    cells: dict[tuple[str, str], dict[str, list[float]]] = {}
    for layout, wl, system, samples in rows:
        if system in ("zarrbolt-before", "zarrbolt-after") and samples:
            cells.setdefault((layout, wl), {})[system] = [float(s) for s in samples]
    print("| layout | workload | before | after | after / before (paired median) | noise | |")
    print("|---|---|---|---|---|---|---|")
    slower = 0
    for (layout, wl), by in sorted(cells.items()):
        if len(by) != 2:
            continue
        b, a = by["zarrbolt-before"], by["zarrbolt-after"]
        ratios = [y / x for x, y in zip(b, a) if x > 0]
        med = _quantile(ratios, 0.5)
        noise = (_quantile(ratios, 0.75) - _quantile(ratios, 0.25)) / 2
        flag = "SLOWER" if med > 1 + tolerance + noise else ""
        slower += bool(flag)
        print(f"| {layout} | {wl} | {_fmt(_quantile(b, 0.5))} | {_fmt(_quantile(a, 0.5))} | {med:.3f} | "
              f"±{noise:.3f} | {flag} |")
    probes = [p["speedup"] for p in d.get("probe", []) if isinstance(p, dict) and "speedup" in p]
    if probes:
        print(f"\n2-core probe: median speedup {_quantile(probes, 0.5):.2f}, 10th percentile "
              f"{_quantile(probes, 0.1):.2f} ({len(probes)} rounds)")
    return 1 if slower else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="the harness's --out JSON")
    ap.add_argument("--tolerance", type=float, default=0.03, help="slower than this (plus the noise) is flagged")
    args = ap.parse_args()
    return summarize(args.results, args.tolerance)


if __name__ == "__main__":
    sys.exit(main())
