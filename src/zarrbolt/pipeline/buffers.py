"""The memory the fused pipeline's calls into C work in, and how much one call is handed.

Each thread keeps a read arena (the encoded bytes of a batch of chunks) and a decode/encode
scratch, reused across reads: fresh allocations would cost page faults every time.  The workers
of the native pool (``zarrbolt/pool.h``) have their own pair each (:func:`helper_buffers`).
They are sized to the chunks of the calls (:func:`arena_bytes`, :func:`group_slots`), grow to
the largest call of their thread within fixed limits, and are committed lazily
(:func:`lazy_buffer`): what stays resident is what the calls touched, not the limits.
A call hands C at most READ_WINDOW_BYTES of decoded data (:func:`read_windows`), so that
Python code, and a pending Ctrl-C, runs between calls."""

from __future__ import annotations

import mmap
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

_ARENA_BYTES = 8 << 20  # the most a read arena holds
ARENA_MIN_BYTES = 1 << 20  # the least (see arena_bytes)
_arenas = threading.local()
_scratches = threading.local()
_gathers = threading.local()
_helpers: list[list[Any]] = []  # [arena, scratch] of the native pool's worker w (index w - 1)
_helpers_lock = threading.Lock()

# Outputs at least this large are written with non-temporal stores by the fused decode: they
# cannot stay in the caches anyway, and skipping the read-for-ownership of every destination
# line makes full-volume reads ~10% faster.  Smaller outputs (blocks, planes) stay cached for
# whatever the caller does next.
STREAM_MIN_BYTES = 64 << 20
# Scratch of the fused decode per thread, at most: enough slots to group the copies of a row of
# chunks (see group_slots).  Only the pages a read touches become resident.
GROUP_SCRATCH_BYTES = 16 << 20
# The encode's work buffer per thread, at most (chunks of up to a few MiB: three buffers of the
# chunk's bytes and a row of chunks gathered at once).  It is the thread's decode scratch, grown.
WORK_MAX_BYTES = 32 << 20
# Chunk rows (the chunk's last dimension, in output bytes) at least this long are copied one
# chunk at a time: grouping only pays for short rows.
GROUP_MAX_ROW_BYTES = 4096
# A read hands the native pool at most about this many decoded bytes per call: Python code runs
# between calls, so a Ctrl-C (or any pending signal) stops a huge read within a second or so
# instead of after it.
READ_WINDOW_BYTES = 1 << 30


# (MAP_PRIVATE: POSIX only; Windows has no fork and its anonymous memory is the process's own)
_PRIVATE = {"flags": mmap.MAP_PRIVATE} if hasattr(mmap, "MAP_PRIVATE") else {}


def lazy_buffer(nbytes: int) -> memoryview:
    """``nbytes`` of writable memory whose pages become resident only when first written
    (anonymous memory, not zero-filled up front, no transparent huge pages): a buffer sized for
    the largest call costs only what the calls actually touch.  The mapping is private (copied on
    write in a forked child): Python's default for anonymous memory is shared, which would let
    the children of a fork (dask's process workers) and their parent write into one another's
    buffers."""
    m = mmap.mmap(-1, max(int(nbytes), 1), **_PRIVATE)
    nohuge = getattr(mmap, "MADV_NOHUGEPAGE", None)
    if nohuge is not None:
        try:
            m.madvise(nohuge)
        except (OSError, ValueError):  # an old kernel: only residency is less exact
            pass
    return memoryview(m)


def arena_bytes(chunk_nbytes: int, index_nbytes: int = 0) -> int:
    """The read arena for chunks of ``chunk_nbytes`` decoded bytes (and shard indexes of
    ``index_nbytes``): room for two chunks' encoded bytes (rarely more than their decoded size)
    and an index, at least ARENA_MIN_BYTES and at most _ARENA_BYTES.  A larger arena only means
    fewer, larger batches between the file reads and the decodes: no faster, but resident."""
    return min(_ARENA_BYTES, max(ARENA_MIN_BYTES, 2 * int(chunk_nbytes) + int(index_nbytes)))


def _arena_size(nbytes: int | None) -> int:
    """An arena request clamped to [1, _ARENA_BYTES] (None: _ARENA_BYTES)."""
    return _ARENA_BYTES if nbytes is None else min(max(int(nbytes), 1), _ARENA_BYTES)


def _scratch_limit(most: int | None) -> int:
    return GROUP_SCRATCH_BYTES if most is None else most


def _grown(buf: memoryview | None, nbytes: int) -> memoryview:
    """``buf``, or a larger lazy buffer when it holds less than ``nbytes``."""
    if buf is None or len(buf) < nbytes:
        buf = lazy_buffer(nbytes)
    return buf


