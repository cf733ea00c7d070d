"""Staged reads: everything one read (or one window of a read) needs from a store with an
:class:`~zarrbolt.storage._async.AsyncSource` (a remote store, or zarr-python's stores through
the codec pipeline's ``LoopBridge``) fetched concurrently on the source's event loop first, then
served from memory to zarrbolt's planners.

:func:`stage` fetches whole objects for chunk keys (and for shards wanted whole), and for shards
read in part the index by one suffix (or prefix, ``index_location: "start"``) request, decoded
and validated by the sharding codec's own :meth:`~zarrbolt.codecs.sharding.ShardingCodec.
decode_index`, then the wanted inner chunks' byte ranges coalesced (gaps under ``max_gap``
bytes read through) by one :meth:`AsyncSource.aget_ranges` call per shard.  At most the
source's ``concurrency`` staging jobs run at once (the source bounds its own requests too).
An :class:`IndexCache` (optional) serves shard indexes already read: a warm index costs no
request.

The :class:`StagedStore` it fills serves those bytes as views of the fetched buffers (the fused
decode takes them as they are: :meth:`StagedStore.inner_chunk`); any other key or byte range
falls through to ``base``, the store the source belongs to.

A suffix request does not tell the shard's size.  The staged store reports, for a shard read
in part, the size its index implies (the end of its last inner chunk plus the index), so that
the planner's own index read (:func:`~zarrbolt.pipeline.shard_io.shard_index`) asks for exactly
the staged index; the index is validated against everything but the shard's true end, and an
inner chunk past that end is reported when its bytes come back short.

What is absent reads as absent (a chunk, a shard: the fill value); everything else a source
raises (:class:`~zarrbolt.errors.StoreError` and its subclasses), and a damaged index or a
short range raises :class:`~zarrbolt.errors.CorruptChunkError`: never fill.  Every fetch of a
:func:`stage` call has finished (or been cancelled) when it raises.
"""

from __future__ import annotations

import asyncio
import bisect
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np

from .. import kernels
from ..codecs.sharding import COALESCE_GAP, EMPTY
from ..errors import CorruptChunkError, StoreError
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

__all__ = ["AsyncSourceLike", "IndexCache", "StagedStore", "stage", "byte_view", "INDEX_CACHE"]

# The shard size the index is validated against before the size is known (see the module doc).
_UNKNOWN_SIZE = 1 << 63


class AsyncSourceLike(Protocol):
    """The async face of a store (``storage/_async.py``'s ``AsyncSource``) as staging uses it."""

    concurrency: int
    max_bytes_in_flight: int

    def run(self, coro: Any) -> Any: ...

    async def aget(self, key: str, byte_range: ByteRequest = None) -> Any: ...

    async def aget_ranges(self, key: str, ranges: list[tuple[int, int]], *, max_gap: int) -> list[Any] | None: ...


_DEFAULTS = {"remote_bytes_in_flight": 256 << 20, "remote_coalesce_gap": 1 << 20, "remote_index_cache": 4096}


def remote_option(name: str) -> int:
    """A ``remote_*`` config option (see :mod:`zarrbolt.config`)."""
    from .. import config

    try:
        return int(config.get(name))
    except KeyError:  # an older config module
        return _DEFAULTS[name]


def default_bytes_in_flight() -> int:
    """The ``remote_bytes_in_flight`` config option."""
    return remote_option("remote_bytes_in_flight")


def byte_view(buf: Any) -> memoryview:
    """A flat read-only byte view of a fetched buffer (no copy for contiguous buffers)."""
    mv = buf if isinstance(buf, memoryview) else memoryview(buf)
    if mv.format != "B" or mv.ndim != 1:
        if not mv.c_contiguous:
            mv = memoryview(mv.tobytes())
        mv = mv.cast("B")
    return mv.toreadonly()


def _copy_into(mv: memoryview, src: memoryview) -> int:
    mv[: len(src)] = src
    return len(src)


