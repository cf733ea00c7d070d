"""Partial writes of local shard files (:class:`LocalShardUpdater`), in the ``shard_update``
mode of ``zarrbolt.config``.

A write into part of an existing shard reads the shard's index and only the touched inner chunks
that the write does not wholly cover, decodes and merges those, and encodes the touched inner
chunks again.  Then:

* ``"rewrite"`` (the default) writes a new shard file next to the old one and renames it over
  it, so the update is atomic and the shard stays compact: the untouched inner chunks' bytes are
  copied from the old file by the kernel (``copy_file_range``, in runs of neighbouring chunks),
  never through this process's memory.  A 64^3 inner chunk written into a 60 MB shard still
  rewrites 60 MB, but reads only the index.
* ``"append"`` extends the shard's file instead: the touched inner chunks' new bytes and then a
  new index are written at its end (the sharding spec's "append-only" write strategy).  The old
  index and the replaced inner chunks' bytes stay in the file as unused space, which every reader
  skips (the index says where each inner chunk is).  When the unused space would exceed the live
  inner chunks' bytes (plus 1 MiB) the shard is rewritten compactly instead, so a shard stays
  under about twice its compact size.  Appending needs ``index_location="end"`` (else: rewrite).
  An append is not atomic: a reader of the shard during the append, or a crash in it, can see a
  shard whose end is not a valid index (``CorruptChunkError``); ``"rewrite"`` never shows a
  torn shard.

A write into several shards updates them side by side, one shard per thread
(:meth:`LocalShardUpdater.side_by_side`).  The touched inner chunks are read into reused memory
and merged one after another (``ShardingCodec.merge_encode``); the replaced file of a large
rewritten shard is closed on a daemon thread (:func:`_close_replaced`).

New shards and shards of other stores are written by :class:`~.write.ChunkWriter` itself (read
whole, merged, stored with ``set_parts``)."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import config
from .._threads import parallel_workers, run_batches
from . import outbuf
from ..codecs.sharding import EMPTY, storage_order
from ..errors import CorruptChunkError, StoreError
from ..storage import _local_safety as safety
from .context import ArrayIO

__all__ = ["SHARD_UPDATE_MODES", "LocalShardUpdater", "local_shard_updater"]

SHARD_UPDATE_MODES = ("rewrite", "append")
# unused bytes tolerated in an appended shard besides as many as it has live bytes
_SLACK = 1 << 20
_COPY_MAX = 1 << 30  # bytes per copy_file_range call
# reads of the touched inner chunks at least this large go to reused memory (_read_entries)
_READ_REUSE_MIN = 1 << 20
# replaced shard files at least this large are closed on a daemon thread, at most this many
# waiting (see _close_replaced)
CLOSE_LATER_MIN = 4 << 20
CLOSE_LATER_MAX = 8
# partial updates of several shards run side by side while their merge boxes together stay
# within this many bytes (or half of all the boxes of the write): see side_by_side
IN_FLIGHT_MIN = 64 << 20
# ... and while the last of them ends within this many times an even share of their work; the
# file work of an update counted as its shard's decoded bytes / FILE_WORK_SHARE
BALANCE = 1.25
FILE_WORK_SHARE = 8


def local_shard_updater(io: ArrayIO, is_fill: Callable[[np.ndarray], bool], encoder: Any,
                        decoder: Any = None) -> LocalShardUpdater | None:
    """The updater of ``io``'s partial shard writes when its store has native files (POSIX),
    else None.  ``encoder`` / ``decoder``: the fused inner chunk encode / decode, or None."""
    if io.files is None or io.sharding is None or os.name != "posix":
        return None
    return LocalShardUpdater(io, is_fill, encoder, decoder)


def _pread(fd: int, n: int, offset: int, key: str) -> bytes:
    data = os.pread(fd, n, offset)
    while len(data) < n:
        more = os.pread(fd, n - len(data), offset + len(data))
        if not more:
            raise CorruptChunkError(f"shard {key!r} changed or was truncated while being updated")
        data += more
    return data


def _pwrite_all(fd: int, views: Sequence[Any], offset: int) -> int:
    """Write ``views`` one after another at ``offset`` (``pwritev``, up to 512 at a time);
    return the offset after them."""
    mvs = [memoryview(v).cast("B") for v in views]
    mvs = [m for m in mvs if len(m)]
    pwritev = getattr(os, "pwritev", None)
    i = 0
    while i < len(mvs):
        if pwritev is not None:
            n = pwritev(fd, mvs[i: i + 512], offset)
        else:
            n = os.pwrite(fd, mvs[i], offset)
        offset += n
        while i < len(mvs) and n >= len(mvs[i]):
            n -= len(mvs[i])
            i += 1
        if n:
            mvs[i] = mvs[i][n:]
    return offset


def _pread_into(fd: int, mv: memoryview, offset: int, key: str) -> None:
    """Fill ``mv`` with the file's bytes from ``offset``."""
    got = 0
    while got < len(mv):
        n = os.preadv(fd, [mv[got:]], offset + got)
        if n <= 0:
            raise CorruptChunkError(f"shard {key!r} changed or was truncated while being updated")
        got += n