def thread_arena(nbytes: int | None = None) -> memoryview:
    """A per-thread read buffer of ``nbytes`` (see :func:`arena_bytes`), reused across reads
    (fresh allocations cost page faults): the first ``nbytes`` of one buffer that grows to the
    most any read of the thread asked for, so only those pages are ever touched (default and
    at most: _ARENA_BYTES)."""
    nbytes = _arena_size(nbytes)
    a = _grown(getattr(_arenas, "buf", None), nbytes)
    _arenas.buf = a
    return a[:nbytes]


def thread_scratch(nbytes: int, most: int | None = None) -> memoryview | None:
    """A per-thread decode scratch of at least ``nbytes``, reused across reads; None (the decode
    allocates and frees its own) when that is more than ``most`` (default GROUP_SCRATCH_BYTES),
    so that reads of arrays with huge chunks do not leave that much memory behind in every
    thread.  The encode's work buffers are the same memory (:func:`pool_work_buffers`)."""
    if nbytes > _scratch_limit(most):
        return None
    a = _grown(getattr(_scratches, "buf", None), nbytes)
    _scratches.buf = a
    return a


def helper_buffers(w: int, scratch_bytes: int, arena: int | None = None,
                   most: int | None = None) -> tuple[memoryview, memoryview | None]:
    """The read buffers of worker ``w`` >= 1 of the native read pool (zarrbolt/pool.h): an arena
    of ``arena`` bytes and a scratch of ``scratch_bytes`` (None above ``most``), as
    :func:`thread_arena` and :func:`thread_scratch`.  Only one job runs on the pool at a time,
    and its worker ``w`` is the only user of these; a call that finds the pool busy runs alone
    on its own thread's buffers."""
    arena = _arena_size(arena)
    with _helpers_lock:
        while len(_helpers) < w:
            _helpers.append([None, None])
        h = _helpers[w - 1]
        h[0] = _grown(h[0], arena)
        if scratch_bytes > _scratch_limit(most):
            return h[0][:arena], None
        h[1] = _grown(h[1], scratch_bytes)
        return h[0][:arena], h[1]


def thread_gather(nbytes: int) -> np.ndarray:
    """A per-thread uint8 buffer of at least ``nbytes`` that a write gathers rows of chunks into
    (pipeline/write.py WriteRows: at most its MAX_BYTES), reused across writes.  Every byte a
    write uses it writes first."""
    b: np.ndarray | None = getattr(_gathers, "buf", None)
    if b is None or b.nbytes < nbytes:
        b = np.empty(max(int(nbytes), 1), np.uint8)
        _gathers.buf = b
    return b


def release() -> None:
    """Drop the calling thread's arena, scratch and gather buffer and the native pool workers'
    buffers (see zarrbolt.release_memory).  A call running now keeps the ones it holds until it
    returns; later calls allocate new ones.  Other threads' own buffers stay (thread-local)."""
    for local in (_arenas, _scratches, _gathers):
        local.__dict__.pop("buf", None)
    with _helpers_lock:
        _helpers.clear()


def pool_read_buffers(workers: int, scratch_bytes: int,
                      arena: int | None = None) -> list[tuple[memoryview, memoryview | None]]:
    """``(arena, scratch)`` of the calling thread and of each further worker of a native read
    (arenas of ``arena`` bytes: see :func:`arena_bytes`)."""
    bufs = [(thread_arena(arena), thread_scratch(scratch_bytes))]
    bufs += [helper_buffers(w, scratch_bytes, arena) for w in range(1, workers)]
    return bufs


def pool_work_buffers(workers: int, work_bytes: int) -> list[memoryview | None]:
    """The work buffers of the calling thread and of each further worker of a native encode:
    their decode scratch (the pages a read touched serve the encode too), grown up to
    WORK_MAX_BYTES; None (the encode allocates its own for the call) above that."""
    return [thread_scratch(work_bytes, WORK_MAX_BYTES)] + [
        helper_buffers(w, work_bytes, 1, WORK_MAX_BYTES)[1] for w in range(1, workers)]


def group_slots(plan: Any, full: np.ndarray) -> int:
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
    slots: int = max(1, min(per_row, GROUP_SCRATCH_BYTES // plan.scratch_bytes(1)))
    return slots


def stream_output(full: np.ndarray) -> bool:
    """Whether the fused decode writes ``full`` with non-temporal stores (STREAM_MIN_BYTES)."""
    return full.nbytes >= STREAM_MIN_BYTES


def read_windows(sizes: Sequence[int], budget: int | None = None) -> list[tuple[int, int]]:
    """Consecutive ``[lo, hi)`` ranges of the items whose ``sizes`` add up to at most ``budget``
    (default READ_WINDOW_BYTES) each (an item alone may be more)."""
    if budget is None:
        budget = READ_WINDOW_BYTES
    windows: list[tuple[int, int]] = []
    lo, total = 0, 0
    for i, size in enumerate(sizes):
        if i > lo and total + size > budget:
            windows.append((lo, i))
            lo, total = i, 0
        total += size
    if lo < len(sizes):
        windows.append((lo, len(sizes)))
    return windows


_read_windows = read_windows  # the name the tests of the native pool use
