"""The read planner: from the indexer's chunk tasks to the way they are read and decoded.

Strategies (the name each read counts in :data:`strategy_counts`):

- ``"fused-files"``: chunks of a store with native file access (``ArrayIO.files``: a
  LocalStore's :meth:`~zarrbolt.storage.LocalStore.native_files`) opened, read and decoded by
  C on the native pool, the GIL released once per window of READ_WINDOW_BYTES;
- ``"fused-store"``: chunks read through the Store API (``read_into``) into a thread's arena,
  decoded by the fused C plan an arena at a time;
- ``"per-codec"``: each chunk decoded by the Python codec chain (chains without a C plan,
  selections with steps or index arrays);
- ``"sharded-fused-files"``, ``"sharded-fused-store"``, ``"sharded-per-codec"``: the same for
  shards read directly (the sharding codec alone in the chain), their I/O planned by
  :mod:`.shard_io`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import buffers, outbuf
from .._ext._plans import POOL_MAX
from .._threads import batch_bounds, parallel_workers, run_batches
from ..errors import CodecError, CodecRangeError, CorruptChunkError, MetadataError, StoreError
from ..indexing import ChunkProjection
from .context import ArrayIO
from .shard_io import COALESCE_GAP, ShardArenaReader, fetch_inner_chunks, group_by_shard, shard_index, work_items

# How many reads took each strategy (a debugging and testing aid; see the module docstring).
strategy_counts: Counter[Any] = Counter()


def read(io: ArrayIO, make_indexer: Callable[[tuple[int, ...]], Any], *, out: np.ndarray | None = None,
         missing: set[Any] | None = None) -> np.ndarray:
    """Read a selection: ``make_indexer(chunk_shape)`` makes its indexer over the chunk grid.

    ``out``: an existing array of the selection's shape and the array's dtype (any strides) that
    the read writes into (and returns) instead of a new one.  ``missing``: a set the store keys
    of absent chunks / shards are added to (absent inner chunks of a present shard are not).
    Stores with an async source (remote stores) are read by :func:`.remote.read_remote`."""
    if io.source is not None:
        from .remote import read_remote

        return read_remote(io, make_indexer, out, missing)
    if io.shard_direct:
        assert io.layout is not None
        indexer = make_indexer(io.layout.chunk_shape)
        out = _check_out(io, indexer, out)
        items = _unit_items(io, indexer)
        if items is not None:
            return _read_sharded_fused(io, indexer, items, out, missing)
        return _read_sharded(io, indexer, out, missing)
    indexer = make_indexer(io.chunk_shape)
    out = _check_out(io, indexer, out)
    items = _unit_items(io, indexer)
    if items is not None:
        return _read_fused(io, indexer, items, out, missing)
    return _read_per_codec(io, indexer, out, missing)


def _check_out(io: ArrayIO, indexer: Any, out: np.ndarray | None) -> np.ndarray | None:
    if out is None:
        return None
    if not isinstance(out, np.ndarray) or tuple(out.shape) != tuple(indexer.shape) or out.dtype != io.dtype:
        raise ValueError(f"out must be a numpy array of shape {tuple(indexer.shape)} and dtype {io.dtype}, got "
                         f"{type(out).__name__} {getattr(out, 'shape', None)} {getattr(out, 'dtype', None)}")
    if not out.flags.writeable:
        raise ValueError("out must be writable")
    return out


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


def _unit_items(io: ArrayIO, indexer: Any) -> tuple[Any, ...] | None:
    """The fused decode's tasks (ints and step-1 slices with a C plan), or None."""
    if io.plan is None or not io.ndim or not hasattr(indexer, "unit_step_items"):
        return None
    items: tuple[Any, ...] | None = indexer.unit_step_items()
    return items


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
        o = int(offs[flat])
        data = mv[o: o + int(nb[flat])]
    except Exception:  # noqa: BLE001 - only a better message was sought
        return e
    return range_detail(e, io, f"shard {key!r}, inner chunk {flat}", data)


class FusedOutput:
    """The output of a fused read and where each task goes in it; decodes batches into it."""

    def __init__(self, io: ArrayIO, indexer: Any, items: tuple[Any, ...], out: np.ndarray | None = None):
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
        self.missing: set[Any] | None = None  # where absent chunks / shards are recorded (read(missing=))

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


