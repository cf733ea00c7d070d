"""``zarrbolt verify SRC DST``: are two arrays (or every array of two hierarchies) equal, value by
value?  Compared block by block (whole chunks of DST), with a progress bar on a terminal."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ._common import (
    Bar,
    add_progress_options,
    add_store_options,
    open_node,
    parse_bytes,
    storage_options,
    want_bar,
)


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("verify", help="check that two arrays (or hierarchies) hold equal values",
                       description="Compare two arrays chunk by chunk (values, shape, and data type unless "
                       "--values-only), or every array of two hierarchies.  Exit status 0: equal, 1: different.")
    p.add_argument("src", help="first array or group (path or URL)")
    p.add_argument("dst", help="second array or group (path or URL)")
    p.add_argument("--threads", type=int, default=None, help="worker threads (default: all cores)")
    p.add_argument("--max-memory", default="512M", help="memory for the two blocks compared at once (default 512M)")
    p.add_argument("--values-only", action="store_true", help="compare values even when the data types differ")
    add_progress_options(p)
    add_store_options(p, "dst")
    p.set_defaults(func=run)


def compare_arrays(a: Any, b: Any, *, budget: int, values_only: bool, progress: Any, label: str) -> list[str]:
    """Differences between arrays ``a`` and ``b`` (empty when equal)."""
    import numpy as np

    from ..convert import blocks as blk
    from ..convert.copier import PIECE_MIN_BYTES, PROGRESS_STEPS

    if a.shape != b.shape:
        return [f"{label}: shapes differ: {a.shape} vs {b.shape}"]
    if a.dtype != b.dtype and not values_only:
        return [f"{label}: data types differ: {a.dtype} vs {b.dtype} (--values-only compares the values)"]
    unit = b.chunks
    grid = tuple(math.ceil(s / u) for s, u in zip(b.shape, unit))
    itemsize = max(a.dtype.itemsize, b.dtype.itemsize)
    unit_bytes = math.prod(min(u, s) for u, s in zip(unit, b.shape)) * itemsize
    # blocks within the budget, and small enough for the progress to move every few percent
    step = max(PIECE_MIN_BYTES, math.prod(b.shape) * itemsize // PROGRESS_STEPS)
    k = blk.block_shape(grid, unit_bytes, max(1, min(budget // 2, step)))
    boxes = list(blk.iter_boxes(grid, k)) if all(grid) else []
    progress.start(a.nbytes, sum(blk.box_count(x) for x in boxes), label=label)
    diffs: list[str] = []
    nan_ok = a.dtype.kind in "fc" or b.dtype.kind in "fc"
    for box in boxes:
        region = blk.box_region(box, unit, b.shape)
        x, y = a[region], b[region]
        if x.dtype.kind in "OUSV" or y.dtype.kind in "OUSV":
            neq = np.asarray(x != y, dtype=bool)
        elif nan_ok:
            neq = ~((x == y) | (np.isnan(x) & np.isnan(y)))
        else:
            neq = x != y
        if neq.any():
            bad = np.argwhere(neq)
            first = tuple(int(r.start + i) for r, i in zip(region, bad[0]))
            diffs.append(f"{label}: {len(bad)} value(s) differ in "
                         f"[{', '.join(f'{r.start}:{r.stop}' for r in region)}], first at {first}: "
                         f"{x[tuple(bad[0])]!r} vs {y[tuple(bad[0])]!r}")
        progress.advance(x.size * a.dtype.itemsize, blk.box_count(box))
    return diffs


def _pairs(a: Any, b: Any) -> tuple[list[tuple[str, Any, Any]], list[str]]:
    from ..array import Array
    from ..group import Group

    if isinstance(a, Array) and isinstance(b, Array):
        return [("/", a, b)], []
    if not (isinstance(a, Group) and isinstance(b, Group)):
        return [], [f"one is an array, the other a group: {type(a).__name__} vs {type(b).__name__}"]
    ma = dict(a.members(max_depth=None))
    mb = dict(b.members(max_depth=None))
    problems = [f"/{k}: only in the first" for k in sorted(set(ma) - set(mb))]
    problems += [f"/{k}: only in the second" for k in sorted(set(mb) - set(ma))]
    pairs = []
    for k in sorted(set(ma) & set(mb)):
        x, y = ma[k], mb[k]
        if isinstance(x, Array) and isinstance(y, Array):
            pairs.append((f"/{k}", x, y))
        elif type(x) is not type(y):
            problems.append(f"/{k}: {type(x).__name__} vs {type(y).__name__}")
    return pairs, problems


def run(args: argparse.Namespace) -> int:
    from ..convert.copier import with_threads

    a = open_node(args.src, storage_options(args))
    b = open_node(args.dst, storage_options(args, "dst"))
    pairs, problems = _pairs(a, b)
    bar = Bar("chunks", enabled=want_bar(args))
    try:
        with with_threads(args.threads):
            for label, x, y in pairs:
                problems += compare_arrays(x, y, budget=parse_bytes(args.max_memory), values_only=args.values_only,
                                           progress=bar, label=label)
    finally:
        bar.close()
    if problems:
        for p in problems[:50]:
            print(p, file=sys.stderr)
        if len(problems) > 50:
            print(f"... and {len(problems) - 50} more", file=sys.stderr)
        print(f"DIFFERENT: {len(problems)} difference(s) in {len(pairs)} array(s)")
        return 1
    print(f"EQUAL: {len(pairs)} array(s), {sum(x.nbytes for _, x, _y in pairs)} bytes compared")
    return 0
