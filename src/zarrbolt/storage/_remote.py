"""``RemoteStore``: the :class:`~zarrbolt.storage.Store` methods of a store whose I/O is an
:class:`~zarrbolt.storage._async.AsyncSourceBase` (``ObjectStore``, ``FsspecStore``), written
once.  Each synchronous method runs its coroutine on the remote-I/O loop
(:func:`zarrbolt.storage._async.run`); batched methods run their requests concurrently, within
the source's bounds.  A subclass sets ``self._source`` (with ``alist(directory)`` and
``alist_dir(directory)`` besides the AsyncSource methods) and ``self.url``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..errors import ConflictError, StoreError
from ._async import gather_or_cancel, run
from ._base import (
    check_offset,
    ByteRequest,
    RangeByteRequest,
    Store,
    as_byte_view,
    check_key,
    check_prefix,
    check_ranges,
    writable_view,
)


class RemoteStore(Store):
    """The shared body of the remote stores (see the module documentation)."""

    supports_conditional_writes = False
    url: str
    _source: Any

    def async_source(self) -> Any:
        return self._source

    # ------------------------------------------------------------------ reading
    def get(self, key: str, byte_range: ByteRequest = None) -> bytes | None:
        check_key(key)
        mv = run(self._source.aget(key, byte_range))
        return None if mv is None else bytes(mv)

    def get_versioned(self, key: str) -> tuple[bytes | None, str | None]:
        """The value of ``key`` and its ETag (``(None, None)`` when absent), by one GET; the
        version is None on stores without conditional writes (see :meth:`set_if_version`)."""
        check_key(key)
        if not self.supports_conditional_writes:
            return self.get(key), None
        mv, etag = run(self._source.aget_versioned(key))
        return (None, None) if mv is None else (bytes(mv), etag)

    def get_partial_values(self, key_ranges: Iterable[tuple[str, ByteRequest]]) -> list[bytes | None]:
        """All the requests at once, concurrently (within the source's bounds)."""
        pairs = [(check_key(k), r) for k, r in key_ranges]
        src = self._source

        async def go() -> list[Any]:
            return await gather_or_cancel([src.aget(k, r) for k, r in pairs])

        return [None if v is None else bytes(v) for v in run(go())] if pairs else []

    def get_into(self, key: str, buffer: Any, offset: int = 0) -> int | None:
        offset = check_offset(offset)
        check_key(key)
        mv = writable_view(buffer)
        data = run(self._source.aget(key, RangeByteRequest(offset, offset + len(mv))))
        if data is None:
            return None
        mv[: len(data)] = data
        return len(data)

    def read_into(self, key: str, buffer: Any) -> int | None:
        check_key(key)
        mv = writable_view(buffer)
        data = run(self._source.aget(key))
        if data is None:
            return None
        if len(data) > len(mv):
            return -len(data)
        mv[: len(data)] = data
        return len(data)

    def get_ranges_into(self, key: str, ranges: Sequence[tuple[int, int]], buffer: Any) -> list[int] | None:
        """The ranges coalesced (config ``remote_coalesce_gap``), fetched concurrently and copied
        into ``buffer`` one after another (see :meth:`Store.get_ranges_into`)."""
        check_key(key)
        mv = writable_view(buffer)
        ranges = check_ranges(ranges, len(mv))
        parts = run(self._source.aget_ranges(key, ranges))
        if parts is None:
            return None
        counts: list[int] = []
        pos = 0
        for (start, end), part in zip(ranges, parts):
            mv[pos: pos + len(part)] = part
            counts.append(len(part))
            pos += end - start
        return counts

    def exists(self, key: str) -> bool:
        check_key(key)
        return run(self._source.ahead(key)) is not None

    def getsize(self, key: str) -> int:
        """The size of the value of ``key`` by one HEAD request (never a download)."""
        check_key(key)
        head = run(self._source.ahead(key))
        if head is None:
            raise StoreError(f"key {key!r} not found in {self!r}")
        size: int = head[0]
        return size

    # ------------------------------------------------------------------ writing
    def set(self, key: str, value: Any) -> None:
        self._check_writable()
        check_key(key)
        run(self._source.aset(key, as_byte_view(value)))

    def set_if_not_exists(self, key: str, value: Any) -> None:
        """One conditional PUT (create only); an existing value is left as it is."""
        self._check_writable()
        check_key(key)
        try:
            run(self._source.aset_if_version(key, as_byte_view(value), None))
        except ConflictError:
            pass

    def set_if_version(self, key: str, value: Any, version: str | None) -> None:
        """Write ``value`` only if the object's ETag is still ``version`` (None: only if the key
        is absent); :class:`~zarrbolt.errors.ConflictError` when another writer got there first.

        On a store with ``supports_conditional_writes = False`` this is a plain :meth:`set`
        (the store contract's fallback; :meth:`get_versioned` gives no versions there)."""
        self._check_writable()
        check_key(key)
        if version is not None and not isinstance(version, str):
            raise StoreError(f"set_if_version of key {key!r}: the version must be an ETag string or None, "
                             f"got {type(version).__name__}")
        if not self.supports_conditional_writes:
            run(self._source.aset(key, as_byte_view(value)))
            return
        run(self._source.aset_if_version(key, as_byte_view(value), version))

    def erase(self, key: str) -> None:
        self._check_writable()
        check_key(key)
        run(self._source.adelete(key))

    def erase_values(self, keys: Iterable[str]) -> None:
        """The deletes run concurrently (within the source's bounds)."""
        self._check_writable()
        keys = [check_key(k) for k in keys]
        src = self._source

        async def go() -> None:
            await gather_or_cancel([src.adelete(k) for k in keys])

        if keys:
            run(go())

    def erase_prefix(self, prefix: str) -> None:
        self._check_writable()
        check_prefix(prefix)
        keys = list(self.list_prefix(prefix))
        for i in range(0, len(keys), 1000):
            self.erase_values(keys[i: i + 1000])

    # ------------------------------------------------------------------ listing
    def list(self) -> Iterator[str]:
        return iter(run(self._source.alist("")))

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Keys starting with ``prefix`` (a string prefix: ``"a/b"`` matches ``"a/bc"``): one
        LIST of the enclosing directory, filtered."""
        check_prefix(prefix)
        directory = prefix[: prefix.rfind("/") + 1]
        return iter([k for k in run(self._source.alist(directory)) if k.startswith(prefix)])

    def list_dir(self, prefix: str) -> Iterator[str]:
        check_prefix(prefix)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        keys, dirs = run(self._source.alist_dir(prefix))
        out = [k for k in keys if k.startswith(prefix) and "/" not in k[len(prefix):]]
        out += [d.rstrip("/") + "/" for d in dirs]
        return iter(dict.fromkeys(out))

