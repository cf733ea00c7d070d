"""Reads of stores with an async source (remote stores: ``Store.async_source()`` is not None).

A read is cut into windows whose bytes are bounded (half the store's ``max_bytes_in_flight``, so
that the window being decoded and the one being fetched fit together); each window's bytes are
fetched concurrently by :func:`stage` on the source's event loop into a
:class:`~zarrbolt.storage.staged.StagedStore` (chunks whole; shards: the index by one suffix
request, or none when :data:`~.shard.index.INDEX_CACHE` has it, then the wanted inner chunks by
coalesced byte ranges; a shard wanted whole and no larger than a window by one request), the next
window while the current one decodes.  The read dispatch (:mod:`.read`) chose how the bytes are
decoded: the fused C plan decodes views of the fetched buffers straight into the output (no copy
into an arena), or the per-codec paths (:mod:`.per_codec`) read each window's staged store.

Absent chunks and shards are the fill value; everything else a fetch raises (permissions,
server errors after the source's retries, truncated bodies: :class:`~zarrbolt.errors.
StoreError` and subclasses naming the key; damaged shards: :class:`~zarrbolt.errors.
CorruptChunkError`) propagates, and no partial result is returned.  An exception in the reading
thread (Ctrl-C) cancels the fetches in flight and waits for them before it propagates.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from .. import config
from .._threads import LazyExecutor
from ..codecs.sharding import EMPTY
from ..storage.staged import NOT_STAGED, StagedStore
from . import buffers, per_codec
from .context import ArrayIO
from .fused import FusedOutput, decode_views
from .shard import index as shard_index
from .shard.fetch import COALESCE_GAP, afetch_parts, group_by_shard, inner_chunk

__all__ = ["chunks_fused", "chunks_per_codec", "remote_counts", "shards_fused", "shards_per_codec", "stage",
           "window_budget"]

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
    return max(1, int(source.max_bytes_in_flight) // 2)


# ---------------------------------------------------------------------------- staging
class Staged:
    """What :func:`stage` fetched for array ``io``: the bytes (``store``) and the indexes of the
    shards it staged in part."""

    def __init__(self, io: ArrayIO, base: Any):
        self.io = io
        self.store = StagedStore(base)
        self.indexes: dict[str, shard_index.Index] = {}
        self._splits: dict[str, tuple[Any, ...]] = {}  # shards staged whole: their split

    def inner_chunk(self, key: str, flat: int) -> Any:
        """Inner chunk ``flat`` of staged shard ``key``: a view of its bytes, None when it is
        empty, or NOT_STAGED when the shard is absent (callers fill) -- CorruptChunkError for a
        damaged shard staged whole, KeyError for bytes that were not staged."""
        index = self.indexes.get(key)
        if index is None:
            v = self.store.whole(key)
            if v is None:
                return NOT_STAGED
            if v is NOT_STAGED:
                raise KeyError(f"shard {key!r} was not staged")
            split = self._splits.get(key)
            if split is None:
                io = self.io
                assert io.sharding is not None and io.layout is not None
                split = self._splits[key] = io.sharding.split_shard(v, io.layout, key)
            return inner_chunk(split[0], split[1], split[2], flat)
        o = int(index.offsets[flat])
        if o == EMPTY:
            return None
        got = self.store.piece(key, o, o + int(index.nbytes[flat]))
        if got is None:  # the planner asked for an inner chunk that was not staged
            raise KeyError(f"inner chunk {flat} of shard {key!r} was not staged")
        return got


async def _stage_whole(source: Any, staged: Staged, key: str) -> None:
    buf = await source.aget(key)
    if buf is None:
        staged.store.put(key, None)
        return
    mv = buf if isinstance(buf, memoryview) else memoryview(buf)
    staged.store.put(key, mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv)


async def _stage_shard(source: Any, staged: Staged, key: str, wanted: list[int], max_gap: int,
                       cache: tuple[Any, Any] | None) -> None:
    io = staged.io
    index = await afetch_parts(source, staged.store, key, io.sharding, io.layout, wanted, max_gap, cache)
    if index is None:
        staged.store.put(key, None)
    else:
        staged.indexes[key] = index


def _wanted(io: ArrayIO, key: str, flats: Iterable[int]) -> list[int]:
    assert io.layout is not None
    wanted = sorted({int(f) for f in flats})
    if wanted and (wanted[0] < 0 or wanted[-1] >= io.layout.n):
        raise ValueError(f"inner chunk numbers of shard {key!r} must lie in [0, {io.layout.n})")
    return wanted


async def stage(staged: Staged, source: Any, requests: dict[str, list[int] | None], *,
                max_gap: int = COALESCE_GAP, cache: tuple[Any, Any] | None = None,
                whole_shard: Callable[[str, list[int]], bool] | None = None,
                on_done: Callable[[str], None] | None = None) -> Staged:
    """Fetch from the async ``source`` into ``staged``, concurrently, what ``requests`` name for
    its array: store key -> None (the whole object) or the flat numbers of the inner chunks
    wanted from that shard (used when the array's shards are read directly).  A shard whose
    inner chunks are all wanted is fetched whole, unless ``whole_shard(key, wanted)`` says
    otherwise.  ``cache``: ``(IndexCache, store token)`` for shard indexes.  ``on_done(key)`` is
    called (on the loop) as soon as a key's bytes are staged, so that a reader can decode them
    while the rest arrives.

    At most ``source.concurrency`` jobs run at once.  On the first failure the other jobs are
    cancelled and awaited, then the failure is raised (also when this coroutine is cancelled:
    nothing is left running)."""
    io = staged.io
    jobs: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = []
    for key, flats in requests.items():
        if flats is None or not io.shard_direct:
            jobs.append((key, _stage_whole, (source, staged, key)))
            continue
        assert io.layout is not None
        wanted = _wanted(io, key, flats)
        if len(wanted) == io.layout.n and (whole_shard is None or whole_shard(key, wanted)):
            jobs.append((key, _stage_whole, (source, staged, key)))
        elif wanted:
            jobs.append((key, _stage_shard, (source, staged, key, wanted, max_gap, cache)))
    if not jobs:
        return staged
    sem = asyncio.Semaphore(max(1, int(source.concurrency)))

    async def bounded(key: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        async with sem:
            await fn(*args)
        if on_done is not None:
            on_done(key)

    tasks = [asyncio.ensure_future(bounded(key, fn, args)) for key, fn, args in jobs]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except BaseException:  # cancelled (Ctrl-C in the caller): cancel every job, wait for them
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    for t in tasks:  # the first failure in request order
        if t.done() and not t.cancelled() and (exc := t.exception()) is not None:
            raise exc
    return staged


# ---------------------------------------------------------------------------- windows
class _Staging:
    """One window's staging, running on the source's loop (through a stager thread); each key
    staged is put on ``ready`` as ``(window, key)``."""

    def __init__(self, io: ArrayIO, k: int, requests: dict[str, Any], whole_shard: Callable[..., Any] | None,
                 ready: queue.SimpleQueue[Any]):
        source = io.source
        assert source is not None  # (a remote store's array)
        self.staged = Staged(io, io.store)
        self.keys = set(requests)
        self._cancelled = threading.Event()
        self._task: Any = None
        self._loop: Any = None
        gap = int(config.get("remote_coalesce_gap"))
        cache = shard_index.cache_of(io.store)

        async def main() -> Staged:
            if self._cancelled.is_set():
                raise asyncio.CancelledError
            self._task, self._loop = asyncio.current_task(), asyncio.get_running_loop()
            return await stage(self.staged, source, requests, max_gap=gap, cache=cache, whole_shard=whole_shard,
                               on_done=lambda key: ready.put((k, key)))

        self.future: Future[Any] = _stagers().submit(source.run, main())

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
                 decode: Callable[[Any, list[str], Staged], None], whole_shard: Callable[..., Any] | None = None,
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
                    remote_counts["max_window_bytes"] = max(remote_counts["max_window_bytes"], st.staged.store.nbytes)
                    if not stream:
                        decode(windows[k], sorted(st.keys), st.staged)
                    del active[k]
    except BaseException:
        for st, _ in active.values():
            st.cancel()
        raise


# ---------------------------------------------------------------------------- the fused paths
def chunks_fused(io: ArrayIO, fo: FusedOutput) -> None:
    """Chunks staged window after window, each decoded by the fused plan as it arrives."""
    keys = [io.chunk_key(c) for c in fo.coords.tolist()]
    nbytes = io.bound.spec.nbytes
    assert io.source is not None
    windows = buffers.read_windows([nbytes] * fo.n, window_budget(io.source))
    task_of = {k: i for i, k in enumerate(keys)}  # (each chunk is one task)

    def decode(w: tuple[int, int], ready: list[str], staged: Staged) -> None:
        views, idx, names = [], [], []
        for key in ready:
            i = task_of[key]
            v = staged.store.whole(key)
            if v is None:
                fo.absent(i, key)
            else:
                views.append(v)
                idx.append(i)
                names.append(key)
        decode_views(fo, views, idx, names, nbytes * len(idx))

    remote_counts["chunk-windows"] += len(windows)
    _run_windows(io, windows, lambda w: {keys[i]: None for i in range(*w)}, decode)


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


def shards_fused(io: ArrayIO, fo: FusedOutput) -> None:
    """Shards' wanted inner chunks staged window after window (a shard read in pieces when its
    tasks exceed a window), decoded by the fused plan as each shard arrives."""
    lay = io.layout
    assert lay is not None and io.source is not None
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

    def decode(w: list[Any], ready: list[str], staged: Staged) -> None:
        tasks = by_key.get(id(w))
        if tasks is None:
            tasks = by_key[id(w)] = dict(w)  # (a shard's pieces are in different windows)
        views, idx, names = [], [], []
        for key in ready:
            for i in tasks.pop(key).tolist():
                f = int(flat[i])
                v = staged.inner_chunk(key, f)
                if v is NOT_STAGED:
                    fo.absent(i, key)
                elif v is None:
                    fo.fill_task(i)
                else:
                    views.append(v)
                    idx.append(i)
                    names.append(f"{key}[{f}]")
        decode_views(fo, views, idx, names, inner * len(idx))

    remote_counts["shard-windows"] += len(windows)
    _run_windows(io, windows, requests_of, decode, whole_shard)


# ---------------------------------------------------------------------------- the per-codec paths
def chunks_per_codec(io: ArrayIO, projections: list[Any], out: np.ndarray, missing: set[Any] | None) -> None:
    """Chunks staged window after window, each window's decoded by the per-codec chain."""
    nbytes = io.bound.spec.nbytes
    assert io.source is not None
    windows = buffers.read_windows([nbytes] * len(projections), window_budget(io.source))

    def requests_of(w: tuple[int, int]) -> dict[str, Any]:
        return {io.chunk_key(p.chunk_coords): None for p in projections[w[0]: w[1]]}

    def decode(w: tuple[int, int], ready: list[str], staged: Staged) -> None:
        per_codec.projections(io.with_store(staged.store), projections[w[0]: w[1]], out, missing)

    _run_windows(io, windows, requests_of, decode, stream=False)


