"""Partial shard writes by appending (``zarrbolt.config`` option ``shard_update="append"``).

A write into part of an existing shard normally rewrites the whole shard (``"rewrite"``, the
default): the untouched inner chunks' bytes are copied into a new file that is renamed over the
old one, so the update is atomic and the shard stays compact, but a 64^3 inner chunk written
into a 60 MB shard rewrites 60 MB.

With ``"append"`` the shard's file is extended instead: the touched inner chunks' new bytes and
then a new index are written at its end (the sharding spec's "append-only" write strategy).  The
old index and the replaced inner chunks' bytes stay in the file as unused space, which every
reader skips (the index says where each inner chunk is).  Only the index and the touched inner
chunks that the write does not wholly cover are read.  When the unused space would exceed the
live inner chunks' bytes the shard is rewritten compactly instead, so a shard is at most about
twice its compact size.

Appending needs a local store (its files are extended in place) and ``index_location="end"``;
anything else (a new shard, another store, an index at the start) is rewritten.  An append is
not atomic: a reader of the shard during the append, or a crash in it, can see a shard whose end
is not a valid index (``CorruptChunkError``); ``"rewrite"`` never shows a torn shard."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import config
from ..codecs.sharding import EMPTY
from ..errors import CorruptChunkError
from .context import ArrayIO

__all__ = ["SHARD_UPDATE_MODES", "ShardAppender", "shard_appender"]

SHARD_UPDATE_MODES = ("rewrite", "append")
# unused bytes tolerated in an appended shard besides as many as it has live bytes
_SLACK = 1 << 20


def shard_appender(io: ArrayIO, is_fill: Callable[[np.ndarray], bool], encoder: Any) -> ShardAppender | None:
    """The appender of ``io``'s partial shard writes, or None when they are rewritten (the
    ``shard_update`` option, a store without native files, an index at the shard's start)."""
    if config.get("shard_update") != "append" or io.files is None or io.sharding is None:
        return None
    if io.sharding.index_location != "end" or not hasattr(os, "pwrite"):
        return None
    return ShardAppender(io, is_fill, encoder)


def _pread(fd: int, n: int, offset: int, key: str) -> bytes:
    data = os.pread(fd, n, offset)
    while len(data) < n:
        more = os.pread(fd, n - len(data), offset + len(data))
        if not more:
            raise CorruptChunkError(f"shard {key!r} changed or was truncated while being updated")
        data += more
    return data


def _pwrite_all(fd: int, views: Sequence[Any], offset: int) -> None:
    for v in views:
        mv = memoryview(v).cast("B")
        while len(mv):
            n = os.pwrite(fd, mv, offset)
            offset += n
            mv = mv[n:]


class ShardAppender:
    """Writes part of an existing shard file by appending the touched inner chunks and a new
    index (see the module doc)."""

    def __init__(self, io: ArrayIO, is_fill: Callable[[np.ndarray], bool], encoder: Any):
        self.io = io
        self.codec = io.sharding
        self.lay = io.layout
        self.spec = io.bound.ab_spec
        self.is_fill = is_fill
        self.encoder = encoder

    def update(self, key: str, selection: Any, value: Any) -> bool:
        """Write ``value`` at ``selection`` of shard ``key`` by appending; False (nothing done)
        when the shard is to be rewritten instead: it does not exist, it would hold more unused
        than live bytes, or the write leaves it empty."""
        path = self.io.files.paths([key])[0]
        try:
            fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
        except (FileNotFoundError, NotADirectoryError):
            return False
        try:
            return self._update(fd, key, selection, value)
        finally:
            os.close(fd)

    def _update(self, fd: int, key: str, selection: Any, value: Any) -> bool:
        codec, lay = self.codec, self.lay
        size = os.fstat(fd).st_size
        if size < lay.index_nbytes:
            raise CorruptChunkError(f"shard {key!r}: {size} bytes is smaller than its {lay.index_nbytes}-byte index")
        offs, nb = codec.decode_index(_pread(fd, lay.index_nbytes, size - lay.index_nbytes, key), lay, size, key)
        upd = codec.plan_update(lay, selection)
        live = offs != EMPTY
        live_bytes = int(nb[live].sum())
        replaced = int(nb[upd.touched][live[upd.touched]].sum())
        # unused bytes after this append: what is unused now, the old index and what is replaced
        if size - live_bytes + replaced > live_bytes - replaced + _SLACK:
            return False  # compacted by a rewrite
        existing = []
        for i in upd.touched[~upd.covered].tolist():
            o = int(offs[i])
            existing.append(None if o == EMPTY else _pread(fd, int(nb[i]), o, key))
        box = codec.merge_update(self.spec, upd, value, existing, key)
        encoded = codec.encode_inner(box, self.spec, upd.touched, is_fill=self.is_fill, encoder=self.encoder,
                                     origin=upd.origin)
        new_offs = offs.copy()
        new_nb = nb.copy()
        new_offs[upd.touched] = EMPTY
        new_nb[upd.touched] = EMPTY
        pieces: list[Any] = []
        pos = size
        for i in upd.touched.tolist():
            enc = encoded.get(i)
            if enc is None:
                continue
            n = len(memoryview(enc).cast("B"))
            new_offs[i], new_nb[i] = pos, n
            pos += n
            pieces.append(enc)
        if not (new_offs != EMPTY).any():
            return False  # the shard is left empty: the rewrite erases it
        pieces.append(codec.encode_index(lay, new_offs, new_nb))
        _pwrite_all(fd, pieces, size)
        if self.io.files.fsync:
            os.fsync(fd)
        return True
