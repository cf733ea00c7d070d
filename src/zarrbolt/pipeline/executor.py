"""Running chunk work on a shared thread pool.

The codec work runs in C with the GIL released, so plain threads give real parallelism.
Work is split into at most ``threads`` contiguous batches (one task per batch, not per chunk), and
small jobs run inline on the calling thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from .. import config

T = TypeVar("T")

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()
_local = threading.local()


def _get_pool(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size != n:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="zarrbolt")
            _pool_size = n
        return _pool


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
    threads = config.get("threads")
    # Nested calls (a task that itself reads chunks, e.g. sharding) run inline: no deadlock.
    if threads <= 1 or n < 2 * min_items_per_task or cost < (1 << 20) or getattr(_local, "in_pool", False):
        func(items)
        return
    ntasks = min(threads, n // min_items_per_task)
    bounds = [n * i // ntasks for i in range(ntasks + 1)]
    pool = _get_pool(threads)

    def task(lo: int, hi: int) -> None:
        _local.in_pool = True
        try:
            func(items[lo:hi])
        finally:
            _local.in_pool = False

    futures = [pool.submit(task, bounds[i], bounds[i + 1]) for i in range(1, ntasks)]
    error: BaseException | None = None
    try:
        task(bounds[0], bounds[1])
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
