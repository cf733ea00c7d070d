"""Copying one array, streaming in blocks of whole destination shards.

Memory bound
    A block is read from the source into one buffer (``B`` decoded bytes) and written from it
    (with ``--dtype`` a converted copy exists too; for an unsharded destination the block's
    encoded chunks, at most ``B`` more).  Besides the block, the write pipeline holds for each
    destination shard being encoded (one per worker thread at most) about
    :data:`SHARD_SCRATCH` times the shard's full decoded size ``S``, and the reader a few
    source chunks per thread.  So::

        peak ~= B + min(T, shards in a block) * 3.5 * S + T * 2 * C    (T threads, C: a source chunk)

    Blocks are sized so that this stays within ``max_memory``, and are never smaller than one
    destination shard; when even one shard does not fit, the report says how much the copy
    needs (the "minimum") and the copy goes on one shard at a time.

Consistency
    Each destination shard (or chunk) is written by one atomic store write.  The array's
    metadata document is written last, when every block is done: an interrupted or failed copy
    leaves complete shards and no metadata, so the array cannot be opened as if it were
    complete, and ``resume=True`` finishes it (keeping the shards whose index validates)."""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import numpy as np

from .. import config
from ..array import Array
from ..errors import CodecError, CopyError, DestinationExistsError, MetadataError
from ..node import ensure_parent_groups, erase_node, load_metadata, save_metadata
from . import blocks as blk
from .layout import LayoutOptions, cast_values, destination_metadata
from .report import CopyReport, Progress, _human, as_disk_full

DEFAULT_MAX_MEMORY = 1 << 30


def prepare_destination(store: Any, path: str, meta: Any, *, overwrite: bool, resume: bool) -> None:
    """Refuse, clear or accept what is at ``path`` in the destination store."""
    existing = load_metadata(store, path)
    prefix = f"{path}/" if path else ""
    has_keys = existing is not None or next(iter(store.list_prefix(prefix)), None) is not None
    if not has_keys:
        return
    where = f"/{path}" if path else "the destination root"
    if overwrite:
        erase_node(store, path)
        return
    if resume:
        if existing is not None and existing.to_json() != meta.to_json():
            raise DestinationExistsError(
                f"{where} holds an array with another layout than the copy asks for; "
                "--resume only finishes a copy made with the same options (use --overwrite to replace it)")
        return
    what = "a node" if existing is not None else "data (an interrupted copy?)"
    raise DestinationExistsError(f"{where} already holds {what}: use --overwrite to replace it"
                                 " or --resume to finish an interrupted copy")


# Memory the write pipeline holds per destination shard being encoded, in units of the shard's
# full (unclipped) decoded size: the shard padded to its full shape, the encoded output (sized
# for the worst case) and the gathered inner chunks.  Measured with benchmarks/cp_ratio.py:
# 443 MiB for one 128 MiB shard in flight, 700 MiB for two (2 threads).
SHARD_SCRATCH = 3.5


