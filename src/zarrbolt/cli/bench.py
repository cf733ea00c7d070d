"""``zarrbolt bench PATH``: read throughput of an array as it is stored (full, planes, random
blocks), with the threads used."""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

from ._common import (
    add_store_options,
    human,
    open_node,
    parse_bytes,
    pretty_json,
    storage_options,
)


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("bench", help="read throughput of an array: full, planes, random blocks",
                       description="Time reads of your own array: the whole array (streamed in shard-aligned "
                       "slabs when larger than --max-memory), single planes along the first axis, and random "
                       "chunk-sized blocks.  Reports the best of --repeat runs.")
    p.add_argument("path", help="array (path or URL)")
    p.add_argument("--threads", type=int, default=None, help="worker threads (default: all cores)")
    p.add_argument("--repeat", type=int, default=3, help="runs of each test; the best is reported (default 3)")
    p.add_argument("--planes", type=int, default=8, help="planes to read (default 8)")
    p.add_argument("--blocks", type=int, default=16, help="random blocks to read (default 16)")
    p.add_argument("--max-memory", default="1G", help="largest piece read at once in the full read (default 1G)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_store_options(p)
    p.set_defaults(func=run)


def _best(fn: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(max(1, repeat)):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _full_regions(arr: Any, budget: int) -> list[tuple[slice, ...]]:
    from ..convert import blocks as blk

    unit = arr.shards or arr.chunks
    grid = tuple(math.ceil(s / u) for s, u in zip(arr.shape, unit))
    unit_bytes = math.prod(min(u, s) for u, s in zip(unit, arr.shape)) * arr.dtype.itemsize
    k = blk.block_shape(grid, unit_bytes, budget)
    return [blk.box_region(b, unit, arr.shape) for b in blk.iter_boxes(grid, k)]


def measure(arr: Any, *, repeat: int, planes: int, blocks: int, budget: int, seed: int = 0) -> dict[str, Any]:
    import numpy as np

    from .. import config

    rng = np.random.default_rng(seed)
    res: dict[str, Any] = {"path": "/" + arr.path, "shape": list(arr.shape), "dtype": str(arr.dtype),
                           "chunks": list(arr.chunks), "shards": list(arr.shards) if arr.shards else None,
                           "threads": config.get("threads"), "bytes": arr.nbytes}
    if arr.ndim == 0 or arr.size == 0:
        return res
    regions = _full_regions(arr, budget)
    t = _best(lambda: [arr[r] for r in regions], repeat)
    res["full"] = {"seconds": t, "GBps": arr.nbytes / t / 1e9, "pieces": len(regions)}
    if arr.ndim >= 2 and planes > 0:
        zs = [int(z) for z in rng.integers(0, arr.shape[0], size=planes)]
        t = _best(lambda: [arr[z] for z in zs], repeat)
        nb = arr.nbytes // arr.shape[0] * len(zs)
        res["planes"] = {"count": len(zs), "ms_per_plane": t / len(zs) * 1e3, "GBps": nb / t / 1e9}
    if blocks > 0:
        shape = tuple(min(c, s) for c, s in zip(arr.chunks, arr.shape))
        starts = [tuple(int(rng.integers(0, s - b + 1)) for s, b in zip(arr.shape, shape)) for _ in range(blocks)]
        sels = [tuple(slice(a, a + b) for a, b in zip(st, shape)) for st in starts]
        t = _best(lambda: [arr[s] for s in sels], repeat)
        nb = math.prod(shape) * arr.dtype.itemsize * len(sels)
        res["blocks"] = {"count": len(sels), "shape": list(shape), "ms_per_block": t / len(sels) * 1e3,
                         "GBps": nb / t / 1e9}
    return res


def render(r: dict[str, Any]) -> str:
    lines = [f"{r['path']}: {tuple(r['shape'])} {r['dtype']}, chunks {tuple(r['chunks'])}"
             + (f", shards {tuple(r['shards'])}" if r["shards"] else "") + f", {human(r['bytes'])}, "
             f"{r['threads']} threads"]
    if "full" in r:
        f = r["full"]
        lines.append(f"  full read      : {f['seconds']:8.3f} s    {f['GBps']:6.2f} GB/s  ({f['pieces']} piece(s))")
    if "planes" in r:
        p = r["planes"]
        lines.append(f"  plane (axis 0) : {p['ms_per_plane']:8.2f} ms   {p['GBps']:6.2f} GB/s  ({p['count']} planes)")
    if "blocks" in r:
        b = r["blocks"]
        lines.append(f"  random blocks  : {b['ms_per_block']:8.2f} ms   {b['GBps']:6.2f} GB/s  "
                     f"({b['count']} blocks of {tuple(b['shape'])})")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ..array import Array
    from ..convert.copier import with_threads
    from ..errors import MetadataError

    node = open_node(args.path, storage_options(args))
    if not isinstance(node, Array):
        raise MetadataError(f"{args.path!r} is a group: bench one of its arrays (see `zarrbolt tree`)")
    with with_threads(args.threads):
        res = measure(node, repeat=args.repeat, planes=args.planes, blocks=args.blocks,
                      budget=parse_bytes(args.max_memory))
    print(pretty_json(res) if args.json else render(res))
    return 0
