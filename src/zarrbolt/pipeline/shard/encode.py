"""A shard's inner chunks encoded (and, for merges, decoded) by one C call each way, and a shard
stored on a thread of its own while the next one is encoded.

:class:`InnerEncoder` encodes the inner chunks of a shard with the inner chain's fused encode plan
(``csrc/encode.c``) on the native pool: into memory (``ShardingCodec.encode_shard`` packs them),
or straight into the shard's file as each is encoded (:meth:`InnerEncoder.stream`,
``csrc/encode_stream.c``).  :func:`inner_decoder` decodes the existing inner chunks a partial
write merges with by the fused decode.  :class:`StoreBehind` overlaps storing one encoded shard
with encoding the next."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ... import config
from ..._ext._plans import POOL_MAX
from ..._threads import batch_bounds, parallel_workers, run_batches
from ...errors import CodecError
from .. import buffers, outbuf
from ..context import ArrayIO

__all__ = ["STORE_BEHIND_SHARE", "InnerEncoder", "StoreBehind", "inner_decoder", "inner_encoder"]


# A shard is stored behind the encoding of the next one only while two encoded shards are at
# most this share of the bytes the write stores (a read-then-write round trip of a volume stays
# within 1.3x the volume; docs/memory.md); else it is stored before the next one is encoded.
STORE_BEHIND_SHARE = 4


class StoreBehind:
    """Stores one encoded shard on a thread of its own while the caller encodes the next one:
    the store's write (the kernel copying a shard into the page cache, tens of MB) no longer
    leaves the encoding pool's cores idle.  One store call is in flight at a time, so a write
    holds at most two encoded shards (one being stored, one being encoded), and only while
    two shards of that encoded size fit ``budget`` bytes (:meth:`fits`).  A failure of the
    store call is raised by the next :meth:`submit` or :meth:`wait`."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def fits(self, pieces: Sequence[Any]) -> bool:
        """Whether an encoded shard of these pieces may be stored behind the next one."""
        return 2 * sum(memoryview(p).nbytes for p in pieces) <= self.budget

    def _run(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            fn(*args)
        except BaseException as e:  # noqa: BLE001 - handed to the writing thread
            self._error = e

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` on the store thread once the previous call is done."""
        self.wait()
        t = threading.Thread(target=self._run, args=(fn, args), name="zarrbolt-store-behind", daemon=True)
        self._thread = t
        t.start()

    def wait(self, report: bool = True) -> None:
        """Wait for the call in flight; raise its exception (unless ``report`` is False)."""
        t, self._thread = self._thread, None
        if t is not None:
            t.join()
        err, self._error = self._error, None
        if err is not None and report:
            raise err


class InnerEncoder:
    """A shard's inner chunks encoded by one C call (csrc/encode.c; see
    ShardingCodec.encode_shard): called as ``encoder(shard, regions)`` into memory, or
    :meth:`stream` straight into the shard's file."""

    def __init__(self, io: ArrayIO, plan: Any):
        self.plan = plan
        self.dtype, self.ndim = io.dtype, len(io.chunk_shape)

    def _tasks(self, shard: np.ndarray, regions: list[Any]) -> tuple[np.ndarray, np.ndarray, int] | None:
        """The C call's offsets and shapes of ``regions`` of ``shard``, and its workers (None:
        a shard C cannot take)."""
        n = len(regions)
        if shard.dtype != self.dtype or shard.ndim != self.ndim:
            return None
        starts = np.array([[r.start for r in reg] for reg in regions], dtype=np.int64).reshape(n, shard.ndim)
        shapes = np.array([[r.stop - r.start for r in reg] for reg in regions], dtype=np.int64).reshape(n, shard.ndim)
        offsets = np.ascontiguousarray(starts @ np.asarray(shard.strides, dtype=np.int64))
        workers = min(parallel_workers(n, cost=self.plan.chunk_nbytes * n), POOL_MAX)
        return offsets, shapes, workers

    def __call__(self, shard: np.ndarray, regions: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        """``(buffer, where)``: the encoded chunks packed in memory (``plan.encode_chunks``);
        where -2: the Python codecs encode that chunk."""
        n = len(regions)
        tasks = self._tasks(shard, regions)
        if tasks is None:
            return np.empty(0, np.uint8), np.full((n, 2), -2, np.int64)
        offsets, shapes, workers = tasks
        work = buffers.pool_work_buffers(workers, self.plan.work_bytes)
        # the packed pieces live in memory from the output cache: once the store is done with
        # them it goes back there for the next shard (fresh memory per shard costs page faults)
        out = outbuf.empty((n * self.plan.pack_room,), np.uint8, sparse=True)
        try:
            packed: tuple[np.ndarray, np.ndarray] = self.plan.encode_chunks(shard, offsets, shapes,
                                                                            batch_bounds(n, workers), work, out)
            return packed
        except (CodecError, ValueError):
            # a codec failed in C: the Python codecs encode them all and report it their way
            return out, np.full((n, 2), -2, np.int64)

    def stream(self, shard: np.ndarray, regions: list[Any], fd: int, ring_bytes: int,
               base: int = 0) -> tuple[np.ndarray, int] | None:
        """Encode ``regions`` of ``shard`` and write them one after another to the file open as
        ``fd`` from offset ``base``, each as soon as it and those before it are encoded
        (``plan.encode_stream``: one job, no barrier), waiting in a ring of about ``ring_bytes``.
        Returns ``(where, end)`` (per region its offset in the file and size, or offset -1: all
        fill, not written), or None for a shard C cannot take.  Raises CodecError (a codec
        failed in C) or OSError (a write failed); the file holds nothing usable then."""
        tasks = self._tasks(shard, regions)
        if tasks is None:
            return None
        offsets, shapes, workers = tasks
        work = buffers.pool_work_buffers(workers, self.plan.work_bytes)
        room = self.plan.pack_room
        ring = outbuf.empty((max(4 * workers, ring_bytes // room) * room,), np.uint8, sparse=True)
        result: tuple[np.ndarray, int] = self.plan.encode_stream(shard, offsets, shapes, work, fd, ring, base)
        return result


def inner_encoder(io: ArrayIO, keep_empty: bool = False) -> InnerEncoder | None:
    """For shards written whole: the encoder of a shard's inner chunks by one C call, or None
    when the inner chain has no encode plan.  ``keep_empty``: inner chunks equal to the fill
    value are encoded too."""
    plan = io.inner_encode_plan(keep_empty)
    return InnerEncoder(io, plan) if plan is not None else None


def inner_decoder(io: ArrayIO) -> Callable[[np.ndarray, list[Any], list[Any]], None] | None:
    """For partial shard writes: decode the existing inner chunks that a write merges with, by
    the fused C decode on the pool (see ShardingCodec.merge_update), or None when the inner
    chain has no decode plan."""
    plan = io.plan if io.shard_direct and config.get("fused_pipeline") else None
    if plan is None:
        return None
    layout = io.layout
    assert layout is not None  # (shard_direct: a sharded array)
    chunk_shape = tuple(layout.chunk_shape)
    nd = len(chunk_shape)

    def decode(box: np.ndarray, regions: list[Any], datas: list[Any]) -> None:
        n = len(datas)
        starts = np.zeros((n, nd), dtype=np.int64)
        shapes = np.tile(np.asarray(chunk_shape, dtype=np.int64), (n, 1))
        firsts = np.array([[r.start for r in reg] for reg in regions], dtype=np.int64).reshape(n, nd)
        offs = np.ascontiguousarray(firsts @ np.asarray(box.strides, dtype=np.int64))
        nslots = buffers.group_slots(plan, box)
        scratch = plan.scratch_bytes(nslots)
        stream = buffers.stream_output(box)

        def work(batch: Sequence[int]) -> None:
            ii = np.asarray(batch, dtype=np.intp)
            try:
                plan.decode([datas[i] for i in batch], starts[ii], shapes[ii], np.ascontiguousarray(offs[ii]), box,
                            stream, buffers.thread_scratch(scratch), nslots)
            except CodecError as e:
                k = getattr(e, "task_index", None)
                if isinstance(k, int) and 0 <= k < len(batch):
                    e.task_index = int(batch[k])  # type: ignore[attr-defined]
                raise

        run_batches(work, range(n), cost=layout.inner.spec.nbytes * n)

    return decode
