"""Output arrays for large reads, from a small cache of recently dropped ones.

A read returns a new array.  For large ones (16 MiB or more) the cost of fresh memory is not
small: the kernel zeroes every page on first touch, and on virtual machines that give freed
memory back to the host, touching it again costs host-side faults as well (measured on the
project's VM: a 512 MiB read 140 ms back to back, 450-670 ms after a 3 s pause; a 512 MiB gzip
read 620-830 ms with its memory kept, 1490 ms after it was given back).  So the memory of a large
result the program drops is kept for up to the ``output_cache_seconds`` config option (30 s by
default; at most ``output_cache_bytes`` in total, oldest dropped first) and handed to the next
large read of about the same size.  A daemon thread drops what has been kept longer than that, so
the memory goes back to the system even when no other read follows, and drops everything when
the machine (or the process's cgroup) runs short of memory.  ``output_cache_bytes = "auto"``
(the default) keeps nothing inside dask.distributed workers and at most 1/16 of the process's
memory limit (:func:`limit`, ``zarrbolt._memory``); ``zarrbolt.release_memory()`` empties it.  The arrays are ordinary
writable numpy arrays; their ``base`` is an owner object that returns the memory here when the
last view of it goes away.  Every element of an array from here is written by the read that gets
it, so no old values are ever visible.  (The fused shard encode also takes its packing buffer from
here; it hands out only the bytes it wrote.)
"""

from __future__ import annotations

import atexit
import math
import os
import sys
import threading
import time
from typing import Any

import numpy as np

from . import buffers
from .. import _memory, config

MIN_BYTES = 16 << 20  # smaller results come from malloc's own free lists anyway
SLACK = 4  # a cached buffer serves requests down to (1 - 1/SLACK) of its size
PRESSURE_POLL_SECONDS = 1.0  # while it holds memory, the reaper checks for memory pressure this often

_lock = threading.Lock()
_cond = threading.Condition(_lock)
_free: list[tuple[float, np.ndarray]] = []  # (time dropped, uint8 buffer), oldest first
_held = 0
_reaper: threading.Thread | None = None
_reaper_lock = threading.Lock()  # serialises starting the reaper
_stopping = False  # set at interpreter exit: the reaper returns and is joined (see _stop_reaper)


class _Owner:
    """Lends ``buf`` (first ``nbytes`` bytes) to numpy through ``__array_interface__`` and gives it
    back to the cache when the last array using it is gone."""

    def __init__(self, buf: np.ndarray, shape: tuple[int, ...], dtype: np.dtype):
        self.buf = buf
        self.__array_interface__ = {"shape": shape, "typestr": dtype.str, "data": (buf.ctypes.data, False),
                                    "version": 3}

    def __del__(self) -> None:
        try:
            _give_back(self.buf)
        except Exception:  # noqa: BLE001 - interpreter shutdown: let the memory go
            pass


