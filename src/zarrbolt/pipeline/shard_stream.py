"""Whole shards written to a local file while they are encoded (:func:`write_streamed`).

A large shard written whole is encoded and written to the shard's temporary file by one C job
on the pool (:meth:`~.write.InnerEncoder.stream`, csrc/encode_stream.c): each inner chunk is
written as soon as it and the chunks before it are encoded, the chunks waiting for their turn
in a ring of about ``BATCH_BYTES``.  Where that job cannot be had (no C encode plan, a codec
failing in C) the shard is encoded a batch of inner chunks at a time (``BATCH_BYTES`` of decoded
data) and each batch's encoded bytes are written by a thread of its own while the next batch is
encoded.  Either way the index goes last, then the file is renamed over the shard (atomic, as
every LocalStore write); the write holds a ring or two batches of encoded bytes instead of the
whole encoded shard, and the file's writing overlaps the encoding, the last shard's included.
The bytes are the same as those of ``ShardingCodec.assemble`` (the inner chunks in
``write_order``, the index at the end).

Only for stores with native files (POSIX), shards with the index at the end and at least
``STREAM_MIN_BYTES`` of decoded data; else the shard is encoded whole and stored with
``Store.set_parts``."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..codecs.sharding import EMPTY, storage_order
from ..errors import CodecError, StoreError
from ..storage import _local_safety as safety
from .context import ArrayIO
from .write_shard import _pwrite_all, discard_tmp

__all__ = ["BATCH_BYTES", "STREAM_MIN_BYTES", "streamable", "write_streamed"]

# Shards of at least this many decoded bytes are streamed.
STREAM_MIN_BYTES = 32 << 20
# Decoded bytes of inner chunks encoded per batch (at least one inner chunk); the C job's ring.
BATCH_BYTES = 16 << 20
# Decoded bytes of inner chunks one C job encodes and writes (at least one inner chunk).
WINDOW_BYTES = 1 << 30


def streamable(io: ArrayIO, shard_nbytes: int) -> bool:
    """Whether a whole shard of ``shard_nbytes`` decoded bytes of ``io`` is written streamed."""
    codec = io.sharding
    return (io.files is not None and os.name == "posix" and codec is not None and io.layout is not None
            and codec.index_location == "end" and shard_nbytes >= STREAM_MIN_BYTES)


def _laid_out(io: ArrayIO, array: np.ndarray) -> list[int]:
    """The shard's inner chunks inside ``array``, in the order their bytes are laid out."""
    codec, lay = io.sharding, io.layout
    assert codec is not None and lay is not None
    inside = codec.inner_within(lay, array.shape).tolist()
    order = storage_order(lay.chunks_per_shard, codec.write_order)
    if order is None:
        return sorted(inside)
    keep = set(inside)
    return [i for i in order if i in keep]


def _batches(io: ArrayIO, array: np.ndarray, is_fill: Callable[[np.ndarray], bool],
             encoder: Any) -> Iterator[tuple[list[int], dict[int, Any]]]:
    """``(flats, {flat: encoded bytes})`` of the shard's inner chunks inside ``array``, a batch at a
    time, in the order their bytes are laid out (fill chunks left out of the dict)."""
    codec, lay = io.sharding, io.layout
    assert codec is not None and lay is not None
    seq = _laid_out(io, array)
    per = max(1, BATCH_BYTES // max(lay.inner.spec.nbytes, 1))
    spec = io.bound.ab_spec
    for lo in range(0, len(seq), per):
        part = seq[lo: lo + per]
        yield part, codec.encode_inner(array, spec, part, is_fill=is_fill, encoder=encoder)


def _stream(io: ArrayIO, array: np.ndarray, encoder: Any, fd: int, offsets: np.ndarray,
            nbytes: np.ndarray) -> int | None:
    """The whole shard encoded and written to ``fd`` (from its start) by C jobs
    (:meth:`~.write.InnerEncoder.stream`), one per WINDOW_BYTES of decoded inner chunks (Python,
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
            got = stream(array, regions, fd, BATCH_BYTES, pos)
        except (CodecError, ValueError):  # (as InnerEncoder.__call__: the batched way reports it)
            got = None
        if got is None:  # (the windows already written are given up too)
            os.ftruncate(fd, 0)
            offsets[:] = EMPTY
            nbytes[:] = EMPTY
            return None
        where, pos = got
        for i, (o, n) in zip(part, where.tolist()):
            if o >= 0:
                offsets[i], nbytes[i] = o, n
    return pos


def write_streamed(io: ArrayIO, key: str, array: np.ndarray, is_fill: Callable[[np.ndarray], bool],
                   encoder: Any) -> None:
    """Encode shard ``key`` from ``array`` (the shard, or of an edge shard its part inside the
    array) and store it while it is encoded (see the module doc).  A shard whose
    inner chunks are all fill (by ``is_fill``) is erased instead.  A failure leaves the old shard
    as it was and no temporary file (OSError: the store's typed StoreError)."""
    from .write import StoreBehind  # (write imports this module)

    codec, lay, files = io.sharding, io.layout, io.files
    assert codec is not None and lay is not None and files is not None
    try:
        (path,), (tmp,) = files.write_paths([key])
    except OSError as e:  # e.g. a file where the key's directory should be
        if isinstance(e, StoreError):
            raise
        raise safety.write_error(key, io.store, e) from e
    offsets = np.full(lay.n, EMPTY, dtype=np.uint64)
    nbytes = np.full(lay.n, EMPTY, dtype=np.uint64)
    pos = 0
    writer = StoreBehind(0)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            streamed = _stream(io, array, encoder, fd, offsets, nbytes)
            if streamed is not None:
                pos = streamed
            else:
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
                            writer.submit(_pwrite_all, fd, pieces, at)
                except BaseException:
                    writer.wait(report=False)  # (the file is closed only once nothing writes to it)
                    raise
                writer.wait()
            if pos:
                _pwrite_all(fd, [codec.encode_index(lay, offsets, nbytes)], pos)
                if files.fsync:
                    os.fsync(fd)
        finally:
            os.close(fd)
        if not pos:  # every inner chunk is fill: no shard
            os.unlink(tmp)
            io.store.erase(key)
            return
        os.replace(tmp, path)
    except BaseException as e:
        err = discard_tmp(tmp, key, io.store, e)
        if err is e:
            raise
        raise err from e
    files.sync_dirs([key])

