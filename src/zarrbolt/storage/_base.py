"""The abstract store interface of the Zarr v3 core spec, plus byte-range requests and key checks."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Union

from ..errors import InvalidKeyError, ReadOnlyError, StoreError


@dataclass(frozen=True)
class RangeByteRequest:
    """Bytes ``[start, end)`` of a value (clipped to the value's end)."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid byte range [{self.start}, {self.end})")


@dataclass(frozen=True)
class OffsetByteRequest:
    """Bytes from ``offset`` to the end of the value."""

    offset: int

    def __post_init__(self) -> None:
        if self.offset < 0:
            raise ValueError(f"invalid byte offset {self.offset}")


@dataclass(frozen=True)
class SuffixByteRequest:
    """The last ``suffix`` bytes of a value (all of it when it is shorter)."""

    suffix: int

    def __post_init__(self) -> None:
        if self.suffix < 0:
            raise ValueError(f"invalid suffix length {self.suffix}")


ByteRequest = Union[RangeByteRequest, OffsetByteRequest, SuffixByteRequest, tuple, None]

_DRIVE = re.compile(r"^[A-Za-z]:")


def check_key(key: str) -> str:
    """Validate a store key: ``/``-separated non-empty segments, none of them ``.`` or ``..``,
    no backslash, NUL or drive letter — nothing that could escape a store's root."""
    if not isinstance(key, str):
        raise InvalidKeyError(f"store keys must be strings, got {type(key).__name__}")
    if not key:
        raise InvalidKeyError("store key must not be empty")
    if key.startswith("/") or "\\" in key or "\x00" in key or _DRIVE.match(key):
        raise InvalidKeyError(f"invalid store key {key!r}")
    for seg in key.split("/"):
        if seg in ("", ".", ".."):
            raise InvalidKeyError(f"invalid store key {key!r}: empty, '.' or '..' path segment")
    return key


def check_prefix(prefix: str) -> str:
    """A listing prefix: ``""`` or a valid key, optionally ending in ``/``."""
    if prefix == "":
        return prefix
    if not isinstance(prefix, str):
        raise InvalidKeyError(f"store prefixes must be strings, got {type(prefix).__name__}")
    check_key(prefix[:-1] if prefix.endswith("/") else prefix)
    return prefix


def normalize_range(byte_range: ByteRequest) -> RangeByteRequest | OffsetByteRequest | SuffixByteRequest | None:
    if byte_range is None or isinstance(byte_range, (RangeByteRequest, OffsetByteRequest, SuffixByteRequest)):
        return byte_range
    if isinstance(byte_range, tuple) and len(byte_range) == 2:
        start, end = byte_range
        if end is None:
            return OffsetByteRequest(int(start))
        return RangeByteRequest(int(start), int(end))
    raise TypeError(f"invalid byte range {byte_range!r}")


def resolve_range(byte_range: ByteRequest, size: int) -> tuple[int, int]:
    """``(start, end)`` of a request against a value of ``size`` bytes, clipped to it."""
    r = normalize_range(byte_range)
    if r is None:
        return 0, size
    if isinstance(r, RangeByteRequest):
        return min(r.start, size), min(r.end, size)
    if isinstance(r, OffsetByteRequest):
        return min(r.offset, size), size
    return max(0, size - r.suffix), size


class Store(ABC):
    """A key/value store of bytes (the spec's abstract store interface)."""

    def __init__(self, *, read_only: bool = False):
        self._read_only = bool(read_only)

    @property
    def read_only(self) -> bool:
        return self._read_only

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"{self!r} is read-only")

    # ------------------------------------------------------------------ reading
    @abstractmethod
    def get(self, key: str, byte_range: ByteRequest = None) -> bytes | None:
        """The value (or the requested bytes of it) for ``key``; None if the key is absent."""

    def get_partial_values(self, key_ranges: Iterable[tuple[str, ByteRequest]]) -> list[bytes | None]:
        return [self.get(k, r) for k, r in key_ranges]

    def get_into(self, key: str, buffer: Any, offset: int = 0) -> int | None:
        """Read the value's bytes from ``offset`` into ``buffer``; return the count (None if absent)."""
        mv = memoryview(buffer).cast("B")
        data = self.get(key, RangeByteRequest(offset, offset + len(mv)))
        if data is None:
            return None
        mv[: len(data)] = data
        return len(data)

    def read_into(self, key: str, buffer: Any) -> int | None:
        """Read the whole value of ``key`` into the start of ``buffer`` (a writable bytes-like).

        Returns the value's size; ``-size`` (reading nothing) when it does not fit; None when
        the key is absent.  Lets readers reuse buffers instead of allocating one per value."""
        data = self.get(key)
        if data is None:
            return None
        mv = memoryview(buffer).cast("B")
        if len(data) > len(mv):
            return -len(data)
        mv[: len(data)] = data
        return len(data)

    @abstractmethod
    def exists(self, key: str) -> bool: ...

    def getsize(self, key: str) -> int:
        data = self.get(key)
        if data is None:
            raise StoreError(f"key {key!r} not found in {self!r}")
        return len(data)

    # ------------------------------------------------------------------ writing
    @abstractmethod
    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (any bytes-like object) under ``key``, atomically."""

    def set_if_not_exists(self, key: str, value: Any) -> None:
        if not self.exists(key):
            self.set(key, value)

    def set_partial_values(self, key_start_values: Iterable[tuple[str, int, Any]]) -> None:
        """Overwrite parts of values: each ``(key, start, bytes)`` writes at byte ``start`` (a
        missing key or a start beyond the end is padded with zero bytes)."""
        self._check_writable()
        by_key: dict[str, list[tuple[int, bytes]]] = {}
        for key, start, value in key_start_values:
            if start < 0:
                raise ValueError(f"negative start {start} for key {key!r}")
            by_key.setdefault(check_key(key), []).append((int(start), bytes(memoryview(value).cast("B"))))
        for key, parts in by_key.items():
            cur = bytearray(self.get(key) or b"")
            for start, data in parts:
                end = start + len(data)
                if end > len(cur):
                    cur.extend(bytes(end - len(cur)))
                cur[start:end] = data
            self.set(key, bytes(cur))

    @abstractmethod
    def erase(self, key: str) -> None:
        """Remove ``key`` (no error if it is absent)."""

    def erase_values(self, keys: Iterable[str]) -> None:
        for k in keys:
            self.erase(k)

    def erase_prefix(self, prefix: str) -> None:
        self._check_writable()
        for k in list(self.list_prefix(prefix)):
            self.erase(k)

    # ------------------------------------------------------------------ listing
    @abstractmethod
    def list(self) -> Iterator[str]: ...

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key starting with ``prefix``."""
        check_prefix(prefix)
        for k in self.list():
            if k.startswith(prefix):
                yield k

    def list_dir(self, prefix: str) -> Iterator[str]:
        """The children of the "directory" ``prefix`` (full keys): the keys directly under it, and
        the child prefixes, which end with ``/``."""
        check_prefix(prefix)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        seen: set[str] = set()
        for k in self.list_prefix(prefix):
            rest = k[len(prefix):]
            child = rest.split("/", 1)[0] + ("/" if "/" in rest else "")
            if child not in seen:
                seen.add(child)
                yield prefix + child

    # ------------------------------------------------------------------ misc
    @abstractmethod
    def with_read_only(self, read_only: bool = True) -> Store: ...

    def close(self) -> None:
        pass

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