def empty(shape: tuple[int, ...], dtype: Any, *, sparse: bool = False) -> np.ndarray:
    """``numpy.empty(shape, dtype)`` that may reuse the memory of a recently dropped result.
    The caller must write every element, or (``sparse=True``: a buffer sized for the worst case
    of which a call writes only parts, such as the packed encoded chunks of a shard) hand out
    only what it wrote: fresh memory then comes in small pages, so that what is never written
    never becomes resident (numpy's own large arrays use huge pages, 2 MiB a piece)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < MIN_BYTES or limit() < nbytes or dtype.fields is not None or dtype.hasobject or dtype.subdtype:
        return np.empty(shape, dtype)
    buf = _take(nbytes, sparse)
    if buf is None:
        buf = np.frombuffer(buffers.lazy_buffer(nbytes), np.uint8) if sparse else np.empty(nbytes, np.uint8)
    _start_reaper()  # here, never from __del__ (see _give_back)
    return np.asarray(_Owner(buf, tuple(int(s) for s in shape), dtype))


def limit() -> int:
    """The bytes the cache may hold now: ``output_cache_bytes``, with ``"auto"`` resolved (0 in a
    dask.distributed worker, else ``zarrbolt._memory.auto_cache_bytes()``)."""
    v = config.get("output_cache_bytes")
    if v != "auto":
        return int(v)
    return 0 if _memory.in_dask_worker() else _memory.auto_cache_bytes()


def _keep_seconds() -> float:
    return float(config.get("output_cache_seconds"))


def _expire(now: float) -> None:
    global _held
    keep = _keep_seconds()
    while _free and now - _free[0][0] > keep:
        _held -= _free.pop(0)[1].nbytes


def _is_sparse(buf: np.ndarray) -> bool:
    """Whether ``buf`` was allocated for a sparse use (small pages, committed as written)."""
    return isinstance(buf.base, memoryview)


def _take(nbytes: int, sparse: bool = False) -> np.ndarray | None:
    """A kept buffer for ``nbytes``; a sparse one only for a sparse use (a read writes all of
    its output: there the huge pages of its own allocation fault faster)."""
    global _held
    with _lock:
        _expire(time.monotonic())
        best = None
        for i, (_, b) in enumerate(_free):
            if not sparse and _is_sparse(b):
                continue
            if nbytes <= b.nbytes and b.nbytes - b.nbytes // SLACK <= nbytes:
                if best is None or b.nbytes < _free[best][1].nbytes:
                    best = i
        if best is None:
            return None
        buf = _free.pop(best)[1]
        _held -= buf.nbytes
        return buf


def _give_back(buf: np.ndarray) -> None:
    """Keep ``buf`` for reuse.  Runs from ``__del__``, which the garbage collector may call while
    this thread already holds the lock: then (or when another thread holds it) the buffer is
    simply freed.  It starts no thread (a thread started from ``__del__`` while the interpreter
    shuts down never runs, and ``Thread.start`` would wait for it forever), and keeps nothing
    once the interpreter is shutting down or when no reaper runs (after a fork)."""
    global _held
    most = limit()
    if buf.nbytes > most or sys.is_finalizing() or _reaper is None or not _lock.acquire(blocking=False):
        return
    try:
        now = time.monotonic()
        _expire(now)
        _free.append((now, buf))
        _held += buf.nbytes
        while _held > most:
            _held -= _free.pop(0)[1].nbytes
        _cond.notify()
    finally:
        _lock.release()


def _start_reaper() -> None:
    """The thread that drops buffers kept longer than ``output_cache_seconds``, started (once per
    process) by the first large read."""
    global _reaper
    if _reaper is not None and _reaper.is_alive():
        return
    with _reaper_lock:
        if (_reaper is None or not _reaper.is_alive()) and not sys.is_finalizing() and not _stopping:
            t = threading.Thread(target=_reap, name="zarrbolt-outbuf", daemon=True)
            t.start()
            _reaper = t


def _stop_reaper() -> None:
    """At interpreter exit (atexit, before daemon threads are cut off): the reaper returns and is
    joined, so no thread of zarrbolt's is left to die half-way through finalisation (a daemon
    thread cut off there is never joined: thread sanitizers report it as a leak)."""
    global _stopping
    t = _reaper
    if t is None:
        return
    with _lock:
        _stopping = True
        _cond.notify_all()
    t.join(timeout=5.0)


atexit.register(_stop_reaper)


def _reap() -> None:
    """Drops buffers once they are older than ``output_cache_seconds``, and everything when
    memory runs short (checked every PRESSURE_POLL_SECONDS while anything is held); returns at
    interpreter exit."""
    while True:
        with _lock:
            while not _free and not _stopping:
                _cond.wait()
            if _stopping:
                return
            now = time.monotonic()
            _expire(now)
            if _free:
                wait = max(_keep_seconds() - (now - _free[0][0]), 0.0) + 0.01
                _cond.wait(timeout=min(wait, PRESSURE_POLL_SECONDS))
            holding = bool(_free)
        if holding and _memory.under_pressure():  # reads /proc: outside the lock
            clear()


def clear() -> None:
    """Hand every cached buffer back to the allocator now."""
    global _held
    with _lock:
        _free.clear()
        _held = 0


def release_memory() -> None:
    """Hand back to the operating system the memory zarrbolt keeps between reads: the output
    cache's buffers, the calling thread's and the native pool's read buffers, and (glibc) the
    allocator's free lists.  Safe at any time; later reads allocate again what they need."""
    clear()
    buffers.release()
    _memory.malloc_trim()


def held_bytes() -> int:
    """Bytes of dropped results currently kept."""
    with _lock:
        _expire(time.monotonic())
        return _held


def _on_config_change() -> None:
    most = limit()
    global _held
    with _lock:
        while _held > most:
            _held -= _free.pop(0)[1].nbytes
        _expire(time.monotonic())
        _cond.notify()  # the reaper re-reads output_cache_seconds


config._listeners.append(_on_config_change)


def _after_fork_in_child() -> None:
    """A forked child starts with an empty cache and a fresh lock (the parent's could have been
    held by a thread that does not exist in the child)."""
    global _lock, _cond, _free, _held, _reaper, _reaper_lock
    _lock = threading.Lock()
    _reaper_lock = threading.Lock()
    _cond = threading.Condition(_lock)
    _free = []
    _held = 0
    _reaper = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