def _read_entries(fd: int, key: str, offs: np.ndarray, nb: np.ndarray, flats: np.ndarray) -> list[Any]:
    """The stored bytes of inner chunks ``flats`` (None: empty), neighbours read together into
    one buffer (reused memory: see .outbuf)."""
    from .. import kernels
    from .shard_io import COALESCE_GAP

    order, read_of, begins, ends = kernels.coalesce_ranges(offs, nb, flats, max_gap=COALESCE_GAP, max_read=64 << 20)
    sizes = (ends - begins).tolist()
    total = sum(sizes)
    if hasattr(os, "preadv"):
        # from the output cache even below its minimum size (fresh memory costs page faults)
        room = max(total, outbuf.MIN_BYTES) if total >= _READ_REUSE_MIN else max(total, 1)
        buf = memoryview(outbuf.empty((room,), np.uint8)).cast("B")
        blobs, at = [], 0
        for b, n in zip(begins.tolist(), sizes):
            blobs.append(buf[at: at + n])
            _pread_into(fd, blobs[-1], int(b), key)
            at += n
    else:
        blobs = [memoryview(_pread(fd, n, int(b), key)) for b, n in zip(begins.tolist(), sizes)]
    where = dict(zip(order.tolist(), read_of.tolist()))
    out: list[Any] = []
    for f in flats.tolist():
        r = where.get(f)
        if r is None:
            out.append(None)
            continue
        o = int(offs[f]) - int(begins[r])
        out.append(blobs[r][o: o + int(nb[f])])
    return out


def balanced(work: Sequence[int], threads: int) -> bool:
    """Whether jobs of ``work`` (largest first), each on one of ``threads`` threads as they
    become free, end within BALANCE times an even share of the total."""
    ends = [0] * threads
    for w in work:
        ends[ends.index(min(ends))] += w
    return max(ends) * threads <= BALANCE * sum(work)


class _Closer:
    """Closes descriptors on a daemon thread, at most CLOSE_LATER_MAX waiting (beyond that the
    caller closes its own)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.fds: list[int] = []
        self.thread: threading.Thread | None = None

    def close(self, fd: int) -> None:
        with self.cond:
            if len(self.fds) < CLOSE_LATER_MAX and self._started():
                self.fds.append(fd)
                self.cond.notify()
                return
        os.close(fd)

    def _started(self) -> bool:
        if self.thread is None:
            t = threading.Thread(target=self._run, name="zarrbolt-close", daemon=True)
            try:
                t.start()
            except RuntimeError:  # no new threads (interpreter shutting down): close in place
                return False
            self.thread = t
        return True

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.fds:
                    self.cond.wait()
                fd = self.fds.pop(0)
            try:
                os.close(fd)
            except OSError:
                pass

    def after_fork_in_child(self) -> None:
        """The parent's thread does not exist in a forked child: close the child's copies now."""
        fds, self.fds = self.fds, []
        self.cond = threading.Condition()
        self.thread = None
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass


_closer = _Closer()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_closer.after_fork_in_child)


def _close_replaced(fd: int) -> None:
    """Close the descriptor of a shard file that an update read.  When the update replaced the
    file (renamed a new one over it) this is the old file's last reference, and closing it
    frees its blocks and page cache in the kernel (on ext4 ~15 ms for a 30 MB shard, more when
    its pages are still being written back): for large files that is left to a daemon thread,
    the writer goes on meanwhile."""
    try:
        st = os.fstat(fd)
        later = st.st_nlink == 0 and st.st_size >= CLOSE_LATER_MIN
    except OSError:
        later = False
    if later:
        _closer.close(fd)
    else:
        os.close(fd)


def discard_tmp(tmp: str, key: str, store: Any, e: BaseException) -> BaseException:
    """Remove the temporary file ``tmp`` of a failed write of ``key``; return what to raise:
    an OSError as the store's typed error (StoreFullError, StoreIOError, StoreError), else ``e``."""
    try:
        os.unlink(tmp)
    except OSError:
        pass
    if isinstance(e, OSError) and not isinstance(e, StoreError):
        return safety.write_error(key, store, e)
    return e


