"""``zarrbolt pyramid SRC DST``: write an OME-Zarr NGFF 0.5 pyramid (sharded Zarr v3) from any
array zarrbolt opens — a local path or URL of a Zarr v2/v3 array, or of an OME-Zarr image (its
full-resolution level, with its axes, units, scale and translation carried over).

Module interface of the command line: :func:`add_parser` and :func:`run`."""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from typing import Any

from ._common import Bar, add_progress_options, want_bar

METHODS = ("mean", "nearest", "min", "max", "mode")


def _ints(text: str) -> tuple[int, ...] | int:
    try:
        vals = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers separated by commas, got {text!r}") from None
    return vals[0] if len(vals) == 1 else vals


def _floats(text: str) -> tuple[float, ...] | float:
    try:
        vals = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}") from None
    return vals[0] if len(vals) == 1 else vals


def _shards(text: str) -> Any:
    if text in ("auto", "none"):
        return "auto" if text == "auto" else None
    return _ints(text)


def add_parser(subparsers: Any) -> None:
    """Create the ``pyramid`` sub-parser (its ``func`` is :func:`run`)."""
    p = subparsers.add_parser(
        "pyramid", help="write an OME-Zarr (NGFF 0.5) multiscale pyramid from an array",
        description="Write an OME-Zarr NGFF 0.5 multiscale image (a sharded Zarr v3 group) from SRC, any array "
                    "zarrbolt opens (local path or URL; an OME-Zarr image's full-resolution level), downsampling "
                    "by 2 per level in C, block by block with bounded memory.")
    p.add_argument("src", metavar="SRC", help="source array (path or URL), or an OME-Zarr image")
    p.add_argument("dst", metavar="DST", help="destination image (path or URL)")
    p.add_argument("--path", default=None, help="the array's path inside SRC when SRC is a group")
    p.add_argument("--levels", type=int, default=None, help="levels, full resolution included "
                   "(default: until the halved axes fit one chunk)")
    p.add_argument("--method", choices=METHODS, default="mean", help="downsampling method (default mean; "
                   "mode for label images)")
    p.add_argument("--chunks", type=_ints, default=None, help="chunk shape, e.g. 1,64,64,64 or 64 "
                   "(default 64 per space axis in 3-d, 256 in 2-d, 1 elsewhere)")
    p.add_argument("--shards", type=_shards, default="auto", help="shard shape (multiples of the chunks), "
                   "'auto' (4 chunks per space axis, the default) or 'none'")
    p.add_argument("--axes", type=_axis_list, default=None, help="axis names, e.g. tczyx or t,c,z,y,x "
                   "(default: SRC's dimension names "
                   "when they are axis letters, else by dimension: yx, zyx, czyx, tczyx)")
    p.add_argument("--units", default=None, help="unit of the space axes, e.g. micrometer")
    p.add_argument("--scale", type=_floats, default=None, help="pixel size per axis, e.g. 2,0.5,0.5")
    p.add_argument("--downsample-axes", default=None, help="axes to halve, e.g. yx or y,x (default: the space "
                   "axes)")
    p.add_argument("--name", default=None, help="the image's name in the metadata")
    p.add_argument("--threads", type=int, default=None, help="threads for reading, writing and downsampling "
                   "(default: zarrbolt's threads setting, ZARRBOLT_NUM_THREADS)")
    p.add_argument("--overwrite", action="store_true", help="replace DST when it exists")
    p.add_argument("--storage-options", default=None, metavar="JSON", help="options for remote URLs (JSON)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_progress_options(p)
    p.set_defaults(func=run)


def _options(args: argparse.Namespace) -> dict[str, Any] | None:
    from ..errors import StoreError

    if args.storage_options is None:
        return None
    try:
        obj = json.loads(args.storage_options)
    except ValueError as e:
        raise StoreError(f"--storage-options is not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise StoreError("--storage-options must be a JSON object")
    return obj


def _remote(path: str) -> bool:
    from ..storage.urls import url_scheme

    return url_scheme(path) not in (None, "file")


def _source(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """(the source array, write_image keywords SRC implies: axes, units, scale, translation)."""
    from ..api.opening import open as zb_open
    from ..errors import OmeMetadataError
    from ..ome.reader import image_from_group

    opts = _options(args) if _remote(args.src) else None
    node = zb_open(args.src, mode="r", path=args.path, storage_options=opts)
    if hasattr(node, "shape"):
        names = getattr(node.metadata, "dimension_names", None)
        implied: dict[str, Any] = {}
        if names and all(isinstance(n, str) and len(n) == 1 and n in "tczyx" for n in names):
            implied["axes"] = "".join(names)
        return node, implied
    try:
        img = image_from_group(node)
    except OmeMetadataError as e:
        raise OmeMetadataError(f"{args.src} is a group but not an OME-Zarr image ({e}); name an array with "
                               f"--path") from None
    units = {a.name: a.unit for a in img.axes if a.unit}
    return img.levels[0], {"axes": list(img.axes), "units": units or None, "scale": img.scales[0],
                           "translation": img.translations[0]}


class _LevelProgress:
    """write_image's progress (level, blocks done, blocks of the level) as one count of the
    blocks (shards) of every level (levels are written interleaved): a progress bar or line on
    a terminal, nothing otherwise (:class:`~._common.Bar`)."""

    def __init__(self, enabled: bool):
        self.bar = Bar("blocks", enabled=enabled, count_only=True)
        self.totals: dict[int, int] = {}
        self.done: dict[int, int] = {}
        self.started = False
        self.total = 0

    def __call__(self, level: int, done: int, total: int) -> None:
        self.totals[level], before = total, self.done.get(level, 0)
        self.done[level] = done
        total = sum(self.totals.values())
        if not self.started:
            self.bar.start(0, total, label="pyramid")
            self.started, self.total = True, total
        elif total != self.total:
            self.bar.set_total(total)
            self.total = total
        if done > before:
            self.bar.advance(0, done - before)

    def close(self) -> None:
        self.bar.close()


def _axis_list(text: str | None) -> list[str] | None:
    """``yx`` or ``y,x`` (names longer than a letter need the commas)."""
    if not text:
        return None
    return [t for t in text.split(",") if t] if "," in text else list(text)


def run(args: argparse.Namespace) -> int:
    """Run ``zarrbolt pyramid``; the exit status (typed zarrbolt errors propagate)."""
    from .. import config
    from ..ome.writer import write_image

    src, implied = _source(args)
    kw: dict[str, Any] = dict(implied)
    if args.axes is not None:
        kw.pop("units", None)  # SRC's units are keyed by SRC's axis names
    for key in ("axes", "units", "scale"):
        if getattr(args, key) is not None:
            kw[key] = getattr(args, key)
    bar = _LevelProgress(want_bar(args))
    t0 = time.perf_counter()
    limit = config.set(threads=args.threads) if args.threads else contextlib.nullcontext()
    try:
        with limit:
            img = write_image(
                args.dst, src, chunks=args.chunks, shards=args.shards, levels=args.levels, method=args.method,
                downsample_axes=_axis_list(args.downsample_axes), name=args.name, threads=args.threads,
                overwrite=args.overwrite, storage_options=_options(args) if _remote(args.dst) else None,
                progress=bar, **kw)
    finally:
        bar.close()
    seconds = time.perf_counter() - t0
    result = {"dst": args.dst, "axes": "".join(img.axis_names), "dtype": str(img.dtype), "method": args.method,
              "levels": [{"path": p, "shape": list(s), "scale": list(sc)}
                         for p, s, sc in zip(img.paths, img.shapes, img.scales)], "seconds": round(seconds, 3)}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{args.dst}: OME-Zarr 0.5 image, axes {result['axes']}, {result['dtype']}, {args.method}, "
              f"{len(img)} levels in {seconds:.2f} s")
        for lv in result["levels"]:
            print(f"  {lv['path']}: shape {tuple(lv['shape'])}  scale {tuple(lv['scale'])}")
    return 0