# ---------------------------------------------------------------------------- the index cache
class IndexCache:
    """Bounded LRUs of validated shard indexes, one per store: ``(key, layout) -> (raw index
    bytes, offsets, nbytes, where the data ends)``, at most ``remote_index_cache`` (config)
    indexes per store (0 turns the cache off) and :data:`MAX_BYTES` bytes in all.  Thread-safe.

    A store is known by its :meth:`token` (its location).  zarrbolt's writes drop the entries of the shards they
    write or erase (:meth:`invalidate`); a shard rewritten by another program while cached is
    read with the stale index (see docs/cloud.md: turn the cache off, or :meth:`clear` it, when
    others rewrite shards you read)."""

    MAX_BYTES = 256 << 20

    def __init__(self) -> None:
        self._stores: dict[Any, OrderedDict[tuple[Any, ...], tuple[Any, int]]] = {}
        self._order: OrderedDict[tuple[Any, ...], None] = OrderedDict()  # (token, key, layout), global LRU
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def capacity() -> int:
        return remote_option("remote_index_cache")

    @staticmethod
    def token(store: Any) -> Any:
        """What names the data of ``store`` (its location; read-only and writable stores over
        the same location share entries): its ``_dask_token()``, else its id."""
        fn = getattr(store, "_dask_token", None)
        tok = fn() if fn is not None else None
        try:
            hash(tok)
        except TypeError:
            tok = None
        return ("id", id(store)) if tok is None else tok

    def get(self, token: Any, key: str, layout_key: tuple[Any, ...]) -> Any | None:
        with self._lock:
            lru = self._stores.get(token)
            hit = None if lru is None else lru.get((key, layout_key))
            if hit is None or lru is None:
                self.misses += 1
                return None
            lru.move_to_end((key, layout_key))
            self._order.move_to_end((token, key, layout_key))
            self.hits += 1
            return hit[0]

    def _drop(self, token: Any, k: tuple[Any, ...]) -> None:
        lru = self._stores[token]
        self._bytes -= lru.pop(k)[1]
        self._order.pop((token,) + k, None)
        if not lru:
            del self._stores[token]

    def put(self, token: Any, key: str, layout_key: tuple[Any, ...], entry: Any, nbytes: int) -> None:
        cap = self.capacity()
        if cap <= 0 or nbytes > self.MAX_BYTES:
            return
        with self._lock:
            lru = self._stores.setdefault(token, OrderedDict())
            if (key, layout_key) in lru:
                self._drop(token, (key, layout_key))
                lru = self._stores.setdefault(token, OrderedDict())
            lru[(key, layout_key)] = (entry, nbytes)
            self._order[(token, key, layout_key)] = None
            self._bytes += nbytes
            while len(lru) > cap:
                self._drop(token, next(iter(lru)))
            while self._bytes > self.MAX_BYTES and self._order:
                t, k, lk = next(iter(self._order))
                self._drop(t, (k, lk))

    def invalidate(self, token: Any, key: str) -> None:
        """Forget every cached index of ``key`` in the store ``token`` (any layout)."""
        with self._lock:
            lru = self._stores.get(token)
            if lru is not None:
                for k in [k for k in lru if k[0] == key]:
                    self._drop(token, k)

    def clear(self) -> None:
        with self._lock:
            self._stores.clear()
            self._order.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._order)


INDEX_CACHE = IndexCache()


# ---------------------------------------------------------------------------- staged bytes
class _Parts:
    """The staged pieces of one shard read in part: ``(begin, end, view)`` sorted by begin, its
    size as the index implies it, and its validated index."""

    __slots__ = ("size", "begins", "pieces", "offs", "nb")

    def __init__(self, size: int, offs: np.ndarray, nb: np.ndarray):
        self.size = size
        self.offs, self.nb = offs, nb
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


_NOT_STAGED = object()


