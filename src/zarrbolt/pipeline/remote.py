"""Reads of stores with an async source (remote stores: ``Store.async_source()`` is not None).

A read is cut into windows whose bytes are bounded (half the source's ``max_bytes_in_flight``,
so that the window being decoded and the one being fetched fit together); each window's bytes
are fetched concurrently by :func:`~.staging.stage` on the source's event loop (chunks whole;
shards: the index by one suffix request, or none when :data:`~.staging.INDEX_CACHE` has it,
then the wanted inner chunks by coalesced byte ranges; a shard wanted whole and no larger than
a window by one request), the next window while the current one decodes.  The fused C plan
then decodes views of the fetched buffers straight into the output (no copy into an arena).
Reads the fused plan cannot do (steps, index arrays, chains without a C plan) run the
per-codec paths of :mod:`.read` over a :class:`~.staging.StagedStore` of each window.

Absent chunks and shards are the fill value; everything else a fetch raises (permissions,
server errors after the source's retries, truncated bodies: :class:`~zarrbolt.errors.
StoreError` and subclasses naming the key; damaged shards: :class:`~zarrbolt.errors.
CorruptChunkError`) propagates, and no partial result is returned.  An exception in the reading
thread (Ctrl-C) cancels the fetches in flight and waits for them before it propagates.
"""

from __future__ import annotations

import asyncio
import copy
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import numpy as np

from .._threads import run_batches
from .context import ArrayIO
from .shard_io import group_by_shard
from .staging import _NOT_STAGED, INDEX_CACHE, IndexCache, StagedStore, remote_option, stage

__all__ = ["read_remote", "remote_counts", "window_budget"]

# How many windows each kind of remote read staged, and the most bytes one window staged (a
# testing and debugging aid).
remote_counts: Counter = Counter()

# The threads that wait for a window's staging while the reading thread decodes the previous one.
_STAGERS: ThreadPoolExecutor | None = None
_STAGERS_LOCK = threading.Lock()
_POLL_S = 0.05  # how often a waiting reader looks for a pending signal (Ctrl-C)


def _stagers() -> ThreadPoolExecutor:
    global _STAGERS
    if _STAGERS is None:
        with _STAGERS_LOCK:
            if _STAGERS is None:
                _STAGERS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="zarrbolt-stage")
    return _STAGERS


