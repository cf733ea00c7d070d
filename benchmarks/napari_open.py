"""zarrbolt's napari reader against napari-ome-zarr on one sharded OME-Zarr image, in napari's
headless ViewerModel with the canvas emulated (the draw call napari's vispy canvas makes):

- first plane: from ``viewer.open(path, plugin=...)`` (the plugin's modules imported then; napari's
  own first-layer imports done before, with a small numpy layer) until napari has the plane it
  shows with the whole image fitted to a CANVAS x CANVAS screen (napari's level for that: the
  smallest with at least one pixel per screen pixel);
- z-steps at full resolution: zoomed in on a CANVAS x CANVAS region of level 0, one step along z
  after another (``viewer.dims.set_current_step``), each timed until napari has the new plane;
- z-steps at a low level: zoomed out ZOOM_OUT times further (the image a quarter of the screen
  wide by default: napari shows a level ZOOM_OUT times smaller), one plane of that level per step;
- peak memory: the process's peak resident memory above what it used before opening.

Each plugin runs in a fresh process, after ``echo 3 > /proc/sys/vm/drop_caches`` (needs root; when
that fails the run says "warm page cache").  Both plugins read with their defaults: napari-ome-zarr
through ome-zarr-py, dask (with napari's dask cache) and zarr-python's own pipeline; zarrbolt's
plugin through zarrbolt (with its chunk-block cache).

    python benchmarks/napari_open.py write /data/napari_bench.ome.zarr --gib 3   # the image
    python benchmarks/napari_open.py run /data/napari_bench.ome.zarr --repeat 3  # the table
    python benchmarks/napari_open.py smoke                                        # tiny, both once

Needs napari, npe2, napari-ome-zarr (the reference venv) and zarrbolt importable.
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLUGINS = ("zarrbolt", "napari-ome-zarr")


# --------------------------------------------------------------------------------------- writing
def write(path: str, gib: float, seed: int = 0) -> None:
    """A fluorescence-like uint16 volume of about ``gib`` GiB as a sharded OME-Zarr 0.5 pyramid
    (64^3 chunks in 256^3 shards, zarrbolt's defaults), with an omero window."""
    sys.path.insert(0, str(HERE))
    import realistic_volumes

    import zarrbolt.ome as ome

    side = 2048 if gib >= 1 else 256
    depth = max(16, round(gib * 2**30 / (2 * side * side)))
    vol = realistic_volumes.fluorescence((depth, side, side), seed)
    t = time.perf_counter()
    img = ome.write_image(path, vol, axes="zyx", units="micrometer", scale=(2.0, 0.5, 0.5), overwrite=True,
                          name="cells", omero={"channels": [{"label": "cells", "color": "FFFFFF", "active": True,
                                                             "window": {"start": 100, "end": 1500, "min": 0,
                                                                        "max": 4095}}]})
    print(f"{path}: {img!r} in {time.perf_counter() - t:.1f} s, level 0 {img.levels[0].nbytes / 2**30:.2f} GiB")


# --------------------------------------------------------------------------------------- one run
def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _child(path: str, plugin: str, canvas: int, steps: int, zoom_out: int) -> dict:
    import importlib.util
    import resource

    import numpy as np
    import npe2
    from napari.components import ViewerModel

    pm = npe2.PluginManager.instance()
    pm.discover()
    if plugin == "zarrbolt" and "zarrbolt" not in {m.name for m in pm.iter_manifests()}:
        # an in-place build has no entry-point metadata: the package's own manifest, found without
        # importing zarrbolt (its import belongs to the timed open)
        spec = importlib.util.find_spec("zarrbolt")
        assert spec is not None and spec.submodule_search_locations
        pm.register(npe2.PluginManifest.from_file(Path(spec.submodule_search_locations[0]) / "napari" / "napari.yaml"))
    viewer = ViewerModel()
    # napari's own first-layer costs (it imports scipy and xarray when it makes its first image
    # layer) are not the plugins': a small numpy layer takes them first
    viewer.add_image(np.zeros((4, 16, 16), np.uint16), contrast_limits=(0, 1))
    viewer.layers.clear()
    rss0 = _rss()
    t0 = time.perf_counter()
    layers = viewer.open(path, plugin=plugin)
    t_open = time.perf_counter() - t0
    layer = next(la for la in layers if la._type_string == "image")
    shape0 = np.array(layer.data[0].shape)
    scale = np.array(layer.scale)
    world = shape0 * scale  # extent of level 0

    def draw(y0: float, x0: float, h: float, w: float) -> None:
        """What napari's canvas does when it shows world region (y0, x0, h, w) on the screen."""
        layer._update_draw(scale_factor=max(h, w) / canvas,
                           corner_pixels_displayed=np.array([[y0, x0], [y0 + h, x0 + w]]),
                           shape_threshold=(canvas, canvas))

    draw(0.0, 0.0, world[-2], world[-1])
    shown = np.asarray(layer._slice.image.raw)
    t_first = time.perf_counter() - t0
    out = {"plugin": plugin, "t_open": t_open, "t_first": t_first, "first_level": int(layer.data_level),
           "first_shape": list(shown.shape), "level_shapes": [list(d.shape) for d in layer.data]}

    def zsteps(level_factor: int) -> list[float]:
        zmax = int(shape0[0])
        start = zmax // 3
        times = []
        for i in range(1, steps + 1):
            z = start + i * level_factor
            if z >= zmax:
                break
            t = time.perf_counter()
            viewer.dims.set_current_step(0, z)
            np.asarray(layer._slice.image.raw)
            times.append(time.perf_counter() - t)
        return times

    # zoomed out: the image in 1/zoom_out of the screen
    draw(0.0, 0.0, world[-2] * zoom_out, world[-1] * zoom_out)
    low_level = int(layer.data_level)
    low_factor = int(round(layer.downsample_factors[low_level][0]))
    low_shape = list(np.asarray(layer._slice.image.raw).shape)
    out["low"] = {"level": low_level, "shape": low_shape, "steps": zsteps(low_factor)}
    # zoomed in: a canvas of level-0 pixels around the centre
    h, w = canvas * scale[-2], canvas * scale[-1]
    draw(world[-2] / 2 - h / 2, world[-1] / 2 - w / 2, h, w)
    full_shape = list(np.asarray(layer._slice.image.raw).shape)
    out["full"] = {"level": int(layer.data_level), "shape": full_shape, "steps": zsteps(1)}
    out["rss_before_open"] = rss0
    out["peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return out


def _drop_caches() -> str | None:
    """None when the page cache was dropped, else why not."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return None
    except OSError as e:
        return f"{type(e).__name__}: {e}"


def _run_one(path: str, plugin: str, canvas: int, steps: int, zoom_out: int, cold: bool) -> dict:
    why = _drop_caches() if cold else "not asked (--warm)"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    cmd = [sys.executable, __file__, "_child", path, plugin, str(canvas), str(steps), str(zoom_out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"{plugin} run failed:\n{proc.stderr[-4000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["page_cache"] = "cold" if why is None else f"warm page cache ({why})"
    return res


# --------------------------------------------------------------------------------------- the table
def _ms(x: float) -> str:
    return f"{x * 1e3:.1f} ms"


def summarize(runs: list[dict]) -> dict:
    by: dict[str, dict] = {}
    for p in PLUGINS:
        rs = [r for r in runs if r["plugin"] == p]
        if not rs:
            continue
        by[p] = {
            "first plane": statistics.median(r["t_first"] for r in rs),
            "z-step full res (median)": statistics.median(statistics.median(r["full"]["steps"]) for r in rs),
            "z-step full res (mean)": statistics.median(statistics.mean(r["full"]["steps"]) for r in rs),
            "z-step full res (max)": statistics.median(max(r["full"]["steps"]) for r in rs),
            "z-step low level (median)": statistics.median(statistics.median(r["low"]["steps"]) for r in rs),
            "z-step low level (mean)": statistics.median(statistics.mean(r["low"]["steps"]) for r in rs),
            "peak memory": statistics.median(r["peak_rss"] - r["rss_before_open"] for r in rs),
        }
    return by


def table(runs: list[dict]) -> str:
    by = summarize(runs)
    r0 = runs[0]
    lines = [f"page cache: {sorted({r['page_cache'] for r in runs})}; first plane at level {r0['first_level']} "
             f"{r0['first_shape']}, full-resolution view {r0['full']['shape']} of level {r0['full']['level']}, "
             f"low level {r0['low']['level']} {r0['low']['shape']}; {len(runs) // max(1, len(by))} run(s) each",
             "", "| measure | zarrbolt | napari-ome-zarr | napari-ome-zarr / zarrbolt |", "|---|---:|---:|---:|"]
    for k in by.get("zarrbolt", by.get("napari-ome-zarr", {})):
        a, b = by.get("zarrbolt", {}).get(k), by.get("napari-ome-zarr", {}).get(k)
        fmt = (lambda v: f"{v / 2**20:.0f} MiB") if k == "peak memory" else _ms
        ratio = f"{b / a:.2f}x" if a and b else "-"
        lines.append(f"| {k} | {fmt(a) if a is not None else '-'} | {fmt(b) if b is not None else '-'} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write", help="write the benchmark image")
    w.add_argument("path")
    w.add_argument("--gib", type=float, default=3.0, help="size of level 0 (default 3 GiB)")
    w.add_argument("--seed", type=int, default=0)
    r = sub.add_parser("run", help="time both plugins on an image")
    r.add_argument("path")
    r.add_argument("--plugins", default=",".join(PLUGINS))
    r.add_argument("--repeat", type=int, default=3)
    r.add_argument("--canvas", type=int, default=1024, help="screen size in pixels (default 1024)")
    r.add_argument("--steps", type=int, default=128, help="z-steps per measurement (default 128)")
    r.add_argument("--zoom-out", type=int, default=4, help="the low-level view: the image 1/N of the screen (4)")
    r.add_argument("--warm", action="store_true", help="do not drop the page cache")
    r.add_argument("--json", help="write every run's numbers here")
    s = sub.add_parser("smoke", help="a tiny image, both plugins once (a check that it runs, not a measurement)")
    s.add_argument("--dir")
    c = sub.add_parser("_child")
    c.add_argument("path")
    c.add_argument("plugin")
    c.add_argument("canvas", type=int)
    c.add_argument("steps", type=int)
    c.add_argument("zoom_out", type=int)
    args = ap.parse_args(argv)

    if args.cmd == "_child":
        print(json.dumps(_child(args.path, args.plugin, args.canvas, args.steps, args.zoom_out)))
        return 0
    if args.cmd == "write":
        write(args.path, args.gib, args.seed)
        return 0
    if args.cmd == "smoke":
        d = args.dir or tempfile.mkdtemp(prefix="napari_bench_")
        path = str(Path(d) / "smoke.ome.zarr")
        write(path, 0.004)
        runs = [_run_one(path, p, 128, 8, 2, cold=False) for p in PLUGINS]
        print(table(runs))
        return 0
    runs = []
    for _ in range(args.repeat):
        for p in args.plugins.split(","):
            runs.append(_run_one(args.path, p, args.canvas, args.steps, args.zoom_out, cold=not args.warm))
            print(f"{p}: first plane {_ms(runs[-1]['t_first'])}, {runs[-1]['page_cache']}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1))
    print(table(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
