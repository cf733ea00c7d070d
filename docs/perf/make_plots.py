"""The figures and tables of the performance page, from one run of the cross-system harness
(``benchmarks/anchors_bench.py``, run by ``make perf-run``; its ``--out`` JSON is stored beside
this script as ``anchors-results.json``).

    python docs/perf/make_plots.py [RESULTS.json] [--out docs/perf/generated]

Writes, into the output folder (not committed; ``make docs`` runs this before ``mkdocs build``):

* ``<workload>.png``: for each workload, the median time of every system on every layout;
* ``speedup.png``: per workload and layout, the fastest of zarr-python, zarrs and tensorstore
  divided by zarrbolt's time (above 1: zarrbolt is faster): the table's last column, from the
  same medians;
* ``table.md``: the medians as a Markdown table; ``not_ahead.md``: every cell where zarrbolt is
  not ahead, with the reason; ``run.md``: the run's command, setup (size, threads, versions, the
  zarrbolt commit measured, the noise probe); all included by docs/performance.md;
* ``realistic.md``: the runs on the realistic volumes (``anchors-<dataset>.json`` beside this
  script, ``make perf-run`` makes them: fluorescence-like and light-sheet-like data,
  benchmarks/realistic_volumes.py), a table and the command of each.

The reasons come from ``not-ahead.json`` beside this script (keys ``workload:layout``, then
``workload``); a cell within the run's noise (ratio 0.95 or more) is called a tie.  A cell where
zarrbolt is behind by more and no reason is written stops the script: a new run that puts
zarrbolt behind somewhere needs its reason written before the page is published.

matplotlib's Agg backend; no display, nothing fetched."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt

HERE = Path(__file__).resolve().parent
DEFAULT_RESULTS = HERE / "anchors-results.json"
REASONS = HERE / "not-ahead.json"
TIE = 0.95   # fastest reference / zarrbolt at or above this (and below 1): a tie within the noise
REFS = ["zarr-python", "zarrs", "tensorstore"]
ZB = "zarrbolt"
# in the order the bars are drawn: zarrbolt, zarr-python with zarrbolt's pipeline, the references
ORDER = [ZB, "zarr-python+zarrbolt", "zarr-python", "zarr-python-fused", "zarrs", "tensorstore"]
COLORS = {ZB: "#d62728", "zarr-python+zarrbolt": "#ff9896", "zarr-python": "#1f77b4",
          "zarr-python-fused": "#aec7e8", "zarrs": "#2ca02c", "tensorstore": "#9467bd"}
WORKLOADS = [("full_read", "full read"), ("block64", "64³ block at a random position"),
             ("plane_z", "plane arr[z]"), ("plane_z_slice", "plane arr[z:z+1]"),
             ("roi_64x512x512", "region 64×512×512"), ("write", "full write")]


def medians(d: dict) -> dict[tuple[str, str, str], float]:
    """(workload, layout, system) -> median seconds, for every valid measurement."""
    out = {}
    for w in d.get("workloads", []):
        if w.get("stats") and not w.get("invalid"):
            out[(w["workload"], w["layout"], w["system"])] = w["stats"]["median"]
    for w in d.get("writes", []):
        if w.get("stats"):
            out[("write", w["layout"], w["system"])] = w["stats"]["median"]
    return out


def _systems(med: dict) -> list[str]:
    present = {k[2] for k in med}
    return [s for s in ORDER if s in present]


def fmt(t: float | None) -> str:
    if t is None:
        return "–"
    return f"{t * 1e3:.3g} ms" if t < 1 else f"{t:.3g} s"


def plot_workload(med: dict, key: str, title: str, out: Path) -> bool:
    layouts = sorted({k[1] for k in med if k[0] == key})
    systems = [s for s in _systems(med) if any((key, lay, s) in med for lay in layouts)]
    if not layouts or not systems:
        return False
    fig, ax = plt.subplots(figsize=(7, 3.2))
    width = 0.8 / len(systems)
    for i, s in enumerate(systems):
        xs = [j + (i - (len(systems) - 1) / 2) * width for j in range(len(layouts))]
        ys = [med.get((key, lay, s), 0) * 1e3 for lay in layouts]
        ax.bar(xs, ys, width, label=s, color=COLORS.get(s))
    ax.set_xticks(range(len(layouts)), [f"layout {lay}" for lay in layouts])
    ax.set_ylabel("median time (ms), lower is better")
    ax.set_title(title)
    ax.legend(fontsize=7, ncols=min(3, len(systems)))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def ratio(med: dict, key: str, lay: str) -> tuple[float, str] | None:
    """(fastest reference / zarrbolt, the fastest reference) of one cell, or None when zarrbolt
    or every reference is missing: the one number the table and the speedup figure show."""
    zb = med.get((key, lay, ZB))
    refs = {r: med[(key, lay, r)] for r in REFS if (key, lay, r) in med}
    if not zb or not refs:
        return None
    best = min(refs, key=refs.__getitem__)
    return refs[best] / zb, best


def speedups(med: dict) -> list[tuple[str, str, float, list[str]]]:
    """(workload title, layout, fastest reference / zarrbolt, the references measured) where
    zarrbolt and at least one reference were measured."""
    rows = []
    for key, title in WORKLOADS:
        for lay in "abcde":
            r = ratio(med, key, lay)
            if r is not None:
                rows.append((title, lay, r[0], [x for x in REFS if (key, lay, x) in med]))
    return rows


def not_ahead(med: dict, reasons: dict[str, str]) -> str:
    """The cells where zarrbolt is not ahead, each with its reason, as Markdown (see the module
    doc); SystemExit when one behind by more than the noise has no reason."""
    lines, missing = [], []
    for key, title in WORKLOADS:
        for lay in "abcde":
            r = ratio(med, key, lay)
            if r is None or r[0] >= 1:
                continue
            why = reasons.get(f"{key}:{lay}") or reasons.get(key)
            if why is None and r[0] >= TIE:
                why = "a tie: within this run's noise (see the probe above)"
            if why is None:
                missing.append(f"{key}:{lay} ({r[0]:.2f})")
                continue
            lines.append(f"| {title} | {lay} | {r[1]} | {r[0]:.2f} | {why} |")
    if missing:
        raise SystemExit(f"zarrbolt is behind with no reason written in {REASONS.name}: {', '.join(missing)}")
    if not lines:
        return "In this run zarrbolt is ahead in every cell.\n"
    head = ["| workload | layout | fastest reference | fastest reference ÷ zarrbolt | why |", "|---|---|---|---:|---|"]
    return "\n".join(head + lines) + "\n"


def plot_speedup(med: dict, out: Path) -> bool:
    rows = speedups(med)
    if not rows:
        return False
    fig, ax = plt.subplots(figsize=(7, 0.22 * len(rows) + 1.2))
    labels = [f"{t}, {lay}" + (f" (only {refs[0]})" if len(refs) == 1 else "") for t, lay, _, refs in rows]
    vals = [r for _, _, r, _ in rows]
    ax.barh(range(len(rows)), vals, color=[COLORS[ZB] if v >= 1 else "#7f7f7f" for v in vals])
    for i, v in enumerate(vals):
        ax.text(v, i, f" {v:.2f}", va="center", fontsize=6)
    ax.set_xscale("log", base=2)
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}×"))
    ax.set_xlabel("fastest reference ÷ zarrbolt (above 1×: zarrbolt faster)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def table(med: dict) -> str:
    systems = _systems(med)
    lines = ["| workload | layout | " + " | ".join(systems) + " | fastest reference ÷ zarrbolt |",
             "|---|---|" + "---:|" * (len(systems) + 1)]
    for key, title in WORKLOADS:
        for lay in "abcde":
            if not any((key, lay, s) in med for s in systems):
                continue
            r = ratio(med, key, lay)
            lines.append(f"| {title} | {lay} | " + " | ".join(fmt(med.get((key, lay, s))) for s in systems)
                         + f" | {f'{r[0]:.2f}' if r else '–'} |")
    return "\n".join(lines) + "\n"


def command(meta: dict) -> str:
    """The harness command of the run, from the repository root (the checkout's absolute paths
    made relative to it)."""
    args = []
    for a in meta.get("argv", [])[1:]:
        for anchor in ("benchmarks/", "docs/perf/"):
            if anchor in a and (a.startswith("/") or a.startswith(".")):
                a = a[a.index(anchor):]
        args.append(a)
    lines, line = [], "python benchmarks/anchors_bench.py"
    for a in args:
        if a.startswith("--") and len(line) > 60:
            lines.append(line + " \\")
            line = "   "
        line += " " + a
    return "\n".join(lines + [line])


def run_notes(d: dict) -> str:
    """The run's setup, as Markdown: the command, when, what volume, threads, host, versions
    (zarrbolt's commit), noise."""
    meta = d.get("meta", {})
    lines = []
    if meta.get("argv"):
        lines += ["The command (from the repository root; `make perf-run` runs it):", "", "```sh",
                  command(meta), "```", ""]
    if "date" in meta:
        lines.append(f"* run: {meta['date']}, {meta.get('benchmark_s', 0):.0f} s of benchmark")
    zb_versions = ((meta.get("systems") or {}).get(ZB) or {}).get("versions") or {}
    if zb_versions.get("commit"):
        lines.append(f"* zarrbolt measured: commit {zb_versions['commit']}")
    else:
        lines.append("* zarrbolt measured: the commit was not recorded (a run made before the adapter recorded it): "
                     "these are the measurements of the code of the run's date; `make perf-run` measures the "
                     "current code")
    if "shape" in meta:
        shape = "×".join(str(n) for n in meta["shape"])
        lines.append(f"* volume: {shape} uint16 ({meta.get('uncompressed_MiB', 0):.0f} MiB; layout e holds the same data as float32)")
    if "system_threads" in meta:
        lines.append(f"* threads per system: {', '.join(str(t) for t in meta['system_threads'])}; "
                     f"{meta.get('repeats', '?')} interleaved rounds per workload, "
                     f"{meta.get('write_repeats', '?')} per write")
    if "cpu_model" in meta:
        lines.append(f"* host: {meta.get('cpu_count', '?')} × {meta['cpu_model']}, Python {meta.get('python', '?')}")
    probe = meta.get("parallel_probe")
    if probe:
        lines.append("* noise: a GIL-free probe before each round ran 2 threads "
                     f"{probe['median']:.2f}× faster than 1 (median; 10th percentile {probe['p10']:.2f}; "
                     "2.0 on an idle 2-core machine, about 1.0 when the second core is taken by other work)")
    for lay, info in sorted(meta.get("layouts", {}).items()):
        lines.append(f"* layout {lay}: {info['title']} (compression ratio {info['ratio']:.2f})")
    for name, sysinfo in (meta.get("systems") or {}).items():
        versions = ", ".join(f"{k} {v}" for k, v in (sysinfo.get("versions") or {}).items())
        lines.append(f"* `{name}`: {versions or 'versions not recorded'}")
    return "\n".join(lines) + "\n"


REALISTIC = {"fluorescence": "fluorescence-like: cells over a background, Poisson shot noise, 12-bit values",
             "lightsheet": "light-sheet-like: sparse, large empty regions"}


def realistic(here: Path) -> str:
    """The realistic-data section: per dataset run stored beside this script, its volume, the
    medians of every system (the ratio column as in the main table) and its command."""
    parts = []
    for name, what in REALISTIC.items():
        path = here / f"anchors-{name}.json"
        if not path.is_file():
            raise SystemExit(f"{path}: missing (make perf-run measures the realistic datasets)")
        d = json.loads(path.read_text())
        meta = d.get("meta", {})
        if meta.get("dataset") != name:
            raise SystemExit(f"{path}: a run of dataset {meta.get('dataset')!r}, not {name!r}")
        ratios = ", ".join(f"{lay} {info['ratio']:.1f}x" for lay, info in sorted((meta.get("layouts") or {}).items()))
        parts.append(f"### {what[0].upper()}{what[1:]}\n\nCompression ratios of the stored layouts: {ratios}.\n\n"
                     + table(medians(d)) + "\n```sh\n" + command(meta) + "\n```\n")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="?", default=str(DEFAULT_RESULTS))
    p.add_argument("--out", default=str(HERE / "generated"))
    a = p.parse_args(argv)
    d = json.loads(Path(a.results).read_text())
    med = medians(d)
    if not any(k[2] == ZB for k in med):
        raise SystemExit(f"{a.results}: no zarrbolt measurements")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    made = [key for key, title in WORKLOADS if plot_workload(med, key, title, out / f"{key}.png")]
    for key, _ in WORKLOADS:  # a figure the page names but the run lacks is an error, not a gap
        if key not in made:
            raise SystemExit(f"{a.results}: no measurements of workload {key}")
    if not plot_speedup(med, out / "speedup.png"):
        raise SystemExit(f"{a.results}: no workload measured by both zarrbolt and a reference")
    reasons = json.loads(REASONS.read_text(encoding="utf-8")) if REASONS.is_file() else {}
    (out / "table.md").write_text(table(med), encoding="utf-8")
    (out / "not_ahead.md").write_text(not_ahead(med, reasons), encoding="utf-8")
    (out / "run.md").write_text(run_notes(d), encoding="utf-8")
    (out / "realistic.md").write_text(realistic(Path(a.results).resolve().parent), encoding="utf-8")
    print(f"make_plots: {len(made) + 1} figures and 4 tables in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
