"""The fused decode of a read: chunks (or a shard's inner chunks) decoded by the chain's C plan
straight into their place in the output, a batch of them per GIL release.

:class:`FusedOutput` is the output of such a read and where each task (chunk coordinates, the
region of the chunk, its place in the output) goes; :meth:`FusedOutput.decode` decodes buffers
in memory into it.  The backends below bring the bytes: from local files, opened, read and
decoded by C on the native pool (:func:`chunk_files`, :func:`shard_files`), or through the Store
API into a thread's arena (:func:`chunks_via_store`, :func:`shards_via_store`); the remote reads
(:mod:`.remote`) hand it views of what they fetched.  A batched C call that fails names its task
(``task_index``): :func:`task_error` turns that into the chunk's key, and :func:`range_detail`
decodes an out-of-range chunk again through the per-codec chain for a message that names the
value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import buffers, outbuf
from .._ext._plans import POOL_MAX
from .._threads import batch_bounds, parallel_workers, run_batches
from ..errors import CodecError, CodecRangeError, StoreError
from .context import ArrayIO
from .shard import index as shard_index
from .shard.fetch import COALESCE_GAP, ShardArenaReader, group_by_shard, inner_chunk, work_items

__all__ = ["FusedOutput", "chunk_files", "chunks_via_store", "decode_views", "range_detail", "shard_files",
           "shards_via_store", "task_error"]


# ---------------------------------------------------------------------------- errors naming a task
def task_error(e: BaseException, label: Callable[[int | None], str | None]) -> BaseException | None:
    """``e`` (raised by a batched C call) again, its message prefixed by ``label(i)``, where i is
    the failing task's position in the call's input (None when the call did not say); None when
    ``label`` gives None (``e`` is then best raised as it is).  The C calls carry the failing
    task as the exception attribute ``task_index``."""
    i = getattr(e, "task_index", None)
    if not isinstance(i, int):
        i = None
    where = label(i)
    if where is None:
        return None
    msg = e.args[0] if e.args else str(e)
    return type(e)(f"{where}: {msg}")


def range_detail(e: BaseException, io: ArrayIO, key: str, data: Any) -> BaseException:
    """A fused C decode reports an out-of-range value by status only; decoding the chunk's
    bytes ``data`` (None: read them from the store) again through the per-codec chain names
    the value and what is wrong with it.  ``e`` itself when that is not the case."""
    if not isinstance(e, CodecRangeError) or getattr(e, "task_index", None) is None:
        return e
    try:
        if io.sharding is None:
            io.decode_chunk(io.store.get(key) if data is None else data, key)
        else:  # data: an inner chunk's bytes
            assert io.layout is not None
            io.layout.inner.decode(data)
    except CodecRangeError as detail:
        return detail if io.sharding is None else type(detail)(f"{key}: {detail}")
    except Exception:  # noqa: BLE001 - only a better message was sought
        return e
    return e


def inner_range_detail(e: BaseException, io: ArrayIO, key: str, flat: int) -> BaseException:
    """:func:`range_detail` for inner chunk ``flat`` of shard ``key`` (read again from the store)."""
    if not isinstance(e, CodecRangeError):
        return e
    assert io.sharding is not None and io.layout is not None
    try:
        mv, offs, nb = io.sharding.split_shard(io.store.get(key), io.layout, key)
        data = inner_chunk(mv, offs, nb, flat)
    except Exception:  # noqa: BLE001 - only a better message was sought
        return e
    return range_detail(e, io, f"shard {key!r}, inner chunk {flat}", data)


# ---------------------------------------------------------------------------- the output
def _unit_view(out: np.ndarray, unit_shape: tuple[int, ...]) -> np.ndarray:
    """``out`` viewed with one axis per array dimension (length-1 axes added for dropped
    integer dimensions, newaxes removed): never a copy."""
    if tuple(out.shape) == tuple(unit_shape):
        return out
    # only length-1 axes differ: numpy reshapes that without a copy (copy=False raises if not)
    try:
        return np.reshape(out, unit_shape, copy=False)
    except TypeError:  # numpy < 2.1
        v = out.view()
        v.shape = unit_shape
        return v


class FusedOutput:
    """The output of a fused read and where each task goes in it; decodes batches into it.
    ``items``: the indexer's ``unit_step_items()``; ``out``: an existing output (any strides) or
    None for a new one; ``missing``: where the keys of absent chunks / shards are recorded."""

    def __init__(self, io: ArrayIO, indexer: Any, items: tuple[Any, ...], out: np.ndarray | None = None,
                 missing: set[Any] | None = None):
        coords, self.starts, self.shapes, self.out_starts = items
        assert io.plan is not None  # (the fused reads')
        self.io, self.plan, self.fill = io, io.plan, io.fill
        if out is None:
            self.out = outbuf.empty(indexer.shape, dtype=io.dtype)
            self.full = self.out.reshape(indexer.unit_shape())
        else:
            self.out = out
            self.full = _unit_view(out, indexer.unit_shape())
        self.n = len(coords)
        self.coords = coords
        self.missing = missing

    def prepare(self) -> None:
        """What the decode calls need (only once there are tasks)."""
        full = self.full
        self.offs = self.out_starts @ np.asarray(full.strides, dtype=np.int64)
        self.stream = buffers.stream_output(full)
        self.nslots = buffers.group_slots(self.plan, full)
        self.scratch_bytes = self.plan.scratch_bytes(self.nslots)
        lay = self.io.layout if self.io.sharding is not None else None
        if lay is not None:  # inner chunks, and the shard indexes the native read reads into it
            self.arena_bytes = buffers.arena_bytes(lay.inner.spec.nbytes, lay.index_nbytes)
        else:
            self.arena_bytes = buffers.arena_bytes(self.io.bound.spec.nbytes)

    def fill_task(self, i: int) -> None:
        self.full[tuple(slice(o, o + l) for o, l in zip(self.out_starts[i], self.shapes[i]))] = self.fill

    def absent(self, i: int, key: str) -> None:
        """Task ``i``'s chunk (or shard) ``key`` is not in the store: fill, and record it."""
        self.fill_task(i)
        if self.missing is not None:
            self.missing.add(key)

    def decode(self, bufs: list[Any], idx: list[Any], names: list[Any]) -> None:
        """Decode buffers ``bufs`` (tasks ``idx``, named ``names``) with one GIL release."""
        if not bufs:
            return
        ii = np.asarray(idx, dtype=np.intp)
        try:
            self.plan.decode(bufs, np.ascontiguousarray(self.starts[ii]), np.ascontiguousarray(self.shapes[ii]),
                             np.ascontiguousarray(self.offs[ii]), self.full, self.stream,
                             buffers.thread_scratch(self.scratch_bytes), self.nslots)
        except CodecError as e:
            i = getattr(e, "task_index", None)
            if isinstance(i, int) and 0 <= i < len(bufs):
                detail = range_detail(e, self.io, names[i], bufs[i])
                if detail is not e:
                    raise detail from None
            raise task_error(e, lambda i: f"chunk {'?' if i is None else names[i]}") or e from None

    def tasks(self, ii: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(starts, shapes, offsets)`` of tasks ``ii`` (None: all, in order) as the C calls take them."""
        if ii is None:
            return (np.ascontiguousarray(self.starts), np.ascontiguousarray(self.shapes),
                    np.ascontiguousarray(self.offs))
        return (np.ascontiguousarray(self.starts[ii]), np.ascontiguousarray(self.shapes[ii]),
                np.ascontiguousarray(self.offs[ii]))


def decode_views(fo: FusedOutput, views: list[Any], idx: list[Any], names: list[Any], cost: int) -> None:
    """Decode buffers already in memory (tasks ``idx``) in parallel batches, each one C call, in
    the output's order (copies grouped)."""
    order = sorted(range(len(idx)), key=idx.__getitem__)

    def work(batch: Sequence[int]) -> None:
        fo.decode([views[j] for j in batch], [idx[j] for j in batch], [names[j] for j in batch])

    run_batches(work, order, cost=cost)


# ---------------------------------------------------------------------------- chunks
def chunk_files(io: ArrayIO, fo: FusedOutput) -> None:
    """Chunks of a store with native file access: opened, read and decoded by C on the threads of
    the native pool, the GIL released once per window of READ_WINDOW_BYTES."""
    nbytes = io.bound.spec.nbytes
    keys = [io.chunk_key(c) for c in fo.coords.tolist()]
    for lo, hi in buffers.read_windows([nbytes] * fo.n):
        _chunk_files(io, fo, io.files, keys, lo, hi)


def _chunk_files(io: ArrayIO, fo: FusedOutput, files: Any, keys: list[str], lo: int, hi: int) -> None:
    """Chunks [lo, hi) in C, with the GIL released once."""
    m = hi - lo
    workers = min(parallel_workers(m, cost=io.bound.spec.nbytes * m), POOL_MAX)
    bufs = buffers.pool_read_buffers(workers, fo.scratch_bytes, fo.arena_bytes)
    paths, nofollow = files.read_paths(keys[lo:hi])
    try:
        missing, too_large = fo.plan.read_decode_par(
            paths, bufs, batch_bounds(m, workers), fo.starts[lo:hi], fo.shapes[lo:hi],
            fo.offs[lo:hi], fo.full, fo.stream, fo.nslots, nofollow)
    except (CodecError, StoreError) as e:
        i = getattr(e, "task_index", None)
        if isinstance(i, int) and 0 <= i < hi - lo:
            detail = range_detail(e, io, keys[lo + i], None)
            if detail is not e:
                raise detail from None
        raise task_error(e, lambda i: f"chunk {'?' if i is None else keys[lo + i]}") or e from None
    for j in missing:
        fo.absent(lo + j, keys[lo + j])
    for j in too_large:  # larger than the arena, or a link left to the store
        key = keys[lo + j]
        data = io.store.get(key)
        if data is None:
            fo.absent(lo + j, key)
        else:
            fo.decode([data], [lo + j], [key])


def chunks_via_store(io: ArrayIO, fo: FusedOutput) -> None:
    """Chunks read whole through the Store API (``read_into``) into each thread's arena, decoded
    an arena at a time."""
    keys = [io.chunk_key(c) for c in fo.coords.tolist()]
    nbytes = io.bound.spec.nbytes
    run_batches(lambda batch: _chunks_via_store(io, fo, keys, batch), range(fo.n), cost=nbytes * fo.n)


def _chunks_via_store(io: ArrayIO, fo: FusedOutput, keys: list[str], batch: Sequence[int]) -> None:
    store = io.store
    arena = buffers.thread_arena(fo.arena_bytes)
    pos = 0
    bufs: list[Any] = []
    idx: list[Any] = []
    names: list[Any] = []
    for i in batch:
        key = keys[i]
        got = store.read_into(key, arena[pos:])
        if got is not None and got < 0:
            # the arena is full: decode what it holds, then start over at its beginning
            fo.decode(bufs, idx, names)
            bufs, idx, names, pos = [], [], [], 0
            got = store.read_into(key, arena)
            if got is not None and got < 0:  # larger than the whole arena
                data = store.get(key)
                got = None if data is None else -1
                if data is not None:
                    fo.decode([data], [i], [key])
                    continue
        if got is None:
            fo.absent(i, key)
            continue
        bufs.append(arena[pos: pos + got])
        idx.append(i)
        names.append(key)
        pos += got
    fo.decode(bufs, idx, names)


# ---------------------------------------------------------------------------- shards
def _shard_items(io: ArrayIO, fo: FusedOutput) -> tuple[np.ndarray, list[Any], list[Any]]:
    """Each task's flat inner chunk number in its shard, the shards' task groups, and the work
    items of the read (:func:`.shard.fetch.work_items`)."""
    lay = io.layout
    assert lay is not None
    flat, groups = group_by_shard(fo.coords, lay.chunks_per_shard)
    return flat, groups, work_items(groups, fo.n, lay)


def _via_store(io: ArrayIO, fo: FusedOutput, flat: np.ndarray) -> Callable[[Sequence[tuple[Any, ...]]], None]:
    """The reader of work items through the Store API (a thread's arena, :class:`ShardArenaReader`);
    the parts of a split shard share one read of its index."""
    assert io.layout is not None and io.sharding is not None
    indices: dict[Any, Any] = {}

    def via_store(batch: Sequence[tuple[Any, ...]]) -> None:
        reader = ShardArenaReader(io.store, buffers.thread_arena(fo.arena_bytes), fo.decode, fo.fill_task)
        for sc, g, _whole in batch:
            key = io.chunk_key(sc)
            tasks = g.tolist()
            index = indices.get(sc, False)
            if index is False:
                index = indices[sc] = shard_index.fetch(io.store, key, io.sharding, io.layout)
            if index is None:
                for i in tasks:
                    fo.absent(i, key)
                continue
            reader.read(key, index, tasks, [int(flat[i]) for i in tasks])
        reader.flush()

    return via_store


def shards_via_store(io: ArrayIO, fo: FusedOutput) -> None:
    """Shards read through the Store API: per work item the shard's index by one byte-range
    request, then its wanted inner chunks in windows into the thread's arena."""
    assert io.layout is not None
    flat, _, items = _shard_items(io, fo)
    run_batches(_via_store(io, fo, flat), items, cost=io.layout.inner.spec.nbytes * fo.n)


def shard_files(io: ArrayIO, fo: FusedOutput) -> None:
    """Local shard files: every part of every shard (index read, inner chunk reads, decodes) in C
    on the native pool, the GIL released once per window of READ_WINDOW_BYTES.  What C leaves
    (damaged indexes, shards that changed while read, inner chunks larger than the arena) goes
    through the Store API, which reports the damage."""
    lay = io.layout
    assert lay is not None
    flat, groups, items = _shard_items(io, fo)
    via_store = _via_store(io, fo, flat)
    entries = flat.astype(np.int64, copy=False)
    windows = buffers.read_windows([lay.inner.spec.nbytes * len(g) for _, g, _ in items])
    if len(groups) == 1 and len(windows) == 1:  # one shard's parts in order: the tasks as they are
        _shard_files(io, fo, io.files, items, entries, via_store, whole=True)
        return
    for lo, hi in windows:
        _shard_files(io, fo, io.files, items[lo:hi], entries, via_store)


def _shard_files(io: ArrayIO, fo: FusedOutput, files: Any, items: list[Any], entries: np.ndarray,
                 via_store: Callable[[list[Any]], None], whole: bool = False) -> None:
    """The work ``items`` in C with the GIL released once; ``whole``: ``items`` are all of
    ``fo``'s tasks, in order."""
    lay = io.layout
    assert lay is not None and io.sharding is not None
    key_of: dict[tuple[int, ...], str] = {}  # the parts of a split shard: one key, one path
    for sc, _, _ in items:
        if sc not in key_of:
            key_of[sc] = io.chunk_key(sc)
    keys = [key_of[sc] for sc, _, _ in items]
    paths, nofollow = files.read_paths(list(key_of.values()))
    path_of = dict(zip(key_of.values(), paths))
    parts = [g for _, g, _ in items]
    counts = [len(g) for g in parts]
    if whole:
        ii = np.arange(fo.n)
        starts, shapes, offs = fo.tasks(None)
        ents = np.ascontiguousarray(entries)
    else:
        ii = np.concatenate(parts) if len(parts) > 1 else parts[0]
        starts, shapes, offs = fo.tasks(ii)
        ents = np.ascontiguousarray(entries[ii])
    workers = min(parallel_workers(len(items), cost=lay.inner.spec.nbytes * len(ii)), POOL_MAX)
    bufs = buffers.pool_read_buffers(workers, fo.scratch_bytes, fo.arena_bytes)
    try:
        missing, too_large, retry = fo.plan.read_shards_par(
            [path_of[k] for k in keys], counts, ents, bufs, batch_bounds(len(items), workers),
            starts, shapes, offs, fo.full, lay.n, io.sharding.index_location == "end", bool(lay.fast_index_crc),
            COALESCE_GAP, fo.stream, fo.nslots, nofollow)
    except (CodecError, StoreError) as e:
        ends = np.cumsum(counts)  # task position -> part: searchsorted(ends, pos, "right")

        def label(pos: int | None) -> str | None:
            if pos is None:
                return None
            key = keys[int(np.searchsorted(ends, pos, side="right"))]
            return f"shard {key!r}" if isinstance(e, StoreError) else f"chunk {key}[{int(entries[ii[pos]])}]"  # noqa: F821

        pos = getattr(e, "task_index", None)
        if isinstance(pos, int) and 0 <= pos < len(ii):
            detail = inner_range_detail(e, io, keys[int(np.searchsorted(ends, pos, side="right"))], int(entries[ii[pos]]))
            if detail is not e:
                raise detail from None
        err = task_error(e, label)
        if err is None:
            raise
        raise err from None
    for j in missing:
        fo.fill_task(int(ii[j]))
    if not (missing or too_large or retry):
        return
    ends = np.cumsum(counts)
    if missing and fo.missing is not None:
        # C reports absent shards and absent inner chunks alike: the shards not in the store
        for p in np.unique(np.searchsorted(ends, missing, side="right")):
            if not io.store.exists(keys[p]):
                fo.missing.add(keys[p])
    if too_large or retry:
        redo = sorted(too_large + retry)
        p_of = np.searchsorted(ends, redo, side="right")
        again = []
        for p in np.unique(p_of):
            again.append((items[p][0], ii[np.asarray(redo)[p_of == p]], False))
        via_store(again)
