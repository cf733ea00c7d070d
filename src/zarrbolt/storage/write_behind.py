"""Writes collected in memory and sent together, concurrently, through an async source.

A write to a remote store (or to a zarr-python store through the codec pipeline) stores many
chunks or shards; sending each one as the planner makes it would wait for one request at a time.
:class:`WriteBehindStore` records the planner's ``set`` / ``set_parts`` / ``erase`` calls (each
value copied: planners reuse their buffers) and sends them through ``source`` (``aset`` /
``adelete``, at most ``source.concurrency`` in flight) when the recorded bytes reach ``limit``
and whenever :meth:`~WriteBehindStore.flush` is called (at the end of a write; for one key, when a
partial update must be visible before its lock is released).  Reads, listings and sizes see the
recorded writes; everything else (conditional writes, versions, locks, the store's identity) is
``base``'s, the store the writes are for.

Every recorded operation is attempted by a flush; those that succeeded are forgotten, the first
failure (in key order) is raised and the failed ones stay recorded.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ..errors import StoreError
from ._base import (ByteRequest, Store, as_byte_view, check_key, check_offset, check_prefix, check_ranges, resolve_range,
                    writable_view)

__all__ = ["WriteBehindStore"]

_DELETED = object()


def _joined(parts: Sequence[Any]) -> bytes:
    return b"".join(as_byte_view(p) for p in parts)


def _copy_into(mv: memoryview, src: Any) -> int:
    n = len(src)
    mv[:n] = src
    return n


class WriteBehindStore(Store):
    """``base``'s data, with writes recorded here and sent through ``source`` (an
    :class:`~zarrbolt.storage._async.AsyncSource` that writes to the same data) by :meth:`flush`
    or :meth:`aflush`, and automatically once ``limit`` bytes are recorded (None: only then).
    ``on_write(key)`` is called whenever a write of ``key`` is recorded or sent (e.g. to drop a
    cached shard index)."""

    def __init__(self, base: Store, source: Any, *, limit: int | None = None,
                 on_write: Callable[[str], None] | None = None):
        super().__init__(read_only=base.read_only)
        self.base = base
        self.source = source
        self.limit = limit
        self.on_write = on_write
        self.supports_conditional_writes = bool(base.supports_conditional_writes)
        self._pending: dict[str, Any] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def async_source(self) -> None:
        return None  # (the planners write through this store, not past it)

    def _recorded(self, key: str) -> tuple[bool, Any]:
        """``(True, value or None when deleted)`` for a key written or deleted here, else
        ``(False, None)``."""
        check_key(key)
        v = self._pending.get(key)
        if v is None:
            return False, None
        return True, (None if v is _DELETED else memoryview(v))

    @property
    def pending(self) -> dict[str, Any]:
        """The recorded operations: key -> value (bytes) or the deletion marker."""
        with self._lock:
            return dict(self._pending)

    # ------------------------------------------------------------------ reading
    def get(self, key: str, byte_range: ByteRequest = None) -> Any:
        hit, v = self._recorded(key)
        if not hit:
            return self.base.get(key, byte_range)
        if v is None or byte_range is None:
            return v
        a, b = resolve_range(byte_range, len(v))
        return v[a:b]

    def get_partial_values(self, key_ranges: Iterable[tuple[str, ByteRequest]]) -> list[Any]:
        items = list(key_ranges)
        if not any(self._recorded(k)[0] for k, _ in items):
            return self.base.get_partial_values(items)
        return [self.get(k, r) for k, r in items]

    def get_into(self, key: str, buffer: Any, offset: int = 0) -> int | None:
        hit, v = self._recorded(key)
        if not hit:
            return self.base.get_into(key, buffer, offset)
        offset = check_offset(offset)
        mv = writable_view(buffer)
        return None if v is None else _copy_into(mv, v[offset: offset + len(mv)])

    def read_into(self, key: str, buffer: Any) -> int | None:
        hit, v = self._recorded(key)
        if not hit:
            return self.base.read_into(key, buffer)
        mv = writable_view(buffer)
        if v is None:
            return None
        return -len(v) if len(v) > len(mv) else _copy_into(mv, v)

    def get_ranges_into(self, key: str, ranges: Any, buffer: Any) -> list[int] | None:
        hit, v = self._recorded(key)
        if not hit:
            return self.base.get_ranges_into(key, ranges, buffer)
        mv = writable_view(buffer)
        ranges = check_ranges(ranges, len(mv))
        if v is None:
            return None
        counts, pos = [], 0
        for a, b in ranges:
            counts.append(_copy_into(mv[pos: pos + b - a], v[a:b]))
            pos += b - a
        return counts

    def get_versioned(self, key: str) -> tuple[Any, str | None]:
        return self.base.get_versioned(key)

    def exists(self, key: str) -> bool:
        hit, v = self._recorded(key)
        return (v is not None) if hit else self.base.exists(key)

    def getsize(self, key: str) -> int:
        hit, v = self._recorded(key)
        if not hit:
            return self.base.getsize(key)
        if v is None:
            raise StoreError(f"key {key!r} not found in {self!r} (deleted)")
        return len(v)

    # ------------------------------------------------------------------ writing
    def _record(self, key: str, value: Any) -> None:
        self._check_writable()
        check_key(key)
        with self._lock:
            old = self._pending.get(key)
            if old is not None and old is not _DELETED:
                self._bytes -= len(old)
            self._pending[key] = value
            if value is not _DELETED:
                self._bytes += len(value)
            full = self.limit is not None and self._bytes >= self.limit
        if self.on_write is not None:
            self.on_write(key)
        if full:
            self.flush()

    def set(self, key: str, value: Any) -> None:
        self._record(key, _joined([value]))

    def set_parts(self, key: str, parts: Sequence[Any]) -> None:
        self._record(key, _joined(parts))

    def erase(self, key: str) -> None:
        self._record(key, _DELETED)

    def erase_values(self, keys: Iterable[str]) -> None:
        for k in [check_key(k) for k in keys]:
            self.erase(k)

    def erase_prefix(self, prefix: str) -> None:
        self._check_writable()
        for k in list(self.list_prefix(prefix)):
            self._record(k, _DELETED)

    def set_if_version(self, key: str, value: Any, version: str | None) -> None:
        try:
            self.base.set_if_version(key, value, version)
        finally:
            if self.on_write is not None:
                self.on_write(key)

    # ------------------------------------------------------------------ listing
    def list(self) -> Iterator[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        check_prefix(prefix)
        pending = self.pending
        keys = [k for k in self.base.list_prefix(prefix) if k not in pending]
        keys += [k for k, v in pending.items() if v is not _DELETED and k.startswith(prefix)]
        return iter(keys)

    # ------------------------------------------------------------------ sending
    def flush(self, keys: Iterable[str] | None = None) -> None:
        """Send the recorded writes of ``keys`` (None: all) now, from a thread other than the
        source's event loop (see the module doc for failures)."""
        self.source.run(self.aflush(keys))

    async def aflush(self, keys: Iterable[str] | None = None) -> None:
        """:meth:`flush`, awaited on the source's event loop."""
        with self._lock:
            if keys is None:
                items = sorted(self._pending.items())
            else:
                items = sorted((k, self._pending[k]) for k in set(keys) if k in self._pending)
        if not items:
            return
        src = self.source
        sem = asyncio.Semaphore(max(1, int(src.concurrency)))

        async def send(key: str, value: Any) -> None:
            async with sem:
                if value is _DELETED:
                    await src.adelete(key)
                else:
                    await src.aset(key, value)

        results = await asyncio.gather(*[send(k, v) for k, v in items], return_exceptions=True)
        with self._lock:
            for (k, v), r in zip(items, results):
                if not isinstance(r, BaseException) and self._pending.get(k) is v:
                    del self._pending[k]
                    if isinstance(v, bytes):
                        self._bytes -= len(v)
        if self.on_write is not None:
            for k, _ in items:
                self.on_write(k)
        for r in results:
            if isinstance(r, BaseException):
                raise r

    # ------------------------------------------------------------------ what the base is
    @property
    def concurrency(self) -> int:
        return int(self.source.concurrency)

    @property
    def max_bytes_in_flight(self) -> int:
        return int(self.source.max_bytes_in_flight)

    def token(self) -> Any:
        return self.base.token()

    def write_locks(self, prefix: str = "") -> Any:
        return self.base.write_locks(prefix)

    def with_read_only(self, read_only: bool = True) -> Store:
        return self.base.with_read_only(read_only)

    def __repr__(self) -> str:
        return f"WriteBehindStore({self.base!r}, {len(self._pending)} pending)"
