"""Streaming blocks of a copy and the destination's completed shards (``--resume``).

A copy writes the destination by *units*: its stored objects (shards of a sharded array,
chunks of an unsharded one).  Each unit is written whole, once, by one atomic store write, so
the destination never holds a half-written unit.  The units are grouped into *blocks*: boxes
of whole units of at most ``block_bytes`` decoded bytes, read from the source into one buffer
and written from it.  A block is never smaller than one unit."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..errors import CodecError, StoreError

Box = tuple[tuple[int, int], ...]   # (start, stop) per dimension, in unit-grid coordinates


def block_shape(grid: tuple[int, ...], unit_bytes: int, block_bytes: int) -> tuple[int, ...]:
    """Units per block along each dimension: grown from the last dimension to the first (so a
    block is a contiguous run of the grid) while the block stays within ``block_bytes``."""
    k = [1] * len(grid)
    nbytes = max(1, unit_bytes)
    for d in reversed(range(len(grid))):
        fit = max(1, block_bytes // nbytes)
        k[d] = max(1, min(grid[d], fit))
        nbytes *= k[d]
        if k[d] < grid[d]:
            break
    return tuple(k)


def iter_boxes(grid: tuple[int, ...], k: tuple[int, ...]) -> Iterator[Box]:
    """The blocks covering the unit grid, in C order."""
    ranges = [range(0, g, kk) for g, kk in zip(grid, k)]
    for start in itertools.product(*ranges):
        yield tuple((s, min(s + kk, g)) for s, kk, g in zip(start, k, grid))


def box_units(box: Box) -> Iterator[tuple[int, ...]]:
    return itertools.product(*(range(a, b) for a, b in box))


def box_count(box: Box) -> int:
    return math.prod(b - a for a, b in box)


def box_region(box: Box, unit: tuple[int, ...], shape: tuple[int, ...]) -> tuple[slice, ...]:
    """The array region (slices) of a box of units."""
    return tuple(slice(a * u, min(b * u, s)) for (a, b), u, s in zip(box, unit, shape))


def aligned_pieces(region: tuple[slice, ...], grid: tuple[int, ...], itemsize: int,
                   max_bytes: int) -> Iterator[tuple[slice, ...]]:
    """``region`` cut into pieces of at most ``max_bytes`` (never less than one cell) whose
    inner edges lie on multiples of ``grid`` (the source's chunk shape: no chunk is read by two
    pieces), in C order."""
    edges = []
    for r, u in zip(region, grid):
        u = max(1, int(u))
        edges.append([r.start, *range((r.start // u + 1) * u, r.stop, u), r.stop])
    cells = tuple(len(e) - 1 for e in edges)
    cell_bytes = math.prod(min(max(1, int(u)), r.stop - r.start) for r, u in zip(region, grid)) * itemsize
    if not all(cells):
        return
    for box in iter_boxes(cells, block_shape(cells, cell_bytes, max_bytes)):
        yield tuple(slice(e[a], e[b]) for e, (a, b) in zip(edges, box))


def unit_box(coords: tuple[int, ...]) -> Box:
    return tuple((c, c + 1) for c in coords)


def resume_boxes(boxes: list[Box], done: set[tuple[int, ...]]) -> tuple[list[Box], int]:
    """``boxes`` less the completed units: a box with every unit done is dropped, one with some
    done is replaced by its remaining units; and the number of units skipped."""
    out: list[Box] = []
    skipped = 0
    for box in boxes:
        units = list(box_units(box))
        todo = [u for u in units if u not in done]
        skipped += len(units) - len(todo)
        if len(todo) == len(units):
            out.append(box)
        else:
            out.extend(unit_box(u) for u in todo)
    return out, skipped


def completed_units(dst: Any, threads: int = 16) -> set[tuple[int, ...]]:
    """The grid coordinates of the destination units already stored *and complete*: a chunk
    that exists (chunks are written atomically), a shard whose index reads and validates
    against its size (a truncated or foreign object is not complete)."""
    meta = dst.metadata
    prefix = dst._key_prefix
    enc = meta.chunk_key_encoding
    found: dict[tuple[int, ...], str] = {}
    for key in dst.store.list_prefix(prefix):
        rel = key[len(prefix):]
        try:
            coords = tuple(enc.decode_chunk_key(rel))
        except Exception:  # noqa: BLE001, S112 - metadata documents and foreign keys are not units
            continue
        if len(coords) == dst.ndim:
            found[coords] = key
    io = dst._io
    if io.sharding is None or not io.shard_direct:
        return set(found)
    from ..pipeline.shard import index as shard_index

    def valid(item: tuple[tuple[int, ...], str]) -> tuple[int, ...] | None:
        coords, key = item
        try:
            return coords if shard_index.fetch(dst.store, key, io.sharding, io.layout) is not None else None
        except (CodecError, StoreError):
            return None

    with ThreadPoolExecutor(max_workers=max(1, min(threads, len(found) or 1))) as pool:
        return {c for c in pool.map(valid, found.items()) if c is not None}
