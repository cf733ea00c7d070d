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
import queue
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from .._threads import LazyExecutor, run_batches
from . import buffers
from .context import ArrayIO
from .shard_io import group_by_shard
from .staging import _NOT_STAGED, INDEX_CACHE, IndexCache, StagedStore, remote_option, stage

__all__ = ["read_remote", "remote_counts", "window_budget"]

# How many windows each kind of remote read staged, and the most bytes one window staged (a
# testing and debugging aid).
remote_counts: Counter[Any] = Counter()

# The threads that wait for a window's staging while the reading thread decodes the previous one.
_STAGERS = LazyExecutor(8, "zarrbolt-stage")
_POLL_S = 0.05  # how often a waiting reader looks for a pending signal (Ctrl-C)


def _stagers() -> ThreadPoolExecutor:
    return _STAGERS.get()


def window_budget(source: Any) -> int:
    """Bytes one window may stage: half the source's ``max_bytes_in_flight`` (at least 1)."""
    return max(1, int(getattr(source, "max_bytes_in_flight", 256 << 20)) // 2)


class _Staging:
    """One window's staging, running on the source's loop (through a stager thread); each key
    staged is put on ``ready`` as ``(window, key)``."""

    def __init__(self, io: ArrayIO, k: int, requests: dict[str, Any], whole_shard: Callable[..., Any] | None, ready: queue.SimpleQueue[Any]):
        assert io.source is not None  # (a remote store's array)
        self.staged = StagedStore(io.store, io.source, io=io)
        self.keys = set(requests)
        self._cancelled = threading.Event()
        self._task: Any = None
        self._loop: Any = None
        gap = remote_option("remote_coalesce_gap")
        cache = (INDEX_CACHE, IndexCache.token(io.store)) if IndexCache.capacity() > 0 else None

        async def main() -> StagedStore:
            if self._cancelled.is_set():
                raise asyncio.CancelledError
            self._task, self._loop = asyncio.current_task(), asyncio.get_running_loop()
            return await stage(self.staged, io, requests, max_gap=gap, cache=cache, whole_shard=whole_shard,
                               on_done=lambda key: ready.put((k, key)))

        self.future: Future[Any] = _stagers().submit(io.source.run, main())

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


def _run_windows(io: ArrayIO, windows: Sequence[Any], requests_of: Callable[[Any], dict[str, Any]],
                 decode: Callable[[Any, list[str], StagedStore], None], whole_shard: Callable[..., Any] | None = None,
                 stream: bool = True) -> None:
    """Stage the windows (window k+1 once window k's bytes are all here, so that at most two
    windows' bytes are held) and decode what arrives: ``decode(window, keys, staged)`` with the
    keys staged so far (``stream``), or once with all of a window's keys."""
    if not windows:
        return
    ready: queue.SimpleQueue[Any] = queue.SimpleQueue()
    active: dict[int, tuple[_Staging, set[str]]] = {}
    started = 0

    def start() -> None:
        nonlocal started
        st = _Staging(io, started, requests_of(windows[started]), whole_shard, ready)
        active[started] = (st, set(st.keys))
        started += 1

    try:
        while active or started < len(windows):
            newest = active.get(started - 1)
            if started < len(windows) and len(active) < 2 and (newest is None or newest[0].future.done()):
                start()
            got: dict[int, list[str]] = {}
            try:
                item = ready.get(timeout=_POLL_S)  # a pending signal (Ctrl-C) is raised here
                while True:
                    got.setdefault(item[0], []).append(item[1])
                    item = ready.get_nowait()
            except queue.Empty:
                pass
            for k in sorted(active):
                st, left = active[k]
                keys = got.get(k, [])
                left.difference_update(keys)
                if stream and keys:
                    decode(windows[k], keys, st.staged)
                if st.future.done():
                    st.future.result()  # the staging's failure, if any
                    if left:  # (cannot be: every key staged was put on `ready` first)
                        continue
                    remote_counts["max_window_bytes"] = max(remote_counts["max_window_bytes"], st.staged.nbytes)
                    if not stream:
                        decode(windows[k], sorted(st.keys), st.staged)
                    del active[k]
    except BaseException:
        for st, _ in active.values():
            st.cancel()
        raise


def _with_store(io: ArrayIO, store: Any) -> ArrayIO:
    io = copy.copy(io)
    io.store = store
    io.files = None
    io.source = None
    return io


# ---------------------------------------------------------------------------- the fused paths
def read_remote(io: ArrayIO, make_indexer: Callable[[tuple[int, ...]], Any], out: np.ndarray | None,
                missing: set[Any] | None) -> np.ndarray:
    """:func:`.read.read` for a store with an async source (see the module doc)."""
    from . import read as rd

    if io.shard_direct:
        assert io.layout is not None
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


def _decode_views(fo: Any, views: list[Any], idx: list[Any], names: list[Any], cost: int) -> None:
    """Decode the fetched ``views`` (tasks ``idx``) in parallel batches, each one C call."""
    order = sorted(range(len(idx)), key=idx.__getitem__)  # output order: copies grouped

    def work(batch: Sequence[int]) -> None:
        fo.decode([views[j] for j in batch], [idx[j] for j in batch], [names[j] for j in batch])

    run_batches(work, order, cost=cost)


def _chunks_fused(io: ArrayIO, indexer: Any, items: tuple[Any, ...], out: np.ndarray | None,
                  missing: set[Any] | None) -> np.ndarray:
    from .read import FusedOutput, strategy_counts

    fo = FusedOutput(io, indexer, items, out)
    fo.missing = missing
    if fo.n == 0:
        return fo.out
    fo.prepare()
    strategy_counts["fused-remote"] += 1
    keys = [io.chunk_key(c) for c in fo.coords.tolist()]
    nbytes = io.bound.spec.nbytes
    windows = buffers.read_windows([nbytes] * fo.n, window_budget(io.source))

    task_of = {k: i for i, k in enumerate(keys)}  # (each chunk is one task)

    def decode(w: tuple[int, int], ready: list[str], staged: StagedStore) -> None:
        views, idx, names = [], [], []
        for key in ready:
            i = task_of[key]
            v = staged.whole(key)
            if v is None:
                fo.absent(i, key)
            else:
                views.append(v)
                idx.append(i)
                names.append(key)
        _decode_views(fo, views, idx, names, nbytes * len(idx))

    remote_counts["chunk-windows"] += len(windows)
    _run_windows(io, windows, lambda w: {keys[i]: None for i in range(*w)}, decode)
    return fo.out


def _shard_windows(io: ArrayIO, groups: list[Any], budget: int) -> list[list[tuple[str, np.ndarray]]]:
    """Windows of ``(shard key, task indices)`` pieces: each shard's tasks in order, a shard
    whose tasks exceed the budget split into pieces, pieces packed into windows by cost."""
    assert io.layout is not None
    inner = io.layout.inner.spec.nbytes
    per = max(1, budget // max(inner, 1))  # tasks per window
    pieces: list[tuple[str, np.ndarray]] = []
    for sc, g in groups:
        key = io.chunk_key(sc)
        for lo in range(0, len(g), per):
            pieces.append((key, g[lo: lo + per]))
    return [pieces[lo:hi] for lo, hi in buffers.read_windows([len(g) * inner for _, g in pieces], per * inner)]


def _sharded_fused(io: ArrayIO, indexer: Any, items: tuple[Any, ...], out: np.ndarray | None,
                   missing: set[Any] | None) -> np.ndarray:
    from .read import FusedOutput, strategy_counts

    lay = io.layout
    assert lay is not None
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

    def requests_of(w: list[Any]) -> dict[str, Any]:
        req: dict[str, list[int]] = {}
        for key, g in w:
            req.setdefault(key, []).extend(flat[g].tolist())
        return req

    by_key: dict[int, dict[str, np.ndarray]] = {}

    def decode(w: list[Any], ready: list[str], staged: StagedStore) -> None:
        tasks = by_key.get(id(w))
        if tasks is None:
            tasks = by_key[id(w)] = dict(w)  # (a shard's pieces are in different windows)
        views, idx, names = [], [], []
        for key in ready:
            for i in tasks.pop(key).tolist():
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
def _chunks_per_codec(io: ArrayIO, indexer: Any, out: np.ndarray | None, missing: set[Any] | None) -> np.ndarray:
    from .read import _per_codec_projections, strategy_counts

    strategy_counts["per-codec-remote"] += 1
    if out is None:
        out = np.empty(indexer.shape, dtype=io.dtype)
    projections = list(indexer)
    nbytes = io.bound.spec.nbytes
    windows = buffers.read_windows([nbytes] * len(projections), window_budget(io.source))

    def requests_of(w: tuple[int, int]) -> dict[str, Any]:
        return {io.chunk_key(p.chunk_coords): None for p in projections[w[0]: w[1]]}

    def decode(w: tuple[int, int], ready: list[str], staged: StagedStore) -> None:
        _per_codec_projections(_with_store(io, staged), projections[w[0]: w[1]], out, missing)

    _run_windows(io, windows, requests_of, decode, stream=False)
    return out


def _sharded_per_codec(io: ArrayIO, indexer: Any, out: np.ndarray | None, missing: set[Any] | None) -> np.ndarray:
    from .read import _read_shard_groups, _sharded_groups, strategy_counts

    strategy_counts["sharded-per-codec-remote"] += 1
    if out is None:
        out = np.empty(indexer.shape, dtype=io.dtype)
    assert io.layout is not None
    inner = io.layout.inner.spec.nbytes
    budget = window_budget(io.source)
    per = max(1, budget // max(inner, 1))  # inner chunks per window: a big shard is read in pieces
    by_shard = [(sc, e[lo: lo + per]) for sc, e in _sharded_groups(io, indexer).items() for lo in range(0, len(e), per)]
    windows = buffers.read_windows([len(e) * inner for _, e in by_shard], per * inner)

    def requests_of(w: tuple[int, int]) -> dict[str, Any]:
        req: dict[str, list[int]] = {}
        for sc, e in by_shard[w[0]: w[1]]:
            req.setdefault(io.chunk_key(sc), []).extend(f for f, _ in e)
        return req

    def decode(w: tuple[int, int], ready: list[str], staged: StagedStore) -> None:
        def fetch(store: Any, key: str, codec: Any, lay: Any, flats: list[int], whole: bool) -> list[Any] | None:
            got = [staged.inner_chunk(key, f) for f in flats]
            return None if any(g is _NOT_STAGED for g in got) else got

        groups: dict[tuple[int, ...], Any] = {}
        for sc, e in by_shard[w[0]: w[1]]:
            groups.setdefault(sc, []).extend(e)
        _read_shard_groups(_with_store(io, staged), groups, out, missing, fetch)

    _run_windows(io, windows, requests_of, decode, stream=False)
    return out

