"""An in-memory store (a dict of immutable bytes), safe for use from several threads."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, MutableMapping
from typing import Any

from ..errors import StoreError
from ._base import (
    InMemoryReads,
    Store,
    _apply_parts,
    _group_partial_values,
    as_bytes,
    check_key,
    check_prefix,
)


class MemoryStore(InMemoryReads, Store):
    """Keys and values in a dict (``store_dict`` when given, so the caller can see them).

    Values are stored as immutable ``bytes``.  Mutations hold a lock that read-only views made
    by :meth:`with_read_only` share, so read-modify-write operations are atomic.

    A MemoryStore pickles with its contents: the unpickled store (e.g. in a dask worker process)
    holds a *copy* (a plain dict), and writes to either are not seen by the other.

    Parameters
    ----------
    store_dict
        The dict to keep the values in (None: a new one).
    read_only
        Refuse writes (:class:`~zarrbolt.errors.ReadOnlyError`).
    """

    def __init__(self, store_dict: MutableMapping[str, bytes] | None = None, *, read_only: bool = False):
        super().__init__(read_only=read_only)
        if store_dict is not None and not isinstance(store_dict, MutableMapping):
            raise StoreError(f"MemoryStore needs a mutable mapping, got {type(store_dict).__name__}")
        self._data: MutableMapping[str, bytes] = {} if store_dict is None else store_dict
        self._lock = threading.RLock()

    def _value(self, key: str) -> bytes | None:
        check_key(key)
        v = self._data.get(key)
        if v is None or isinstance(v, bytes):
            return v
        return as_bytes(v)  # a caller-supplied dict may hold other bytes-likes

    def exists(self, key: str) -> bool:
        check_key(key)
        return key in self._data

    # ------------------------------------------------------------------ writing
    def set(self, key: str, value: Any) -> None:
        self._check_writable()
        check_key(key)
        data = as_bytes(value)
        with self._lock:
            self._data[key] = data

    def set_if_not_exists(self, key: str, value: Any) -> None:
        self._check_writable()
        check_key(key)
        data = as_bytes(value)
        with self._lock:
            if key not in self._data:
                self._data[key] = data

    def set_partial_values(self, key_start_values: Iterable[tuple[str, int, Any]]) -> None:
        self._check_writable()
        groups = _group_partial_values(key_start_values)
        with self._lock:
            for key, parts in groups.items():
                self._data[key] = _apply_parts(self._value(key), parts)

    def erase(self, key: str) -> None:
        self._check_writable()
        check_key(key)
        with self._lock:
            self._data.pop(key, None)

    def erase_values(self, keys: Iterable[str]) -> None:
        self._check_writable()
        keys = [check_key(k) for k in keys]
        with self._lock:
            for k in keys:
                self._data.pop(k, None)

    def erase_prefix(self, prefix: str) -> None:
        self._check_writable()
        check_prefix(prefix)
        with self._lock:
            for k in [k for k in self._data if k.startswith(prefix)]:
                del self._data[k]

    # ------------------------------------------------------------------ listing
    def list(self) -> Iterator[str]:
        with self._lock:
            keys = list(self._data)
        return iter(keys)

    # ------------------------------------------------------------------ misc
    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            data = {k: (v if isinstance(v, bytes) else as_bytes(v)) for k, v in self._data.items()}
        state = {k: v for k, v in self.__dict__.items() if k != "_lock"}
        state["_data"] = data
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def __copy__(self) -> MemoryStore:
        # a shallow copy shares the data, like with_read_only (deepcopy and pickle copy it)
        return self.with_read_only(self.read_only)

    def token(self) -> tuple[Any, ...]:
        return ("MemoryStore", id(self._data))

    def with_read_only(self, read_only: bool = True) -> MemoryStore:
        s = MemoryStore(self._data, read_only=read_only)
        s._lock = self._lock
        return s

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MemoryStore) and other._data is self._data and other.read_only == self.read_only

    def __hash__(self) -> int:
        return hash((id(self._data), self.read_only))

    def __repr__(self) -> str:
        return f"MemoryStore(<{len(self._data)} keys>{', read_only' if self.read_only else ''})"
