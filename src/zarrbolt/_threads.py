"""Running chunk work on a shared thread pool (used by the pipeline and by codecs that split
their own work, such as sharding; it depends on nothing but the configuration).

The codec work runs in C with the GIL released, so plain threads give real parallelism.
Work is split into contiguous batches, a few per thread, which the threads (the caller included)
take from a shared counter as they become free: on a shared machine where one core is slowed
down, the others take over its share instead of waiting for it.  Small jobs run inline on the
calling thread.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from . import config

T = TypeVar("T")

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()
_local = threading.local()

# Batches per thread: enough for the threads to even out, few enough that each batch still
# amortises its Python overhead (and, in the fused path, one GIL release) over many chunks.
BATCHES_PER_THREAD = 4


def _after_fork_in_child() -> None:
    """The parent's pool threads do not exist in a forked child: start a new pool there."""
    global _pool, _pool_size, _pool_lock
    _pool = None
    _pool_size = 0
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class LazyExecutor:
    """A thread pool of ``max_workers`` threads named ``prefix``-N, made on first use and made
    again in a forked child (the parent's threads do not exist there: an inherited executor
    would take calls and never run them)."""

    _instances: list[LazyExecutor] = []

    def __init__(self, max_workers: int, prefix: str):
        self.max_workers = max_workers
        self.prefix = prefix
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        LazyExecutor._instances.append(self)

    def get(self) -> ThreadPoolExecutor:
        if self._executor is None:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(max_workers=self.max_workers, thread_name_prefix=self.prefix)
        return self._executor

    @classmethod
    def _after_fork_in_child(cls) -> None:
        for ex in cls._instances:
            ex._executor = None
            ex._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=LazyExecutor._after_fork_in_child)


def _get_pool(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        # it only grows: callers use at most the workers they ask for, and a per-call thread
        # count (config.override) must not tear down a pool another call is using
        # (the old pool is not shut down: a call may be about to submit to it; its idle
        # threads exit once it is garbage)
        if _pool is None or _pool_size < n:
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="zarrbolt")
            _pool_size = n
        return _pool


def parallel_workers(n: int, *, min_items_per_task: int = 1, cost: int = 0) -> int:
    """How many threads to share ``n`` items among (1: do them inline): none of the parallel
    machinery below ~1 MiB of work (``cost``, bytes), with one configured thread, or inside a
    pool task (a nested call, e.g. sharding reading chunks, runs inline: no deadlock)."""
    threads = config.get("threads")
    if threads <= 1 or n < 2 * min_items_per_task or cost < (1 << 20) or getattr(_local, "in_pool", False):
        return 1
    workers: int = max(1, min(threads, n // min_items_per_task))
    return workers


def batch_bounds(n: int, workers: int, min_items_per_task: int = 1) -> list[int]:
    """Bounds of the contiguous batches, BATCHES_PER_THREAD per worker (one for one worker),
    that ``workers`` threads share ``n`` items in."""
    nbatches = 1 if workers <= 1 else max(1, min(workers * BATCHES_PER_THREAD, n // min_items_per_task))
    return [n * i // nbatches for i in range(nbatches + 1)]


def run_batches(
    func: Callable[[Sequence[T]], None], items: Sequence[T], *, min_items_per_task: int = 1, cost: int = 0
) -> None:
    """Call ``func(batch)`` over contiguous batches covering ``items``, in parallel when worth it.

    ``cost`` is the approximate number of bytes the whole job touches; below ~1 MiB, or with one
    configured thread, everything runs inline.  Exceptions propagate (the first one raised).
    """
    n = len(items)
    if n == 0:
        return
    workers = parallel_workers(n, min_items_per_task=min_items_per_task, cost=cost)
    if workers <= 1:
        func(items)
        return
    bounds = batch_bounds(n, workers, min_items_per_task)
    nbatches = len(bounds) - 1
    nworkers = min(workers, nbatches)
    pool = _get_pool(config.get("threads"))
    counter = itertools.count()  # next() is atomic under the GIL
    failed = threading.Event()

    def worker() -> None:
        _local.in_pool = True
        try:
            while not failed.is_set():
                i = next(counter)
                if i >= nbatches:
                    return
                try:
                    func(items[bounds[i]: bounds[i + 1]])
                except BaseException:
                    failed.set()
                    raise
        finally:
            _local.in_pool = False

    futures = [pool.submit(worker) for _ in range(1, nworkers)]
    error: BaseException | None = None
    try:
        worker()
    except BaseException as e:  # noqa: BLE001 - re-raised below after the others finish
        error = e
    for f in futures:
        try:
            f.result()
        except BaseException as e:  # noqa: BLE001
            if error is None:
                error = e
    if error is not None:
        raise error