class StagedStore(Store):
    """What :func:`stage` fetched, served from memory (zero-copy views; reads into a caller's
    buffer copy once); keys or byte ranges not staged are read through ``base``.  Writes go to
    ``base`` (and forget what was staged for the key).  It has no async source of its own: the
    planners read it as an in-memory store."""

    def __init__(self, base: Store, source: AsyncSourceLike, *, io: Any = None):
        super().__init__(read_only=base.read_only)
        self.base = base
        self.source = source
        self.io = io  # the array the shards belong to (their layout), when shards are staged
        self._whole: dict[str, memoryview | None] = {}  # whole values; None: the key is absent
        self._parts: dict[str, _Parts] = {}  # shards read in part
        self._split: dict[str, tuple[Any, ...]] = {}  # shards staged whole: their split (view, offs, nb)
        self.nbytes = 0  # bytes staged

    def async_source(self) -> None:
        return None

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

    def whole(self, key: str) -> Any:
        """The staged value of ``key`` (None: absent), or ``_NOT_STAGED``."""
        return self._whole.get(key, _NOT_STAGED)

    def inner_chunk(self, key: str, flat: int) -> Any:
        """Inner chunk ``flat`` of staged shard ``key``: a view of its bytes, None when it is
        empty, or ``_NOT_STAGED`` when the shard is absent (callers fill) -- raising
        CorruptChunkError for a damaged shard staged whole and KeyError for a shard not staged."""
        parts = self._parts.get(key)
        if parts is None:
            v = self._whole[key]
            if v is None:
                return _NOT_STAGED
            split = self._split.get(key)
            if split is None:
                split = self._split[key] = self.io.sharding.split_shard(v, self.io.layout, key)
            mv, offs, nb = split
            o = int(offs[flat])
            return None if o == EMPTY else mv[o: o + int(nb[flat])]
        o = int(parts.offs[flat])
        if o == EMPTY:
            return None
        got = parts.find(o, o + int(parts.nb[flat]))
        if got is None:  # the planner asked for an inner chunk that was not staged
            raise KeyError(f"inner chunk {flat} of shard {key!r} was not staged")
        return got

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
        return self.base.get(key, byte_range)

    def get_partial_values(self, key_ranges: Iterable[tuple[str, ByteRequest]]) -> list[Any]:
        """Staged requests served here, the others fetched through ``base`` together."""
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
            for i, got in zip(todo, self.base.get_partial_values([items[i] for i in todo])):
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
        return self.base.get_into(key, mv, offset)

    def read_into(self, key: str, buffer: Any) -> int | None:
        kind, v = self._state(key)
        if kind == "missing":
            return None
        if kind == "whole":
            mv = writable_view(buffer)
            return -len(v) if len(v) > len(mv) else _copy_into(mv, v)
        return self.base.read_into(key, buffer)

    def get_ranges_into(self, key: str, ranges: Any, buffer: Any) -> list[int] | None:
        kind, v = self._state(key)
        if kind not in ("missing", "whole", "parts"):
            return self.base.get_ranges_into(key, ranges, buffer)
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
                n = _copy_into(dest, got) if got is not None else self.base.get_into(key, dest, a)
                if n is None:
                    return None
                counts.append(n)
            pos += b - a
        return counts

    def exists(self, key: str) -> bool:
        kind, _ = self._state(key)
        if kind:
            return kind != "missing"
        return self.base.exists(key)

    def getsize(self, key: str) -> int:
        kind, v = self._state(key)
        if kind == "missing":
            raise StoreError(f"key {key!r} not found in {self.base!r}")
        if kind:
            return len(v) if kind == "whole" else v.size
        return self.base.getsize(key)

    # ------------------------------------------------------------------ writing and listing
    def _forget(self, key: str) -> None:
        self._whole.pop(key, None)
        self._parts.pop(key, None)
        self._split.pop(key, None)

    def set(self, key: str, value: Any) -> None:
        self.base.set(key, value)
        self._forget(key)

    def set_parts(self, key: str, parts: Sequence[Any]) -> None:
        self.base.set_parts(key, parts)
        self._forget(key)

    def erase(self, key: str) -> None:
        self.base.erase(key)
        self._forget(key)

    def list(self) -> Iterator[str]:
        return self.base.list()

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return self.base.list_prefix(prefix)

    def with_read_only(self, read_only: bool = True) -> Store:
        return self.base.with_read_only(read_only)

    def __repr__(self) -> str:
        return f"StagedStore({self.base!r}, {len(self._whole) + len(self._parts)} keys staged)"


# ---------------------------------------------------------------------------- fetching
async def _stage_whole(staged: StagedStore, key: str) -> None:
    buf = await staged.source.aget(key)
    view = None if buf is None else byte_view(buf)
    staged._whole[key] = view
    staged.nbytes += 0 if view is None else len(view)


def _layout_key(io: Any) -> tuple[Any, ...]:
    lay = io.layout
    return (io.sharding.index_location, lay.index_nbytes, lay.n, tuple(lay.chunk_shape), tuple(lay.chunks_per_shard))