def shards_per_codec(io: ArrayIO, projections: list[Any], out: np.ndarray, missing: set[Any] | None) -> None:
    """Shards' wanted inner chunks staged window after window (big shards in pieces), each
    window's decoded by the inner chain."""
    assert io.layout is not None and io.source is not None
    inner = io.layout.inner.spec.nbytes
    budget = window_budget(io.source)
    per = max(1, budget // max(inner, 1))  # inner chunks per window: a big shard is read in pieces
    by_shard = [(sc, e[lo: lo + per]) for sc, e in per_codec.sharded_groups(io, projections).items()
                for lo in range(0, len(e), per)]
    windows = buffers.read_windows([len(e) * inner for _, e in by_shard], per * inner)

    def requests_of(w: tuple[int, int]) -> dict[str, Any]:
        req: dict[str, list[int]] = {}
        for sc, e in by_shard[w[0]: w[1]]:
            req.setdefault(io.chunk_key(sc), []).extend(f for f, _ in e)
        return req

    def decode(w: tuple[int, int], ready: list[str], staged: Staged) -> None:
        def fetch(store: Any, key: str, codec: Any, lay: Any, flats: list[int], whole: bool) -> list[Any] | None:
            got = [staged.inner_chunk(key, f) for f in flats]
            return None if any(g is NOT_STAGED for g in got) else got

        groups: dict[tuple[int, ...], Any] = {}
        for sc, e in by_shard[w[0]: w[1]]:
            groups.setdefault(sc, []).extend(e)
        per_codec.shard_groups(io.with_store(staged.store), groups, out, missing, fetch)

    _run_windows(io, windows, requests_of, decode, stream=False)
