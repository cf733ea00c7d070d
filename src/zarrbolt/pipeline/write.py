"""Writes: gather each chunk's values out of the user's value, encode, store.

Whole chunks of a store with native file access are gathered, encoded and written (temp file +
rename) by C on the native pool (:func:`write_native`); the rest goes chunk by chunk
(:class:`ChunkWriter`): rows of complete chunks gathered in one pass (:class:`WriteRows`),
partial chunks read, modified and written again, shards written directly encoded whole (their
inner chunks by one C call, :func:`inner_encoder`) or updated in place.

A partial update (read, modify, write) holds the key's write lock (:mod:`zarrbolt.storage.locks`:
across processes on a LocalStore, across threads elsewhere) unless the ``write_lock`` option is
off; remote stores with conditional writes guard it by the object's version instead.  Writes
of whole chunks and shards take no lock."""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import buffers, outbuf, shard_stream
from .. import config, kernels
from .._ext._plans import ENC_FILL, POOL_MAX
from .._threads import batch_bounds, parallel_workers, run_batches
from ..errors import (CodecError, InvalidValueError, MetadataError, ReadOnlyError, ValueOverflowError,
                      ZarrboltError)
from ..indexing import ChunkProjection, check_value_shape
from ..storage.locks import key_lock
from .context import ArrayIO


