"""A store of bytes fetched ahead: what a read planner staged from a slow store (a remote
store, or zarr-python's stores through an async source), served from memory.

A planner that reads from an async source first fetches everything a read (or one window of it)
needs, concurrently, and records it here: whole values (:meth:`StagedStore.put`, None for an
absent key) and byte ranges of values read in part (:meth:`StagedStore.put_range`, e.g. a shard's
index and its wanted inner chunks, with the size the value is known to have).  The store then
serves those bytes as zero-copy views (reads into a caller's buffer copy once); a key or byte
range not staged is read through ``base``, the store the bytes came from.  Writes go to ``base``
and forget what was staged for the key.  It has no async source of its own: planners read it as
an in-memory store.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..errors import StoreError
from ._base import (
    check_offset,
    ByteRequest,
    Store,
    check_key,
    check_ranges,
    normalize_range,
    resolve_range,
    writable_view,
)

__all__ = ["NOT_STAGED", "StagedStore"]

# What :meth:`StagedStore.whole` gives for a key that was not staged whole.
NOT_STAGED = object()


class _Pieces:
    """The staged byte ranges of one value read in part: ``(begin, end, view)`` sorted by begin,
    and the size the value is known to have."""

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


def _copy_into(mv: memoryview, src: memoryview) -> int:
    mv[: len(src)] = src
    return len(src)


class StagedStore(Store):
    """Bytes staged from ``base`` (see the module doc), served from memory; the rest read through
    ``base``.  ``nbytes`` counts the bytes staged."""

    def __init__(self, base: Store):
        super().__init__(read_only=base.read_only)
        self.base = base
        self._whole: dict[str, memoryview | None] = {}  # whole values; None: the key is absent
        self._parts: dict[str, _Pieces] = {}  # values read in part
        self.nbytes = 0

    # ------------------------------------------------------------------ staging
    def put(self, key: str, value: memoryview | None) -> None:
        """Stage the whole value of ``key`` (None: the key is absent)."""
        self._whole[key] = value
        self.nbytes += 0 if value is None else len(value)

    def put_range(self, key: str, begin: int, view: memoryview, size: int) -> None:
        """Stage bytes ``[begin, begin + len(view))`` of the value of ``key``, whose size is
        ``size`` (what :meth:`getsize` reports for it)."""
        parts = self._parts.get(key)
        if parts is None:
            parts = self._parts[key] = _Pieces(size)
        parts.add(begin, view)
        self.nbytes += len(view)

    def whole(self, key: str) -> Any:
        """The staged value of ``key`` (None: absent), or :data:`NOT_STAGED`."""
        return self._whole.get(key, NOT_STAGED)

    def piece(self, key: str, begin: int, end: int) -> memoryview | None:
        """Bytes ``[begin, end)`` of the value of ``key`` when one staged range (or the staged
        whole value) holds them all, else None."""
        v = self._whole.get(key)
        if v is not None:
            return v[begin:end] if end <= len(v) else None
        parts = self._parts.get(key)
        return None if parts is None else parts.find(begin, end)

    @property
    def staged_keys(self) -> set[str]:
        return set(self._whole) | set(self._parts)

    def async_source(self) -> None:
        return None

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
        offset = check_offset(offset)
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
            return len(v) if kind == "whole" else int(v.size)
        return self.base.getsize(key)

    # ------------------------------------------------------------------ writing and listing
    def _forget(self, key: str) -> None:
        self._whole.pop(key, None)
        self._parts.pop(key, None)

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

    # ------------------------------------------------------------------ what the base is
    @property
    def concurrency(self) -> int:
        return self.base.concurrency

    @property
    def max_bytes_in_flight(self) -> int:
        return self.base.max_bytes_in_flight

    def token(self) -> Any:
        return self.base.token()

    def write_locks(self, prefix: str = "") -> Any:
        return self.base.write_locks(prefix)

    def flush(self, keys: Iterable[str] | None = None) -> None:
        self.base.flush(keys)

    def with_read_only(self, read_only: bool = True) -> Store:
        return self.base.with_read_only(read_only)

    def __repr__(self) -> str:
        return f"StagedStore({self.base!r}, {len(self._whole) + len(self._parts)} keys staged)"
