"""zarr-python 3 stores seen as zarrbolt :class:`~zarrbolt.storage.Store` s, so that zarrbolt's read
and write planners run on them.

- :func:`native_store`: zarr-python's ``LocalStore`` becomes a zarrbolt ``LocalStore`` over the
  same directory (the C file batches read and write its files directly), its ``MemoryStore`` a
  zarrbolt view over the very same dict of zarr ``Buffer`` s (:class:`ZarrMemoryView`), and its
  ``ObjectStore`` (obstore: S3, GCS, Azure) a zarrbolt
  :class:`~zarrbolt.storage.ObjectStore` over the same obstore store, whose partial updates are
  conditional on the object's ETag; None for every other store.
- :class:`LoopBridge`: any zarr-python store, its coroutines run on the event loop that owns it
  from the planner's worker threads (never from the loop's own thread).

A write's stores are collected by zarrbolt's :class:`~zarrbolt.storage.write_behind.WriteBehindStore`
over a bridge (:func:`~.staging.deferred_store`) and sent together, concurrently, on the loop.

Store failures come out as :class:`~zarrbolt.errors.StoreError` naming the key; a zarr-python
store that reports a missing key (None, or FileNotFoundError) reads as missing here too.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
from collections import OrderedDict
from collections.abc import Coroutine, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .._threads import LazyExecutor
from ..errors import StoreError, ZarrboltError
from .. import config as zb_config
from ..storage import LocalStore, Store
from ..storage._base import (
    check_offset,
    ByteRequest,
    InMemoryReads,
    OffsetByteRequest,
    RangeByteRequest,
    SuffixByteRequest,
    check_key,
    check_prefix,
    check_ranges,
    normalize_range,
    writable_view,
)

__all__ = ["LoopBridge", "ZarrMemoryView", "native_store", "run_in_worker", "store_concurrency"]


# ---------------------------------------------------------------------------- helpers
def store_concurrency(concurrency: int | None = None) -> int:
    """How many store requests may be in flight at once: ``concurrency``, else zarr-python's
    ``async.concurrency`` (at least 1)."""
    if concurrency is None:
        import zarr

        concurrency = zarr.config.get("async.concurrency") or 10
    return max(1, int(concurrency))


def _prototype() -> Any:
    from zarr.core.buffer.core import default_buffer_prototype

    return default_buffer_prototype()


def _byte_view(arr: Any) -> memoryview:
    """A flat, read-only byte view of a numpy array (or any contiguous bytes-like), no copy."""
    mv = memoryview(arr)
    if mv.format != "B" or mv.ndim != 1:
        if not mv.c_contiguous:
            mv = memoryview(mv.tobytes())
        mv = mv.cast("B")
    return mv.toreadonly()


def zarr_read_only(zstore: Any) -> bool:
    """Whether the zarr store ``zstore`` is read-only: only a real ``True`` says so (a test double's
    attribute is a truthy mock object)."""
    return getattr(zstore, "read_only", False) is True


def _buffer_view(buf: Any) -> memoryview:
    """The bytes of a zarr ``Buffer`` as a flat read-only view (no copy for host buffers; a
    plain bytes-like value, as a user's own dict may hold, is taken as it is)."""
    as_numpy = getattr(buf, "as_numpy_array", None)
    try:
        return _byte_view(as_numpy() if as_numpy is not None else buf)
    except TypeError:
        raise StoreError(f"a zarr store returned {type(buf).__name__}, not a Buffer or bytes") from None


def _joined(parts: Sequence[Any]) -> np.ndarray:
    """A fresh uint8 array holding the concatenation of the bytes-like ``parts`` (one copy)."""
    views = [_byte_view(p) for p in parts]
    out = np.empty(sum(len(v) for v in views), dtype=np.uint8)
    pos = 0
    for v in views:
        out[pos: pos + len(v)] = v
        pos += len(v)
    return out


def _zarr_range(byte_range: ByteRequest) -> Any:
    """zarrbolt's byte request as zarr-python's (None: the whole value)."""
    from zarr.abc import store as zs

    r = normalize_range(byte_range)
    if r is None:
        return None
    if isinstance(r, RangeByteRequest):
        return zs.RangeByteRequest(r.start, r.end)
    if isinstance(r, OffsetByteRequest):
        return zs.OffsetByteRequest(r.offset)
    return zs.SuffixByteRequest(r.suffix)


def _is_empty_request(byte_range: ByteRequest) -> bool:
    """Requests for no bytes at all (zarr-python's stores may fail on them, or, for a suffix of
    0 bytes, return the whole value)."""
    r = normalize_range(byte_range)
    if isinstance(r, RangeByteRequest):
        return r.end == r.start
    return isinstance(r, SuffixByteRequest) and r.suffix == 0


def _copy_into(mv: memoryview, src: memoryview) -> int:
    mv[: len(src)] = src
    return len(src)


# ---------------------------------------------------------------------------- worker threads
_WORKERS = LazyExecutor(64, "zarrbolt-planner")


async def run_in_worker(fn: Any, /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a worker thread of zarrbolt's own (with the caller's context
    variables, as ``asyncio.to_thread``), awaited.

    Use it, not ``asyncio.to_thread``, for planner calls that reach a :class:`LoopBridge`: the
    zarr-python store's coroutines may themselves need the loop's default executor (zarr's
    ``LocalStore`` and ``ZipStore`` read files with ``asyncio.to_thread``, and zarr-python sizes
    that executor by ``threading.max_workers``), so planner threads blocked there on the
    bridge would wait for a thread that never comes free."""
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_WORKERS.get(), call)


# ---------------------------------------------------------------------------- native stores
_LOCAL_CACHE: OrderedDict[tuple[str, bool], LocalStore] = OrderedDict()
_LOCAL_CACHE_MAX = 64
_LOCAL_LOCK = threading.Lock()


def _native_local(zstore: Any) -> LocalStore | None:
    root = os.fspath(zstore.root)
    if not isinstance(root, str) or not root or "://" in root or root[:5].lower() == "file:":
        return None  # zarrbolt would read it as a URI: not the same directory
    # zarr-python joins relative roots to the working directory at each access; key by the
    # directory they name now
    key = (os.path.abspath(root), bool(zstore.read_only))
    with _LOCAL_LOCK:
        store = _LOCAL_CACHE.get(key)
        if store is None:
            store = _LOCAL_CACHE[key] = LocalStore(key[0], read_only=key[1])
            while len(_LOCAL_CACHE) > _LOCAL_CACHE_MAX:
                _LOCAL_CACHE.popitem(last=False)
        else:
            _LOCAL_CACHE.move_to_end(key)
    return store


_MEMORY_METHODS = ("get", "set", "delete", "exists", "list", "list_prefix", "set_if_not_exists")


def _native_memory(zstore: Any) -> ZarrMemoryView | None:
    from zarr.storage import GpuMemoryStore, ManagedMemoryStore, MemoryStore

    if isinstance(zstore, GpuMemoryStore) or getattr(zstore, "_store_dict", None) is None:
        return None  # GPU buffers would be copied to the host on every read
    base: type = ManagedMemoryStore if isinstance(zstore, ManagedMemoryStore) else MemoryStore
    for name in _MEMORY_METHODS:  # a subclass that changes how values are kept is not a plain dict
        if getattr(type(zstore), name) is not getattr(base, name):
            return None
    prefix = ""
    if base is ManagedMemoryStore and zstore.path:
        prefix = zstore.path.strip("/") + "/"
    return ZarrMemoryView(zstore._store_dict, prefix=prefix, read_only=zstore.read_only)


_OBJECT_CACHE: OrderedDict[tuple[int, bool, int], tuple[Any, Store]] = OrderedDict()


def _native_object(zstore: Any) -> Store | None:
    from ..storage.object_store import ObjectStore, is_obstore_store

    inner = getattr(zstore, "store", None)
    if not is_obstore_store(inner):
        return None
    # zarr-python's own settings: its mode, and its async.concurrency as the requests in flight
    key = (id(inner), zarr_read_only(zstore), store_concurrency())
    with _LOCAL_LOCK:
        hit = _OBJECT_CACHE.get(key)
        if hit is not None and hit[0] is inner:
            _OBJECT_CACHE.move_to_end(key)
            return hit[1]
        store = ObjectStore(inner, read_only=key[1], concurrency=key[2])
        _OBJECT_CACHE[key] = (inner, store)  # (the obstore store kept: its id stays its own)
        while len(_OBJECT_CACHE) > _LOCAL_CACHE_MAX:
            _OBJECT_CACHE.popitem(last=False)
    return store


def native_store(zstore: Any) -> Store | None:
    """zarrbolt's native store for the zarr-python store ``zstore``, or None.

    ``zarr.storage.LocalStore`` (exactly that class) gives a zarrbolt
    :class:`~zarrbolt.storage.LocalStore` over the same root, cached per root directory and
    mode; ``MemoryStore`` (and ``ManagedMemoryStore``, and subclasses that keep its methods)
    gives a :class:`ZarrMemoryView` over the same dict; ``ObjectStore`` (exactly that class)
    gives a :class:`~zarrbolt.storage.ObjectStore` over the same obstore store (its mode, and
    zarr-python's ``async.concurrency`` as its requests in flight), cached per obstore store:
    reads and writes go through zarrbolt's async source, and a write into part of a chunk or
    shard is conditional on the object's ETag on S3, GCS and Azure, so that writers in several
    processes lose no update (a store without conditional writes stays last writer wins).
    Every other store (wrappers, fsspec, zip files, GPU memory) gives None: use
    :class:`LoopBridge`."""
    from zarr.storage import LocalStore as ZLocalStore, MemoryStore as ZMemoryStore, ObjectStore as ZObjectStore

    if type(zstore) is ZLocalStore:
        return _native_local(zstore)
    if isinstance(zstore, ZMemoryStore):
        return _native_memory(zstore)
    if type(zstore) is ZObjectStore:
        return _native_object(zstore)
    return None


class ZarrMemoryView(InMemoryReads, Store):
    """A zarrbolt Store over the dict of a zarr-python ``MemoryStore`` (values: zarr ``Buffer`` s).

    Reads return zero-copy read-only views of the stored buffers; writes store new host
    buffers made by zarr-python's default buffer prototype (so zarr-python reads them as its
    own), each holding a private copy of the value.  ``prefix`` (``"path/"``) is prepended to
    every key, as ``ManagedMemoryStore`` does with its ``path``."""

    def __init__(self, store_dict: Any, *, prefix: str = "", read_only: bool = False):
        super().__init__(read_only=read_only)
        self._dict = store_dict
        self._prefix = prefix

    def _value(self, key: str) -> memoryview | None:
        check_key(key)
        buf = self._dict.get(self._prefix + key)
        return None if buf is None else _buffer_view(buf)

    def _put(self, key: str, arr: np.ndarray) -> None:
        self._check_writable()
        check_key(key)
        self._dict[self._prefix + key] = _prototype().buffer.from_bytes(arr)

    def exists(self, key: str) -> bool:
        check_key(key)
        return (self._prefix + key) in self._dict

    # ------------------------------------------------------------------ writing
    def set(self, key: str, value: Any) -> None:
        self._put(key, _joined([value]))

    def set_parts(self, key: str, parts: Sequence[Any]) -> None:
        self._put(key, _joined(parts))

    def set_if_not_exists(self, key: str, value: Any) -> None:
        self._check_writable()
        check_key(key)
        self._dict.setdefault(self._prefix + key, _prototype().buffer.from_bytes(_joined([value])))

    def erase(self, key: str) -> None:
        self._check_writable()
        check_key(key)
        self._dict.pop(self._prefix + key, None)

    # ------------------------------------------------------------------ listing
    def list(self) -> Iterator[str]:
        p = self._prefix
        return iter([k[len(p):] for k in list(self._dict) if k.startswith(p)])

    def list_prefix(self, prefix: str) -> Iterator[str]:
        check_prefix(prefix)
        p = self._prefix
        full = p + prefix
        return iter([k[len(p):] for k in list(self._dict) if k.startswith(full)])

    # ------------------------------------------------------------------ misc
    def with_read_only(self, read_only: bool = True) -> ZarrMemoryView:
        return ZarrMemoryView(self._dict, prefix=self._prefix, read_only=read_only)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ZarrMemoryView) and other._dict is self._dict and other._prefix == self._prefix
                and other.read_only == self.read_only)

    def __hash__(self) -> int:
        return hash((id(self._dict), self._prefix, self.read_only))

    def __repr__(self) -> str:
        return f"ZarrMemoryView(<dict {id(self._dict):#x}>{', ' + repr(self._prefix) if self._prefix else ''}" \
               f"{', read_only' if self.read_only else ''})"


# ---------------------------------------------------------------------------- any zarr-python store
class LoopBridge(Store):
    """Any zarr-python store as a zarrbolt Store: each call runs the store's coroutines on
    ``loop`` (the running event loop that owns the store) and waits for them.

    Call it only from other threads (zarrbolt's planner runs in ``asyncio.to_thread``); a call
    from the loop's own thread, or on a loop that is not running, raises StoreError instead of
    waiting forever.  At most ``concurrency`` requests (zarr-python's ``async.concurrency`` by
    default) of this bridge are in flight at once, across all calling threads."""

    def __init__(self, zstore: Any, loop: asyncio.AbstractEventLoop, *, concurrency: int | None = None):
        super().__init__(read_only=zarr_read_only(zstore))
        self.zstore = zstore
        self.loop = loop
        self._concurrency = store_concurrency(concurrency)
        # the AsyncSource protocol: zarr-python's stores bound their own memory; the planners
        # window what they stage by this (config ``remote_bytes_in_flight``)
        self._max_bytes = int(zb_config.get("remote_bytes_in_flight"))
        self._sem: asyncio.Semaphore | None = None
        self._sem_loop: asyncio.AbstractEventLoop | None = None

    @property
    def concurrency(self) -> int:
        """Requests of this bridge in flight at once, at most (the AsyncSource protocol)."""
        return self._concurrency

    @property
    def max_bytes_in_flight(self) -> int:
        """Bytes a staged read or a write's collected stores hold at once (the AsyncSource protocol)."""
        return self._max_bytes

    # ------------------------------------------------------------------ running coroutines
    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coro`` on the loop and return its result (from a thread other than the loop's)."""
        loop = self.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop or loop.is_closed() or not loop.is_running():
            coro.close()
            why = "from the event loop's own thread" if running is loop else "while its event loop is not running"
            raise StoreError(f"{self!r} cannot be used {why}")
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def semaphore(self) -> asyncio.Semaphore:
        """The bound on this bridge's requests in flight (made on the running loop at first use,
        and again should the bridge be used on another loop)."""
        loop = asyncio.get_running_loop()
        if self._sem is None or self._sem_loop is not loop:
            self._sem, self._sem_loop = asyncio.Semaphore(self.concurrency), loop
        return self._sem

    async def _call(self, what: str, key: str, fn: Any, *args: Any) -> Any:
        async with self.semaphore():
            try:
                return await fn(*args)
            except ZarrboltError:
                raise
            except FileNotFoundError:
                if what == "read":
                    return None
                raise StoreError(f"key {key!r} not found in {self.zstore!r}") from None
            except Exception as e:
                raise StoreError(f"cannot {what} {key!r} {'in' if what != 'read' else 'from'} {self.zstore!r}: "
                                 f"{type(e).__name__}: {e}") from e

    async def aget(self, key: str, byte_range: ByteRequest = None, prototype: Any = None) -> memoryview | None:
        """The bytes of ``key`` (or of part of it) as a read-only view of the zarr ``Buffer``
        the store returned (no copy), None when it is absent."""
        if prototype is None:
            prototype = _prototype()
        buf = await self._call("read", key, self.zstore.get, key, prototype, _zarr_range(byte_range))
        return None if buf is None else _buffer_view(buf)

    async def aget_ranges(self, key: str, ranges: Sequence[tuple[int, int]], *,
                          max_gap: int) -> list[memoryview] | None:
        """Byte ranges ``[b, e)`` of ``key`` (views of zarr ``Buffer`` s), by one call of the store's own
        ``get_ranges`` (its coalescing and concurrency; stores with a ranged backend override it),
        or by concurrent ``get``s where the store has none; None when ``key`` is absent."""
        get_ranges = getattr(self.zstore, "get_ranges", None)
        if get_ranges is None:
            got = await self._amany(key, [RangeByteRequest(b, e) for b, e in ranges])
            return None if any(g is None for g in got) else got

        async def collect() -> list[Any] | None:
            out: list[Any] = [None] * len(ranges)
            try:
                async for batch in get_ranges(key, [_zarr_range(RangeByteRequest(b, e)) for b, e in ranges],
                                              prototype=_prototype(), max_concurrency=self.concurrency,
                                              max_gap_bytes=max_gap):
                    for i, buf in batch:
                        out[i] = buf
            except BaseExceptionGroup as eg:  # noqa: F821 (zarr-python needs Python >= 3.11)
                absent, rest = eg.split((FileNotFoundError, asyncio.CancelledError))
                if rest is None and absent is not None and absent.subgroup(FileNotFoundError) is not None:
                    return None  # the key is absent (deleted since its index was read)
                raise
            return None if any(b is None for b in out) else [_buffer_view(b) for b in out]

        return await self._call("read", key, collect)

    async def aset(self, key: str, value: Any) -> None:
        """Store the bytes-like ``value`` (wrapped, not copied) under ``key``."""
        if zarr_read_only(self.zstore):
            from ..errors import ReadOnlyError

            raise ReadOnlyError(f"{self.zstore!r} is read-only (writing {key!r})")
        await self._call("write", key, self.zstore.set, key, _prototype().buffer.from_bytes(value))

    async def adelete(self, key: str) -> None:
        if zarr_read_only(self.zstore):
            from ..errors import ReadOnlyError

            raise ReadOnlyError(f"{self.zstore!r} is read-only (deleting {key!r})")
        await self._call("delete", key, self.zstore.delete, key)

    async def _amany(self, key: str, requests: Sequence[ByteRequest]) -> list[Any]:
        return list(await asyncio.gather(*[self.aget(key, r) for r in requests]))

    async def _alist(self, prefix: str) -> list[str]:
        async def collect() -> list[str]:
            return [k async for k in self.zstore.list_prefix(prefix)]

        return await self._call("list", prefix or "/", collect)

    # ------------------------------------------------------------------ reading
    def get(self, key: str, byte_range: ByteRequest = None) -> memoryview | None:  # type: ignore[override]  # a view
        check_key(key)
        if _is_empty_request(byte_range):
            return memoryview(b"") if self.exists(key) else None
        buf = self.run(self.aget(key, byte_range))
        return None if buf is None else _buffer_view(buf)

    def get_partial_values(self, key_ranges: Iterable[tuple[str, ByteRequest]]) -> list[memoryview | None]:  # type: ignore[override]
        """All the requests concurrently."""
        items = [(check_key(k), r) for k, r in key_ranges]
        if any(_is_empty_request(r) for _, r in items):
            return [self.get(k, r) for k, r in items]

        async def many() -> list[Any]:
            return list(await asyncio.gather(*[self.aget(k, r) for k, r in items]))

        return [None if b is None else _buffer_view(b) for b in self.run(many())]

    def get_into(self, key: str, buffer: Any, offset: int = 0) -> int | None:
        offset = check_offset(offset)
        mv = writable_view(buffer)
        data = self.get(key, RangeByteRequest(offset, offset + len(mv)))
        return None if data is None else _copy_into(mv, data[: len(mv)])

    def read_into(self, key: str, buffer: Any) -> int | None:
        mv = writable_view(buffer)
        data = self.get(key)
        if data is None:
            return None
        if len(data) > len(mv):
            return -len(data)
        return _copy_into(mv, data)

    def get_ranges_into(self, key: str, ranges: Any, buffer: Any) -> list[int] | None:
        """The ranges fetched concurrently, then copied one after another into ``buffer``."""
        check_key(key)
        mv = writable_view(buffer)
        ranges = check_ranges(ranges, len(mv))
        nonempty = [(a, b) for a, b in ranges if b > a]
        if not nonempty:
            return [0] * len(ranges) if self.exists(key) else None
        bufs = iter(self.run(self._amany(key, [RangeByteRequest(a, b) for a, b in nonempty])))
        counts: list[int] = []
        pos = 0
        for a, b in ranges:
            if b > a:
                buf = next(bufs)
                if buf is None:
                    return None
                counts.append(_copy_into(mv[pos: pos + b - a], _buffer_view(buf)[: b - a]))
            else:
                counts.append(0)
            pos += b - a
        return counts

    def exists(self, key: str) -> bool:
        check_key(key)
        return bool(self.run(self._call("check", key, self.zstore.exists, key)))

    def getsize(self, key: str) -> int:
        check_key(key)
        return int(self.run(self._call("size", key, self.zstore.getsize, key)))

    # ------------------------------------------------------------------ writing
    def set(self, key: str, value: Any) -> None:
        self._check_writable()
        check_key(key)
        self.run(self.aset(key, _joined([value])))

    def set_parts(self, key: str, parts: Sequence[Any]) -> None:
        self._check_writable()
        check_key(key)
        self.run(self.aset(key, _joined(parts)))

    def erase(self, key: str) -> None:
        self._check_writable()
        check_key(key)
        self.run(self.adelete(key))

    # ------------------------------------------------------------------ listing
    def list(self) -> Iterator[str]:
        return iter(self.run(self._alist("")))

    def list_prefix(self, prefix: str) -> Iterator[str]:
        check_prefix(prefix)
        return iter([k for k in self.run(self._alist(prefix)) if k.startswith(prefix)])

    # ------------------------------------------------------------------ misc
    def with_read_only(self, read_only: bool = True) -> LoopBridge:
        return LoopBridge(self.zstore.with_read_only(read_only), self.loop, concurrency=self.concurrency)

    def __repr__(self) -> str:
        return f"LoopBridge({self.zstore!r})"
