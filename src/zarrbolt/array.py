"""The Array class: numpy-style reads and writes of a chunked Zarr v3 array."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np

from . import config, kernels
from .codecs.abc import ChunkSpec
from .errors import (
    ArrayNotFoundError,
    CodecError,
    ContainsGroupError,
    CorruptChunkError,
    MetadataError,
    StoreError,
    ZarrboltError,
)
from .indexing import (
    ChunkProjection,
    basic_indexer,
    check_value_shape,
    orthogonal_indexer,
    vectorized_indexer,
)
from .metadata import ArrayMetadata
from .node import ZARR_JSON, Attributes, Node, load_metadata
from .codecs.chain import BoundChain
from .pipeline import outbuf
from ._threads import batch_bounds, parallel_workers, run_batches
from .storage import LocalStore, Store
from .storage.local import TMP_PREFIX
from ._ext._pipeline import ENC_FILL, POOL_MAX

# Outputs at least this large are written with non-temporal stores by the fused decode: they
# cannot stay in the caches anyway, and skipping the read-for-ownership of every destination
# line makes full-volume reads ~10% faster.  Smaller outputs (blocks, planes) stay cached for
# whatever the caller does next.
STREAM_MIN_BYTES = 64 << 20


class _OIndex:
    def __init__(self, array: Array):
        self._array = array

    def __getitem__(self, selection: Any) -> np.ndarray:
        return self._array.get_orthogonal_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_orthogonal_selection(selection, value)


class _VIndex:
    def __init__(self, array: Array):
        self._array = array

    def __getitem__(self, selection: Any) -> np.ndarray:
        return self._array.get_coordinate_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_coordinate_selection(selection, value)


class Array(Node):
    """A Zarr v3 array in a store.  Create with :func:`zarrbolt.create_array`, open with
    :func:`zarrbolt.open_array`."""

    _kind = "array"

    def __init__(self, store: Store, path: str, metadata: ArrayMetadata, *, read_only: bool | None = None):
        self._store = store
        self._path = path
        self._read_only = store.read_only if read_only is None else (read_only or store.read_only)
        self._set_metadata(metadata)

    # ------------------------------------------------------------------ construction
    @classmethod
    def open(cls, store: Store, path: str = "", *, read_only: bool | None = None) -> Array:
        meta = load_metadata(store, path)
        if meta is None:
            raise ArrayNotFoundError(f"no array at path {path!r} in {store!r}")
        if not isinstance(meta, ArrayMetadata):
            raise ContainsGroupError(f"path {path!r} in {store!r} holds a group, not an array")
        return cls(store, path, meta, read_only=read_only)

    def _set_metadata(self, metadata: ArrayMetadata) -> None:
        self._metadata = metadata
        self._bound: BoundChain = metadata.bound_codecs
        self._chain = self._bound.chain
        self._chunk_shape = tuple(metadata.chunks)
        self._dtype = metadata.data_type.numpy_dtype
        self._fill = metadata.fill_value
        self._key_prefix = f"{self._path}/" if self._path else ""
        self._encode_key = metadata.chunk_key_encoding.encode_chunk_key
        from .codecs.sharding import ShardingCodec

        ab = self._chain.ab
        self._sharding = ab if isinstance(ab, ShardingCodec) else None
        # Partial reads/writes of shards need the shard to be the array->bytes input directly.
        self._shard_direct = self._sharding is not None and not self._chain.aa and not self._chain.bb
        self._shard_layout = self._sharding.layout(self._bound.ab_spec) if self._sharding is not None else None
        from .pipeline.fast import compile_decode_plan

        if self._shard_direct:
            self._plan = compile_decode_plan(self._shard_layout.inner)
        else:
            self._plan = compile_decode_plan(self._bound) if self._sharding is None else None
        # encode plans (or None) for write_empty_chunks false / true, and "inner" for shards
        self._eplans: dict[Any, Any] = {}

    _replace_metadata = _set_metadata

    # ------------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._metadata.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._metadata.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self._dtype.itemsize

    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape users read and write by: the inner chunk shape for sharded arrays."""
        if self._sharding is not None and not self._chain.aa:
            return self._sharding.chunk_shape
        return self._chunk_shape

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape (the stored object's shape) of a sharded array, else None."""
        return self._chunk_shape if self._sharding is not None else None

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        return tuple(self._metadata.chunk_grid.grid_shape(self.shape))

    @property
    def nchunks(self) -> int:
        return math.prod(self.cdata_shape)

    @property
    def nchunks_initialized(self) -> int:
        return sum(1 for _ in self._iter_stored_chunk_keys())

    @property
    def fill_value(self) -> Any:
        return self._fill

    @property
    def order(self) -> str:
        return "C"

    @property
    def codecs(self) -> tuple:
        return tuple(self._metadata.codecs)

    @property
    def compressors(self) -> tuple:
        return tuple(self._chain.bb)

    @property
    def filters(self) -> tuple:
        return tuple(self._chain.aa)

    @property
    def serializer(self) -> Any:
        return self._chain.ab

    @property
    def oindex(self) -> _OIndex:
        return _OIndex(self)

    @property
    def vindex(self) -> _VIndex:
        return _VIndex(self)

    @property
    def info(self) -> ArrayInfo:
        return ArrayInfo(self, with_stored=False)

    def info_complete(self) -> ArrayInfo:
        return ArrayInfo(self, with_stored=True)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<zarrbolt.Array {self._store!r}/{self._path} shape={self.shape} dtype={self._dtype}>"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self[...]
        return a if dtype is None else a.astype(dtype, copy=False)

    # ------------------------------------------------------------------ chunk I/O helpers
    def _chunk_key(self, coords: tuple[int, ...]) -> str:
        return self._key_prefix + self._encode_key(coords)

    def _decode_chunk(self, data: Any, key: str) -> np.ndarray:
        try:
            return self._bound.decode(data)
        except (CodecError, MetadataError) as e:
            raise type(e)(f"chunk {key!r}: {e}") from e
        except (ValueError, TypeError) as e:
            raise CorruptChunkError(f"chunk {key!r}: {e}") from e

    def _iter_stored_chunk_keys(self) -> Iterator[str]:
        prefix = self._key_prefix
        for key in self._store.list_prefix(prefix):
            rel = key[len(prefix):]
            if rel == ZARR_JSON:
                continue
            try:
                coords = self._metadata.chunk_key_encoding.decode_chunk_key(rel)
            except (MetadataError, ValueError):
                continue
            if len(coords) == self.ndim:
                yield key

    # ------------------------------------------------------------------ reading
    def _read(self, make_indexer: Any) -> np.ndarray:
        if self._shard_direct:
            if self._plan is not None and self.ndim:
                res = self._read_sharded_fused(make_indexer)
                if res is not None:
                    return res
            return self._read_sharded(make_indexer)
        indexer = make_indexer(self._chunk_shape)
        if self._plan is not None and self.ndim and hasattr(indexer, "unit_step_items"):
            items = indexer.unit_step_items()
            if items is not None:
                return self._read_fused(indexer, items)
        out = np.empty(indexer.shape, dtype=self._dtype)
        projections = list(indexer)
        if not projections:
            return out
        store = self._store
        fill = self._fill
        chunk_nbytes = self._bound.spec.nbytes

        def work(batch: Sequence[ChunkProjection]) -> None:
            for p in batch:
                key = self._chunk_key(p.chunk_coords)
                data = store.get(key)
                if data is None:
                    out[p.out_selection] = fill
                    continue
                chunk = self._decode_chunk(data, key)
                out[p.out_selection] = chunk[p.chunk_selection]

        run_batches(work, projections, cost=chunk_nbytes * len(projections))
        return out

    # ------------------------------------------------------------------ fused reads
    def _fused_decode(self, plan: Any, bufs: list, idx: list, starts: np.ndarray, shapes: np.ndarray,
                      offs: np.ndarray, full: np.ndarray, names: list) -> None:
        """Decode buffers ``bufs`` (tasks ``idx``) into ``full`` with one GIL release."""
        if not bufs:
            return
        ii = np.asarray(idx, dtype=np.intp)
        try:
            nslots = _group_slots(plan, full)
            plan.decode(bufs, np.ascontiguousarray(starts[ii]), np.ascontiguousarray(shapes[ii]),
                        np.ascontiguousarray(offs[ii]), full, full.nbytes >= STREAM_MIN_BYTES,
                        _thread_scratch(plan.scratch_bytes(nslots)), nslots)
        except CodecError as e:
            where = names[e.args[1]] if len(e.args) > 1 and isinstance(e.args[1], int) else "?"
            msg = e.args[0] if e.args else str(e)
            raise type(e)(f"chunk {where}: {msg}") from None

    def _read_fused(self, indexer: Any, items: tuple) -> np.ndarray:
        """Unsharded reads of ints and step-1 slices through the fused C pipeline."""
        coords, starts, shapes, out_starts = items
        out = outbuf.empty(indexer.shape, dtype=self._dtype)
        full = out.reshape(indexer.unit_shape())
        n = len(coords)
        if n == 0:
            return out
        offs = (out_starts * np.asarray(full.strides, dtype=np.int64)).sum(axis=1)
        store = self._store
        fill = self._fill
        plan = self._plan
        coord_list = coords.tolist()
        stream = full.nbytes >= STREAM_MIN_BYTES
        file_path = _native_file_path(store)
        nslots = _group_slots(plan, full)
        scratch_bytes = plan.scratch_bytes(nslots)

        def fill_region(i: int) -> None:
            full[tuple(slice(o, o + l) for o, l in zip(out_starts[i], shapes[i]))] = fill

        def read_files(lo: int, hi: int) -> None:
            # Local files: open, read and decode chunks [lo, hi) in C, on the threads of the
            # native pool, with the GIL released once.
            keys = [self._chunk_key(c) for c in coord_list[lo:hi]]
            m = hi - lo
            workers = min(parallel_workers(m, cost=self._bound.spec.nbytes * m), POOL_MAX)
            bufs = [(_thread_arena(), _thread_scratch(scratch_bytes))]
            bufs += [_helper_buffers(w, scratch_bytes) for w in range(1, workers)]
            try:
                missing, too_large = plan.read_decode_par(
                    [file_path(k) for k in keys], bufs, batch_bounds(m, workers), starts[lo:hi], shapes[lo:hi],
                    offs[lo:hi], full, stream, nslots)
            except (CodecError, StoreError) as e:
                where = keys[e.args[1]] if len(e.args) > 1 and isinstance(e.args[1], int) else "?"
                msg = e.args[0] if e.args else str(e)
                raise type(e)(f"chunk {where}: {msg}") from None
            for j in missing:
                fill_region(lo + j)
            for j in too_large:  # larger than the arena
                key = keys[j]
                data = store.get(key)
                if data is None:
                    fill_region(lo + j)
                else:
                    self._fused_decode(plan, [data], [lo + j], starts, shapes, offs, full, [key])

        def work(batch: Sequence[int]) -> None:
            arena = _thread_arena()
            pos = 0
            bufs: list = []
            idx: list = []
            names: list = []
            for i in batch:
                key = self._chunk_key(coord_list[i])
                got = store.read_into(key, arena[pos:])
                if got is not None and got < 0:
                    # the arena is full: decode what it holds, then start over at its beginning
                    self._fused_decode(plan, bufs, idx, starts, shapes, offs, full, names)
                    bufs, idx, names, pos = [], [], [], 0
                    got = store.read_into(key, arena)
                    if got is not None and got < 0:  # larger than the whole arena
                        data = store.get(key)
                        got = None if data is None else -1
                        if data is not None:
                            self._fused_decode(plan, [data], [i], starts, shapes, offs, full, [key])
                            continue
                if got is None:
                    fill_region(i)
                    continue
                bufs.append(arena[pos: pos + got])
                idx.append(i)
                names.append(key)
                pos += got
            self._fused_decode(plan, bufs, idx, starts, shapes, offs, full, names)

        if file_path is not None:
            for lo, hi in _read_windows([self._bound.spec.nbytes] * n):
                read_files(lo, hi)
        else:
            run_batches(work, range(n), cost=self._bound.spec.nbytes * n)
        return out

    def _shard_index(self, key: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The validated ``(offsets, nbytes)`` of shard ``key`` read by one byte-range request
        (after its size), or None when the shard does not exist."""
        codec, lay, store = self._sharding, self._shard_layout, self._store
        kind, index_nbytes = codec.index_range(lay)
        try:
            total = store.getsize(key)
        except StoreError:  # the shard does not exist
            return None
        if total < index_nbytes:
            raise CorruptChunkError(f"shard {key!r}: {total} bytes is smaller than its {index_nbytes}-byte index")
        rng = (total - index_nbytes, total) if kind == "suffix" else (0, index_nbytes)
        raw_index = store.get(key, rng)
        if raw_index is None or len(raw_index) != index_nbytes:
            raise CorruptChunkError(f"shard {key!r} changed or was truncated while being read")
        return codec.decode_index(raw_index, lay, total, key)

    def _fetch_inner_chunks(self, key: str, flats: Sequence[int], whole: bool) -> list[Any] | None:
        """The encoded bytes of inner chunks ``flats`` of shard ``key`` (None for empty ones), or
        None when the shard does not exist.  ``whole``: one request for the whole shard; else the
        index by one byte range, then the wanted chunks in coalesced ranges."""
        from .codecs.sharding import COALESCE_GAP, EMPTY

        codec, lay, store = self._sharding, self._shard_layout, self._store
        if whole:
            data = store.get(key)
            if data is None:
                return None
            mv, offs, nb = codec.split_shard(data, lay, key)
            out: list[Any] = []
            for f in flats:
                o = int(offs[f])
                out.append(None if o == EMPTY else mv[o: o + int(nb[f])])
            return out
        index = self._shard_index(key)
        if index is None:
            return None
        offs, nb = index
        wanted = np.asarray(flats, dtype=np.int64)
        order, read_of, begins, ends = kernels.coalesce_ranges(offs, nb, wanted, max_gap=COALESCE_GAP)
        blobs = store.get_partial_values([(key, (int(b), int(e))) for b, e in zip(begins, ends)])
        for blob, b, e in zip(blobs, begins, ends):
            if blob is None or len(blob) != int(e) - int(b):
                raise CorruptChunkError(f"shard {key!r} changed or was truncated while being read")
        views = [memoryview(b) for b in blobs]
        where = {int(ent): int(r) for ent, r in zip(order, read_of)}
        out = []
        for f in flats:
            o = int(offs[f])
            if o == EMPTY:
                out.append(None)
                continue
            r = where[int(f)]
            b0 = int(begins[r])
            out.append(views[r][o - b0: o - b0 + int(nb[f])])
        return out

    def _shard_work_items(self, groups: list[tuple[tuple[int, ...], Any]], ninner: int) -> list[tuple]:
        """``(shard coords, entries, whole)`` work items.  Fewer shards than the threads want work
        items: each shard is split into parts of at least two inner chunks (the parts share one
        read of the shard index) so that every thread gets some to balance with; reads under
        1 MiB of decoded data stay whole."""
        from ._threads import BATCHES_PER_THREAD

        lay = self._shard_layout
        threads = config.get("threads")
        want = threads * BATCHES_PER_THREAD
        split = threads > 1 and len(groups) < want and lay.inner.spec.nbytes * ninner >= (1 << 20)
        parts = -(-want // max(len(groups), 1))
        items: list[tuple] = []
        for sc, entries in groups:
            n = len(entries)
            k = min(parts, n // 2) if split else 1
            if k >= 2:
                for i in range(k):
                    items.append((sc, entries[n * i // k: n * (i + 1) // k], False))
            else:
                items.append((sc, entries, n == lay.n))
        return items

    def _read_sharded_fused(self, make_indexer: Any) -> np.ndarray | None:
        """Sharded reads of ints and step-1 slices: inner chunks decoded by the fused pipeline."""
        lay = self._shard_layout
        cps = np.asarray(lay.chunks_per_shard, dtype=np.int64)
        indexer = make_indexer(lay.chunk_shape)
        if not hasattr(indexer, "unit_step_items"):
            return None
        items = indexer.unit_step_items()
        if items is None:
            return None
        coords, starts, shapes, out_starts = items
        out = outbuf.empty(indexer.shape, dtype=self._dtype)
        full = out.reshape(indexer.unit_shape())
        n = len(coords)
        if n == 0:
            return out
        offs = (out_starts * np.asarray(full.strides, dtype=np.int64)).sum(axis=1)
        shard_coords = coords // cps
        local = coords % cps
        flat = np.ravel_multi_index(tuple(local.T), tuple(lay.chunks_per_shard)) if local.shape[1] else np.zeros(n, np.intp)
        # group task indices by shard (stable: keeps C order inside a shard)
        order = np.lexsort(tuple(shard_coords.T[::-1])) if n > 1 else np.arange(n)
        sc_sorted = shard_coords[order]
        bounds = np.flatnonzero(np.any(np.diff(sc_sorted, axis=0) != 0, axis=1)) + 1 if n > 1 else np.array([], np.intp)
        groups = [(tuple(int(v) for v in shard_coords[g[0]]), g) for g in np.split(order, bounds)]
        work_items = self._shard_work_items(groups, n)
        fill = self._fill
        plan = self._plan
        inner_nbytes = lay.inner.spec.nbytes

        def fill_task(i: int) -> None:
            full[tuple(slice(o, o + l) for o, l in zip(out_starts[i], shapes[i]))] = fill

        from .codecs.sharding import COALESCE_GAP, EMPTY

        store = self._store
        indices: dict = {}

        def work(batch) -> None:
            # Inner chunks are read (neighbours coalesced into one request) into this thread's
            # reusable arena and decoded in one GIL release whenever it fills up: no fresh
            # buffer per request, so no page faults for the compressed bytes.
            arena = _thread_arena()
            cap = len(arena)
            pos = 0
            bufs: list = []
            idx: list = []
            names: list = []

            def flush() -> None:
                nonlocal pos, bufs, idx, names
                # decode in task order (the C order of the output), not in file order (Morton
                # order for zarr-python's shards): neighbours along a row of the output then come
                # one after another and their copies are grouped
                o = sorted(range(len(idx)), key=idx.__getitem__)
                self._fused_decode(plan, [bufs[i] for i in o], [idx[i] for i in o], starts, shapes, offs, full,
                                   [names[i] for i in o])
                bufs, idx, names, pos = [], [], [], 0

            for sc, g, _whole in batch:
                key = self._chunk_key(sc)
                tasks = g.tolist()
                index = indices.get(sc, False)
                if index is False:  # the parts of a split shard share one index read
                    index = indices[sc] = self._shard_index(key)
                if index is None:
                    for i in tasks:
                        fill_task(i)
                    continue
                ioff, inb = index
                task_of = {int(flat[i]): i for i in tasks}
                ents = list(task_of)  # task order
                sizes = np.where(ioff[ents] == EMPTY, 0, inb[ents]).tolist()
                w0 = 0
                while w0 < len(ents):
                    # a window of the tasks, in task order, whose inner chunks fit half the arena
                    # together (as zb_plan_read_shards does for local shard files)
                    w1, tot = w0 + 1, sizes[w0]
                    while w1 < len(ents) and tot + sizes[w1] <= cap // 2:
                        tot += sizes[w1]
                        w1 += 1
                    window, w0 = ents[w0:w1], w1
                    order, read_of, begins, ends = kernels.coalesce_ranges(
                        ioff, inb, window, max_gap=COALESCE_GAP, max_read=cap // 2)
                    for f in set(window) - set(order.tolist()):  # empty inner chunks
                        fill_task(task_of[f])
                    k = 0
                    for r in range(len(begins)):
                        b0, end = int(begins[r]), int(ends[r])
                        size = end - b0
                        if size > cap:  # one inner chunk larger than the arena
                            blob = store.get(key, (b0, end))
                            if blob is None or len(blob) != size:
                                raise CorruptChunkError(f"shard {key!r} changed or was truncated while being read")
                            view = memoryview(blob)
                        else:
                            if pos + size > cap:
                                flush()
                            got = store.get_into(key, arena[pos: pos + size], b0)
                            if got != size:
                                raise CorruptChunkError(f"shard {key!r} changed or was truncated while being read")
                            view = arena[pos: pos + size]
                            pos += size
                        while k < len(order) and read_of[k] == r:
                            f = int(order[k])
                            o = int(ioff[f]) - b0
                            bufs.append(view[o: o + int(inb[f])])
                            idx.append(task_of[f])
                            names.append(f"{key}[{f}]")
                            k += 1
                        if size > cap:
                            flush()
            flush()

        file_path = _native_file_path(store) if lay.fast_index_crc is not None else None
        stream = full.nbytes >= STREAM_MIN_BYTES
        nslots = _group_slots(plan, full)
        scratch_bytes = plan.scratch_bytes(nslots)
        index_at_end = self._sharding.index_location == "end"
        entries_all = flat.astype(np.int64, copy=False)

        def read_files(items: list) -> None:
            # Local shard files: every part of every shard of `items` (index read, inner chunk
            # reads, decodes) in C, on the threads of the native pool, with the GIL released once.
            # What C leaves (damaged indexes, shards that changed while read, inner chunks larger
            # than the arena) goes the Store way, which reports the damage.
            keys = [self._chunk_key(sc) for sc, _, _ in items]
            parts = [g for _, g, _ in items]
            ii = np.concatenate(parts) if len(parts) > 1 else parts[0]
            counts = [len(g) for g in parts]
            ends = np.cumsum(counts)  # task position -> part: searchsorted(ends, pos, "right")
            workers = min(parallel_workers(len(items), cost=inner_nbytes * len(ii)), POOL_MAX)
            bufs = [(_thread_arena(), _thread_scratch(scratch_bytes))]
            bufs += [_helper_buffers(w, scratch_bytes) for w in range(1, workers)]
            try:
                missing, too_large, retry = plan.read_shards_par(
                    [file_path(k) for k in keys], counts, np.ascontiguousarray(entries_all[ii]), bufs,
                    batch_bounds(len(items), workers), np.ascontiguousarray(starts[ii]),
                    np.ascontiguousarray(shapes[ii]), np.ascontiguousarray(offs[ii]), full, lay.n, index_at_end,
                    bool(lay.fast_index_crc), COALESCE_GAP, stream, nslots)
            except (CodecError, StoreError) as e:
                pos = e.args[1] if len(e.args) > 1 and isinstance(e.args[1], int) else None
                msg = e.args[0] if e.args else str(e)
                if pos is None:
                    raise
                key = keys[int(np.searchsorted(ends, pos, side="right"))]
                if isinstance(e, StoreError):
                    raise StoreError(f"shard {key!r}: {msg}") from None
                raise type(e)(f"chunk {key}[{int(entries_all[ii[pos]])}]: {msg}") from None
            for j in missing:
                fill_task(int(ii[j]))
            if too_large or retry:
                redo = sorted(too_large + retry)
                p_of = np.searchsorted(ends, redo, side="right")
                again = []
                for p in np.unique(p_of):
                    again.append((items[p][0], ii[np.asarray(redo)[p_of == p]], False))
                work(again)

        if file_path is not None:
            for lo, hi in _read_windows([inner_nbytes * len(g) for _, g, _ in work_items]):
                read_files(work_items[lo:hi])
        else:
            run_batches(work, work_items, cost=inner_nbytes * n)
        return out

    def _read_sharded(self, make_indexer: Any) -> np.ndarray:
        """Read through the inner chunk grid, per shard fetching only the inner chunks the
        selection touches (see _fetch_inner_chunks), decoding each with the inner chain."""
        lay = self._shard_layout
        cps = lay.chunks_per_shard
        indexer = make_indexer(lay.chunk_shape)
        out = np.empty(indexer.shape, dtype=self._dtype)
        by_shard: dict[tuple[int, ...], list[tuple[int, ChunkProjection]]] = {}
        strides = [1] * len(cps)
        for d in range(len(cps) - 2, -1, -1):
            strides[d] = strides[d + 1] * cps[d + 1]
        for p in indexer:
            sc = tuple(c // n for c, n in zip(p.chunk_coords, cps))
            flat = sum((c % n) * st for c, n, st in zip(p.chunk_coords, cps, strides))
            by_shard.setdefault(sc, []).append((flat, p))
        if not by_shard:
            return out
        items = self._shard_work_items(list(by_shard.items()), sum(len(e) for e in by_shard.values()))
        fill = self._fill
        inner = lay.inner

        def work(batch) -> None:
            for sc, entries, whole in batch:
                key = self._chunk_key(sc)
                parts = self._fetch_inner_chunks(key, [f for f, _ in entries], whole)
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
        return out

    def _finish(self, out: np.ndarray) -> Any:
        if out.ndim == 0:
            return out[()]
        return out

    def get_basic_selection(self, selection: Any = Ellipsis, *, out: Any = None, fields: Any = None) -> Any:
        res = self._finish(self._read(lambda cs: basic_indexer(selection, self.shape, cs)))
        return _into(res, out)

    def get_orthogonal_selection(self, selection: Any, *, out: Any = None, fields: Any = None) -> Any:
        res = self._finish(self._read(lambda cs: orthogonal_indexer(selection, self.shape, cs)))
        return _into(res, out)

    def get_coordinate_selection(self, selection: Any, *, out: Any = None, fields: Any = None) -> Any:
        res = self._finish(self._read(lambda cs: vectorized_indexer(selection, self.shape, cs)))
        return _into(res, out)

    get_mask_selection = get_coordinate_selection

    def __getitem__(self, selection: Any) -> Any:
        return self.get_basic_selection(selection)

    # ------------------------------------------------------------------ writing
    def _write(self, indexer: Any, value: Any) -> None:
        self._check_writable()
        value = check_value_shape(np.asarray(value) if not np.isscalar(value) else value, indexer.shape)
        if isinstance(value, np.ndarray):
            if value.dtype != self._dtype:
                value = _cast_for_write(value, self._dtype)
        else:
            value = _cast_for_write(np.asarray(value), self._dtype)
        projections = list(indexer)
        if not projections:
            return
        write_empty = config.get("write_empty_chunks")
        store = self._store
        chunk_shape = self._chunk_shape
        grid = self._metadata.chunk_grid
        shape = self.shape
        fill = self._fill
        bound = self._bound

        sharding = self._sharding if self._shard_direct else None
        shard_spec = bound.ab_spec
        if self._sharding is None and isinstance(value, np.ndarray):
            whole = value
            if value.ndim == 0 and len(indexer.shape) == self.ndim:
                whole = np.broadcast_to(value, indexer.shape)  # one value for every element
            projections = self._write_native(projections, whole, write_empty)
            if not projections:
                return

        rows = _WriteRows(self, value) if sharding is None else None
        inner_encoder = self._inner_encoder() if sharding is not None else None

        def work(batch: Sequence[ChunkProjection]) -> None:
            runs = rows.runs(batch) if rows is not None else {}
            gathered: dict[int, np.ndarray] = {}
            for n, p in enumerate(batch):
                key = self._chunk_key(p.chunk_coords)
                if n in runs:  # the first of a row of complete chunks: gather the row (see _WriteRows)
                    gathered = rows.gather(batch, n, runs[n])
                chunk = gathered.pop(n, None)
                if chunk is not None:
                    if not write_empty and self._bound.spec.is_fill(chunk):
                        store.erase(key)
                    else:
                        store.set(key, bound.encode(chunk))
                    continue
                src = value[p.out_selection] if value.ndim else value
                if p.is_complete_chunk:
                    region = grid.chunk_region(p.chunk_coords, shape)
                    full = all(r.stop - r.start == c for r, c in zip(region, chunk_shape))
                    if full and sharding is not None and isinstance(src, np.ndarray) \
                            and src.shape == tuple(chunk_shape) and src.dtype == self._dtype:
                        chunk = src  # encode_shard copies each inner chunk out of the view
                    elif full:
                        chunk = np.empty(chunk_shape, dtype=self._dtype)
                        chunk[...] = src
                    else:
                        chunk = np.full(chunk_shape, fill, dtype=self._dtype)
                        local = tuple(slice(0, r.stop - r.start) for r in region)
                        chunk[local] = src
                else:
                    data = store.get(key)
                    if data is not None and sharding is not None:
                        enc = sharding.update_shard(data, shard_spec, p.chunk_selection, src, key, self._bound.spec.is_fill,
                                                    parts=True, encoder=inner_encoder)
                        if enc is None:
                            store.erase(key)
                        else:
                            store.set_parts(key, enc)
                        continue
                    if data is None:
                        chunk = np.full(chunk_shape, fill, dtype=self._dtype)
                    else:
                        chunk = np.array(self._decode_chunk(data, key), copy=True)
                    chunk[p.chunk_selection] = src
                if not write_empty and self._bound.spec.is_fill(chunk):
                    store.erase(key)
                    continue
                if sharding is not None:
                    enc = sharding.encode_shard(chunk, shard_spec, is_fill=self._bound.spec.is_fill, parts=True,
                                                encoder=inner_encoder)
                    if enc is None:
                        store.erase(key)
                    else:
                        store.set_parts(key, enc)  # the pieces go to the store unjoined
                    continue
                store.set(key, bound.encode(chunk))

        if sharding is not None and len(projections) < config.get("threads"):
            # Fewer shards than threads: one shard at a time, its inner chunks encoded in parallel.
            work(projections)
        else:
            run_batches(work, projections, cost=bound.spec.nbytes * len(projections))

    def _encode_plan(self, write_empty: bool) -> Any | None:
        if not config.get("fused_pipeline"):
            return None
        if write_empty not in self._eplans:
            from .pipeline.fast import compile_encode_plan

            self._eplans[write_empty] = compile_encode_plan(self._bound, not write_empty)
        return self._eplans[write_empty]

    def _inner_encoder(self) -> Callable[[np.ndarray, list], tuple[np.ndarray, np.ndarray]] | None:
        """For shards written whole: encode a shard's inner chunks in one C call (csrc/encode.c,
        zb_encode_chunks_par; see ShardingCodec.encode_shard), or None when the inner chain has
        no encode plan."""
        if not config.get("fused_pipeline"):
            return None
        if "inner" not in self._eplans:
            from .pipeline.fast import compile_encode_plan

            # empty inner chunks are always left out of a shard
            self._eplans["inner"] = compile_encode_plan(self._shard_layout.inner, True)
        plan = self._eplans["inner"]
        if plan is None:
            return None
        inner_nbytes = plan.chunk_nbytes
        work_bytes = plan.work_bytes

        def encode(shard: np.ndarray, regions: list) -> tuple[np.ndarray, np.ndarray]:
            n = len(regions)
            if shard.dtype != self._dtype or shard.ndim != len(self._chunk_shape):
                return np.empty(0, np.uint8), np.full((n, 2), -2, np.int64)
            starts = np.array([[r.start for r in reg] for reg in regions], dtype=np.int64).reshape(n, shard.ndim)
            shapes = np.array([[r.stop - r.start for r in reg] for reg in regions], dtype=np.int64).reshape(n, shard.ndim)
            offsets = np.ascontiguousarray(starts @ np.asarray(shard.strides, dtype=np.int64))
            workers = min(parallel_workers(n, cost=inner_nbytes * n), POOL_MAX)
            work = [_thread_scratch(work_bytes)] + [_helper_buffers(w, work_bytes)[1] for w in range(1, workers)]
            # the packed pieces live in memory from the output cache: once the store is done with
            # them it goes back there for the next shard (fresh memory per shard costs page faults)
            out = outbuf.empty((n * plan.pack_room,), np.uint8)
            try:
                return plan.encode_chunks(shard, offsets, shapes, batch_bounds(n, workers), work, out)
            except (CodecError, ValueError):
                # a codec failed in C: the Python codecs encode them all and report it their way
                return out, np.full((n, 2), -2, np.int64)

        return encode

    def _write_native(self, projections: list, value: np.ndarray, write_empty: bool) -> list:
        """Write the whole chunks among ``projections`` of a local store in C (csrc/encode.c:
        gather, encode, atomic file writes, on the native pool with the GIL released once);
        return the projections left for the per-chunk path (partial chunks, and everything
        when the chain, store or value does not allow it)."""
        store = self._store
        if type(store) is not LocalStore or len(projections) < 1:
            return projections
        nd = len(self._chunk_shape)
        if value.ndim != nd or value.dtype != self._dtype:
            return projections
        plan = self._encode_plan(write_empty)
        if plan is None:
            return projections
        grid = self._metadata.chunk_grid
        shape = self.shape
        mine: list = []
        rest: list = []
        for p in projections:
            ok = p.is_complete_chunk and len(p.out_selection) == nd and all(
                isinstance(o, slice) and (o.step is None or o.step == 1) for o in p.out_selection)
            (mine if ok else rest).append(p)
        if not mine:
            return projections
        n = len(mine)
        strides = np.asarray(value.strides, dtype=np.int64)
        starts = np.array([[o.start for o in p.out_selection] for p in mine], dtype=np.int64).reshape(n, nd)
        shapes = np.array([[r.stop - r.start for r in grid.chunk_region(p.chunk_coords, shape)] for p in mine],
                          dtype=np.int64).reshape(n, nd)
        offsets = np.ascontiguousarray(starts @ strides) if nd else np.zeros(n, np.int64)
        keys = [self._chunk_key(p.chunk_coords) for p in mine]
        try:
            paths = [store._path(k) for k in keys]
            for d in {os.path.dirname(q) for q in paths}:
                os.makedirs(d, exist_ok=True)
        except (OSError, ZarrboltError):  # a file in the way, a bad key...: the store reports it
            return projections
        enc = (lambda q: q.encode("utf-8", "surrogatepass")) if os.name == "nt" else os.fsencode
        rnd = os.urandom(16 * n).hex()
        tmps = [enc(os.path.join(os.path.dirname(q), f"{TMP_PREFIX}{rnd[32 * i: 32 * i + 32]}"))
                for i, q in enumerate(paths)]
        bpaths = [enc(q) for q in paths]
        work_bytes = plan.work_bytes
        done = 0
        redo: list = []
        for lo, hi in _read_windows([self._bound.spec.nbytes] * n):
            m = hi - lo
            workers = min(parallel_workers(m, cost=self._bound.spec.nbytes * m), POOL_MAX)
            work = [_thread_scratch(work_bytes)] + [_helper_buffers(w, work_bytes)[1] for w in range(1, workers)]
            st, failed, _, _, results = plan.write_par(
                value, bpaths[lo:hi], tmps[lo:hi], offsets[lo:hi], np.ascontiguousarray(shapes[lo:hi]),
                batch_bounds(m, workers), work, bool(store.fsync))
            for i, r in enumerate(results):
                if r == ENC_FILL:
                    store.erase(keys[lo + i])
            done = lo + failed
            if st != 0:
                # what C could not do (a directory pruned meanwhile, a path that is a directory,
                # a codec error...) goes the per-chunk way, which retries or reports it
                redo = mine[done:]
                break
        if store.fsync:
            for d in {os.path.dirname(q) for q in paths[:done]}:
                store._sync_dir(d)
        return rest + redo

    def set_basic_selection(self, selection: Any, value: Any, *, fields: Any = None) -> None:
        self._write(basic_indexer(selection, self.shape, self._chunk_shape), value)

    def set_orthogonal_selection(self, selection: Any, value: Any, *, fields: Any = None) -> None:
        self._write(orthogonal_indexer(selection, self.shape, self._chunk_shape), value)

    def set_coordinate_selection(self, selection: Any, value: Any, *, fields: Any = None) -> None:
        self._write(vectorized_indexer(selection, self.shape, self._chunk_shape), value)

    set_mask_selection = set_coordinate_selection

    def __setitem__(self, selection: Any, value: Any) -> None:
        self.set_basic_selection(selection, value)

    # ------------------------------------------------------------------ resizing
    def resize(self, *new_shape: Any) -> None:
        """Change the shape.  Chunks wholly outside the new shape are deleted, and the part of a
        boundary chunk that falls outside is reset to the fill value, so growing the array again
        shows the fill value there (never stale data)."""
        self._check_writable()
        if len(new_shape) == 1 and isinstance(new_shape[0], (tuple, list)):
            new_shape = tuple(new_shape[0])
        try:
            new_shape = tuple(int(operator_index(s)) for s in new_shape)
        except TypeError:
            raise MetadataError(f"resize: shape must be a sequence of integers, got {new_shape!r}") from None
        if len(new_shape) != self.ndim:
            raise MetadataError(f"resize: new shape {new_shape} must have {self.ndim} dimensions")
        if any(s < 0 for s in new_shape):
            raise MetadataError(f"resize: negative size in {new_shape}")
        old_shape = self.shape
        new_meta = self._metadata.evolve(shape=new_shape)
        grid = self._metadata.chunk_grid
        # Chunks to delete (entirely outside) and chunks to trim (crossing the new boundary).
        shrink_dims = [d for d in range(self.ndim) if new_shape[d] < old_shape[d]]
        to_delete: list[str] = []
        to_trim: list[tuple[int, ...]] = []
        if shrink_dims:
            for key in list(self._iter_stored_chunk_keys()):
                coords = self._metadata.chunk_key_encoding.decode_chunk_key(key[len(self._key_prefix):])
                starts = [c * s for c, s in zip(coords, self._chunk_shape)]
                if any(st >= ns for st, ns in zip(starts, new_shape)):
                    to_delete.append(key)
                elif any(
                    st + cs > ns and st < os_
                    for st, cs, ns, os_ in zip(starts, self._chunk_shape, new_shape, old_shape)
                ):
                    to_trim.append(tuple(coords))
        for coords in to_trim:
            region = grid.chunk_region(coords, old_shape)
            key = self._chunk_key(coords)
            data = self._store.get(key)
            if data is None:
                continue
            chunk = np.array(self._decode_chunk(data, key), copy=True)
            mask_sel = []
            for d, r in enumerate(region):
                keep = max(0, min(new_shape[d], r.stop) - r.start)
                mask_sel.append(keep)
            # reset everything outside [0, keep) along any dimension
            for d, keep in enumerate(mask_sel):
                sl = [slice(None)] * self.ndim
                sl[d] = slice(keep, None)
                chunk[tuple(sl)] = self._fill
            if not config.get("write_empty_chunks") and self._bound.spec.is_fill(chunk):
                self._store.erase(key)
            else:
                self._store.set(key, self._bound.encode(chunk))
        self._store.erase_values(to_delete)
        self._save_metadata(new_meta)

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grow along ``axis`` and write ``data`` at the end; returns the new shape."""
        data = np.asanyarray(data)
        if data.ndim != self.ndim:
            raise MetadataError(f"append: data has {data.ndim} dimensions, array has {self.ndim}")
        axis = axis + self.ndim if axis < 0 else axis
        if not 0 <= axis < self.ndim:
            raise MetadataError(f"append: axis {axis} out of range")
        for d in range(self.ndim):
            if d != axis and data.shape[d] != self.shape[d]:
                raise MetadataError(f"append: shape {data.shape} does not match {self.shape} outside axis {axis}")
        old = self.shape[axis]
        new_shape = list(self.shape)
        new_shape[axis] += data.shape[axis]
        self.resize(tuple(new_shape))
        sel = [slice(None)] * self.ndim
        sel[axis] = slice(old, new_shape[axis])
        self[tuple(sel)] = data
        return self.shape


_ARENA_BYTES = 8 << 20
_arenas = threading.local()


class _WriteRows:
    """Gathers the complete chunks of a write that follow one another along the last axis (a row
    of chunks) out of the value in one pass that reads the value in memory order
    (``strided_copy(src_order=True)``) into a per-thread buffer, instead of copying each chunk's
    short rows out of the value on its own: on this project's VM that halves the cost of the
    gather (a 256x1024x1024 uint16 value in 64^3 chunks: 190 -> 95 ms)."""

    MAX_BYTES = 16 << 20  # per thread
    _local = threading.local()

    def __init__(self, arr: Array, value: Any):
        self.ok = (isinstance(value, np.ndarray) and value.ndim == arr.ndim >= 2 and value.dtype == arr._dtype
                   and not value.dtype.hasobject)
        self.value = value
        self.chunk_shape = tuple(arr._chunk_shape)
        self.grid = arr._metadata.chunk_grid
        self.shape = arr.shape
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

    def _buffer(self, nbytes: int) -> np.ndarray:
        b = getattr(self._local, "buf", None)
        if b is None or b.nbytes < nbytes:
            b = np.empty(max(nbytes, 1), np.uint8)
            self._local.buf = b
        return b

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
        dst = self._buffer(n * self.chunk_nbytes)[: n * self.chunk_nbytes].view(self.value.dtype).reshape((n,) + c)
        first, last = batch[i].out_selection, batch[j - 1].out_selection
        src = self.value[first[:-1] + (slice(first[-1].start, last[-1].stop),)]
        kernels.strided_copy(np.moveaxis(dst, 0, -2), src.reshape(c[:-1] + (n, c[-1])), src_order=True)
        return {i + k: dst[k] for k in range(n)}


_scratches = threading.local()
# Scratch of the fused decode per thread, at most: enough slots to group the copies of a row of
# chunks (see _group_slots).  Only the pages a read touches become resident.
GROUP_SCRATCH_BYTES = 16 << 20
# Chunk rows (the chunk's last dimension, in output bytes) at least this long are copied one
# chunk at a time: grouping only pays for short rows.
GROUP_MAX_ROW_BYTES = 4096


def _thread_scratch(nbytes: int) -> memoryview | None:
    """A per-thread decode scratch of at least ``nbytes``, reused across reads; None (the decode
    allocates and frees its own) when that is more than GROUP_SCRATCH_BYTES, so that reads of
    arrays with huge chunks do not leave that much memory behind in every thread."""
    if nbytes > GROUP_SCRATCH_BYTES:
        return None
    a = getattr(_scratches, "buf", None)
    if a is None or len(a) < nbytes:
        a = memoryview(bytearray(nbytes))
        _scratches.buf = a
    return a


def _group_slots(plan: Any, full: np.ndarray) -> int:
    """How many scratch slots the fused decode of a read into ``full`` groups its copies over:
    as many chunks as make up one row of ``full`` (within GROUP_SCRATCH_BYTES), when the chunks'
    rows are short.  Writing whole rows of chunks at once instead of one chunk's short rows at a
    time is what makes the copy fast where TLB misses are expensive (see zb_scratch)."""
    chunk_shape = plan.chunk_shape
    if full.ndim < 2 or not chunk_shape:
        return 1
    row = chunk_shape[-1] * full.itemsize
    if row >= GROUP_MAX_ROW_BYTES or full.shape[-1] <= chunk_shape[-1]:
        return 1
    per_row = -(-full.shape[-1] // chunk_shape[-1]) + 1  # an unaligned row touches one more
    return max(1, min(per_row, GROUP_SCRATCH_BYTES // plan.scratch_bytes(1)))


# A read hands the native pool at most about this many decoded bytes per call: Python code runs
# between calls, so a Ctrl-C (or any pending signal) stops a huge read within a second or so
# instead of after it.
READ_WINDOW_BYTES = 1 << 30


def _read_windows(sizes: Sequence[int]) -> list[tuple[int, int]]:
    """Consecutive ``[lo, hi)`` ranges of the items whose ``sizes`` add up to at most
    READ_WINDOW_BYTES each (an item alone may be more)."""
    windows: list[tuple[int, int]] = []
    lo, total = 0, 0
    for i, size in enumerate(sizes):
        if i > lo and total + size > READ_WINDOW_BYTES:
            windows.append((lo, i))
            lo, total = i, 0
        total += size
    if lo < len(sizes):
        windows.append((lo, len(sizes)))
    return windows


_helpers: list[list] = []  # [arena, scratch] of the native pool's worker w (index w - 1)
_helpers_lock = threading.Lock()


def _helper_buffers(w: int, scratch_bytes: int) -> tuple[memoryview, memoryview | None]:
    """The read buffers of worker ``w`` >= 1 of the native read pool (zarrbolt/pool.h).  Only
    one job runs on the pool at a time, and its worker ``w`` is the only user of these; a call
    that finds the pool busy runs alone on its own thread's buffers."""
    with _helpers_lock:
        while len(_helpers) < w:
            _helpers.append([memoryview(bytearray(_ARENA_BYTES)), None])
        h = _helpers[w - 1]
        if scratch_bytes > GROUP_SCRATCH_BYTES:
            return h[0], None
        if h[1] is None or len(h[1]) < scratch_bytes:
            h[1] = memoryview(bytearray(scratch_bytes))
        return h[0], h[1]


def _thread_arena() -> memoryview:
    """A per-thread read buffer, reused across reads (fresh allocations cost page faults)."""
    a = getattr(_arenas, "buf", None)
    if a is None:
        a = memoryview(bytearray(_ARENA_BYTES))
        _arenas.buf = a
    return a


def _native_file_path(store: Any) -> Callable[[str], bytes] | None:
    """For a plain LocalStore: key -> the file's path as the C reader takes it (file-system bytes;
    UTF-8 on Windows).  None for every other store, subclasses included (they may override how
    values are read), which the fused path reads through the Store API."""
    if type(store) is not LocalStore:
        return None
    root = store._root_str
    if os.name == "nt":
        return lambda key: (root + "\\" + key.replace("/", "\\")).encode("utf-8", "surrogatepass")
    prefix = root.rstrip("/") + "/"
    return lambda key: os.fsencode(prefix + key)


def operator_index(x: Any) -> int:
    import operator

    return operator.index(x)


def _into(res: Any, out: Any) -> Any:
    if out is None:
        return res
    out[...] = res
    return out


def _cast_for_write(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Convert a user value to the array dtype the way numpy assignment does (same_kind-ish),
    refusing conversions that would silently lose information for raw types."""
    if dtype.kind == "V":
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


class ArrayInfo:
    """Human-readable summary of an array (``Array.info``)."""

    def __init__(self, array: Array, *, with_stored: bool):
        self._a = array
        self._with_stored = with_stored

    def __repr__(self) -> str:
        a = self._a
        rows = [
            ("Type", "Array"),
            ("Zarr format", "3"),
            ("Data type", a.metadata.data_type.to_json()),
            ("Fill value", a.metadata.data_type.fill_value_to_json(a.fill_value)),
            ("Shape", a.shape),
            ("Chunk shape", a.chunks),
            ("Order", "C"),
            ("Read-only", a.read_only),
            ("Store type", type(a.store).__name__),
            ("Filters", a.filters),
            ("Serializer", a.serializer),
            ("Compressors", a.compressors),
            ("No. bytes", f"{a.nbytes} ({_human(a.nbytes)})"),
        ]
        if self._with_stored:
            rows.append(("Chunks Initialized", f"{a.nchunks_initialized}/{a.nchunks}"))
        w = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{w}} : {v}" for k, v in rows)

    __str__ = __repr__


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f}{unit}" if unit != "B" else f"{n}B"
        n /= 1024
    return str(n)


__all__ = ["Array", "ArrayInfo", "Attributes", "ChunkSpec"]  # Attributes: re-exported from node
