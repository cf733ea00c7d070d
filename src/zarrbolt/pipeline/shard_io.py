"""The sharded I/O plan: which shard each wanted inner chunk is in, the shard's index by one
byte-range request, then the wanted inner chunks in windows of the tasks (in task order, the C
order of the output) whose reads are coalesced in file order.

The same plan serves every store: :class:`ShardArenaReader` reads the windows through the Store
API (:meth:`~zarrbolt.storage.Store.get_ranges_into`) into a thread's arena, and the native path
hands the same work items to C (``zb_plan_read_shards``), which windows local shard files the
same way.  :func:`shard_windows` is the one windowing function."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import config
from .._ext import _shard
from .. import _threads
from ..codecs.sharding import COALESCE_GAP, EMPTY
from ..errors import (CorruptChunkError, StoreError, StoreIOError, StorePermissionError, StoreUnavailableError,
                      SymlinkError)

__all__ = [
    "COALESCE_GAP",
    "ShardArenaReader",
    "fetch_inner_chunks",
    "group_by_shard",
    "shard_index",
    "shard_windows",
    "work_items",
]


def shard_windows(offsets: np.ndarray, nbytes: np.ndarray, entries: Sequence[int], arena_cap: int,
                  max_gap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cut the wanted ``entries`` of a shard (distinct flat inner-chunk numbers, in task order)
    into windows and plan each window's reads.

    A window is a run of consecutive entries whose inner chunks add up to at most ``arena_cap``
    bytes (the first one alone may be more; empty entries count 0).  Its non-empty entries are
    read in file order, neighbours closer than ``max_gap`` bytes coalesced into one read of at
    most ``arena_cap`` bytes (an entry larger than that is read alone).

    Returns ``(window_ends, order, read_of, begins, ends)``: ``window_ends[w]`` is one past the
    last position (in ``entries``) of window w; ``order`` lists, window after window and in file
    order within each, the positions of the non-empty entries; ``read_of`` the read each belongs
    to (numbered across all windows); ``begins``/``ends`` the ``[begin, end)`` byte range of every
    read.  Empty entries (offset 2^64-1) are in no read.

    (Stream H1 of issue #16 adds the same function in C, ``zarrbolt.kernels.shard_windows``.)"""
    offs = np.asarray(offsets, dtype=np.uint64).reshape(-1)
    nb = np.asarray(nbytes, dtype=np.uint64).reshape(-1)
    ents = np.asarray(entries, dtype=np.int64).reshape(-1)
    sizes = np.where(offs[ents] == EMPTY, 0, nb[ents]).tolist()
    pairs = np.stack([offs, nb], axis=1)
    window_ends: list[int] = []
    orders: list[np.ndarray] = []
    read_ofs: list[np.ndarray] = []
    begins: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    nreads = 0
    w0 = 0
    while w0 < len(sizes):
        w1, tot = w0 + 1, sizes[w0]
        while w1 < len(sizes) and tot + sizes[w1] <= arena_cap:
            tot += sizes[w1]
            w1 += 1
        window = ents[w0:w1]
        order, read_of, b, e = _shard.coalesce(pairs, window, max_gap, arena_cap)
        # entries -> their positions in `entries` (sorted search: the window's entries are distinct)
        by_entry = np.argsort(window, kind="stable")
        orders.append(w0 + by_entry[np.searchsorted(window, order, sorter=by_entry)])
        read_ofs.append(read_of + nreads)
        begins.append(b)
        ends.append(e)
        nreads += len(b)
        window_ends.append(w1)
        w0 = w1

    def cat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)

    return (np.asarray(window_ends, dtype=np.int64), cat(orders, np.int64), cat(read_ofs, np.int64),
            cat(begins, np.uint64), cat(ends, np.uint64))


