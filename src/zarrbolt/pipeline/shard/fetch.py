"""The I/O of a sharded read: which shard each wanted inner chunk is in, the work items, and the
reads of a shard's wanted inner chunks.

A read's tasks (inner chunks, in the C order of the output) are grouped by shard
(:func:`group_by_shard`) and cut into work items (:func:`work_items`).  A shard's index is read
first (:mod:`.index`), then its wanted inner chunks in windows of the tasks whose reads are
coalesced in file order: the windows are the one C rule (``zb_shard_windows``, through
:func:`zarrbolt.kernels.shard_windows`), which the native reads of local shard files
(``csrc/local_io.c``) apply in C and :class:`ShardArenaReader` applies to any Store through
:meth:`~zarrbolt.storage.Store.get_ranges_into`.  :func:`fetch_inner_chunks` gives the encoded
bytes of some inner chunks of one shard (the per-codec reads); :func:`afetch_parts` stages a
shard's index and wanted inner chunks from an async source (remote reads).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ... import _threads, config, kernels
from ..._ext import _shard
from ...codecs.sharding import EMPTY
from ...errors import CorruptChunkError, StoreError
from . import index as shard_index

__all__ = [
    "COALESCE_GAP",
    "ShardArenaReader",
    "afetch_parts",
    "fetch_inner_chunks",
    "group_by_shard",
    "inner_chunk",
    "work_items",
]

# Gaps between wanted inner chunks up to this many bytes are read rather than split into
# separate requests (one larger read is cheaper than two round trips on every store).
COALESCE_GAP = 1 << 16


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


def inner_chunk(data: Any, offs: np.ndarray, nb: np.ndarray, flat: int, begin: int = 0) -> Any:
    """The encoded bytes of inner chunk ``flat`` (None: empty) out of ``data``, a buffer holding
    the shard's bytes from offset ``begin``."""
    o = int(offs[flat])
    if o == EMPTY:
        return None
    return data[o - begin: o - begin + int(nb[flat])]


# ---------------------------------------------------------------------------- reads through a Store
def fetch_inner_chunks(store: Any, key: str, codec: Any, lay: Any, flats: Sequence[int],
                       whole: bool) -> list[Any] | None:
    """The encoded bytes of inner chunks ``flats`` of shard ``key`` (None for empty ones), or
    None when the shard does not exist.  ``whole``: one request for the whole shard; else the
    index by one byte range, then the wanted chunks in coalesced ranges."""
    if whole:
        data = store.get(key)
        if data is None:
            return None
        mv, offs, nb = codec.split_shard(data, lay, key)
        return [inner_chunk(mv, offs, nb, f) for f in flats]
    index = shard_index.fetch(store, key, codec, lay)
    if index is None:
        return None
    offs, nb = index.offsets, index.nbytes
    wanted = np.asarray(flats, dtype=np.int64)
    order, read_of, begins, ends = kernels.coalesce_ranges(offs, nb, wanted, max_gap=COALESCE_GAP)
    blobs = store.get_partial_values([(key, (int(b), int(e))) for b, e in zip(begins, ends)])
    for blob, b, e in zip(blobs, begins, ends):
        if blob is None or len(blob) != int(e) - int(b):
            raise shard_index.changed(key)
    views = [memoryview(b) for b in blobs]
    where = {int(ent): int(r) for ent, r in zip(order, read_of)}
    out = []
    for f in flats:
        r = where.get(int(f))
        out.append(None if r is None else inner_chunk(views[r], offs, nb, int(f), int(begins[r])))
    return out