async def _shard_index(staged: StagedStore, io: Any, key: str, cache: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    """``(raw, offs, nb, data_end)`` of shard ``key`` (from ``cache`` = ``(IndexCache, token)``
    or by one request), None when the shard is absent."""
    codec, lay = io.sharding, io.layout
    lk = _layout_key(io)
    if cache is not None:
        hit: tuple[Any, ...] | None = cache[0].get(cache[1], key, lk)
        if hit is not None:
            return hit
    kind, nidx = codec.index_range(lay)
    buf = await staged.source.aget(key, SuffixByteRequest(nidx) if kind == "suffix" else RangeByteRequest(0, nidx))
    if buf is None:
        return None
    raw = byte_view(buf)
    if len(raw) != nidx:
        raise CorruptChunkError(f"shard {key!r}: {len(raw)} bytes where its {nidx}-byte index should be "
                                "(the shard is smaller than its index)")
    offs, nb = codec.decode_index(raw, lay, _UNKNOWN_SIZE, key)
    full = offs != EMPTY
    data_end = int((offs[full] + nb[full]).max()) if full.any() else 0
    entry = (raw, offs, nb, data_end)
    if cache is not None:
        raw = memoryview(bytes(raw))  # the cache keeps its own small copy, not the fetched buffer
        entry = (raw, offs, nb, data_end)
        cache[0].put(cache[1], key, lk, entry, len(raw) + offs.nbytes + nb.nbytes + 200)
    return entry


async def _stage_shard(staged: StagedStore, io: Any, key: str, wanted: list[int], max_gap: int,
                       cache: tuple[Any, ...] | None) -> None:
    """The index of shard ``key`` (one request, or none when cached), then its ``wanted`` inner
    chunks' byte ranges (coalesced here, then by the source) in one ``aget_ranges`` call."""
    index = await _shard_index(staged, io, key, cache)
    if index is None:
        staged._whole[key] = None
        return
    raw, offs, nb, data_end = index
    kind, nidx = io.sharding.index_range(io.layout)
    parts = _Parts(data_end + nidx if kind == "suffix" else max(data_end, nidx), offs, nb)
    parts.add(data_end if kind == "suffix" else 0, raw)
    _order, _read_of, begins, ends = kernels.coalesce_ranges(offs, nb, wanted, max_gap=max_gap)
    spans = list(zip(begins.tolist(), ends.tolist()))
    bufs = await staged.source.aget_ranges(key, spans, max_gap=max_gap) if spans else []
    if bufs is None:  # deleted since its index was read: absent, as a shard without an index
        staged._whole[key] = None
        if cache is not None:
            cache[0].invalidate(cache[1], key)
        return
    if len(bufs) != len(spans):
        raise StoreError(f"shard {key!r}: {len(bufs)} byte ranges came back for {len(spans)} requested")
    for (b, e), got in zip(spans, bufs):
        view = byte_view(got)
        if len(view) != e - b:
            if cache is not None:
                cache[0].invalidate(cache[1], key)
            raise CorruptChunkError(f"shard {key!r}: its index names bytes [{b}, {e}) but only {len(view)} of them "
                                    "came back (an entry points past the end of the shard, or the shard changed)")
        parts.add(b, view)
        staged.nbytes += len(view)
    staged._parts[key] = parts


def check_wanted(io: Any, key: str, flats: Iterable[int]) -> list[int]:
    wanted = sorted({int(f) for f in flats})
    if wanted and (wanted[0] < 0 or wanted[-1] >= io.layout.n):
        raise ValueError(f"inner chunk numbers of shard {key!r} must lie in [0, {io.layout.n})")
    return wanted


_Staged = TypeVar("_Staged", bound=StagedStore)


async def stage(staged: _Staged, io: Any, requests: dict[str, list[int] | None], *,
                max_gap: int = COALESCE_GAP, cache: tuple[Any, ...] | None = None,
                whole_shard: Callable[[str, list[int]], bool] | None = None,
                on_done: Callable[[str], None] | None = None) -> _Staged:
    """Fetch into ``staged``, concurrently, what ``requests`` name for array ``io`` (a
    :class:`~zarrbolt.pipeline.context.ArrayIO`): store key -> None (the whole object) or the
    flat numbers of the inner chunks wanted from that shard (used when ``io.shard_direct``).
    A shard whose inner chunks are all wanted is fetched whole, unless ``whole_shard(key,
    wanted)`` says otherwise.  ``cache``: ``(IndexCache, store token)`` for shard indexes.
    ``on_done(key)`` is called (on the loop) as soon as a key's bytes are staged, so that a
    reader can decode them while the rest arrives.

    At most ``source.concurrency`` jobs run at once.  On the first failure the other jobs are
    cancelled and awaited, then the failure is raised (also when this coroutine is cancelled:
    nothing is left running)."""
    jobs: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
    for key, flats in requests.items():
        if flats is None or not io.shard_direct:
            jobs.append((_stage_whole, (staged, key)))
            continue
        wanted = check_wanted(io, key, flats)
        if len(wanted) == io.layout.n and (whole_shard is None or whole_shard(key, wanted)):
            jobs.append((_stage_whole, (staged, key)))
        elif wanted:
            jobs.append((_stage_shard, (staged, io, key, wanted, max_gap, cache)))
    if not jobs:
        return staged
    sem = asyncio.Semaphore(max(1, int(getattr(staged.source, "concurrency", 32))))

    async def bounded(fn: Any, args: tuple[Any, ...]) -> None:
        async with sem:
            await fn(*args)
        if on_done is not None:
            on_done(args[1] if fn is _stage_whole else args[2])

    tasks = [asyncio.ensure_future(bounded(fn, args)) for fn, args in jobs]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except BaseException:  # cancelled (Ctrl-C in the caller): cancel every job, wait for them
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    for t in tasks:  # the first failure in request order
        if t.done() and not t.cancelled() and (exc := t.exception()) is not None:
            raise exc
    return staged
