"""Writes to stores with an async source (remote stores).

- Whole chunks and shards: the write planner's ``set`` / ``set_parts`` / ``erase`` calls are
  collected by :class:`RemoteWriteStore` and sent concurrently through the source (``aset`` /
  ``adelete``, at most ``concurrency`` in flight), whenever the collected bytes reach half the
  source's ``max_bytes_in_flight`` and at the end of the write.
- Partial updates (a chunk or shard written in part) read, modify and write the object.  Where
  the store supports conditional writes (``supports_conditional_writes``: S3, GCS, Azure) the
  read gives the object's version (ETag) and the write is made only if the object still has
  that version (``set_if_version``); when another writer got there first
  (:class:`~zarrbolt.errors.ConflictError`) the update is read, modified and tried again, at
  most :data:`RMW_ATTEMPTS` times, then the ConflictError is raised: a concurrent writer's
  update is never lost silently.  In that mode an update that leaves a chunk all fill stores
  the fill chunk (a shard: an index with every entry empty) instead of deleting it, since a
  delete cannot be made conditional.  Stores without conditional writes (HTTP is read-only;
  fsspec filesystems) read, modify and write under a lock of this process
  (:func:`zarrbolt.storage.locks.key_lock`) and send the update at once: the threads of one
  process lose nothing, but several processes writing into one object can.

Every shard written or erased here is dropped from the shard index cache
(:data:`~.staging.INDEX_CACHE`).
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..codecs.sharding import EMPTY
from ..storage import Store
from ..storage._base import ByteRequest, resolve_range
from .staging import INDEX_CACHE, IndexCache

__all__ = ["RMW_ATTEMPTS", "RemoteWriteStore", "conditional_update", "run_projections"]

RMW_ATTEMPTS = 8  # read-modify-write tries of one object under contention
_DELETED = object()


def _conflict_error() -> type[Exception]:
    from .. import errors

    return getattr(errors, "ConflictError", errors.StoreError)


def _joined(parts: Sequence[Any]) -> bytes:
    return b"".join(memoryview(p).cast("B") if not isinstance(p, (bytes, bytearray)) else p for p in parts)


class RemoteWriteStore(Store):
    """The store a remote write goes through: reads and conditional writes go to ``base``
    directly; ``set`` / ``set_parts`` / ``erase`` are collected and sent concurrently by
    :meth:`flush` (called when the collected bytes reach ``limit`` and at the end)."""

    def __init__(self, base: Store, source: Any):
        super().__init__(read_only=base.read_only)
        self.base = base
        self.source = source
        self.token = IndexCache.token(base)
        self.supports_conditional_writes = bool(getattr(base, "supports_conditional_writes", False))
        self.limit = max(1, int(getattr(source, "max_bytes_in_flight", 256 << 20)) // 2)
        self._pending: dict[str, Any] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def async_source(self) -> None:
        return None

    # ------------------------------------------------------------------ reads: the base's
    def get(self, key: str, byte_range: ByteRequest = None) -> Any:
        with self._lock:
            v = self._pending.get(key)
        if v is not None:  # written by this write: not yet sent
            if v is _DELETED:
                return None
            return v if byte_range is None else memoryview(v)[slice(*resolve_range(byte_range, len(v)))]
        return self.base.get(key, byte_range)

    def get_versioned(self, key: str) -> tuple[Any, str | None]:
        return self.base.get_versioned(key)

    def exists(self, key: str) -> bool:
        return self.base.exists(key)

    def getsize(self, key: str) -> int:
        return self.base.getsize(key)

    def list(self) -> Iterator[str]:
        return self.base.list()

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return self.base.list_prefix(prefix)

    # ------------------------------------------------------------------ writes
    def set_if_version(self, key: str, value: Any, version: str | None) -> None:
        try:
            self.base.set_if_version(key, value, version)
        finally:
            INDEX_CACHE.invalidate(self.token, key)

    def _record(self, key: str, value: Any, nbytes: int) -> None:
        self._check_writable()
        flush = False
        with self._lock:
            self._pending[key] = value
            self._bytes += nbytes
            flush = self._bytes >= self.limit
        INDEX_CACHE.invalidate(self.token, key)
        if flush:
            self.flush()

    def set(self, key: str, value: Any) -> None:
        data = _joined([value])
        self._record(key, data, len(data))

    def set_parts(self, key: str, parts: Sequence[Any]) -> None:
        data = _joined(parts)
        self._record(key, data, len(data))

    def erase(self, key: str) -> None:
        self._record(key, _DELETED, 0)

    def erase_values(self, keys: Iterable[str]) -> None:
        for k in keys:
            self.erase(k)

    def send_now(self, key: str) -> None:
        """Send the collected write of ``key`` (if any) at once, through the base store."""
        with self._lock:
            value = self._pending.pop(key, None)
            if value is not None and value is not _DELETED:
                self._bytes -= len(value)
        if value is None:
            return
        try:
            if value is _DELETED:
                self.base.erase(key)
            else:
                self.base.set(key, value)
        finally:
            INDEX_CACHE.invalidate(self.token, key)

    def flush(self) -> None:
        """Send what is collected, concurrently; every operation is attempted, then the first
        failure (in key order) is raised."""
        with self._lock:
            items, self._pending, self._bytes = sorted(self._pending.items()), {}, 0
        if not items:
            return
        src = self.source

        async def send() -> list[Any]:
            sem = asyncio.Semaphore(max(1, int(getattr(src, "concurrency", 32))))

            async def one(key: str, value: Any) -> None:
                async with sem:
                    if value is _DELETED:
                        await src.adelete(key)
                    else:
                        await src.aset(key, value)

            return await asyncio.gather(*[one(k, v) for k, v in items], return_exceptions=True)

        results = src.run(send())
        for key, _ in items:
            INDEX_CACHE.invalidate(self.token, key)
        for r in results:
            if isinstance(r, BaseException):
                raise r

    def with_read_only(self, read_only: bool = True) -> Store:
        return self.base.with_read_only(read_only)

    def __repr__(self) -> str:
        return f"RemoteWriteStore({self.base!r})"


# ---------------------------------------------------------------------------- read-modify-write
def empty_shard(io: Any) -> bytes:
    """A shard with no inner chunk: its index alone, every entry empty."""
    lay = io.layout
    index = np.full(tuple(lay.chunks_per_shard) + (2,), EMPTY, dtype=np.uint64)
    return _joined([lay.index.encode(index)])


def _updated(w: Any, p: Any, key: str, src: Any, data: Any) -> bytes | None:
    """The new stored value of chunk / shard ``key`` (bytes ``data`` now, None: absent) after
    writing ``src`` at ``p.chunk_selection``; None when nothing is to be stored."""
    io = w.io
    if w.sharding is not None:
        if data is not None:
            enc = w.sharding.update_shard(data, io.bound.ab_spec, p.chunk_selection, src, key, w.inner_is_fill,
                                          parts=True, encoder=w.inner_encoder)
        else:
            chunk = np.full(io.chunk_shape, io.fill, dtype=io.dtype)
            chunk[p.chunk_selection] = src
            touched = w.sharding.touched_inner_chunks(io.layout, p.chunk_selection)
            enc = w.sharding.encode_shard(chunk, io.bound.ab_spec, is_fill=w.inner_is_fill, parts=True,
                                          encoder=w.inner_encoder, touched=touched)
        if enc is None:
            return None if data is None else empty_shard(io)
        return _joined(enc)
    if data is None:
        chunk = np.full(io.chunk_shape, io.fill, dtype=io.dtype)
    else:
        chunk = np.array(io.decode_chunk(data, key), copy=True)
    chunk[p.chunk_selection] = src
    if data is None and not w.write_empty and w.is_fill(chunk):
        return None
    return _joined([io.bound.encode(chunk)])


def conditional_update(w: Any, p: Any, key: str, src: Any) -> None:
    """Read-modify-write of chunk / shard ``key`` guarded by its version (see the module doc)."""
    store = w.io.store
    conflict = _conflict_error()
    for attempt in range(RMW_ATTEMPTS):
        data, version = store.get_versioned(key)
        value = _updated(w, p, key, src, data)
        if value is None:
            return
        try:
            store.set_if_version(key, value, version if data is not None else None)
            return
        except conflict as e:
            if attempt + 1 == RMW_ATTEMPTS:
                raise conflict(f"{key!r} was changed by another writer {RMW_ATTEMPTS} times while this write "
                               f"updated it; giving up: {e}") from e
            time.sleep(random.uniform(0, 0.01 * (2 ** attempt)))


def run_projections(run: Any, projections: Sequence[Any], threads: int) -> None:
    """``run([p])`` for every projection on up to ``threads`` threads (remote writes wait on the
    network, not the CPU).  On the first failure (or Ctrl-C in the calling thread) the
    projections not started are dropped, the running ones finish, and the failure is raised."""
    n = len(projections)
    if n <= 1 or threads <= 1:
        run(list(projections))
        return
    ex = ThreadPoolExecutor(max_workers=min(threads, n), thread_name_prefix="zarrbolt-rwrite")
    try:
        futs = [ex.submit(run, [p]) for p in projections]
        for f in futs:
            f.result()
    except BaseException:
        ex.shutdown(wait=True, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
