"""A shard's index: fetched and validated, from wherever the shard's bytes are.

The index (``codecs/sharding.py`` defines it: ``(offset, nbytes)`` uint64 pairs of the inner
chunks, at the end or the start of the shard, encoded by the index codecs) is read by one request
for its bytes and validated by :func:`decode` (the one place outside the codec that decodes an
index) against the shard's size:

- :func:`fetch`: from a :class:`~zarrbolt.storage.Store` (the shard's size, then the index's byte
  range) or from a local file opened for an update (:class:`~zarrbolt.storage.files.ValueFile`);
- :func:`afetch`: from an async source (remote stores, zarr-python's stores): one suffix (or
  prefix) request, the shard's size unknown, so the index is validated against everything but the
  shard's true end (an inner chunk past that end is reported when its bytes come back short);
  warm indexes come from :data:`INDEX_CACHE` without a request.

The failures, each with one text naming the shard: a shard smaller than its index, a shard that
changed or was truncated while it was read (:func:`changed`), and a malformed index (sizes, bounds,
overlaps, checksum: the codec's CorruptChunkError / ChecksumError).  A missing shard is not a
failure (None); a shard that is there but unreadable, refused or unreachable raises the store's
error.  The local C reads (``csrc/local_io.c``) validate indexes with the same C kernel
(``zb_shard_index_parse``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np

from ... import config
from ...codecs.sharding import EMPTY
from ...errors import CorruptChunkError, StoreError, StoreIOError, StorePermissionError, StoreUnavailableError, SymlinkError
from ...storage import RangeByteRequest, SuffixByteRequest
from ...storage.files import ValueFile

__all__ = ["INDEX_CACHE", "Index", "IndexCache", "afetch", "changed", "decode", "fetch", "request"]

# The shard size an index is validated against when the size is not known (see the module doc).
UNKNOWN_SIZE = 1 << 63


class Index(NamedTuple):
    """A validated shard index: per inner chunk (flat C order) its ``offsets`` and ``nbytes``
    (both 2^64-1 for an empty one), where the inner chunks' bytes end (``data_end``), and the
    ``raw`` index bytes."""

    offsets: np.ndarray
    nbytes: np.ndarray
    data_end: int
    raw: Any


def request(codec: Any, lay: Any) -> Any:
    """The byte request of a shard's index: a suffix (``index_location: "end"``) or a prefix."""
    kind, nbytes = codec.index_range(lay)
    return SuffixByteRequest(nbytes) if kind == "suffix" else RangeByteRequest(0, nbytes)


def changed(key: str) -> CorruptChunkError:
    """The error of a shard whose bytes came back short: it changed or was truncated meanwhile,
    or its index points past its end."""
    return CorruptChunkError(f"shard {key!r} changed or was truncated while being read")


def decode(raw: Any, codec: Any, lay: Any, total: int, key: str) -> Index:
    """Validate the index bytes ``raw`` of shard ``key`` of ``total`` bytes (UNKNOWN_SIZE when not
    known): CorruptChunkError when the shard is smaller than its index, the codec's
    CorruptChunkError / ChecksumError for a malformed index."""
    nidx = lay.index_nbytes
    if len(raw) != nidx or total < nidx:
        size = total if total < nidx else len(raw)
        raise CorruptChunkError(f"shard {key!r}: {size} bytes is smaller than its {nidx}-byte index")
    offs, nb = codec.decode_index(raw, lay, total, key)
    full = offs != EMPTY
    data_end = int((offs[full] + nb[full]).max()) if full.any() else 0
    return Index(offs, nb, data_end, raw)


def fetch(where: Any, key: str, codec: Any, lay: Any) -> Index | None:
    """The validated index of shard ``key`` from ``where``: a Store (its size, then the index's
    byte range: None when the shard does not exist) or an open local file of the shard
    (:class:`~zarrbolt.storage.files.ValueFile`)."""
    kind, nidx = codec.index_range(lay)
    if isinstance(where, ValueFile):  # a local file opened for an update
        total = where.size
        read = (lambda a, b: where.read(b - a, a)) if total >= nidx else None
    else:
        try:
            total = where.getsize(key)
        except (StoreIOError, StorePermissionError, StoreUnavailableError, SymlinkError):
            raise  # there but unreadable, refused, or the store unreachable: not a missing shard
        except StoreError:  # the shard does not exist
            return None
        read = (lambda a, b: where.get(key, (a, b))) if total >= nidx else None
    if read is None:
        return decode(b"", codec, lay, total, key)
    a, b = (total - nidx, total) if kind == "suffix" else (0, nidx)
    raw = read(a, b)
    if raw is None or len(raw) != nidx:
        raise changed(key)
    return decode(raw, codec, lay, total, key)


async def afetch(source: Any, key: str, codec: Any, lay: Any, cache: tuple[IndexCache, Any] | None = None) -> Index | None:
    """The validated index of shard ``key`` from the async ``source`` by one request (see the
    module doc), or from ``cache`` = ``(IndexCache, store token)``; None when the shard is
    absent."""
    lk = layout_key(codec, lay)
    if cache is not None:
        hit: Index | None = cache[0].get(cache[1], key, lk)
        if hit is not None:
            return hit
    buf = await source.aget(key, request(codec, lay))
    if buf is None:
        return None
    raw = _byte_view(buf)
    index = decode(raw, codec, lay, UNKNOWN_SIZE, key)
    if cache is not None:
        # the cache keeps its own small copy of the index bytes, not the fetched buffer
        index = index._replace(raw=memoryview(bytes(raw)))
        cache[0].put(cache[1], key, lk, index, len(raw) + index.offsets.nbytes + index.nbytes.nbytes + 200)
    return index


def _byte_view(buf: Any) -> memoryview:
    mv = buf if isinstance(buf, memoryview) else memoryview(buf)
    if mv.format != "B" or mv.ndim != 1:
        mv = (mv if mv.c_contiguous else memoryview(mv.tobytes())).cast("B")
    return mv.toreadonly()


def layout_key(codec: Any, lay: Any) -> tuple[Any, ...]:
    """What distinguishes the indexes of two layouts of one key in the cache."""
    return (codec.index_location, lay.index_nbytes, lay.n, tuple(lay.chunk_shape), tuple(lay.chunks_per_shard))


# ---------------------------------------------------------------------------- the index cache
class IndexCache:
    """Bounded LRUs of validated shard indexes read from async sources, one per store:
    ``(key, layout) -> Index``, at most ``remote_index_cache`` (config) indexes per store (0 turns
    the cache off) and :data:`MAX_BYTES` bytes in all.  Thread-safe.

    A store is known by its :meth:`~zarrbolt.storage.Store.token` (its location: read-only and
    writable stores over one location share entries).  zarrbolt's writes drop the entries of the
    shards they write or erase (:meth:`invalidate`); a shard rewritten by another program while
    cached is read with the stale index (see docs/cloud.md: turn the cache off, or :meth:`clear`
    it, when others rewrite shards you read)."""

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
        return int(config.get("remote_index_cache"))

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


def cache_of(store: Any) -> tuple[IndexCache, Any] | None:
    """``(INDEX_CACHE, store token)`` for the reads of ``store``, or None when the cache is off."""
    return (INDEX_CACHE, store.token()) if IndexCache.capacity() > 0 else None