class ShardArenaReader:
    """Reads the wanted inner chunks of shards through the Store API into one thread's reusable
    ``arena``, window after window (the C rule over half the arena), each window's reads in one
    :meth:`~zarrbolt.storage.Store.get_ranges_into` call; whenever the arena is full (and at the
    end) hands what it holds to ``decode(bufs, tasks, names)`` in task order (the C order of the
    output, not the file order: Morton order for zarr-python's shards), so that neighbours along
    a row of the output come one after another and their copies are grouped.  No fresh buffer
    per request, so no page faults for the compressed bytes."""

    def __init__(self, store: Any, arena: memoryview,
                 decode: Callable[[list[Any], list[Any], list[Any]], None], fill_task: Callable[[int], None]):
        self.store = store
        self.arena, self.cap = arena, len(arena)
        self.decode, self.fill_task = decode, fill_task
        self.pos = 0
        self.bufs: list[Any] = []
        self.idx: list[Any] = []
        self.names: list[Any] = []
        self.key = ""
        self.pending: list[tuple[int, int]] = []  # reads of self.key into arena[self.pending_at: self.pos]
        self.pending_at = 0

    def read(self, key: str, index: shard_index.Index, tasks: list[int], ents: list[int]) -> None:
        """Read inner chunks ``ents`` of shard ``key`` (its validated ``index``) for ``tasks``."""
        ioff, inb = index.offsets, index.nbytes
        cap = self.cap
        window_ends, order, read_of, begins, ends = kernels.shard_windows(ioff, inb, ents, cap // 2, COALESCE_GAP)
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
                        raise shard_index.changed(key)
                    view = memoryview(blob)
                else:
                    if self.pos + size > cap:
                        self.flush()
                    view = self._reserve(key, b0, size)
                while k < k1 and read_of[k] == r:
                    f = ents[order[k]]
                    self.bufs.append(inner_chunk(view, ioff, inb, f, b0))
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
            raise shard_index.changed(self.key)

    def flush(self) -> None:
        """Decode what the arena holds (in task order) and start over at its beginning."""
        self._issue()
        o = sorted(range(len(self.idx)), key=self.idx.__getitem__)
        self.decode([self.bufs[i] for i in o], [self.idx[i] for i in o], [self.names[i] for i in o])
        self.bufs, self.idx, self.names, self.pos = [], [], [], 0


# ---------------------------------------------------------------------------- reads from async sources
async def afetch_parts(source: Any, staged: Any, key: str, codec: Any, lay: Any, wanted: list[int], max_gap: int,
                       cache: tuple[Any, Any] | None) -> shard_index.Index | None:
    """Stage into ``staged`` (a :class:`~zarrbolt.storage.staged.StagedStore`) the index of shard
    ``key`` (one request, or none when ``cache`` has it) and the byte ranges of its ``wanted``
    inner chunks (coalesced here across gaps under ``max_gap``, then by the source) by one
    ``aget_ranges`` call.  The shard's size is reported as its index implies it (the end of its
    last inner chunk plus the index), so that a planner's own index read through ``staged``
    (:func:`.index.fetch`) asks for exactly the staged index.  Returns the index; None when the
    shard is absent (also when it was deleted after its index was read)."""
    index = await shard_index.afetch(source, key, codec, lay, cache)
    if index is None:
        return None
    kind, nidx = codec.index_range(lay)
    size = index.data_end + nidx if kind == "suffix" else max(index.data_end, nidx)
    staged.put_range(key, index.data_end if kind == "suffix" else 0, index.raw, size)
    _order, _read_of, begins, ends = kernels.coalesce_ranges(index.offsets, index.nbytes, wanted, max_gap=max_gap)
    spans = list(zip(begins.tolist(), ends.tolist()))
    bufs = await source.aget_ranges(key, spans, max_gap=max_gap) if spans else []
    if bufs is None:  # deleted since its index was read: absent, as a shard without an index
        if cache is not None:
            cache[0].invalidate(cache[1], key)
        return None
    if len(bufs) != len(spans):
        raise StoreError(f"shard {key!r}: {len(bufs)} byte ranges came back for {len(spans)} requested")
    for (b, e), got in zip(spans, bufs):
        view = got if isinstance(got, memoryview) else memoryview(got)
        view = view.cast("B") if view.format != "B" or view.ndim != 1 else view
        if len(view) != e - b:
            if cache is not None:
                cache[0].invalidate(cache[1], key)
            raise CorruptChunkError(f"shard {key!r}: its index names bytes [{b}, {e}) but only {len(view)} of them "
                                    "came back (an entry points past the end of the shard, or the shard changed)")
        staged.put_range(key, b, view, size)
    return index
