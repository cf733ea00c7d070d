"""What every writer of stored values (chunks: :class:`~.write.ChunkWriter`; shards:
:class:`~.shard.storing.ShardWriter`) shares: the value being written, which chunks count as fill,
how a write's chunks are spread over threads, and the read-modify-write of one stored value.

A partial update (read, modify, write) of a chunk or shard is serialized per key: it holds the
key's write lock (:func:`zarrbolt.storage.locks.key_lock`: across processes on a LocalStore,
across the threads of this process elsewhere) unless the ``write_lock`` option is off; on a
store with conditional writes (``supports_conditional_writes``: S3, GCS, Azure) it is instead
guarded by the object's version (:meth:`Writer.conditional_update`): the read gives the object's
version (ETag) and the write is made only if the object still has that version; when another
writer got there first (:class:`~zarrbolt.errors.ConflictError`) the update is read, modified and
tried again, at most :data:`RMW_ATTEMPTS` times, then the ConflictError is raised: a concurrent
writer's update is never lost silently.  Writes of whole chunks and shards take no lock.

A write to a store with an async source goes through a
:class:`~zarrbolt.storage.write_behind.WriteBehindStore` (``remote``): whole values are collected
and sent together, a partial update is sent before its lock is released, and the chunks are
spread over as many threads as the store has requests in flight when they wait on the network
(:func:`run_projections`)."""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .. import config
from .._threads import run_batches
from ..errors import ConflictError
from ..indexing import ChunkProjection
from ..storage.locks import key_lock
from .context import ArrayIO

__all__ = ["RMW_ATTEMPTS", "UnitDone", "Writer", "never_fill", "run_projections"]

RMW_ATTEMPTS = 64  # read-modify-write tries of one object under contention
# the jittered wait after a lost race: up to RMW_BACKOFF * 2**attempt seconds, at most
# RMW_BACKOFF_MAX (a loser that waits long only loses more often to writers that do not)
RMW_BACKOFF = 0.002
RMW_BACKOFF_MAX = 0.05

# What a write tells as each stored value (a chunk, or a shard written directly) is done: its key,
# and whether it was stored (False: left out or erased as all fill value).  Called on the threads
# that write, possibly several at once.
UnitDone = Callable[[str, bool], None]


def never_fill(chunk: np.ndarray) -> bool:
    """The fill test of writes that store chunks equal to the fill value too."""
    return False


class Writer:
    """The part of a write every writer shares (see the module doc); ``run(batch)`` writes a batch
    of the projections, on the threads :meth:`run_all` gives it."""

    def __init__(self, io: ArrayIO, value: Any, write_empty: bool, remote: bool = False,
                 on_unit: UnitDone | None = None):
        self.io = io
        self.value = value
        self.write_empty = write_empty
        self.remote = remote
        self.on_unit = on_unit
        self.is_fill = io.bound.spec.is_fill
        store = io.store
        # partial updates guarded by the object's version (remote object stores)
        self.conditional = store.supports_conditional_writes
        # partial updates serialized per key (see the module doc)
        self.locking = not self.conditional and bool(config.get("write_lock"))

    def run(self, batch: Sequence[ChunkProjection]) -> None:  # pragma: no cover - the writers'
        raise NotImplementedError

    def unit_done(self, key: str, stored: bool) -> None:
        """Tell the write's ``on_unit`` (if any) that ``key`` is done (see :data:`UnitDone`)."""
        if self.on_unit is not None:
            self.on_unit(key, stored)

    def run_all(self, projections: Sequence[ChunkProjection], cost: int) -> None:
        """``run`` over the projections: batches on the shared pool (``cost``: the bytes they
        decode), or, for a remote store, one projection at a time on threads that wait on the
        network (as many as the store has requests in flight when some are partial updates)."""
        if not self.remote:
            run_batches(self.run, projections, cost=cost)
            return
        threads = config.get("threads")
        if not all(p.is_complete_chunk for p in projections):
            threads = max(threads, self.io.store.concurrency)
        run_projections(self.run, projections, threads)

    def source_of(self, p: ChunkProjection) -> Any:
        """The part of the value written at projection ``p``."""
        value = self.value
        src = value[p.out_selection] if value.ndim else value
        if src.dtype.kind == "O" and src.ndim == 0:  # (numpy would store a 0-d array as the element)
            src = src[()]
        return src

    @contextlib.contextmanager
    def update_of(self, p: ChunkProjection, key: str) -> Any:
        """The context of writing projection ``p`` into ``key``: for a partial update, the key's
        write lock (unless locking is off or the store writes conditionally), and the update sent
        before the lock is released (a store that collects writes)."""
        if p.is_complete_chunk:
            yield
            return
        with key_lock(self.io.store, key, self.io.key_prefix) if self.locking else contextlib.nullcontext():
            yield
            if self.remote:
                self.io.store.flush([key])

    def conditional_update(self, key: str, change: Callable[[Any], bytes | None]) -> bool:
        """Read-modify-write of ``key`` guarded by its version (see the module doc): ``change``
        gives the new stored value from the current one (None: absent), or None when nothing is to
        be stored.  Whether something was stored."""
        store = self.io.store
        for attempt in range(RMW_ATTEMPTS):
            data, version = store.get_versioned(key)
            value = change(data)
            if value is None:
                return False
            try:
                store.set_if_version(key, value, version if data is not None else None)
                return True
            except ConflictError as e:
                if attempt + 1 == RMW_ATTEMPTS:
                    raise ConflictError(f"{key!r} was changed by another writer {RMW_ATTEMPTS} times while this "
                                        f"write updated it; giving up: {e}") from e
                time.sleep(random.uniform(0, min(RMW_BACKOFF_MAX, RMW_BACKOFF * 2 ** attempt)))
        return False  # (not reached: the last attempt raises)


def run_projections(run: Callable[[list[Any]], None], projections: Sequence[Any], threads: int) -> None:
    """``run([p])`` for every projection on up to ``threads`` threads (remote writes wait on the
    network, not the CPU).  On the first failure (or Ctrl-C in the calling thread) the
    projections not started are dropped, the running ones finish, and the failure is raised."""
    n = len(projections)
    if n <= 1 or threads <= 1:
        run(list(projections))
        return
    ex = ThreadPoolExecutor(max_workers=min(threads, n), thread_name_prefix="zarrbolt-rwrite")
    try:
        futs = [ex.submit(run, [p]) for p in projections]
        for f in futs:
            f.result()
    except BaseException:
        ex.shutdown(wait=True, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