def plan(src: Any, meta: Any, max_memory: int, dtype_change: bool,
         threads: int) -> tuple[tuple[int, ...], list[Any], int, int]:
    """``(unit shape, boxes, block budget, minimum memory)`` for copying ``src`` to ``meta``
    within ``max_memory`` (see the module's documentation for the model)."""
    unit = tuple(meta.chunk_grid.chunk_shape)
    shape = tuple(meta.shape)
    grid = tuple(math.ceil(s / u) if u else 0 for s, u in zip(shape, unit))
    out_size = np.dtype(meta.data_type.numpy_dtype).itemsize
    sharded = len(meta.codecs) == 1 and meta.codecs[0].name == "sharding_indexed"
    per_elem = src.dtype.itemsize + (out_size if dtype_change else 0) + (0 if sharded else out_size)
    unit_cost = math.prod(min(u, s) for u, s in zip(unit, shape)) * per_elem
    per_shard = int(SHARD_SCRATCH * math.prod(unit) * out_size)   # scratch of one shard in flight
    reader = threads * 2 * math.prod(src.shards or src.chunks) * src.dtype.itemsize
    nunits = max(1, math.prod(grid))
    in_flight = min(threads, nunits)
    room = max_memory - reader
    if room >= in_flight * (unit_cost + per_shard):
        budget = room - in_flight * per_shard   # blocks of at least `threads` shards
    else:   # fewer shards per block than threads: each brings its own scratch
        budget = max(1, room // (unit_cost + per_shard)) * unit_cost
    k = blk.block_shape(grid, unit_cost, max(budget, unit_cost))
    boxes = list(blk.iter_boxes(grid, k)) if all(grid) else []
    return unit, boxes, budget, reader + unit_cost + per_shard


def copy_one(src: Any, store: Any, path: str, opts: LayoutOptions, *, max_memory: int | None = None,
             overwrite: bool = False, resume: bool = False, progress: Progress | None = None,
             report: CopyReport | None = None) -> CopyReport:
    """Copy the array ``src`` to ``path`` in ``store`` with the layout ``opts``."""
    report = report if report is not None else CopyReport()
    progress = progress or Progress()
    max_memory = int(max_memory or DEFAULT_MAX_MEMORY)
    if max_memory < 1:
        raise MetadataError(f"max_memory must be positive, got {max_memory}")
    meta = destination_metadata(src, opts)
    prepare_destination(store, path, meta, overwrite=overwrite, resume=resume)
    dst = Array(store, path, meta)
    dtype_change = opts.dtype is not None and np.dtype(opts.dtype) != src.dtype
    unit, boxes, _budget, minimum = plan(src, meta, max_memory, dtype_change, int(config.get("threads")))
    report.memory_bound = max(report.memory_bound, max_memory)
    if minimum > max_memory:
        report.notes.append(f"/{path}: copying one destination shard at a time needs about {_human(minimum)} "
                            f"(the shard, and the codec threads' scratch for shards of this size), more than "
                            f"max_memory {_human(max_memory)}; raise --max-memory, or use fewer --threads")
    if resume:
        boxes, skipped = blk.resume_boxes(boxes, blk.completed_units(dst))
        report.units_skipped += skipped
    shape = tuple(meta.shape)
    total = sum(_region_bytes(blk.box_region(b, unit, shape), src.dtype.itemsize) for b in boxes)
    progress.start(total, sum(blk.box_count(b) for b in boxes), label=f"/{path}" if path else "/")
    ticker = _Ticker(progress, report)
    where = f"array /{path}"
    # progress moves at least every PROGRESS_STEPS-th of the array: blocks are read in pieces
    # of about that size (edges on the source's chunks) and written shard by shard
    piece = max(PIECE_MIN_BYTES, total // PROGRESS_STEPS)
    try:
        for box in boxes:
            region = blk.box_region(box, unit, shape)
            nbytes = _region_bytes(region, src.dtype.itemsize)
            ticker.block(nbytes, blk.box_count(box))
            data = _read(src, region, where, piece, ticker.read)
            if dtype_change:
                data = cast_values(data, dst.dtype, f"{where}, region {_fmt_region(region)}")
            dst.set_basic_selection(region, data, on_chunk=ticker.unit)
            ticker.finish()
            report.max_block_bytes = max(report.max_block_bytes, data.nbytes)
            report.bytes_copied += nbytes
            report.units_written += blk.box_count(box)
            del data
        ensure_parent_groups(store, path, meta.zarr_format)
        save_metadata(store, path, meta)
    except KeyboardInterrupt:
        report.interrupted = True
        raise
    except Exception as exc:
        err = as_disk_full(exc, where)
        if err is exc:
            raise
        raise err from exc
    finally:
        progress.close()
    report.arrays.append(path)
    return report


# Progress of a copy moves in steps of at most 1/PROGRESS_STEPS of the array (a block read in
# pieces of that size; its shards written one by one), but no piece is smaller than this.
PROGRESS_STEPS = 32
PIECE_MIN_BYTES = 8 << 20


class _Ticker:
    """The progress of one array's copy, block by block: a block counts half when read (piece
    by piece) and half when written (shard by shard, told by the write from its threads); and
    the destination units stored, or left out as all fill value, for the report."""

    def __init__(self, progress: Progress, report: CopyReport):
        self.progress, self.report = progress, report
        self.lock = threading.Lock()
        self.sent = self.base = self.nbytes = self.read_bytes = 0
        self.nunits = self.units = 0

    def block(self, nbytes: int, nunits: int) -> None:
        self.base, self.nbytes, self.nunits = self.sent, nbytes, nunits
        self.read_bytes = self.units = 0

    def _push(self, units: int) -> None:
        done = (self.read_bytes / max(self.nbytes, 1) + self.units / max(self.nunits, 1)) / 2
        target = self.base + min(self.nbytes, int(self.nbytes * done))
        step, self.sent = max(0, target - self.sent), max(self.sent, target)
        if step or units:
            self.progress.advance(step, units)

    def read(self, nbytes: int) -> None:
        with self.lock:
            self.read_bytes += nbytes
            self._push(0)

    def unit(self, key: str, stored: bool) -> None:
        with self.lock:
            if stored:
                self.report.units_stored += 1
            else:
                self.report.units_fill += 1
            if self.units < self.nunits:
                self.units += 1
                self._push(1)

    def finish(self) -> None:
        """The block is written: the rest of its bytes and units (units no write told of
        were stored)."""
        with self.lock:
            left = self.nunits - self.units
            self.report.units_stored += left
            self.read_bytes, self.units = self.nbytes, self.nunits
            self._push(left)


def _read(src: Any, region: tuple[slice, ...], where: str, piece: int, tick: Any) -> np.ndarray:
    """The source's values in ``region``, read in pieces of about ``piece`` bytes (``tick(n)``
    after each); a :class:`~zarrbolt.errors.CopyError` when they cannot be read (so that the
    caller can tell a bad source from a failing destination)."""
    if not region:  # a 0-d array
        value: np.ndarray = np.asarray(src[region])
        tick(src.dtype.itemsize)
        return value
    try:
        grid = tuple(src.chunks)
    except (MetadataError, TypeError, AttributeError):  # no regular chunk shape: one piece
        grid = tuple(s.stop - s.start for s in region)
    try:
        out = np.empty(tuple(s.stop - s.start for s in region), dtype=src.dtype)
        for part in blk.aligned_pieces(region, grid, src.dtype.itemsize, piece):
            local = tuple(slice(p.start - r.start, p.stop - r.start) for p, r in zip(part, region))
            src.get_basic_selection(part, out=out[local])
            tick(_region_bytes(part, src.dtype.itemsize))
        return out
    except (CodecError, MetadataError, OSError) as exc:
        err = CopyError(f"{where}: cannot read the source at {_fmt_region(region)}: {type(exc).__name__}: {exc}")
        err.node_path = where  # type: ignore[attr-defined]
        raise err from exc


def _region_bytes(region: tuple[slice, ...], itemsize: int) -> int:
    return int(math.prod(s.stop - s.start for s in region)) * itemsize


def _fmt_region(region: tuple[slice, ...]) -> str:
    return "[" + ", ".join(f"{s.start}:{s.stop}" for s in region) + "]"


def timed(fn: Any, *args: Any, **kwargs: Any) -> CopyReport:
    t0 = time.perf_counter()
    report: CopyReport = kwargs.setdefault("report", CopyReport())
    try:
        fn(*args, **kwargs)
    finally:
        report.seconds = time.perf_counter() - t0
    return report


def with_threads(threads: int | None) -> Any:
    """A context setting zarrbolt's worker threads (nothing when None)."""
    import contextlib

    if not threads:
        return contextlib.nullcontext()
    return config.set(threads=int(threads))
