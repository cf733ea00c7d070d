"""The closing-note tables from one run of ``benchmarks/anchors_bench.py`` (its ``--out`` JSON).

    python benchmarks/anchors_summary.py RESULTS.json

Prints, per workload and layout, the medians of zarrbolt and the three reference systems and
the ratio fastest reference ÷ zarrbolt (the issue's "x times faster"), then the read and write
efficiencies (raw codec time ÷ end-to-end time), the 2-core probe's noise figures and every
write sample in round order."""

from __future__ import annotations

import json
import sys

REFS = ["tensorstore", "zarrs", "zarr-python"]
WORKLOADS = [("full_read", "full read"), ("block64", "64^3 block"), ("plane_z", "plane arr[z]"),
             ("plane_z_slice", "plane arr[z:z+1]"), ("roi_64x512x512", "ROI 64x512x512"), ("write", "full write")]


def fmt(t: float | None) -> str:
    if t is None:
        return "-"
    return f"{t * 1e3:.3g} ms" if t < 1 else f"{t:.3g} s"


def main(path: str) -> None:
    d = json.load(open(path))
    med = {(w["layout"], w["workload"], w["system"]): w["stats"]["median"] for w in d["workloads"]}
    med.update({(w["layout"], "write", w["system"]): w["stats"]["median"] for w in d["writes"]})
    print("| workload | layout | zarrbolt | " + " | ".join(REFS) + " | fastest ref / zarrbolt |")
    print("|---|---|---|" + "---|" * len(REFS) + "---|")
    for key, title in WORKLOADS:
        for lay in "abcde":
            zb = med.get((lay, key, "zarrbolt"))
            if zb is None:
                continue
            refs = [med.get((lay, key, r)) for r in REFS]
            best = min((t for t in refs if t is not None), default=None)
            ratio = f"{best / zb:.2f}" if best is not None else "only zarrbolt"
            print(f"| {title} | {lay} | {fmt(zb)} | " + " | ".join(fmt(t) for t in refs) + f" | {ratio} |")
    print()
    for kind in ("efficiency", "write_efficiency"):
        rows = [f"{e['layout']} {e['system']} {e['efficiency_paired_median']:.2f}" for e in d.get(kind, [])
                if e["system"] in ["zarrbolt"] + REFS]
        print(f"{kind} (paired median): " + "; ".join(rows))
    probe = sorted(p["speedup"] for p in d.get("probe", []))
    if probe:
        low = sum(p < 1.5 for p in probe) / len(probe)
        print(f"2-core probe: median speedup {probe[len(probe) // 2]:.2f}, {low:.0%} of probes below 1.5")
    for w in d["writes"]:
        print(f"write samples {w['layout']} {w['system']}: " + " / ".join(f"{s * 1e3:.0f}" for s in w["samples"]) + " ms")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "anchors_results.json")