# ---------------------------------------------------------------------------- shards and tasks
def group_by_shard(coords: np.ndarray, chunks_per_shard: tuple[int, ...]) -> tuple[np.ndarray, list[Any]]:
    """For tasks at inner-chunk grid ``coords`` (n, ndim): each task's flat inner-chunk number
    within its shard, and ``[(shard coords, task indices)]`` grouped by shard (C order inside a
    shard kept)."""
    n, ndim = coords.shape
    if not ndim:
        return np.zeros(n, np.int64), ([((), np.arange(n))] if n else [])
    flat, shard_coords, one = _shard.shard_of_tasks(coords, chunks_per_shard)
    if one:  # one shard (small reads): no sort
        return flat, ([(tuple(shard_coords[0].tolist()), np.arange(n))] if n else [])
    order = np.lexsort(shard_coords.T[::-1])
    sc_sorted = shard_coords[order]
    edges = [0, *(np.flatnonzero((sc_sorted[1:] != sc_sorted[:-1]).any(axis=1)) + 1).tolist(), n]
    heads = sc_sorted[edges[:-1]].tolist()
    groups = [(tuple(h), order[a:b]) for h, a, b in zip(heads, edges[:-1], edges[1:])]
    return flat, groups


def work_items(groups: list[tuple[tuple[int, ...], Any]], ninner: int, lay: Any) -> list[tuple[Any, ...]]:
    """``(shard coords, entries, whole)`` work items.  Fewer shards than the threads want work
    items: each shard is split into parts of at least two inner chunks (the parts share one
    read of the shard index) so that every thread gets some to balance with; reads under
    1 MiB of decoded data stay whole."""
    threads = config.get("threads")
    want = threads * _threads.BATCHES_PER_THREAD
    split = threads > 1 and len(groups) < want and lay.inner.spec.nbytes * ninner >= (1 << 20)
    parts = -(-want // max(len(groups), 1))
    items: list[tuple[Any, ...]] = []
    for sc, entries in groups:
        n = len(entries)
        k = min(parts, n // 2) if split else 1
        if k >= 2:
            for i in range(k):
                items.append((sc, entries[n * i // k: n * (i + 1) // k], False))
        else:
            items.append((sc, entries, n == lay.n))
    return items


# ---------------------------------------------------------------------------- reads through a Store
def shard_index(store: Any, key: str, codec: Any, lay: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """The validated ``(offsets, nbytes)`` of shard ``key`` read by one byte-range request
    (after its size), or None when the shard does not exist."""
    kind, index_nbytes = codec.index_range(lay)
    try:
        total = store.getsize(key)
    except (StoreIOError, StorePermissionError, StoreUnavailableError, SymlinkError):
        raise  # there but unreadable, refused, or the store unreachable: not a missing shard
    except StoreError:  # the shard does not exist
        return None
    if total < index_nbytes:
        raise CorruptChunkError(f"shard {key!r}: {total} bytes is smaller than its {index_nbytes}-byte index")
    rng = (total - index_nbytes, total) if kind == "suffix" else (0, index_nbytes)
    raw_index = store.get(key, rng)
    if raw_index is None or len(raw_index) != index_nbytes:
        raise CorruptChunkError(f"shard {key!r} changed or was truncated while being read")
    index: tuple[np.ndarray, np.ndarray] | None = codec.decode_index(raw_index, lay, total, key)
    return index


def fetch_inner_chunks(store: Any, key: str, codec: Any, lay: Any, flats: Sequence[int],
                       whole: bool) -> list[Any] | None:
    """The encoded bytes of inner chunks ``flats`` of shard ``key`` (None for empty ones), or
    None when the shard does not exist.  ``whole``: one request for the whole shard; else the
    index by one byte range, then the wanted chunks in coalesced ranges."""
    from .. import kernels

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
    index = shard_index(store, key, codec, lay)
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


class ShardArenaReader:
    """Reads the wanted inner chunks of shards through the Store API into one thread's reusable
    ``arena``, window after window (:func:`shard_windows` over half the arena), each window's
    reads in one :meth:`~zarrbolt.storage.Store.get_ranges_into` call; whenever the arena is
    full (and at the end) hands what it holds to ``decode(bufs, tasks, names)`` in task order
    (the C order of the output, not the file order: Morton order for zarr-python's shards), so
    that neighbours along a row of the output come one after another and their copies are
    grouped.  No fresh buffer per request, so no page faults for the compressed bytes."""

    def __init__(self, store: Any, codec: Any, lay: Any, arena: memoryview,
                 decode: Callable[[list[Any], list[Any], list[Any]], None], fill_task: Callable[[int], None]):
        self.store, self.codec, self.lay = store, codec, lay
        self.arena, self.cap = arena, len(arena)
        self.decode, self.fill_task = decode, fill_task
        self.pos = 0
        self.bufs: list[Any] = []
        self.idx: list[Any] = []
        self.names: list[Any] = []
        self.key = ""
        self.pending: list[tuple[int, int]] = []  # reads of self.key into arena[self.pending_at: self.pos]
        self.pending_at = 0

    def read(self, key: str, index: tuple[np.ndarray, np.ndarray], tasks: list[int], ents: list[int]) -> None:
        """Read inner chunks ``ents`` of shard ``key`` (its validated ``index``) for ``tasks``."""
        ioff, inb = index
        cap = self.cap
        window_ends, order, read_of, begins, ends = shard_windows(ioff, inb, ents, cap // 2, COALESCE_GAP)
        order, read_of = order.tolist(), read_of.tolist()
        begins, ends = begins.tolist(), ends.tolist()
        k = 0
        lo = 0
        for hi in window_ends.tolist():
            k1 = k
            while k1 < len(order) and order[k1] < hi:
                k1 += 1
            for p in set(range(lo, hi)) - set(order[k:k1]):  # empty inner chunks
                self.fill_task(tasks[p])
            r0, r1 = (read_of[k], read_of[k1 - 1] + 1) if k1 > k else (0, 0)
            for r in range(r0, r1):
                b0, size = begins[r], ends[r] - begins[r]
                if size > cap:  # one inner chunk larger than the arena
                    blob = self.store.get(key, (b0, ends[r]))
                    if blob is None or len(blob) != size:
                        raise CorruptChunkError(f"shard {key!r} changed or was truncated while being read")
                    view = memoryview(blob)
                else:
                    if self.pos + size > cap:
                        self.flush()
                    view = self._reserve(key, b0, size)
                while k < k1 and read_of[k] == r:
                    f = ents[order[k]]
                    o = int(ioff[f]) - b0
                    self.bufs.append(view[o: o + int(inb[f])])
                    self.idx.append(tasks[order[k]])
                    self.names.append(f"{key}[{f}]")
                    k += 1
                if size > cap:
                    self.flush()
            self._issue()
            lo = hi

    def _reserve(self, key: str, begin: int, size: int) -> memoryview:
        """The arena space that the read of ``[begin, begin + size)`` of ``key`` will fill (by
        the next :meth:`_issue`)."""
        if self.pending and key != self.key:
            self._issue()
        if not self.pending:
            self.key, self.pending_at = key, self.pos
        self.pending.append((begin, begin + size))
        view = self.arena[self.pos: self.pos + size]
        self.pos += size
        return view

    def _issue(self) -> None:
        """Read the pending ranges, all at once."""
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        got = self.store.get_ranges_into(self.key, pending, self.arena[self.pending_at: self.pos])
        if got is None or any(g != e - b for g, (b, e) in zip(got, pending)):
            raise CorruptChunkError(f"shard {self.key!r} changed or was truncated while being read")

    def flush(self) -> None:
        """Decode what the arena holds (in task order) and start over at its beginning."""
        self._issue()
        o = sorted(range(len(self.idx)), key=self.idx.__getitem__)
        self.decode([self.bufs[i] for i in o], [self.idx[i] for i in o], [self.names[i] for i in o])
        self.bufs, self.idx, self.names, self.pos = [], [], [], 0