def _copy_range(src: int, dst: int, begin: int, n: int, at: int, key: str) -> None:
    """Copy bytes ``[begin, begin + n)`` of file ``src`` to offset ``at`` of ``dst`` (in the
    kernel where it can)."""
    while n > 0:
        step = min(n, _COPY_MAX)
        try:
            got = os.copy_file_range(src, dst, step, begin, at)
        except (AttributeError, OSError):  # not on this system / file system: through memory
            got = min(step, 16 << 20)
            _pwrite_all(dst, [_pread(src, got, begin, key)], at)
        if got <= 0:
            raise CorruptChunkError(f"shard {key!r} changed or was truncated while being updated")
        begin, at, n = begin + got, at + got, n - got


class LocalShardUpdater:
    """Writes part of an existing local shard file (see the module doc)."""

    def __init__(self, io: ArrayIO, is_fill: Callable[[np.ndarray], bool], encoder: Any, decoder: Any = None):
        self.io = io
        self.decoder = decoder
        self.files = io.files
        codec, lay = io.sharding, io.layout
        assert codec is not None and lay is not None  # (made for sharded arrays only)
        self.codec = codec
        self.lay = lay
        self.spec = io.bound.ab_spec
        self.is_fill = is_fill
        self.encoder = encoder

    def side_by_side(self, batch: Sequence[Any], run: Callable[[Sequence[Any]], None]) -> Sequence[Any]:
        """Run the partial updates among the projections ``batch`` by ``run``, one shard per
        thread of the pool (each thread reads, decodes, merges, encodes and writes its shard:
        the file work of one overlaps the codec work of the others, which one shard at a time
        cannot do); return the projections left to the caller, which updates them one at a
        time, each with its inner chunks encoded in parallel.  Left: all of them inside a pool
        task, with one thread, when the merge boxes side by side would hold more than
        max(IN_FLIGHT_MIN, half of all the boxes) bytes, or when the updates' work is too uneven
        to share out by shard (BALANCE); else the smallest ones beyond a multiple of the
        threads."""
        threads: int = config.get("threads")
        parts = [p for p in batch if not p.is_complete_chunk]
        if threads < 2 or len(parts) < threads or parallel_workers(len(parts), cost=IN_FLIGHT_MIN) <= 1:
            return batch
        itemsize = self.spec.dtype.numpy_dtype.itemsize
        chunk = math.prod(self.lay.chunk_shape) * itemsize
        plans = [self.codec.plan_update(self.lay, p.chunk_selection) for p in parts]
        boxes = [math.prod(u.box_shape) * itemsize for u in plans]
        if threads * max(boxes) > max(IN_FLIGHT_MIN, sum(boxes) // 2):
            return batch
        # an update's work: the codec work of its touched inner chunks, the file work of its shard
        work = [len(u.touched) * chunk + self.lay.n * chunk // FILE_WORK_SHARE for u in plans]
        order = sorted(range(len(parts)), key=lambda i: -work[i])[: len(parts) - len(parts) % threads]
        if not balanced([work[i] for i in order], threads):
            return batch
        # (each update does file work besides the codec work: worth a thread even when small)
        run_batches(run, [parts[i] for i in order], cost=max(sum(boxes), 1 << 20))
        done = {id(parts[i]) for i in order}
        return [p for p in batch if id(p) not in done]

    def update(self, key: str, selection: Any, value: Any) -> bool:
        """Write ``value`` at ``selection`` of shard ``key``; False (nothing done) when the
        shard does not exist."""
        path = self.files.paths([key])[0]
        try:
            fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
        except (FileNotFoundError, NotADirectoryError):
            return False
        except IsADirectoryError as e:
            raise StoreError(f"cannot write {key!r}: a directory exists at that key") from e
        try:
            done = self._update(fd, key, selection, value)
        except BaseException:
            os.close(fd)
            raise
        _close_replaced(fd)
        return done

    def _update(self, fd: int, key: str, selection: Any, value: Any) -> bool:
        codec, lay = self.codec, self.lay
        size = os.fstat(fd).st_size
        if size < lay.index_nbytes:
            raise CorruptChunkError(f"shard {key!r}: {size} bytes is smaller than its {lay.index_nbytes}-byte index")
        at = size - lay.index_nbytes if codec.index_location == "end" else 0
        offs, nb = codec.decode_index(_pread(fd, lay.index_nbytes, at, key), lay, size, key)
        upd = codec.plan_update(lay, selection)
        existing = _read_entries(fd, key, offs, nb, upd.touched[~upd.covered])
        # the touched inner chunks merged (one after another where they can be) and encoded
        encoded = codec.merge_encode(self.spec, upd, value, existing, key, is_fill=self.is_fill, encoder=self.encoder,
                                     decoder=self.decoder, empty=outbuf.empty)
        del existing  # (its buffer goes back for the next update)
        keep = offs != EMPTY
        keep[upd.touched] = False
        if not keep.any() and not encoded:  # nothing left in the shard
            self.io.store.erase(key)
            return True
        if (config.get("shard_update") == "append" and codec.index_location == "end"
                and self._append(fd, size, offs, nb, upd.touched, encoded, keep)):
            return True
        self._rewrite(fd, key, offs, nb, encoded, keep)
        return True

    def _append(self, fd: int, size: int, offs: np.ndarray, nb: np.ndarray, touched: np.ndarray,
                encoded: dict[int, Any], keep: np.ndarray) -> bool:
        """Append ``encoded`` and a new index; False when the shard is to be compacted instead."""
        lay = self.lay
        live = int(nb[keep].sum())
        new = sum(len(memoryview(e).cast("B")) for e in encoded.values())
        if size + new + lay.index_nbytes - (live + new) > live + new + _SLACK:
            return False
        new_offs = np.where(keep, offs, np.uint64(EMPTY)).astype(np.uint64)
        new_nb = np.where(keep, nb, np.uint64(EMPTY)).astype(np.uint64)
        pieces: list[Any] = []
        pos = size
        for i in sorted(encoded):
            n = len(memoryview(encoded[i]).cast("B"))
            new_offs[i], new_nb[i] = pos, n
            pos += n
            pieces.append(encoded[i])
        pieces.append(self.codec.encode_index(lay, new_offs, new_nb))
        _pwrite_all(fd, pieces, size)
        if self.files.fsync:
            os.fsync(fd)
        return True

    def _rewrite(self, src: int, key: str, offs: np.ndarray, nb: np.ndarray, encoded: dict[int, Any],
                 keep: np.ndarray) -> None:
        """A compact new shard in a temporary file renamed over the old one: the kept inner
        chunks copied from ``src`` in runs, ``encoded`` from memory, in the write order."""
        codec, lay = self.codec, self.lay
        order = storage_order(lay.chunks_per_shard, codec.write_order)
        flats = range(lay.n) if order is None else order
        new_offs = np.full(lay.n, EMPTY, dtype=np.uint64)
        new_nb = np.full(lay.n, EMPTY, dtype=np.uint64)
        pos = lay.index_nbytes if codec.index_location == "start" else 0
        plan: list[tuple[int, Any]] = []  # (position, memory piece) or (position, (begin, n)) of src
        for i in flats:
            if keep[i]:
                o, n = int(offs[i]), int(nb[i])
                last = plan[-1] if plan else None
                if last is not None and isinstance(last[1], tuple) and last[1][0] + last[1][1] == o:
                    plan[-1] = (last[0], (last[1][0], last[1][1] + n))
                else:
                    plan.append((pos, (o, n)))
            elif i in encoded:
                n = len(memoryview(encoded[i]).cast("B"))
                plan.append((pos, encoded[i]))
            else:
                continue
            new_offs[i], new_nb[i] = pos, n
            pos += n
        index = self.codec.encode_index(lay, new_offs, new_nb)
        plan.append((0 if codec.index_location == "start" else pos, index))
        (path,), (tmp,) = self.files.write_paths([key])
        dst = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            try:
                run: list[Any] = []  # consecutive pieces from memory, written together
                run_at = run_end = 0
                for at, piece in plan:
                    if isinstance(piece, tuple):
                        if run:
                            _pwrite_all(dst, run, run_at)
                            run = []
                        _copy_range(src, dst, piece[0], piece[1], at, key)
                        continue
                    if run and at != run_end:
                        _pwrite_all(dst, run, run_at)
                        run = []
                    if not run:
                        run_at = run_end = at
                    run.append(piece)
                    run_end += len(memoryview(piece).cast("B"))
                if run:
                    _pwrite_all(dst, run, run_at)
                if self.files.fsync:
                    os.fsync(dst)
            finally:
                os.close(dst)
            os.replace(tmp, path)
        except BaseException as e:
            err = discard_tmp(tmp, key, self.io.store, e)
            if err is e:
                raise
            raise err from e
        self.files.sync_dirs([key])
