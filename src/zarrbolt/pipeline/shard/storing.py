"""How a shard is written: one decision (:meth:`ShardWriter.way`), and each way.

A write of a sharded array (the sharding codec alone in the chain) stores each shard it touches
one of these ways:

``"stream"``
    A whole shard of at least ``STREAM_MIN_BYTES`` of a local store (POSIX) with its index at the
    end: encoded and written to the shard's temporary file while it is encoded
    (:func:`write_streamed`): by one C job (:meth:`~.encode.InnerEncoder.stream`, each inner
    chunk written as soon as it and those before it are encoded, waiting in a ring of about
    ``BATCH_BYTES``), or where that job cannot be had a batch of inner chunks at a time, each
    batch's bytes written by a thread of their own while the next is encoded.  The index goes
    last, then the file is renamed over the shard: the bytes are those of
    ``ShardingCodec.assemble`` (inner chunks in ``write_order``, the index at the end).
``"behind"`` / ``"whole"``
    A whole shard encoded into memory (its inner chunks by one C call) and stored with
    ``Store.set_parts`` (one atomic write), on a thread of its own while the next shard is
    encoded (:class:`~.encode.StoreBehind`: writes of fewer shards than threads, or of large
    ones, go one shard at a time, each stored behind the next one's encoding) or at once.
``"rewrite"`` / ``"append"``
    Part of an existing local shard file (POSIX): only its index and the touched inner chunks
    that the write does not wholly cover are read, merged and encoded again
    (:class:`LocalShardUpdater`).  ``"rewrite"`` (the ``shard_update`` default) writes a compact
    new shard next to the old one and renames it over it, the untouched inner chunks' bytes
    copied by the kernel (``copy_file_range``): atomic, and a 64^3 inner chunk written into a
    60 MB shard reads only the index.  ``"append"`` writes the touched inner chunks' new bytes
    and then a new index at the file's end (the sharding spec's append-only strategy; needs
    ``index_location="end"``): the replaced bytes stay as unused space that readers skip, and
    when it would exceed the live bytes (plus 1 MiB) the shard is rewritten instead.  An append
    is not atomic: a reader during it, or a crash in it, can see a shard whose end is not a
    valid index (``CorruptChunkError``).  A write into several shards updates them side by side,
    one shard per thread (:meth:`LocalShardUpdater.side_by_side`).
``"merge"``
    Part of a shard of any other store, or a new one: read whole (if it exists), merged, stored
    with ``set_parts``.
``"conditional"``
    Part of a shard of a store with conditional writes (remote object stores): as ``"merge"``,
    guarded by the object's version (:meth:`~..writers.Writer.conditional_update`); a shard left
    with no inner chunk is stored as its index alone (a delete cannot be made conditional).

The shard's inner chunks equal to the fill value are left out of it (unless empty chunks are
written), and a shard left with none is erased.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ... import config, kernels
from ..._threads import parallel_workers
from ...codecs.sharding import EMPTY, in_storage_order
from ...errors import CodecError
from ...indexing import ChunkProjection
from .. import outbuf
from ..context import ArrayIO
from ..writers import UnitDone, Writer, never_fill
from . import index as shard_index
from .encode import STORE_BEHIND_SHARE, StoreBehind, inner_decoder, inner_encoder
from .fetch import COALESCE_GAP

__all__ = ["BATCH_BYTES", "SHARD_UPDATE_MODES", "STREAM_MIN_BYTES", "LocalShardUpdater", "ShardWriter",
           "write_streamed"]

SHARD_UPDATE_MODES = ("rewrite", "append")
# Whole shards of at least this many decoded bytes are streamed.
STREAM_MIN_BYTES = 32 << 20
# Decoded bytes of inner chunks encoded per batch (at least one inner chunk); the C job's ring.
BATCH_BYTES = 16 << 20
# Decoded bytes of inner chunks one C job encodes and writes (at least one inner chunk).
WINDOW_BYTES = 1 << 30
# Each shard being encoded holds its encoded bytes (up to the shard's size) until it is stored:
# shards are encoded side by side only while that is at most this share of what the write
# stores (or 64 MiB), so that a write needs little memory on top of its value (docs/memory.md).
SHARDS_IN_FLIGHT_SHARE = 8
SHARDS_IN_FLIGHT_MIN = 64 << 20


class ShardWriter(Writer):
    """Writes the shards of a write (see the module doc); ``run`` is called with batches of the
    projections (one per shard), on the threads the write gives it."""

    def __init__(self, io: ArrayIO, value: Any, write_empty: bool, remote: bool = False,
                 on_unit: UnitDone | None = None):
        super().__init__(io, value, write_empty, remote, on_unit)
        sharding = io.sharding
        assert sharding is not None and io.layout is not None  # (shards written directly)
        self.sharding = sharding
        # inner chunks equal to the fill value are left out, unless empty chunks are written (as
        # zarr-python does)
        self.inner_is_fill = never_fill if write_empty else self.is_fill
        self.encoder = inner_encoder(io, write_empty)
        self.decoder = inner_decoder(io)
        files = io.files if io.files is not None and io.files.positional_io else None
        # partial updates of existing local shard files, or None
        self.updater = LocalShardUpdater(io, self.inner_is_fill, self.encoder, self.decoder) if files else None
        self.streams = files is not None and sharding.index_location == "end" and self.encoder is not None
        # set by write() to store whole shards on a thread of their own (see StoreBehind)
        self.background: StoreBehind | None = None

    # ------------------------------------------------------------------ the decision
    def way(self, p: ChunkProjection, shard_nbytes: int) -> str:
        """How the shard of projection ``p`` is written (see the module doc); ``shard_nbytes``:
        the decoded bytes of the shard's part inside the array.  ``"rewrite"`` stands for both
        ways of a local update: whether it appends is decided with the shard's index in hand
        (:meth:`LocalShardUpdater.update`)."""
        if p.is_complete_chunk:
            if self.streams and shard_nbytes >= STREAM_MIN_BYTES:
                return "stream"
            return "behind" if self.background is not None else "whole"
        if self.conditional:
            return "conditional"
        return "rewrite" if self.updater is not None else "merge"

    def write(self, projections: list[ChunkProjection], shape: tuple[int, ...]) -> None:
        """Write the shards of ``projections`` of a selection of ``shape``.  Fewer shards than
        threads, or large ones: one shard at a time, its inner chunks encoded in parallel, each
        shard stored while the next one is encoded; else shards side by side on the pool."""
        io = self.io
        if not self.remote and (len(projections) < config.get("threads") or _large_shards(io, len(projections))):
            self.background = StoreBehind(math.prod(shape) * io.dtype.itemsize // STORE_BEHIND_SHARE)
            try:
                self.run(projections)
            except BaseException:
                self.background.wait(report=False)
                raise
            self.background.wait()
            return
        self.run_all(projections, io.bound.spec.nbytes * len(projections))

    def run(self, batch: Sequence[ChunkProjection]) -> None:
        if self.updater is not None and len(batch) > 1:
            # partial updates of several shards: side by side, one shard per thread; the rest one
            # at a time
            batch = self.updater.side_by_side(batch, self._run_each)
        self._run_each(batch)

    def _run_each(self, batch: Sequence[ChunkProjection]) -> None:
        for p in batch:
            key = self.io.chunk_key(p.chunk_coords)
            with self.update_of(p, key):
                self._write(p, key)

    def _write(self, p: ChunkProjection, key: str) -> None:
        io = self.io
        src = self.source_of(p)
        if p.is_complete_chunk:
            part = self._whole_shard(p, src)
            self.unit_done(key, part is not None and self._put(p, key, part))
            return
        way = self.way(p, 0)
        if way == "conditional":
            stored = self.conditional_update(key, lambda data: self._updated(p, key, src, data))
        elif way == "rewrite" and self.updater is not None and self.updater.update(key, p.chunk_selection, src):
            stored = True
        else:  # "merge" (or a local shard that does not exist yet)
            data = io.store.get(key)
            enc = self._merged(p, key, src, data)
            stored = enc is not None
            if enc is None:
                if data is not None:
                    io.store.erase(key)
            else:
                io.store.set_parts(key, enc)  # the pieces go to the store unjoined
        self.unit_done(key, stored)

    # ------------------------------------------------------------------ whole shards
    def _whole_shard(self, p: ChunkProjection, src: Any) -> np.ndarray | None:
        """The shard's part inside the array that ``src`` makes (a view of the value when it can
        be used as it is: a single value broadcast, not copied); None when the shard is all fill
        and empty chunks are not written (it was erased here)."""
        io = self.io
        region = io.grid.chunk_region(p.chunk_coords, io.shape)
        inside = tuple(r.stop - r.start for r in region)
        part = self._shard_source(src, inside)
        if part is None:
            part = np.empty(inside, dtype=io.dtype)
            part[...] = src
        if part.shape == tuple(io.chunk_shape) and not self.write_empty and self.is_fill(part):
            io.store.erase(io.chunk_key(p.chunk_coords))
            return None
        return part

    def _shard_source(self, src: Any, inside: tuple[int, ...]) -> np.ndarray | None:
        """``src`` as an array of the shape of the shard's part inside the array (a view: a
        single value is broadcast, not copied), or None when it cannot be used as it is."""
        dtype = self.io.dtype
        if dtype.hasobject:
            return None
        if isinstance(src, np.ndarray) and src.shape == inside and src.dtype == dtype:
            return src
        arr = np.asarray(src)
        if arr.dtype != dtype or arr.ndim != 0:
            return None
        return np.broadcast_to(arr, inside)

    def _put(self, p: ChunkProjection, key: str, part: np.ndarray) -> bool:
        """Encode and store shard ``key`` from ``part`` (the shard, or of an edge shard its part
        inside the array: no inner chunk beyond the array's edge is stored); whether a shard was
        stored (False: every inner chunk is fill, and the shard was erased)."""
        store = self.io.store
        assert self.io.layout is not None
        self.sharding.check_new_index(self.io.layout, key)
        way = self.way(p, part.nbytes)
        if way == "stream":
            return write_streamed(self.io, key, part, self.inner_is_fill, self.encoder)
        enc = self.sharding.encode_shard(part, self.io.bound.ab_spec, is_fill=self.inner_is_fill, parts=True,
                                         encoder=self.encoder)
        if enc is None:
            store.erase(key)
            return False
        if way == "behind" and self.background is not None and self.background.fits(enc):
            self.background.submit(store.set_parts, key, enc)
        else:
            store.set_parts(key, enc)  # the pieces go to the store unjoined
        return True

    # ------------------------------------------------------------------ partial updates
    def _merged(self, p: ChunkProjection, key: str, src: Any, data: Any) -> list[Any] | None:
        """The pieces of shard ``key`` (stored bytes ``data``; None: a new shard, which like
        zarr-python's stores no inner chunk the write does not touch) after writing ``src`` at
        ``p``: only the touched inner chunks decoded and encoded again; None when no inner chunk
        is left."""
        enc: list[Any] | None = self.sharding.update_shard(
            data, self.io.bound.ab_spec, p.chunk_selection, src, key, self.inner_is_fill, parts=True,
            encoder=self.encoder, decoder=self.decoder)
        return enc

    def _updated(self, p: ChunkProjection, key: str, src: Any, data: Any) -> bytes | None:
        """The new stored value of shard ``key`` for a conditional update (see the module doc)."""
        enc = self._merged(p, key, src, data)
        if enc is None:
            return None if data is None else _joined([empty_index(self.io)])
        return _joined(enc)


def _joined(parts: Sequence[Any]) -> bytes:
    return b"".join(memoryview(p).cast("B") if not isinstance(p, (bytes, bytearray)) else p for p in parts)


def empty_index(io: ArrayIO) -> Any:
    """The index of a shard with no inner chunk (every entry empty): such a shard's bytes."""
    lay = io.layout
    assert lay is not None and io.sharding is not None
    return io.sharding.encode_index(lay, np.full(lay.n, EMPTY, np.uint64), np.full(lay.n, EMPTY, np.uint64))


def _large_shards(io: ArrayIO, nshards: int) -> bool:
    """Whether shards side by side (one per thread) would hold too much memory at once."""
    threads: int = config.get("threads")
    shard: int = io.bound.spec.nbytes
    return threads > 1 and threads * shard > max(SHARDS_IN_FLIGHT_MIN, nshards * shard // SHARDS_IN_FLIGHT_SHARE)


# ---------------------------------------------------------------------------- streamed shards
def _laid_out(io: ArrayIO, array: np.ndarray) -> list[int]:
    """The shard's inner chunks inside ``array``, in the order their bytes are laid out."""
    codec, lay = io.sharding, io.layout
    assert codec is not None and lay is not None
    laid_out: list[int] = in_storage_order(lay.chunks_per_shard, codec.write_order,
                                           codec.inner_within(lay, array.shape)).tolist()
    return laid_out


def _batches(io: ArrayIO, array: np.ndarray, is_fill: Callable[[np.ndarray], bool],
             encoder: Any) -> Iterator[tuple[list[int], dict[int, Any]]]:
    """``(flats, {flat: encoded bytes})`` of the shard's inner chunks inside ``array``, a batch at
    a time, in the order their bytes are laid out (fill chunks left out of the dict)."""
    codec, lay = io.sharding, io.layout
    assert codec is not None and lay is not None
    seq = _laid_out(io, array)
    per = max(1, BATCH_BYTES // max(lay.inner.spec.nbytes, 1))
    spec = io.bound.ab_spec
    for lo in range(0, len(seq), per):
        part = seq[lo: lo + per]
        yield part, codec.encode_inner(array, spec, part, is_fill=is_fill, encoder=encoder)


def _stream(io: ArrayIO, array: np.ndarray, encoder: Any, f: Any, offsets: np.ndarray,
            nbytes: np.ndarray) -> int | None:
    """The whole shard encoded and written to the file ``f`` (from its start) by C jobs
    (:meth:`~.encode.InnerEncoder.stream`), one per WINDOW_BYTES of decoded inner chunks (Python,
    and a pending KeyboardInterrupt, gets a turn between them), its inner chunks' places set in
    ``offsets`` and ``nbytes``: the bytes written.  None when that cannot be had (no such
    encoder, a shard C does not take, a codec failing in C): the file is then empty again for
    the batched way, which reports a codec's failure its own way."""
    stream = getattr(encoder, "stream", None)
    if stream is None:
        return None
    seq = _laid_out(io, array)
    codec, lay = io.sharding, io.layout
    assert codec is not None and lay is not None
    per = max(1, WINDOW_BYTES // max(lay.inner.spec.nbytes, 1))
    pos = 0
    for lo in range(0, len(seq), per):
        part = seq[lo: lo + per]
        regions = [tuple(slice(r.start, min(r.stop, e)) for r, e in zip(codec.inner_region(lay, i), array.shape))
                   for i in part]
        try:
            got = stream(array, regions, f.fileno(), BATCH_BYTES, pos)
        except (CodecError, ValueError):  # (as InnerEncoder.__call__: the batched way reports it)
            got = None
        if got is None:  # (the windows already written are given up too)
            f.truncate(0)
            offsets[:] = EMPTY
            nbytes[:] = EMPTY
            return None
        where, pos = got
        for i, (o, n) in zip(part, where.tolist()):
            if o >= 0:
                offsets[i], nbytes[i] = o, n
    return pos


def write_streamed(io: ArrayIO, key: str, array: np.ndarray, is_fill: Callable[[np.ndarray], bool],
                   encoder: Any) -> bool:
    """Encode shard ``key`` from ``array`` (the shard, or of an edge shard its part inside the
    array) and store it while it is encoded (``"stream"`` in the module doc); whether it was
    stored.  A shard whose inner chunks are all fill (by ``is_fill``) is erased instead.  A failure leaves the old shard
    as it was and no temporary file (OSError: the store's typed StoreError)."""
    codec, lay, files = io.sharding, io.layout, io.files
    assert codec is not None and lay is not None and files is not None
    offsets = np.full(lay.n, EMPTY, dtype=np.uint64)
    nbytes = np.full(lay.n, EMPTY, dtype=np.uint64)
    with files.atomic(key) as f:
        pos = _stream(io, array, encoder, f, offsets, nbytes)
        if pos is None:
            pos = 0
            writer = StoreBehind(0)
            try:
                for part, encoded in _batches(io, array, is_fill, encoder):
                    pieces, at = [], pos
                    for i in part:
                        enc = encoded.get(i)
                        if enc is None:
                            continue
                        n = memoryview(enc).nbytes
                        offsets[i], nbytes[i] = pos, n
                        pos += n
                        pieces.append(enc)
                    if pieces:
                        writer.submit(f.pwrite, pieces, at)
            except BaseException:
                writer.wait(report=False)  # (the file is closed only once nothing writes to it)
                raise
            writer.wait()
        if pos:
            f.pwrite([codec.encode_index(lay, offsets, nbytes)], pos)
            f.commit()
            return True
    io.store.erase(key)  # every inner chunk is fill: no shard
    return False


# ---------------------------------------------------------------------------- local shard updates
# unused bytes tolerated in an appended shard besides as many as it has live bytes
_SLACK = 1 << 20
# reads of the touched inner chunks at least this large go to reused memory (_read_entries)
_READ_REUSE_MIN = 1 << 20
# partial updates of several shards run side by side while their merge boxes together stay
# within this many bytes (or half of all the boxes of the write): see side_by_side
IN_FLIGHT_MIN = 64 << 20
# ... and while the last of them ends within this many times an even share of their work; the
# file work of an update counted as its shard's decoded bytes / FILE_WORK_SHARE
BALANCE = 1.25
FILE_WORK_SHARE = 8


def balanced(work: Sequence[int], threads: int) -> bool:
    """Whether jobs of ``work`` (largest first), each on one of ``threads`` threads as they
    become free, end within BALANCE times an even share of the total."""
    ends = [0] * threads
    for w in work:
        ends[ends.index(min(ends))] += w
    return max(ends) * threads <= BALANCE * sum(work)


def _read_entries(f: Any, key: str, offs: np.ndarray, nb: np.ndarray, flats: np.ndarray) -> list[Any]:
    """The stored bytes of inner chunks ``flats`` (None: empty) of the shard file ``f``,
    neighbours read together into one buffer (reused memory: see .outbuf)."""
    order, read_of, begins, ends = kernels.coalesce_ranges(offs, nb, flats, max_gap=COALESCE_GAP, max_read=64 << 20)
    sizes = (ends - begins).tolist()
    total = sum(sizes)
    # from the output cache even below its minimum size (fresh memory costs page faults)
    room = max(total, outbuf.MIN_BYTES) if total >= _READ_REUSE_MIN else max(total, 1)
    buf = memoryview(outbuf.empty((room,), np.uint8)).cast("B")
    blobs, at = [], 0
    for b, n in zip(begins.tolist(), sizes):
        blobs.append(buf[at: at + n])
        if f.read_into(blobs[-1], int(b)) != n:
            raise shard_index.changed(key)
        at += n
    where = dict(zip(order.tolist(), read_of.tolist()))
    out: list[Any] = []
    for fl in flats.tolist():
        r = where.get(fl)
        if r is None:
            out.append(None)
            continue
        o = int(offs[fl]) - int(begins[r])
        out.append(blobs[r][o: o + int(nb[fl])])
    return out


class LocalShardUpdater:
    """Writes part of an existing local shard file (``"rewrite"`` / ``"append"`` in the module
    doc), in the ``shard_update`` mode of ``zarrbolt.config``."""

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
        from ..._threads import run_batches

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
        f = self.files.open_value(key)
        if f is None:
            return False
        with f:
            self._update(f, key, selection, value)
        return True

    def _update(self, f: Any, key: str, selection: Any, value: Any) -> None:
        codec, lay = self.codec, self.lay
        index = shard_index.fetch(f, key, codec, lay)
        assert index is not None  # (a file's index)
        offs, nb = index.offsets, index.nbytes
        upd = codec.plan_update(lay, selection)
        existing = _read_entries(f, key, offs, nb, upd.touched[~upd.covered])
        # the touched inner chunks merged (one after another where they can be) and encoded
        encoded = codec.merge_encode(self.spec, upd, value, existing, key, is_fill=self.is_fill, encoder=self.encoder,
                                     decoder=self.decoder, empty=outbuf.empty)
        del existing  # (its buffer goes back for the next update)
        keep = offs != EMPTY
        keep[upd.touched] = False
        if not keep.any() and not encoded:  # nothing left in the shard
            self.io.store.erase(key)
            return
        if (config.get("shard_update") == "append" and codec.index_location == "end"
                and self._append(f, offs, nb, encoded, keep)):
            return
        self._rewrite(f, key, offs, nb, encoded, keep)

    def _append(self, f: Any, offs: np.ndarray, nb: np.ndarray, encoded: dict[int, Any], keep: np.ndarray) -> bool:
        """Append ``encoded`` and a new index; False when the shard is to be compacted instead."""
        lay = self.lay
        size = f.size
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
        f.append(pieces)
        return True

    def _rewrite(self, src: Any, key: str, offs: np.ndarray, nb: np.ndarray, encoded: dict[int, Any],
                 keep: np.ndarray) -> None:
        """A compact new shard in a temporary file renamed over the old one: the kept inner
        chunks copied from ``src`` in runs, ``encoded`` from memory, in the write order."""
        codec, lay = self.codec, self.lay
        live = keep.copy()
        live[np.fromiter(encoded, dtype=np.int64, count=len(encoded))] = True
        flats = in_storage_order(lay.chunks_per_shard, codec.write_order, np.flatnonzero(live)).tolist()
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
        with self.files.atomic(key) as dst:
            run: list[Any] = []  # consecutive pieces from memory, written together
            run_at = run_end = 0
            for at, piece in plan:
                if isinstance(piece, tuple):
                    if run:
                        dst.pwrite(run, run_at)
                        run = []
                    if not dst.copy_from(src, piece[0], piece[1], at):
                        raise shard_index.changed(key)
                    continue
                if run and at != run_end:
                    dst.pwrite(run, run_at)
                    run = []
                if not run:
                    run_at = run_end = at
                run.append(piece)
                run_end += len(memoryview(piece).cast("B"))
            if run:
                dst.pwrite(run, run_at)
            dst.commit()