# ---------------------------------------------------------------------------- chunks
def _read_fused(io: ArrayIO, indexer: Any, items: tuple[Any, ...], out: np.ndarray | None = None,
                missing: set[Any] | None = None) -> np.ndarray:
    """Unsharded reads of ints and step-1 slices through the fused C pipeline."""
    fo = FusedOutput(io, indexer, items, out)
    fo.missing = missing
    if fo.n == 0:
        return fo.out
    fo.prepare()
    files = io.files
    nbytes = io.bound.spec.nbytes
    keys = [io.chunk_key(c) for c in fo.coords.tolist()]
    if files is not None:
        strategy_counts["fused-files"] += 1
        for lo, hi in buffers.read_windows([nbytes] * fo.n):
            _read_chunk_files(io, fo, files, keys, lo, hi)
    else:
        strategy_counts["fused-store"] += 1
        run_batches(lambda batch: _read_chunks_via_store(io, fo, keys, batch), range(fo.n), cost=nbytes * fo.n)
    return fo.out


def _read_chunk_files(io: ArrayIO, fo: FusedOutput, files: Any, keys: list[str], lo: int, hi: int) -> None:
    """Local files: open, read and decode chunks [lo, hi) in C, on the threads of the native
    pool, with the GIL released once."""
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


def _read_chunks_via_store(io: ArrayIO, fo: FusedOutput, keys: list[str], batch: Sequence[int]) -> None:
    """Chunks ``batch`` read whole through the Store API into this thread's arena, decoded an
    arena at a time."""
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


def _read_per_codec(io: ArrayIO, indexer: Any, out: np.ndarray | None = None,
                    missing: set[Any] | None = None) -> np.ndarray:
    """Every chunk decoded by the Python codec chain, then copied into its place."""
    strategy_counts["per-codec"] += 1
    if out is None:
        out = np.empty(indexer.shape, dtype=io.dtype)
    _per_codec_projections(io, list(indexer), out, missing)
    return out


def _per_codec_projections(io: ArrayIO, projections: list[Any], out: np.ndarray, missing: set[Any] | None) -> None:
    """The chunks of ``projections`` decoded by the Python codec chain into ``out``."""
    if not projections:
        return
    store, fill = io.store, io.fill

    def work(batch: Sequence[ChunkProjection]) -> None:
        for p in batch:
            key = io.chunk_key(p.chunk_coords)
            data = store.get(key)
            if data is None:
                out[p.out_selection] = fill
                if missing is not None:
                    missing.add(key)
                continue
            chunk = io.decode_chunk(data, key)
            out[p.out_selection] = chunk[p.chunk_selection]

    run_batches(work, projections, cost=io.bound.spec.nbytes * len(projections))


# ---------------------------------------------------------------------------- shards
def _read_sharded_fused(io: ArrayIO, indexer: Any, items: tuple[Any, ...], out: np.ndarray | None = None,
                        missing: set[Any] | None = None) -> np.ndarray:
    """Sharded reads of ints and step-1 slices: inner chunks decoded by the fused pipeline."""
    lay = io.layout
    assert lay is not None and io.sharding is not None
    fo = FusedOutput(io, indexer, items, out)
    fo.missing = missing
    if fo.n == 0:
        return fo.out
    fo.prepare()
    flat, groups = group_by_shard(fo.coords, lay.chunks_per_shard)
    items_ = work_items(groups, fo.n, lay)
    indices: dict[str, Any] = {}  # the parts of a split shard share one index read

    def via_store(batch: Sequence[tuple[Any, ...]]) -> None:
        reader = ShardArenaReader(io.store, io.sharding, lay, buffers.thread_arena(fo.arena_bytes), fo.decode, fo.fill_task)
        for sc, g, _whole in batch:
            key = io.chunk_key(sc)
            tasks = g.tolist()
            index = indices.get(sc, False)
            if index is False:
                index = indices[sc] = shard_index(io.store, key, io.sharding, lay)
            if index is None:
                for i in tasks:
                    fo.absent(i, key)
                continue
            reader.read(key, index, tasks, [int(flat[i]) for i in tasks])
        reader.flush()

    files = io.files if lay.fast_index_crc is not None else None
    inner_nbytes = lay.inner.spec.nbytes
    if files is not None:
        strategy_counts["sharded-fused-files"] += 1
        entries = flat.astype(np.int64, copy=False)
        windows = buffers.read_windows([inner_nbytes * len(g) for _, g, _ in items_])
        if len(groups) == 1 and len(windows) == 1:  # one shard's parts in order: the tasks as they are
            _read_shard_files(io, fo, files, items_, entries, via_store, whole=True)
            return fo.out
        for lo, hi in windows:
            _read_shard_files(io, fo, files, items_[lo:hi], entries, via_store)
    else:
        strategy_counts["sharded-fused-store"] += 1
        run_batches(via_store, items_, cost=inner_nbytes * fo.n)
    return fo.out


