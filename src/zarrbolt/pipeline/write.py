"""Writes: gather each chunk's values out of the user's value, encode, store.

:func:`write` is the one entry of every write.  It casts the value once, then hands the chunks to
their writer: shards written directly (the sharding codec alone in the chain) to
:class:`~.shard.storing.ShardWriter`, which decides how each shard is written; chunks to
:class:`ChunkWriter`: whole chunks of a store with native file access gathered, encoded and
written (temporary file + rename) by C on the native pool (:func:`write_native`), the rest chunk
by chunk: rows of complete chunks gathered in one pass (:class:`WriteRows`), partial chunks read,
modified and written again (:class:`~.writers.Writer`: under the key's lock, or guarded by the
object's version).  A store with an async source (remote stores) is written through a
:class:`~zarrbolt.storage.write_behind.WriteBehindStore`: whole values are sent together,
concurrently, when half the store's bytes in flight are collected and at the end."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import buffers
from .. import config, kernels
from .._ext._plans import ENC_FILL, POOL_MAX
from .._threads import batch_bounds, parallel_workers
from ..errors import InvalidValueError, MetadataError, ReadOnlyError, ValueOverflowError, ZarrboltError
from ..indexing import ChunkProjection, check_value_shape
from ..storage.write_behind import WriteBehindStore
from .context import ArrayIO
from .shard import INDEX_CACHE, ShardWriter
from .writers import UnitDone, Writer


def write(io: ArrayIO, indexer: Any, value: Any, *, write_empty: bool | None = None,
          on_unit: UnitDone | None = None) -> None:
    """Write ``value`` (broadcast to the selection's shape) at the selection of ``indexer`` (over
    the array's chunk grid; a grid whose chunks differ in shape is written a shape at a time,
    :meth:`ArrayIO.write_groups`).
    ``write_empty``: whether chunks (shards) that hold only the fill value are stored (None:
    the ``write_empty_chunks`` config option); else they are erased.  ``on_unit``: told as each
    chunk (shard) is done, and whether it was stored (:data:`~.writers.UnitDone`)."""
    if io.store.read_only:  # (native file writes bypass the store)
        raise ReadOnlyError(f"{io.store!r} is read-only")
    if not isinstance(value, (np.ndarray, np.generic)):
        value = from_python(value, io.dtype)
    value = check_value_shape(np.asarray(value) if not np.isscalar(value) else value, indexer.shape)
    if isinstance(value, np.ndarray):
        if value.dtype != io.dtype:
            value = cast_for_write(value, io.dtype)
    else:
        value = cast_for_write(np.asarray(value), io.dtype)
    projections = list(indexer)
    if not projections:
        return
    if write_empty is None:
        write_empty = config.get("write_empty_chunks")
    shape = tuple(indexer.shape)
    if io.source is None:
        for g_io, projs in io.write_groups(projections):
            _writer(g_io, value, write_empty, False, on_unit).write(projs, shape)
        return
    token = io.store.token()
    store = WriteBehindStore(io.store, io.source, limit=max(1, io.source.max_bytes_in_flight // 2),
                             on_write=lambda key: INDEX_CACHE.invalidate(token, key))
    try:
        for g_io, projs in io.with_store(store).write_groups(projections):
            _writer(g_io, value, write_empty, True, on_unit).write(projs, shape)
    except BaseException:
        try:
            store.flush()  # what was done is stored, as on a local store
        except Exception:  # noqa: BLE001 - the first failure is the one reported
            pass
        raise
    store.flush()


def _writer(io: ArrayIO, value: Any, write_empty: bool, remote: bool,
            on_unit: UnitDone | None) -> ShardWriter | ChunkWriter:
    if io.shard_direct:
        return ShardWriter(io, value, write_empty, remote, on_unit)
    return ChunkWriter(io, value, write_empty, remote, on_unit)


class ChunkWriter(Writer):
    """Writes chunks (the array's, or shards with codecs around the sharding codec, whole): see
    the module doc."""

    def __init__(self, io: ArrayIO, value: np.ndarray, write_empty: bool, remote: bool = False,
                 on_unit: UnitDone | None = None):
        super().__init__(io, value, write_empty, remote, on_unit)
        self.rows = WriteRows(io, value)

    def write(self, projections: list[ChunkProjection], shape: tuple[int, ...]) -> None:
        """Write the chunks of ``projections`` of a selection of ``shape``."""
        io, value = self.io, self.value
        if io.files is not None and io.sharding is None and isinstance(value, np.ndarray):
            whole = value
            if value.ndim == 0 and len(shape) == io.ndim:
                whole = np.broadcast_to(value, shape)  # one value for every element
            if whole.dtype.kind in "mM":  # (C sees the 64-bit integers: buffers take no datetimes)
                whole = whole.view(np.int64)
            projections = write_native(io, projections, whole, self.write_empty, self.on_unit)
            if not projections:
                return
        self.run_all(projections, io.bound.spec.nbytes * len(projections))

    def run(self, batch: Sequence[ChunkProjection]) -> None:
        rows = self.rows
        runs = rows.runs(batch)
        gathered: dict[int, np.ndarray] = {}
        for n, p in enumerate(batch):
            key = self.io.chunk_key(p.chunk_coords)
            if n in runs:  # the first of a row of complete chunks: gather the row (see WriteRows)
                gathered = rows.gather(batch, n, runs[n])
            chunk = gathered.pop(n, None)
            if chunk is not None:
                self.unit_done(key, self._put(key, chunk))
                continue
            with self.update_of(p, key):
                chunk = self._chunk(p, key)
                if chunk is not None:
                    self.unit_done(key, self._put(key, chunk))

    def _chunk(self, p: ChunkProjection, key: str) -> np.ndarray | None:
        """The new contents of chunk ``key`` (None when it was stored here: a conditional update)."""
        io = self.io
        src = self.source_of(p)
        if p.is_complete_chunk:
            region = io.grid.chunk_region(p.chunk_coords, io.shape)
            inside = tuple(r.stop - r.start for r in region)
            if inside == tuple(io.chunk_shape):
                chunk = np.empty(io.chunk_shape, dtype=io.dtype)
                chunk[...] = src
                return chunk
            chunk = np.full(io.chunk_shape, io.fill, dtype=io.dtype)
            chunk[tuple(slice(0, n) for n in inside)] = src
            return chunk
        if self.conditional:
            self.unit_done(key, self.conditional_update(key, lambda data: self._updated(p, key, src, data)))
            return None
        data = io.store.get(key)
        return self._merged(p, key, src, data)

    def _merged(self, p: ChunkProjection, key: str, src: Any, data: Any) -> np.ndarray:
        """Chunk ``key`` (stored bytes ``data``; None: absent) with ``src`` written at ``p``."""
        io = self.io
        if data is None:
            chunk = np.full(io.chunk_shape, io.fill, dtype=io.dtype)
        else:
            chunk = np.array(io.decode_chunk(data, key), copy=True)
        chunk[p.chunk_selection] = src
        return chunk

    def _updated(self, p: ChunkProjection, key: str, src: Any, data: Any) -> bytes | None:
        """The new stored value of chunk ``key`` for a conditional update; None when nothing is
        to be stored (a new chunk that stays all fill).  A chunk that becomes all fill is stored
        as such: a delete cannot be made conditional."""
        chunk = self._merged(p, key, src, data)
        if data is None and not self.write_empty and self.is_fill(chunk):
            return None
        return bytes(memoryview(self.io.bound.encode(chunk)).cast("B"))

    def _put(self, key: str, chunk: np.ndarray) -> bool:
        """Encode and store ``chunk`` (erase it when it is all fill and empty chunks are not
        written); whether it was stored."""
        store = self.io.store
        if not self.write_empty and self.is_fill(chunk):
            store.erase(key)
            return False
        store.set(key, self.io.bound.encode(chunk))
        return True


class WriteRows:
    """Gathers the complete chunks of a write that follow one another along the last axis (a row
    of chunks) out of the value in one pass that reads the value in memory order
    (``strided_copy(src_order=True)``) into a per-thread buffer, instead of copying each chunk's
    short rows out of the value on its own: on this project's VM that halves the cost of the
    gather (a 256x1024x1024 uint16 value in 64^3 chunks: 190 -> 95 ms)."""

    MAX_BYTES = 16 << 20  # per thread (buffers.thread_gather)

    def __init__(self, io: ArrayIO, value: Any):
        self.ok = (isinstance(value, np.ndarray) and value.ndim == io.ndim >= 2 and value.dtype == io.dtype
                   and not value.dtype.hasobject)
        self.value = value
        self.chunk_shape = tuple(io.chunk_shape)
        self.grid = io.grid
        self.shape = io.shape
        self.chunk_nbytes = math.prod(self.chunk_shape) * (value.dtype.itemsize if self.ok else 1)
        self.max_run = max(1, self.MAX_BYTES // max(self.chunk_nbytes, 1))

    def _full(self, p: ChunkProjection) -> bool:
        if not p.is_complete_chunk or len(p.out_selection) != len(self.chunk_shape):
            return False
        region = self.grid.chunk_region(p.chunk_coords, self.shape)
        return all(r.stop - r.start == c for r, c in zip(region, self.chunk_shape)) and all(
            isinstance(o, slice) and (o.step or 1) == 1 for o in p.out_selection)

    def _follows(self, p: ChunkProjection, q: ChunkProjection) -> bool:
        return (q.chunk_coords[:-1] == p.chunk_coords[:-1] and q.chunk_coords[-1] == p.chunk_coords[-1] + 1
                and q.out_selection[:-1] == p.out_selection[:-1]
                and q.out_selection[-1].start == p.out_selection[-1].stop)

    def runs(self, batch: Sequence[ChunkProjection]) -> dict[int, int]:
        """{first: end} of the runs of two or more complete chunks in ``batch`` that follow one
        another along the last axis (at most ``max_run`` each)."""
        runs: dict[int, int] = {}
        if not self.ok or len(batch) < 2:
            return runs
        i = 0
        while i < len(batch):
            j = i + 1
            if self._full(batch[i]):
                while (j < len(batch) and j - i < self.max_run and self._full(batch[j])
                       and self._follows(batch[j - 1], batch[j])):
                    j += 1
            if j - i >= 2:
                runs[i] = j
            i = j
        return runs

    def gather(self, batch: Sequence[ChunkProjection], i: int, j: int) -> dict[int, np.ndarray]:
        """{position in batch: the chunk's data} for the run ``batch[i:j]``, gathered into this
        thread's buffer: valid until the thread's next call."""
        n = j - i
        c = self.chunk_shape
        dst = buffers.thread_gather(n * self.chunk_nbytes)[: n * self.chunk_nbytes].view(self.value.dtype).reshape((n,) + c)
        first, last = batch[i].out_selection, batch[j - 1].out_selection
        src = self.value[first[:-1] + (slice(first[-1].start, last[-1].stop),)]
        kernels.strided_copy(np.moveaxis(dst, 0, -2), src.reshape(c[:-1] + (n, c[-1])), src_order=True)
        return {i + k: dst[k] for k in range(n)}


def write_native(io: ArrayIO, projections: list[Any], value: np.ndarray, write_empty: bool,
                 on_unit: UnitDone | None = None) -> list[Any]:
    """Write the whole chunks among ``projections`` of a store with native file access in C
    (csrc/encode.c: gather, encode, atomic file writes, on the native pool with the GIL released
    once); return the projections left for the per-chunk path (partial chunks, and everything
    when the chain, store or value does not allow it)."""
    files = io.files
    if files is None or len(projections) < 1:
        return projections
    nd = len(io.chunk_shape)
    if value.ndim != nd or value.dtype != io.dtype:
        return projections
    plan = io.encode_plan(write_empty)
    if plan is None:
        return projections
    mine: list[Any] = []
    rest: list[Any] = []
    for p in projections:
        ok = p.is_complete_chunk and len(p.out_selection) == nd and all(
            isinstance(o, slice) and (o.step is None or o.step == 1) for o in p.out_selection)
        (mine if ok else rest).append(p)
    if not mine:
        return projections
    n = len(mine)
    strides = np.asarray(value.strides, dtype=np.int64)
    starts = np.array([[o.start for o in p.out_selection] for p in mine], dtype=np.int64).reshape(n, nd)
    shapes = np.array([[r.stop - r.start for r in io.grid.chunk_region(p.chunk_coords, io.shape)] for p in mine],
                      dtype=np.int64).reshape(n, nd)
    offsets = np.ascontiguousarray(starts @ strides) if nd else np.zeros(n, np.int64)
    keys = [io.chunk_key(p.chunk_coords) for p in mine]
    try:
        bpaths, tmps = files.write_paths(keys)
    except (OSError, ZarrboltError):  # a file in the way, a bad key...: the store reports it
        return projections
    chunk_nbytes = io.bound.spec.nbytes
    done = 0
    redo: list[Any] = []
    for lo, hi in buffers.read_windows([chunk_nbytes] * n):
        m = hi - lo
        workers = min(parallel_workers(m, cost=chunk_nbytes * m), POOL_MAX)
        work = buffers.pool_work_buffers(workers, plan.work_bytes)
        st, failed, _, _, results = plan.write_par(
            value, bpaths[lo:hi], tmps[lo:hi], offsets[lo:hi], np.ascontiguousarray(shapes[lo:hi]),
            batch_bounds(m, workers), work, bool(files.fsync))
        for i, r in enumerate(results):
            if r == ENC_FILL:
                io.store.erase(keys[lo + i])
        if on_unit is not None:
            for i in range(failed):
                on_unit(keys[lo + i], results[i] != ENC_FILL)
        done = lo + failed
        if st != 0:
            # what C could not do (a directory pruned meanwhile, a path that is a directory,
            # a codec error...) goes the per-chunk way, which retries or reports it
            redo = mine[done:]
            break
    files.sync_dirs(keys[:done])
    return rest + redo


def from_python(value: Any, dtype: np.dtype) -> Any:
    """Python numbers (and lists of them) for an integer array, converted as numpy assignment
    converts them: out of range is an OverflowError, NaN a ValueError (the zarrbolt.errors
    subclasses ValueOverflowError / InvalidValueError).  Numpy arrays and scalars never come
    here: they are cast like numpy casts them (wrapping), with no extra pass."""
    if dtype.kind not in "iu":
        return value
    try:
        return np.asarray(value, dtype=dtype)
    except OverflowError as e:
        raise ValueOverflowError(f"{e} (the array's data type is {dtype})") from None
    except ValueError as e:
        raise InvalidValueError(f"{e} (the array's data type is {dtype})") from None
    except TypeError:
        return value  # not numbers: cast_for_write reports it


def cast_for_write(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Convert a user value to the array dtype the way numpy assignment does (same_kind-ish),
    refusing conversions that would silently lose information for raw types."""
    if dtype.kind == "O" and value.dtype.kind not in "OS":  # variable_length_bytes: bytes only
        raise MetadataError(f"cannot write values of dtype {value.dtype} into an array of bytes objects")
    if dtype.kind == "V":
        if value.dtype.fields is not None and dtype.fields is not None:
            try:  # records: field by field (a viewed '>i4' field would be read as '<i4')
                return value.astype(dtype, casting="unsafe", copy=False)
            except (TypeError, ValueError) as e:
                raise MetadataError(f"cannot convert {value.dtype} records to {dtype}: {e}") from None
        if value.dtype.kind == "V" and value.dtype.itemsize == dtype.itemsize:
            return value.view(dtype)
        if value.dtype.kind == "S" and value.dtype.itemsize <= dtype.itemsize:
            out = np.zeros(value.shape, dtype=dtype)
            out.view(np.uint8).reshape(value.shape + (dtype.itemsize,))[..., : value.dtype.itemsize] = value.view(
                np.uint8
            ).reshape(value.shape + (value.dtype.itemsize,))
            return out
        raise MetadataError(f"cannot write values of dtype {value.dtype} into a raw array of {dtype}")
    try:
        return value.astype(dtype, casting="unsafe", copy=False)
    except (TypeError, ValueError) as e:
        raise MetadataError(f"cannot convert {value.dtype} values to {dtype}: {e}") from None