def write(io: ArrayIO, indexer: Any, value: Any, *, write_empty: bool | None = None) -> None:
    """Write ``value`` (broadcast to the selection's shape) at the selection of ``indexer``.
    ``write_empty``: whether chunks (shards) that hold only the fill value are stored (None:
    the ``write_empty_chunks`` config option); else they are erased."""
    if getattr(io.store, "read_only", False) is True:  # (native file writes bypass the store)
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
    if io.source is not None:
        _write_remote(io, projections, value, write_empty)
        return
    if io.sharding is None and isinstance(value, np.ndarray):
        whole = value
        if value.ndim == 0 and len(indexer.shape) == io.ndim:
            whole = np.broadcast_to(value, indexer.shape)  # one value for every element
        if whole.dtype.kind in "mM":  # (C sees the 64-bit integers: buffers take no datetimes)
            whole = whole.view(np.int64)
        projections = write_native(io, projections, whole, write_empty)
        if not projections:
            return
    writer = ChunkWriter(io, value, write_empty)
    if writer.sharding is not None and (len(projections) < config.get("threads")
                                        or _large_shards(io, len(projections))):
        # Fewer shards than threads, or large ones: one shard at a time, its inner chunks
        # encoded in parallel, each shard stored while the next one is encoded.
        writer.background = StoreBehind(math.prod(indexer.shape) * io.dtype.itemsize // STORE_BEHIND_SHARE)
        try:
            writer.run(projections)
        except BaseException:
            writer.background.wait(report=False)
            raise
        writer.background.wait()
    else:
        run_batches(writer.run, projections, cost=io.bound.spec.nbytes * len(projections))


# Each shard being encoded holds its encoded bytes (up to the shard's size) until it is stored:
# shards are encoded side by side only while that is at most this share of what the write
# stores (or 64 MiB), so that a write needs little memory on top of its value (docs/memory.md).
SHARDS_IN_FLIGHT_SHARE = 8
SHARDS_IN_FLIGHT_MIN = 64 << 20


def _large_shards(io: ArrayIO, nshards: int) -> bool:
    """Whether shards side by side (one per thread) would hold too much memory at once."""
    threads: int = config.get("threads")
    shard: int = io.bound.spec.nbytes
    return threads > 1 and threads * shard > max(SHARDS_IN_FLIGHT_MIN, nshards * shard // SHARDS_IN_FLIGHT_SHARE)


def _write_remote(io: ArrayIO, projections: list[Any], value: Any, write_empty: bool) -> None:
    """A store with an async source: see :mod:`.remote_write` (whole objects sent concurrently,
    partial updates guarded by the object's version where the store can)."""
    import copy

    from .remote_write import RemoteWriteStore, run_projections

    store = RemoteWriteStore(io.store, io.source)
    io = copy.copy(io)
    io.store, io.files, io.source = store, None, None
    writer = ChunkWriter(io, value, write_empty)
    # whole chunks are encoded (CPU) and queued for concurrent PUTs: the configured threads;
    # partial updates wait on a GET and a PUT each: as many as the store has requests in flight
    threads = config.get("threads")
    if not all(p.is_complete_chunk for p in projections):
        threads = max(threads, int(getattr(store.source, "concurrency", 8)))
    try:
        run_projections(writer.run, projections, threads)
    except BaseException:
        try:
            store.flush()  # what was done is stored, as on a local store
        except Exception:  # noqa: BLE001 - the first failure is the one reported
            pass
        raise
    store.flush()


# A shard is stored behind the encoding of the next one only while two encoded shards are at
# most this share of the bytes the write stores (a read-then-write round trip of a volume stays
# within 1.3x the volume; docs/memory.md); else it is stored before the next one is encoded.
STORE_BEHIND_SHARE = 4


class StoreBehind:
    """Stores one encoded shard on a thread of its own while the caller encodes the next one:
    the store's write (the kernel copying a shard into the page cache, tens of MB) no longer
    leaves the encoding pool's cores idle.  One store call is in flight at a time, so a write
    holds at most two encoded shards (one being stored, one being encoded), and only while
    two shards of that encoded size fit ``budget`` bytes (:meth:`fits`).  A failure of the
    store call is raised by the next :meth:`submit` or :meth:`wait`."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def fits(self, pieces: Sequence[Any]) -> bool:
        """Whether an encoded shard of these pieces may be stored behind the next one."""
        return 2 * sum(memoryview(p).nbytes for p in pieces) <= self.budget

    def _run(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            fn(*args)
        except BaseException as e:  # noqa: BLE001 - handed to the writing thread
            self._error = e

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` on the store thread once the previous call is done."""
        self.wait()
        t = threading.Thread(target=self._run, args=(fn, args), name="zarrbolt-store-behind", daemon=True)
        self._thread = t
        t.start()

    def wait(self, report: bool = True) -> None:
        """Wait for the call in flight; raise its exception (unless ``report`` is False)."""
        t, self._thread = self._thread, None
        if t is not None:
            t.join()
        err, self._error = self._error, None
        if err is not None and report:
            raise err


class ChunkWriter:
    """Writes chunks one by one (``run`` is called with batches of the projections, on the
    threads of the pool)."""

    def __init__(self, io: ArrayIO, value: np.ndarray, write_empty: bool):
        self.io = io
        self.value = value
        self.write_empty = write_empty
        self.is_fill = io.bound.spec.is_fill
        # inner chunks of a shard equal to the fill value are left out, unless empty chunks are
        # written (as zarr-python does)
        self.inner_is_fill = _never_fill if write_empty else self.is_fill
        self.sharding = io.sharding if io.shard_direct else None  # shards written directly
        self.rows = WriteRows(io, value) if self.sharding is None else None
        self.inner_encoder = inner_encoder(io, write_empty) if self.sharding is not None else None
        self.inner_decoder = inner_decoder(io) if self.sharding is not None else None
        # partial updates of existing local shard files (see .write_shard), or None
        self.updater = None
        if self.sharding is not None:
            from .write_shard import local_shard_updater

            self.updater = local_shard_updater(io, self.inner_is_fill, self.inner_encoder, self.inner_decoder)
        # partial updates guarded by the object's version (remote stores: pipeline/remote_write.py)
        self.conditional = getattr(io.store, "supports_conditional_writes", False) is True
        # partial updates serialized per key (see the module doc)
        self.locking = not self.conditional and bool(config.get("write_lock"))
        # set by write() to store whole shards on a thread of their own (see StoreBehind)
        self.background: StoreBehind | None = None
        # a remote write collects whole values to send them together (RemoteWriteStore): a
        # partial update is sent at once, while its lock is held
        self.send_now = getattr(io.store, "send_now", None)
        self.lock_store = getattr(io.store, "base", io.store) if self.send_now is not None else io.store

    def run(self, batch: Sequence[ChunkProjection]) -> None:
        if self.updater is not None and len(batch) > 1:
            # partial updates of several shards: side by side, one shard per thread (see
            # LocalShardUpdater.side_by_side); the rest one at a time
            batch = self.updater.side_by_side(batch, self._run_each)
        self._run_each(batch)

    def _run_each(self, batch: Sequence[ChunkProjection]) -> None:
        rows = self.rows
        runs = rows.runs(batch) if rows is not None else {}
        gathered: dict[int, np.ndarray] = {}
        for n, p in enumerate(batch):
            key = self.io.chunk_key(p.chunk_coords)
            if n in runs and rows is not None:  # the first of a row of complete chunks: gather the row (see WriteRows)
                gathered = rows.gather(batch, n, runs[n])
            chunk = gathered.pop(n, None)
            if chunk is not None:
                self._put(key, chunk)
                continue
            with self._lock(p, key):
                chunk = self._chunk(p, key)
                if chunk is not None:  # (None: a shard updated in place)
                    self._put(key, chunk)
                if self.send_now is not None and not p.is_complete_chunk:
                    self.send_now(key)

    def _lock(self, p: ChunkProjection, key: str) -> Any:
        """The write lock of ``key`` for a partial update (a null context otherwise)."""
        if not self.locking or p.is_complete_chunk:
            return contextlib.nullcontext()
        return key_lock(self.lock_store, key, self.io.key_prefix)

    def _chunk(self, p: ChunkProjection, key: str) -> np.ndarray | None:
        """The new contents of chunk ``key`` (None when a shard was written or updated here)."""
        io = self.io
        value = self.value
        src = value[p.out_selection] if value.ndim else value
        if src.dtype.kind == "O" and src.ndim == 0:  # (numpy would store a 0-d array as the element)
            src = src[()]
        if p.is_complete_chunk:
            region = io.grid.chunk_region(p.chunk_coords, io.shape)
            inside = tuple(r.stop - r.start for r in region)
            if self.sharding is not None:
                part = self._shard_source(src, inside)
                if part is not None:
                    if part.shape == io.chunk_shape:
                        return part  # encode_shard copies each inner chunk out of the view
                    # an edge shard: its inner chunks inside the array encoded from the value
                    # itself (those cut by the edge padded one by one); none beyond the edge
                    self._put_shard(key, part)
                    return None
            if inside == tuple(io.chunk_shape):
                chunk = np.empty(io.chunk_shape, dtype=io.dtype)
                chunk[...] = src
                return chunk
            sel = tuple(slice(0, n) for n in inside)
            chunk = np.full(io.chunk_shape, io.fill, dtype=io.dtype)
            chunk[sel] = src
            if self.sharding is not None:  # an edge shard: no inner chunk beyond the edge is stored
                self._put_shard(key, chunk[sel])
                return None
            return chunk
        if self.conditional:
            from .remote_write import conditional_update

            conditional_update(self, p, key, src)
            return None
        if self.sharding is not None:
            self._update_shard(key, p, src)
            return None
        data = io.store.get(key)
        if data is None:
            chunk = np.full(io.chunk_shape, io.fill, dtype=io.dtype)
        else:
            chunk = np.array(io.decode_chunk(data, key), copy=True)
        chunk[p.chunk_selection] = src
        return chunk

    def _shard_source(self, src: Any, inside: tuple[int, ...]) -> np.ndarray | None:
        """``src`` as an array of the shape of the shard's part inside the array (a view: a
        single value is broadcast, not copied), or None when it cannot be used as it is."""
        dtype = self.io.dtype
        if dtype.hasobject:
            return None
        if isinstance(src, np.ndarray) and src.shape == inside and src.dtype == dtype:
            return src
        arr = np.asarray(src)
        if arr.dtype != dtype or arr.ndim != 0:
            return None
        return np.broadcast_to(arr, inside)

    def _update_shard(self, key: str, p: ChunkProjection, src: Any) -> None:
        """Write ``src`` into part of shard ``key``: the one read-modify-write of a shard (read
        what exists, merge, store).  Existing local shard files: by :mod:`.write_shard` (only
        the index and the touched inner chunks read; rewritten or appended to, as the
        ``shard_update`` option says); else the shard is read whole and stored again."""
        if self.updater is not None and self.updater.update(key, p.chunk_selection, src):
            return
        sharding = self.sharding
        assert sharding is not None  # (called for directly written shards only)
        store = self.io.store
        data = store.get(key)
        enc = sharding.update_shard(data, self.io.bound.ab_spec, p.chunk_selection, src, key,
                                         self.inner_is_fill, parts=True, encoder=self.inner_encoder,
                                         decoder=self.inner_decoder)
        if enc is None:
            if data is not None:
                store.erase(key)
        else:
            store.set_parts(key, enc)  # the pieces go to the store unjoined

    def _put(self, key: str, chunk: np.ndarray) -> None:
        """Encode and store ``chunk`` (erase it when it is all fill and empty chunks are not
        written)."""
        store = self.io.store
        if not self.write_empty and self.is_fill(chunk):
            store.erase(key)
            return
        if self.sharding is not None:
            self._put_shard(key, chunk)
            return
        store.set(key, self.io.bound.encode(chunk))

    def _put_shard(self, key: str, chunk: np.ndarray) -> None:
        """Encode and store shard ``key`` from ``chunk`` (the shard, or of an edge shard the
        part inside the array: no inner chunk beyond the array's edge is stored)."""
        store = self.io.store
        assert self.sharding is not None
        if self.inner_encoder is not None and shard_stream.streamable(self.io, chunk.nbytes):
            # encoded a batch of inner chunks at a time into the shard's file (see .shard_stream)
            shard_stream.write_streamed(self.io, key, chunk, self.inner_is_fill, self.inner_encoder)
            return
        enc = self.sharding.encode_shard(chunk, self.io.bound.ab_spec, is_fill=self.inner_is_fill, parts=True,
                                         encoder=self.inner_encoder)
        if enc is None:
            store.erase(key)
        elif self.background is not None and self.background.fits(enc):
            self.background.submit(store.set_parts, key, enc)
        else:
            store.set_parts(key, enc)  # the pieces go to the store unjoined


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


def _never_fill(chunk: np.ndarray) -> bool:
    return False


class InnerEncoder:
    """A shard's inner chunks encoded by one C call (csrc/encode.c; see
    ShardingCodec.encode_shard): called as ``encoder(shard, regions)`` into memory, or
    :meth:`stream` straight into the shard's file."""

    def __init__(self, io: ArrayIO, plan: Any):
        self.plan = plan
        self.dtype, self.ndim = io.dtype, len(io.chunk_shape)

    def _tasks(self, shard: np.ndarray, regions: list[Any]) -> tuple[np.ndarray, np.ndarray, int] | None:
        """The C call's offsets and shapes of ``regions`` of ``shard``, and its workers (None:
        a shard C cannot take)."""
        n = len(regions)
        if shard.dtype != self.dtype or shard.ndim != self.ndim:
            return None
        starts = np.array([[r.start for r in reg] for reg in regions], dtype=np.int64).reshape(n, shard.ndim)
        shapes = np.array([[r.stop - r.start for r in reg] for reg in regions], dtype=np.int64).reshape(n, shard.ndim)
        offsets = np.ascontiguousarray(starts @ np.asarray(shard.strides, dtype=np.int64))
        workers = min(parallel_workers(n, cost=self.plan.chunk_nbytes * n), POOL_MAX)
        return offsets, shapes, workers

    def __call__(self, shard: np.ndarray, regions: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        """``(buffer, where)``: the encoded chunks packed in memory (``plan.encode_chunks``);
        where -2: the Python codecs encode that chunk."""
        n = len(regions)
        tasks = self._tasks(shard, regions)
        if tasks is None:
            return np.empty(0, np.uint8), np.full((n, 2), -2, np.int64)
        offsets, shapes, workers = tasks
        work = buffers.pool_work_buffers(workers, self.plan.work_bytes)
        # the packed pieces live in memory from the output cache: once the store is done with
        # them it goes back there for the next shard (fresh memory per shard costs page faults)
        out = outbuf.empty((n * self.plan.pack_room,), np.uint8, sparse=True)
        try:
            packed: tuple[np.ndarray, np.ndarray] = self.plan.encode_chunks(shard, offsets, shapes,
                                                                            batch_bounds(n, workers), work, out)
            return packed
        except (CodecError, ValueError):
            # a codec failed in C: the Python codecs encode them all and report it their way
            return out, np.full((n, 2), -2, np.int64)

    def stream(self, shard: np.ndarray, regions: list[Any], fd: int, ring_bytes: int,
               base: int = 0) -> tuple[np.ndarray, int] | None:
        """Encode ``regions`` of ``shard`` and write them one after another to the file open as
        ``fd`` from offset ``base``, each as soon as it and those before it are encoded
        (``plan.encode_stream``: one job, no barrier), waiting in a ring of about ``ring_bytes``.
        Returns ``(where, end)`` (per region its offset in the file and size, or offset -1: all
        fill, not written), or None for a shard C cannot take.  Raises CodecError (a codec
        failed in C) or OSError (a write failed); the file holds nothing usable then."""
        tasks = self._tasks(shard, regions)
        if tasks is None:
            return None
        offsets, shapes, workers = tasks
        work = buffers.pool_work_buffers(workers, self.plan.work_bytes)
        room = self.plan.pack_room
        ring = outbuf.empty((max(4 * workers, ring_bytes // room) * room,), np.uint8, sparse=True)
        result: tuple[np.ndarray, int] = self.plan.encode_stream(shard, offsets, shapes, work, fd, ring, base)
        return result


def inner_encoder(io: ArrayIO, keep_empty: bool = False) -> InnerEncoder | None:
    """For shards written whole: the encoder of a shard's inner chunks by one C call, or None
    when the inner chain has no encode plan.  ``keep_empty``: inner chunks equal to the fill
    value are encoded too."""
    plan = io.inner_encode_plan(keep_empty)
    return InnerEncoder(io, plan) if plan is not None else None


def inner_decoder(io: ArrayIO) -> Callable[[np.ndarray, list[Any], list[Any]], None] | None:
    """For partial shard writes: decode the existing inner chunks that a write merges with, by
    the fused C decode on the pool (see ShardingCodec.merge_update), or None when the inner
    chain has no decode plan."""
    plan = io.plan if io.shard_direct and config.get("fused_pipeline") else None
    if plan is None:
        return None
    layout = io.layout
    assert layout is not None  # (shard_direct: a sharded array)
    chunk_shape = tuple(layout.chunk_shape)
    nd = len(chunk_shape)

    def decode(box: np.ndarray, regions: list[Any], datas: list[Any]) -> None:
        n = len(datas)
        starts = np.zeros((n, nd), dtype=np.int64)
        shapes = np.tile(np.asarray(chunk_shape, dtype=np.int64), (n, 1))
        firsts = np.array([[r.start for r in reg] for reg in regions], dtype=np.int64).reshape(n, nd)
        offs = np.ascontiguousarray(firsts @ np.asarray(box.strides, dtype=np.int64))
        nslots = buffers.group_slots(plan, box)
        scratch = plan.scratch_bytes(nslots)
        stream = buffers.stream_output(box)

        def work(batch: Sequence[int]) -> None:
            ii = np.asarray(batch, dtype=np.intp)
            try:
                plan.decode([datas[i] for i in batch], starts[ii], shapes[ii], np.ascontiguousarray(offs[ii]), box,
                            stream, buffers.thread_scratch(scratch), nslots)
            except CodecError as e:
                k = getattr(e, "task_index", None)
                if isinstance(k, int) and 0 <= k < len(batch):
                    e.task_index = int(batch[k])  # type: ignore[attr-defined]
                raise

        run_batches(work, range(n), cost=layout.inner.spec.nbytes * n)

    return decode


def write_native(io: ArrayIO, projections: list[Any], value: np.ndarray, write_empty: bool) -> list[Any]:
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