def _read_shard_files(io: ArrayIO, fo: FusedOutput, files: Any, items: list[Any], entries: np.ndarray,
                      via_store: Callable[[list[Any]], None], whole: bool = False) -> None:
    """Local shard files: every part of every shard of ``items`` (index read, inner chunk reads,
    decodes) in C, on the threads of the native pool, with the GIL released once.  What C
    leaves (damaged indexes, shards that changed while read, inner chunks larger than the arena)
    goes ``via_store``, which reports the damage.  ``whole``: ``items`` are all of ``fo``'s
    tasks, in order."""
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


def _read_sharded(io: ArrayIO, indexer: Any, out: np.ndarray | None = None,
                  missing: set[Any] | None = None) -> np.ndarray:
    """Read through the inner chunk grid, per shard fetching only the inner chunks the
    selection touches (see :func:`.shard_io.fetch_inner_chunks`), decoding each with the inner
    chain."""
    strategy_counts["sharded-per-codec"] += 1
    if out is None:
        out = np.empty(indexer.shape, dtype=io.dtype)
    _read_shard_groups(io, _sharded_groups(io, indexer), out, missing)
    return out


def _sharded_groups(io: ArrayIO, indexer: Any) -> dict[tuple[int, ...], list[tuple[int, ChunkProjection]]]:
    """The projections over the inner chunk grid grouped by shard: ``{shard coords: [(flat
    inner chunk number, projection)]}``."""
    assert io.layout is not None
    cps = io.layout.chunks_per_shard
    by_shard: dict[tuple[int, ...], list[tuple[int, ChunkProjection]]] = {}
    strides = [1] * len(cps)
    for d in range(len(cps) - 2, -1, -1):
        strides[d] = strides[d + 1] * cps[d + 1]
    for p in indexer:
        sc = tuple(c // n for c, n in zip(p.chunk_coords, cps))
        flat = sum((c % n) * st for c, n, st in zip(p.chunk_coords, cps, strides))
        by_shard.setdefault(sc, []).append((flat, p))
    return by_shard


def _read_shard_groups(io: ArrayIO, by_shard: dict[tuple[int, ...], Any], out: np.ndarray, missing: set[Any] | None,
                       fetch: Callable[..., list[Any] | None] = fetch_inner_chunks) -> None:
    """Decode the inner chunks of ``by_shard`` (:func:`_sharded_groups`) with the inner chain
    into ``out``; ``fetch`` gets a shard's wanted inner chunks (see :func:`.shard_io.fetch_inner_chunks`)."""
    if not by_shard:
        return
    lay = io.layout
    assert lay is not None
    items = work_items(list(by_shard.items()), sum(len(e) for e in by_shard.values()), lay)
    fill, inner = io.fill, lay.inner

    def work(batch: Sequence[tuple[Any, ...]]) -> None:
        for sc, entries, whole in batch:
            key = io.chunk_key(sc)
            parts = fetch(io.store, key, io.sharding, lay, [f for f, _ in entries], whole)
            if parts is None and missing is not None:
                missing.add(key)
            for (flat, p), data in zip(entries, parts if parts is not None else [None] * len(entries)):
                if data is None:
                    out[p.out_selection] = fill
                    continue
                try:
                    chunk = inner.decode(data)
                except (CodecError, MetadataError) as e:
                    raise type(e)(f"shard {key!r}, inner chunk {flat}: {e}") from e
                except (ValueError, TypeError) as e:
                    raise CorruptChunkError(f"shard {key!r}, inner chunk {flat}: {e}") from e
                out[p.out_selection] = chunk[p.chunk_selection]

    cost = lay.inner.spec.nbytes * sum(len(e) for _, e, _ in items)
    run_batches(work, items, cost=cost)
