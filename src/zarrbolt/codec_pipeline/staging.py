"""Staged reads from zarr-python stores: everything one read needs fetched concurrently on the
event loop first, then served from memory to zarrbolt's planner (which runs in a worker thread
and would otherwise wait for one request at a time).

:func:`staged_read_store` fetches whole objects for chunk keys, and for the shards of arrays
read shard by shard (``ArrayIO.shard_direct``) the index by one suffix (or prefix) request,
decoded and validated by the sharding codec's own :meth:`~zarrbolt.codecs.sharding.ShardingCodec.
decode_index`, then the wanted inner chunks' byte ranges coalesced as the planner coalesces
them (:data:`~zarrbolt.pipeline.shard_io.COALESCE_GAP`), all with at most ``concurrency``
requests in flight.  The :class:`StagedStore` it returns serves those bytes as views of the
fetched buffers; anything else falls through to a :class:`~.stores.LoopBridge`.

A suffix request does not tell the shard's size.  The staged store reports, for a shard read
in part, the size its index implies (the end of its last inner chunk plus the index), so that
the planner's own index read (:func:`~zarrbolt.pipeline.shard_io.shard_index`) asks for exactly
the staged index; the index is validated here against everything but the shard's true end,
and an inner chunk past that end is reported when its bytes come back short.
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .. import kernels
from ..codecs.sharding import EMPTY
from ..errors import CorruptChunkError, StoreError
from ..pipeline.shard_io import COALESCE_GAP, group_by_shard
from ..storage import Store
from ..storage._base import (
    ByteRequest,
    RangeByteRequest,
    SuffixByteRequest,
    _index,
    check_key,
    check_ranges,
    normalize_range,
    resolve_range,
    writable_view,
)
from .stores import LoopBridge, _buffer_view, _copy_into

__all__ = ["StagedStore", "read_requests", "staged_read_store", "write_requests"]

# The shard size the index is validated against before the size is known (see the module doc).
_UNKNOWN_SIZE = 1 << 63


class _Parts:
    """The staged pieces of one shard: ``(begin, end, view)`` sorted by begin, and its size."""

    __slots__ = ("size", "begins", "pieces")

    def __init__(self, size: int):
        self.size = size
        self.begins: list[int] = []
        self.pieces: list[tuple[int, int, memoryview]] = []

    def add(self, begin: int, view: memoryview) -> None:
        i = bisect.bisect_right(self.begins, begin)
        self.begins.insert(i, begin)
        self.pieces.insert(i, (begin, begin + len(view), view))

    def find(self, a: int, b: int) -> memoryview | None:
        """Bytes ``[a, b)`` when one staged piece holds them all, else None."""
        i = bisect.bisect_right(self.begins, a) - 1
        if i < 0:
            return None
        p0, p1, view = self.pieces[i]
        if b > p1:
            return None
        return view[a - p0: b - p0]


class StagedStore(Store):
    """What :func:`staged_read_store` fetched, served from memory (zero-copy views; reads into
    a caller's buffer copy once); keys or byte ranges not staged are read through ``bridge``.
    Writes go to ``bridge`` (and forget what was staged for the key)."""

    def __init__(self, bridge: LoopBridge):
        super().__init__(read_only=bridge.read_only)
        self.bridge = bridge
        self._whole: dict[str, memoryview | None] = {}  # whole values; None: the key is absent
        self._parts: dict[str, _Parts] = {}  # shards read in part

    @property
    def staged_keys(self) -> set[str]:
        return set(self._whole) | set(self._parts)

    def _state(self, key: str) -> tuple[str, Any]:
        check_key(key)
        if key in self._whole:
            v = self._whole[key]
            return ("missing", None) if v is None else ("whole", v)
        parts = self._parts.get(key)
        return ("parts", parts) if parts is not None else ("", None)

    # ------------------------------------------------------------------ reading
    def get(self, key: str, byte_range: ByteRequest = None) -> Any:
        kind, v = self._state(key)
        if kind == "missing":
            return None
        if kind == "whole":
            if byte_range is None:
                return v
            a, b = resolve_range(byte_range, len(v))
            return v[a:b]
        if kind == "parts" and normalize_range(byte_range) is not None:
            a, b = resolve_range(byte_range, v.size)
            got = v.find(a, b)
            if got is not None:
                return got
        return self.bridge.get(key, byte_range)

    def get_partial_values(self, key_ranges: Iterable[tuple[str, ByteRequest]]) -> list[Any]:
        """Staged requests served here, the others fetched through the bridge together."""
        items = list(key_ranges)
        out: list[Any] = [None] * len(items)
        todo: list[int] = []
        for i, (k, r) in enumerate(items):
            kind, v = self._state(k)
            if kind in ("missing", "whole"):
                out[i] = self.get(k, r)
            elif kind == "parts" and normalize_range(r) is not None:
                out[i] = v.find(*resolve_range(r, v.size))
                if out[i] is None:
                    todo.append(i)
            else:
                todo.append(i)
        if todo:
            for i, got in zip(todo, self.bridge.get_partial_values([items[i] for i in todo])):
                out[i] = got
        return out

    def get_into(self, key: str, buffer: Any, offset: int = 0) -> int | None:
        kind, v = self._state(key)
        offset = _index(offset, "offset")
        if offset < 0:
            raise ValueError(f"negative offset {offset}")
        mv = writable_view(buffer)
        if kind == "missing":
            return None
        if kind == "whole":
            return _copy_into(mv, v[offset: offset + len(mv)])
        if kind == "parts":
            got = v.find(offset, min(offset + len(mv), v.size))
            if got is not None and offset + len(mv) <= v.size:
                return _copy_into(mv, got)
        return self.bridge.get_into(key, mv, offset)

    def read_into(self, key: str, buffer: Any) -> int | None:
        kind, v = self._state(key)
        if kind == "missing":
            return None
        if kind == "whole":
            mv = writable_view(buffer)
            return -len(v) if len(v) > len(mv) else _copy_into(mv, v)
        return self.bridge.read_into(key, buffer)

    def get_ranges_into(self, key: str, ranges: Any, buffer: Any) -> list[int] | None:
        kind, v = self._state(key)
        if kind not in ("missing", "whole", "parts"):
            return self.bridge.get_ranges_into(key, ranges, buffer)
        mv = writable_view(buffer)
        ranges = check_ranges(ranges, len(mv))
        if kind == "missing":
            return None
        counts: list[int] = []
        pos = 0
        for a, b in ranges:
            dest = mv[pos: pos + b - a]
            if b == a:
                counts.append(0)
            elif kind == "whole":
                counts.append(_copy_into(dest, v[a:b]))
            else:
                got = v.find(a, b) if b <= v.size else None
                n = _copy_into(dest, got) if got is not None else self.bridge.get_into(key, dest, a)
                if n is None:
                    return None
                counts.append(n)
            pos += b - a
        return counts

    def exists(self, key: str) -> bool:
        kind, _ = self._state(key)
        if kind:
            return kind != "missing"
        return self.bridge.exists(key)

    def getsize(self, key: str) -> int:
        kind, v = self._state(key)
        if kind == "missing":
            raise StoreError(f"key {key!r} not found in {self.bridge.zstore!r}")
        if kind:
            return len(v) if kind == "whole" else v.size
        return self.bridge.getsize(key)

    # ------------------------------------------------------------------ writing and listing
    def _forget(self, key: str) -> None:
        self._whole.pop(key, None)
        self._parts.pop(key, None)

    def set(self, key: str, value: Any) -> None:
        self.bridge.set(key, value)
        self._forget(key)

    def set_parts(self, key: str, parts: Sequence[Any]) -> None:
        self.bridge.set_parts(key, parts)
        self._forget(key)

    def erase(self, key: str) -> None:
        self.bridge.erase(key)
        self._forget(key)

    def list(self) -> Iterator[str]:
        return self.bridge.list()

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return self.bridge.list_prefix(prefix)

    def with_read_only(self, read_only: bool = True) -> Store:
        return self.bridge.with_read_only(read_only)

    def __repr__(self) -> str:
        return f"StagedStore({self.bridge.zstore!r}, {len(self._whole) + len(self._parts)} keys staged)"


# ---------------------------------------------------------------------------- fetching
async def _stage_whole(staged: StagedStore, key: str) -> None:
    buf = await staged.bridge.aget(key)
    staged._whole[key] = None if buf is None else _buffer_view(buf)


async def _stage_shard(staged: StagedStore, io: Any, key: str, wanted: list[int]) -> None:
    """The index of shard ``key`` (one request), then its ``wanted`` inner chunks' byte ranges
    (coalesced here, then by the store) in one ``get_ranges`` call of the zarr store."""
    bridge, codec, lay = staged.bridge, io.sharding, io.layout
    kind, nidx = codec.index_range(lay)
    buf = await bridge.aget(key, SuffixByteRequest(nidx) if kind == "suffix" else RangeByteRequest(0, nidx))
    if buf is None:
        staged._whole[key] = None
        return
    raw = _buffer_view(buf)
    if len(raw) != nidx:
        raise CorruptChunkError(f"shard {key!r}: {len(raw)} bytes where its {nidx}-byte index should be "
                                "(the shard is smaller than its index)")
    offs, nb = codec.decode_index(raw, lay, _UNKNOWN_SIZE, key)
    full = offs != EMPTY
    data_end = int((offs[full] + nb[full]).max()) if full.any() else 0
    parts = _Parts(data_end + nidx if kind == "suffix" else max(data_end, nidx))
    parts.add(data_end if kind == "suffix" else 0, raw)
    _order, _read_of, begins, ends = kernels.coalesce_ranges(offs, nb, wanted, max_gap=COALESCE_GAP)
    spans = list(zip(begins.tolist(), ends.tolist()))
    bufs = await bridge.aget_ranges(key, spans, max_gap=COALESCE_GAP) if spans else []
    if bufs is None:  # deleted since its index was read: absent, as a shard without an index
        staged._whole[key] = None
        return
    for (b, e), got in zip(spans, bufs):
        view = _buffer_view(got)
        if len(view) != e - b:
            raise CorruptChunkError(f"shard {key!r}: its index names bytes [{b}, {e}) but only {len(view)} of them "
                                    "exist (an entry points past the end of the shard)")
        parts.add(b, view)
    staged._parts[key] = parts


async def staged_read_store(zstore: Any, loop: asyncio.AbstractEventLoop, io: Any,
                            requests: dict[str, list[int] | None], *, concurrency: int | None = None) -> StagedStore:
    """Fetch, concurrently, what a read of array ``io`` (a :class:`~zarrbolt.pipeline.context.
    ArrayIO`) needs from the zarr-python store ``zstore``, and return a store serving it.

    ``requests``: store key -> None (the whole object) or the flat numbers of the inner chunks
    wanted from that shard (used when ``io.shard_direct``; all of them: the whole shard in one
    request).  At most ``concurrency`` requests (zarr-python's ``async.concurrency`` by
    default) are in flight.  Absent keys and shards read as absent.  A damaged shard index
    raises what zarrbolt raises for it everywhere (CorruptChunkError, ChecksumError), a store
    failure StoreError; every fetch has finished when it does."""
    bridge = LoopBridge(zstore, loop, concurrency=concurrency)
    staged = StagedStore(bridge)
    jobs = []
    for key, flats in requests.items():
        if flats is None or not io.shard_direct:
            jobs.append(_stage_whole(staged, key))
            continue
        wanted = sorted({int(f) for f in flats})
        if wanted and (wanted[0] < 0 or wanted[-1] >= io.layout.n):
            raise ValueError(f"inner chunk numbers of shard {key!r} must lie in [0, {io.layout.n})")
        if len(wanted) == io.layout.n:
            jobs.append(_stage_whole(staged, key))
        elif wanted:
            jobs.append(_stage_shard(staged, io, key, wanted))
    results = await asyncio.gather(*jobs, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return staged


# ---------------------------------------------------------------------------- what a read needs
def _chunk_coords(indexer: Any, ndim: int) -> np.ndarray:
    items = indexer.unit_step_items() if hasattr(indexer, "unit_step_items") else None
    if items is not None:
        return np.asarray(items[0], dtype=np.int64).reshape(-1, ndim)
    return np.asarray([p.chunk_coords for p in indexer], dtype=np.int64).reshape(-1, ndim)


def read_requests(io: Any, make_indexer: Callable[[tuple[int, ...]], Any]) -> dict[str, list[int] | None]:
    """The ``requests`` argument of :func:`staged_read_store` for a read of ``io`` whose indexer
    ``make_indexer(chunk_shape)`` makes (as :func:`zarrbolt.pipeline.read.read` takes it)."""
    if io.ndim == 0:
        return {io.chunk_key(()): None}
    if io.shard_direct:
        lay = io.layout
        coords = _chunk_coords(make_indexer(lay.chunk_shape), io.ndim)
        if not len(coords):
            return {}
        flat, groups = group_by_shard(coords, lay.chunks_per_shard)
        return {io.chunk_key(sc): sorted(set(flat[g].tolist())) for sc, g in groups}
    coords = _chunk_coords(make_indexer(io.chunk_shape), io.ndim)
    return {io.chunk_key(tuple(c)): None for c in coords.tolist()}


def write_requests(io: Any, indexer: Any) -> dict[str, None]:
    """The ``requests`` for staging what a write of ``io`` at ``indexer`` (over ``io.chunk_shape``,
    as :func:`zarrbolt.pipeline.write.write` takes it) reads: the chunks and shards it updates in
    part (whole: the write planner reads them whole), not the ones it overwrites."""
    return {io.chunk_key(p.chunk_coords): None for p in indexer if not p.is_complete_chunk}
