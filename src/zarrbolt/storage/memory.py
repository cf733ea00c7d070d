"""An in-memory store (a dict of immutable bytes), safe for use from several threads."""

from __future__ import annotations

import threading
from collections.abc import Iterator, MutableMapping
from typing import Any

from ._base import ByteRequest, Store, check_key, check_prefix, resolve_range


class MemoryStore(Store):
    def __init__(self, store_dict: MutableMapping[str, bytes] | None = None, *, read_only: bool = False):
        super().__init__(read_only=read_only)
        self._data: MutableMapping[str, bytes] = {} if store_dict is None else store_dict
        self._lock = threading.Lock()

    def get(self, key: str, byte_range: ByteRequest = None) -> bytes | None:
        check_key(key)
        v = self._data.get(key)
        if v is None:
            return None
        if byte_range is None:
            return v
        a, b = resolve_range(byte_range, len(v))
        return v[a:b]

    def exists(self, key: str) -> bool:
        check_key(key)
        return key in self._data

    def getsize(self, key: str) -> int:
        v = self.get(key)
        if v is None:
            from ..errors import StoreError

            raise StoreError(f"key {key!r} not found in {self!r}")
        return len(v)

    def set(self, key: str, value: Any) -> None:
        self._check_writable()
        check_key(key)
        data = value if isinstance(value, bytes) else bytes(memoryview(value).cast("B"))
        with self._lock:
            self._data[key] = data

    def set_if_not_exists(self, key: str, value: Any) -> None:
        self._check_writable()
        check_key(key)
        data = value if isinstance(value, bytes) else bytes(memoryview(value).cast("B"))
        with self._lock:
            self._data.setdefault(key, data)

    def erase(self, key: str) -> None:
        self._check_writable()
        check_key(key)
        with self._lock:
            self._data.pop(key, None)

    def erase_prefix(self, prefix: str) -> None:
        self._check_writable()
        check_prefix(prefix)
        with self._lock:
            for k in [k for k in self._data if k.startswith(prefix)]:
                del self._data[k]

    def list(self) -> Iterator[str]:
        with self._lock:
            keys = list(self._data)
        return iter(keys)

    def with_read_only(self, read_only: bool = True) -> MemoryStore:
        s = MemoryStore(self._data, read_only=read_only)
        s._lock = self._lock
        return s

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MemoryStore) and other._data is self._data and other.read_only == self.read_only

    def __hash__(self) -> int:
        return id(self._data)

    def __repr__(self) -> str:
        return f"MemoryStore(<{len(self._data)} keys>{', read_only' if self.read_only else ''})"