def window_budget(source: Any) -> int:
    """Bytes one window may stage: half the source's ``max_bytes_in_flight`` (at least 1)."""
    return max(1, int(getattr(source, "max_bytes_in_flight", 256 << 20)) // 2)


class _Staging:
    """One window's staging, running on the source's loop (through a stager thread)."""

    def __init__(self, io: ArrayIO, requests: dict, whole_shard: Callable | None):
        self.staged = StagedStore(io.store, io.source, io=io)
        self._cancelled = threading.Event()
        self._task: Any = None
        self._loop: Any = None
        gap = remote_option("remote_coalesce_gap")
        cache = (INDEX_CACHE, IndexCache.token(io.store)) if IndexCache.capacity() > 0 else None

        async def main() -> StagedStore:
            if self._cancelled.is_set():
                raise asyncio.CancelledError
            self._task, self._loop = asyncio.current_task(), asyncio.get_running_loop()
            return await stage(self.staged, io, requests, max_gap=gap, cache=cache, whole_shard=whole_shard)

        self.future: Future = _stagers().submit(io.source.run, main())

    def result(self) -> StagedStore:
        """Wait for the staging (a pending signal in this thread is raised within _POLL_S)."""
        while True:
            try:
                return self.future.result(timeout=_POLL_S)
            except FutureTimeout:
                continue

    def cancel(self) -> None:
        """Cancel the fetches and wait (briefly) until they are gone."""
        self._cancelled.set()
        if self.future.cancel():
            return
        loop, task = self._loop, self._task
        if loop is not None and task is not None:
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop is closed: nothing runs on it
                pass
        try:
            self.future.result(timeout=10)
        except BaseException:  # noqa: BLE001 - cancelled or failed: it is gone either way
            pass


def _run_windows(io: ArrayIO, windows: Sequence[Any], requests_of: Callable[[Any], dict],
                 decode: Callable[[Any, StagedStore], None], whole_shard: Callable | None = None) -> None:
    """Stage the windows one after another (window k+1 while window k decodes) and decode each."""
    if not windows:
        return
    current = _Staging(io, requests_of(windows[0]), whole_shard)
    nxt: _Staging | None = None
    try:
        for k, w in enumerate(windows):
            staged = current.result()
            remote_counts["max_window_bytes"] = max(remote_counts["max_window_bytes"], staged.nbytes)
            if k + 1 < len(windows):
                nxt = _Staging(io, requests_of(windows[k + 1]), whole_shard)
            decode(w, staged)
            del staged
            if nxt is not None:
                current, nxt = nxt, None
    except BaseException:
        current.cancel()
        if nxt is not None:
            nxt.cancel()
        raise


def _cut(costs: Sequence[int], budget: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` runs of consecutive items whose costs add up to at most ``budget`` (an item
    larger than that alone)."""
    out: list[tuple[int, int]] = []
    lo, tot = 0, 0
    for i, c in enumerate(costs):
        if i > lo and tot + c > budget:
            out.append((lo, i))
            lo, tot = i, 0
        tot += c
    if lo < len(costs):
        out.append((lo, len(costs)))
    return out


def _with_store(io: ArrayIO, store: Any) -> ArrayIO:
    io = copy.copy(io)
    io.store = store
    io.files = None
    io.source = None
    return io


# ---------------------------------------------------------------------------- the fused paths
def read_remote(io: ArrayIO, make_indexer: Callable[[tuple[int, ...]], Any], out: np.ndarray | None,
                missing: set | None) -> np.ndarray:
    """:func:`.read.read` for a store with an async source (see the module doc)."""
    from . import read as rd

    if io.shard_direct:
        indexer = make_indexer(io.layout.chunk_shape)
        out = rd._check_out(io, indexer, out)
        items = rd._unit_items(io, indexer)
        if items is not None:
            return _sharded_fused(io, indexer, items, out, missing)
        return _sharded_per_codec(io, indexer, out, missing)
    indexer = make_indexer(io.chunk_shape)
    out = rd._check_out(io, indexer, out)
    items = rd._unit_items(io, indexer)
    if items is not None:
        return _chunks_fused(io, indexer, items, out, missing)
    return _chunks_per_codec(io, indexer, out, missing)


def _decode_views(fo: Any, views: list, idx: list, names: list, cost: int) -> None:
    """Decode the fetched ``views`` (tasks ``idx``) in parallel batches, each one C call."""
    order = sorted(range(len(idx)), key=idx.__getitem__)  # output order: copies grouped

    def work(batch: Sequence[int]) -> None:
        fo.decode([views[j] for j in batch], [idx[j] for j in batch], [names[j] for j in batch])

    run_batches(work, order, cost=cost)


def _chunks_fused(io: ArrayIO, indexer: Any, items: tuple, out: np.ndarray | None,
                  missing: set | None) -> np.ndarray:
    from .read import FusedOutput, strategy_counts

    fo = FusedOutput(io, indexer, items, out)
    fo.missing = missing
    if fo.n == 0:
        return fo.out
    fo.prepare()
    strategy_counts["fused-remote"] += 1
    keys = [io.chunk_key(c) for c in fo.coords.tolist()]
    nbytes = io.bound.spec.nbytes
    windows = _cut([nbytes] * fo.n, window_budget(io.source))

    def decode(w: tuple[int, int], staged: StagedStore) -> None:
        views, idx, names = [], [], []
        for i in range(*w):
            v = staged.whole(keys[i])
            if v is None:
                fo.absent(i, keys[i])
            else:
                views.append(v)
                idx.append(i)
                names.append(keys[i])
        _decode_views(fo, views, idx, names, nbytes * len(idx))

    remote_counts["chunk-windows"] += len(windows)
    _run_windows(io, windows, lambda w: {keys[i]: None for i in range(*w)}, decode)
    return fo.out


def _shard_windows(io: ArrayIO, groups: list, budget: int) -> list[list[tuple[str, np.ndarray]]]:
    """Windows of ``(shard key, task indices)`` pieces: each shard's tasks in order, a shard
    whose tasks exceed the budget split into pieces, pieces packed into windows by cost."""
    inner = io.layout.inner.spec.nbytes
    per = max(1, budget // max(inner, 1))  # tasks per window
    pieces: list[tuple[str, np.ndarray]] = []
    for sc, g in groups:
        key = io.chunk_key(sc)
        for lo in range(0, len(g), per):
            pieces.append((key, g[lo: lo + per]))
    return [pieces[lo:hi] for lo, hi in _cut([len(g) * inner for _, g in pieces], per * inner)]


def _sharded_fused(io: ArrayIO, indexer: Any, items: tuple, out: np.ndarray | None,
                   missing: set | None) -> np.ndarray:
    from .read import FusedOutput, strategy_counts

    lay = io.layout
    fo = FusedOutput(io, indexer, items, out)
    fo.missing = missing
    if fo.n == 0:
        return fo.out
    fo.prepare()
    strategy_counts["sharded-fused-remote"] += 1
    flat, groups = group_by_shard(fo.coords, lay.chunks_per_shard)
    budget = window_budget(io.source)
    windows = _shard_windows(io, groups, budget)
    inner = lay.inner.spec.nbytes
    shard_est = lay.n * inner + lay.index_nbytes
    split = {key for w in windows for key, g in w if len(g) < lay.n}  # shards read in pieces

    def whole_shard(key: str, wanted: list[int]) -> bool:
        return key not in split and shard_est <= budget

    def requests_of(w: list) -> dict:
        req: dict[str, list[int]] = {}
        for key, g in w:
            req.setdefault(key, []).extend(flat[g].tolist())
        return req

    def decode(w: list, staged: StagedStore) -> None:
        views, idx, names = [], [], []
        for key, g in w:
            for i in g.tolist():
                f = int(flat[i])
                v = staged.inner_chunk(key, f)
                if v is _NOT_STAGED:
                    fo.absent(i, key)
                elif v is None:
                    fo.fill_task(i)
                else:
                    views.append(v)
                    idx.append(i)
                    names.append(f"{key}[{f}]")
        _decode_views(fo, views, idx, names, inner * len(idx))

    remote_counts["shard-windows"] += len(windows)
    _run_windows(io, windows, requests_of, decode, whole_shard)
    return fo.out


# ---------------------------------------------------------------------------- the per-codec paths
def _chunks_per_codec(io: ArrayIO, indexer: Any, out: np.ndarray | None, missing: set | None) -> np.ndarray:
    from .read import _per_codec_projections, strategy_counts

    strategy_counts["per-codec-remote"] += 1
    if out is None:
        out = np.empty(indexer.shape, dtype=io.dtype)
    projections = list(indexer)
    nbytes = io.bound.spec.nbytes
    windows = _cut([nbytes] * len(projections), window_budget(io.source))

    def requests_of(w: tuple[int, int]) -> dict:
        return {io.chunk_key(p.chunk_coords): None for p in projections[w[0]: w[1]]}

    def decode(w: tuple[int, int], staged: StagedStore) -> None:
        _per_codec_projections(_with_store(io, staged), projections[w[0]: w[1]], out, missing)

    _run_windows(io, windows, requests_of, decode)
    return out


def _sharded_per_codec(io: ArrayIO, indexer: Any, out: np.ndarray | None, missing: set | None) -> np.ndarray:
    from .read import _read_shard_groups, _sharded_groups, strategy_counts

    strategy_counts["sharded-per-codec-remote"] += 1
    if out is None:
        out = np.empty(indexer.shape, dtype=io.dtype)
    by_shard = list(_sharded_groups(io, indexer).items())
    inner = io.layout.inner.spec.nbytes
    windows = _cut([len(e) * inner for _, e in by_shard], window_budget(io.source))

    def requests_of(w: tuple[int, int]) -> dict:
        return {io.chunk_key(sc): [f for f, _ in e] for sc, e in by_shard[w[0]: w[1]]}

    def decode(w: tuple[int, int], staged: StagedStore) -> None:
        def fetch(store: Any, key: str, codec: Any, lay: Any, flats: list[int], whole: bool) -> list | None:
            got = [staged.inner_chunk(key, f) for f in flats]
            return None if any(g is _NOT_STAGED for g in got) else got

        _read_shard_groups(_with_store(io, staged), dict(by_shard[w[0]: w[1]]), out, missing, fetch)

    _run_windows(io, windows, requests_of, decode)
    return out

