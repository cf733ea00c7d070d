"""The abstract store interface of the Zarr v3 core spec, plus byte-range requests and key checks."""

from __future__ import annotations

import operator
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Union

from ..errors import InvalidKeyError, ReadOnlyError, StoreError


def _config() -> Any:
    from .. import config

    return config


def _index(value: Any, what: str) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {type(value).__name__}") from None


@dataclass(frozen=True)
class RangeByteRequest:
    """Bytes ``[start, end)`` of a value (end exclusive; clipped to the value's end)."""

    start: int
    end: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", _index(self.start, "range start"))
        object.__setattr__(self, "end", _index(self.end, "range end"))
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid byte range [{self.start}, {self.end})")


@dataclass(frozen=True)
class OffsetByteRequest:
    """Bytes from ``offset`` to the end of the value."""

    offset: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "offset", _index(self.offset, "byte offset"))
        if self.offset < 0:
            raise ValueError(f"invalid byte offset {self.offset}")


@dataclass(frozen=True)
class SuffixByteRequest:
    """The last ``suffix`` bytes of a value (all of it when it is shorter)."""

    suffix: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "suffix", _index(self.suffix, "suffix length"))
        if self.suffix < 0:
            raise ValueError(f"invalid suffix length {self.suffix}")


ByteRequest = Union[RangeByteRequest, OffsetByteRequest, SuffixByteRequest, tuple[Any, ...], None]

_DRIVE = re.compile(r"^[A-Za-z]:")


def check_offset(offset: Any) -> int:
    """A read's start ``offset``: a non-negative integer (TypeError / ValueError otherwise)."""
    n = _index(offset, "offset")
    if n < 0:
        raise ValueError(f"negative offset {n}")
    return n


def check_key(key: str) -> str:
    """Validate a store key: ``/``-separated non-empty segments, none of them ``.`` or ``..``,
    no leading ``/``, no backslash, no NUL and no drive letter (``C:``) in any segment —
    nothing that could escape a store's root on any platform."""
    if not isinstance(key, str):
        raise InvalidKeyError(f"store keys must be strings, got {type(key).__name__}")
    if not key:
        raise InvalidKeyError("store key must not be empty")
    if key.startswith("/"):
        raise InvalidKeyError(f"invalid store key {key!r}: it must not start with '/'")
    if "\\" in key:
        raise InvalidKeyError(f"invalid store key {key!r}: it must not contain a backslash")
    if "\x00" in key:
        raise InvalidKeyError(f"invalid store key {key!r}: it must not contain a NUL character")
    for seg in key.split("/"):
        if seg in ("", ".", ".."):
            raise InvalidKeyError(f"invalid store key {key!r}: empty, '.' or '..' path segment")
        if _DRIVE.match(seg):
            raise InvalidKeyError(f"invalid store key {key!r}: a segment looks like a drive letter")
    return key


def check_prefix(prefix: str) -> str:
    """A listing prefix: ``""`` or a valid key, optionally ending in ``/``."""
    if not isinstance(prefix, str):
        raise InvalidKeyError(f"store prefixes must be strings, got {type(prefix).__name__}")
    if prefix == "":
        return prefix
    check_key(prefix[:-1] if prefix.endswith("/") else prefix)
    return prefix


def as_bytes(value: Any) -> bytes:
    """An immutable copy of any bytes-like ``value`` (contiguous or not); ``bytes`` as-is."""
    if isinstance(value, bytes):
        return value
    try:
        return memoryview(value).tobytes()
    except TypeError:
        raise TypeError(f"store values must be bytes-like, got {type(value).__name__}") from None


def writable_view(buffer: Any) -> memoryview:
    """A flat writable byte view of ``buffer``; TypeError if it is read-only or not contiguous."""
    mv = memoryview(buffer)
    if mv.readonly:
        raise TypeError(f"the target buffer ({type(buffer).__name__}) is read-only")
    if not mv.c_contiguous:
        raise TypeError("the target buffer must be C-contiguous")
    return mv.cast("B") if (mv.format != "B" or mv.ndim != 1) else mv


def as_byte_view(value: Any) -> memoryview:
    """A flat byte view of a bytes-like ``value`` without copying when it is contiguous."""
    try:
        mv = memoryview(value)
    except TypeError:
        raise TypeError(f"store values must be bytes-like, got {type(value).__name__}") from None
    if mv.c_contiguous:
        return mv.cast("B") if (mv.format != "B" or mv.ndim != 1) else mv
    return memoryview(mv.tobytes())


def check_ranges(ranges: Sequence[tuple[int, int]], capacity: int) -> list[tuple[int, int]]:
    """``ranges`` as a list of ``(start, end)`` int pairs with ``0 <= start <= end`` whose lengths
    add up to at most ``capacity`` bytes; ValueError otherwise."""
    out: list[tuple[int, int]] = []
    total = 0
    for r in ranges:
        try:
            start, end = r
        except (TypeError, ValueError):
            raise ValueError(f"a byte range must be a (start, end) pair, got {r!r}") from None
        start, end = _index(start, "range start"), _index(end, "range end")
        if start < 0 or end < start:
            raise ValueError(f"invalid byte range [{start}, {end})")
        total += end - start
        out.append((start, end))
    if total > capacity:
        raise ValueError(f"the ranges hold {total} bytes, the buffer {capacity}")
    return out


def normalize_range(byte_range: ByteRequest) -> RangeByteRequest | OffsetByteRequest | SuffixByteRequest | None:
    if byte_range is None or isinstance(byte_range, (RangeByteRequest, OffsetByteRequest, SuffixByteRequest)):
        return byte_range
    if isinstance(byte_range, tuple) and len(byte_range) == 2:
        start, end = byte_range
        if end is None:
            return OffsetByteRequest(start)
        return RangeByteRequest(start, end)
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
    """A key/value store of bytes (the spec's abstract store interface).

    Keys are validated by :func:`check_key`; values are bytes.  Every write on a read-only
    store raises :class:`~zarrbolt.errors.ReadOnlyError`.  Stores pickle (so arrays can go to
    other processes, e.g. dask workers): what they pickle as is each store's business, but never
    open files, locks or caches.  Listings return full keys;
    ``list_dir`` also returns child prefixes, which end with ``/`` (as in the spec's example).
    """

    def __init__(self, *, read_only: bool = False):
        self._read_only = bool(read_only)

    @property
    def read_only(self) -> bool:
        """Whether the store refuses writes (ReadOnlyError)."""
        return self._read_only

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"{self!r} is read-only")

    # ------------------------------------------------------------------ reading
    @abstractmethod
    def get(self, key: str, byte_range: ByteRequest = None) -> bytes | None:
        """The value (or the requested bytes of it) for ``key``; None if the key is absent.

        ``byte_range`` is a Range/Offset/SuffixByteRequest or a ``(start, end)`` tuple (end
        exclusive, ``None`` for "to the end").  Ranges are clipped to the value: a range that
        starts past the end gives ``b""``, a suffix longer than the value gives all of it."""

    def get_partial_values(self, key_ranges: Iterable[tuple[str, ByteRequest]]) -> list[bytes | None]:
        """``get(key, range)`` for each pair, in order (None for missing keys)."""
        return [self.get(k, r) for k, r in key_ranges]

    def get_into(self, key: str, buffer: Any, offset: int = 0) -> int | None:
        """Read the value's bytes from ``offset`` into ``buffer`` (a writable bytes-like); return
        how many were read (fewer than ``len(buffer)`` at the value's end), None if absent."""
        offset = check_offset(offset)
        mv = writable_view(buffer)
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
        mv = writable_view(buffer)
        if len(data) > len(mv):
            return -len(data)
        mv[: len(data)] = data
        return len(data)

    def get_ranges_into(self, key: str, ranges: Sequence[tuple[int, int]], buffer: Any) -> list[int] | None:
        """Read several byte ranges of one value into ``buffer``, one after another: a batched
        :meth:`get_into` (the fused decode reads the inner chunks of a shard with one call).

        ``ranges`` are ``(start, end)`` pairs, ``0 <= start <= end`` (end exclusive); range ``i``
        lands at the sum of the lengths of the ranges before it, so ``buffer`` (a writable,
        contiguous bytes-like) must hold their total length, else ValueError.  Returns how many
        bytes each range got (fewer where the value ends inside the range, 0 past its end), or
        None when ``key`` is absent.  This default reads each range with :meth:`get_into`;
        stores override it to serve all the ranges with one lookup or one open file."""
        mv = writable_view(buffer)
        ranges = check_ranges(ranges, len(mv))
        if not ranges:
            return [] if self.exists(key) else None
        counts: list[int] = []
        pos = 0
        for start, end in ranges:
            got = self.get_into(key, mv[pos: pos + end - start], start)
            if got is None:
                return None
            counts.append(got)
            pos += end - start
        return counts

    # ------------------------------------------------------------------ capabilities
    # What the read and write planners ask of a store (never by probing attributes).

    #: whether :meth:`set_if_version` really checks the stored version (remote object stores
    #: with ETag preconditions); False: it is a plain :meth:`set`
    supports_conditional_writes: bool = False

    @property
    def concurrency(self) -> int:
        """How many requests to this store are worth having in flight at once: remote stores
        their source's bound (config ``remote_concurrency``), local and in-memory stores the
        ``threads`` config option."""
        src = self.async_source()
        return int(src.concurrency) if src is not None else int(_config().get("threads"))

    @property
    def max_bytes_in_flight(self) -> int:
        """How many bytes a read or write may have in flight at once (remote stores: their
        source's budget; config ``remote_bytes_in_flight``)."""
        src = self.async_source()
        return int(src.max_bytes_in_flight if src is not None else _config().get("remote_bytes_in_flight"))

    def token(self) -> Any:
        """What identifies the data of this store (its location, not its contents; hashable):
        stores over the same data give equal tokens.  Caches (shard indexes), the write locks of
        stores without lock files and dask's graph names use it.  This default: the object."""
        return (type(self).__qualname__, id(self))

    def write_locks(self, prefix: str = "") -> Any:
        """The cross-process write locks of the array at ``prefix`` (a
        :class:`~zarrbolt.storage.locks.FileLocks`; LocalStore), or None (this default): partial
        updates are then serialized among the threads of this process only."""
        return None

    def flush(self, keys: Iterable[str] | None = None) -> None:
        """Make the writes of ``keys`` (None: all) visible in the underlying storage.  A no-op
        for stores that write at once (this default); stores that collect writes to send them
        together (:class:`~zarrbolt.storage.write_behind.WriteBehindStore`) send them now."""

    def async_source(self) -> Any:
        """The store's :class:`~zarrbolt.storage._async.AsyncSource` for concurrent remote
        reads and writes, or None (this default: local and in-memory stores are read directly)."""
        return None

    def get_versioned(self, key: str) -> tuple[Any, str | None]:
        """``(value, version)``: the value of ``key`` (None if absent) and a version token to pass
        to :meth:`set_if_version` (the ETag on object stores; None here: no versions)."""
        return self.get(key), None

    def set_if_version(self, key: str, value: Any, version: str | None) -> None:
        """Write ``value`` only if the stored object's version is still ``version`` (None: only if
        absent), else :class:`~zarrbolt.errors.ConflictError`.  Stores with
        ``supports_conditional_writes = False`` (this default) cannot check: a plain :meth:`set`."""
        self.set(key, value)

    def native_files(self) -> Any:
        """Direct access to the files that hold the values, for the C file batches of the fused
        pipeline, or None (this default: values are read and written through this API only).
        :class:`~zarrbolt.storage.LocalStore` returns its :class:`~zarrbolt.storage.local.
        NativeFiles`."""
        return None

    @abstractmethod
    def exists(self, key: str) -> bool:
        """Whether ``key`` holds a value."""

    def getsize(self, key: str) -> int:
        """The size in bytes of the value of ``key``; StoreError when it is absent."""
        data = self.get(key)
        if data is None:
            raise StoreError(f"key {key!r} not found in {self!r}")
        return len(data)

    # ------------------------------------------------------------------ writing
    @abstractmethod
    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (any bytes-like object) under ``key``, atomically."""

    def set_parts(self, key: str, parts: Sequence[Any]) -> None:
        """Store the concatenation of ``parts`` (bytes-like objects) under ``key``, atomically.
        Stores that can write the pieces without joining them first override this."""
        self.set(key, b"".join(as_byte_view(p) for p in parts))

    def set_if_not_exists(self, key: str, value: Any) -> None:
        """Store ``value`` unless ``key`` already holds a value."""
        self._check_writable()
        if not self.exists(key):
            self.set(key, value)

    def set_partial_values(self, key_start_values: Iterable[tuple[str, int, Any]]) -> None:
        """Overwrite parts of values: each ``(key, start, bytes)`` writes at byte ``start`` (a
        missing key or a start beyond the end is padded with zero bytes).  Each key's new
        value is written whole and atomically."""
        self._check_writable()
        for key, parts in _group_partial_values(key_start_values).items():
            self.set(key, _apply_parts(self.get(key), parts))

    @abstractmethod
    def erase(self, key: str) -> None:
        """Remove ``key`` (no error if it is absent)."""

    def erase_values(self, keys: Iterable[str]) -> None:
        """Remove every key of ``keys`` (missing ones are fine); all are validated first."""
        self._check_writable()
        keys = [check_key(k) for k in keys]
        for k in keys:
            self.erase(k)

    def erase_prefix(self, prefix: str) -> None:
        """Remove every key that starts with ``prefix`` (``""``: everything)."""
        self._check_writable()
        check_prefix(prefix)
        for k in list(self.list_prefix(prefix)):
            self.erase(k)

    # ------------------------------------------------------------------ listing
    @abstractmethod
    def list(self) -> Iterator[str]:
        """Every key of the store (in no particular order)."""

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key starting with ``prefix`` (full keys)."""
        check_prefix(prefix)
        for k in self.list():
            if k.startswith(prefix):
                yield k

    def list_dir(self, prefix: str) -> Iterator[str]:
        """The children of the "directory" ``prefix`` (``""`` for the root; a trailing ``/`` is
        implied), as full keys: the keys directly under it, and the child prefixes, which end
        with ``/`` — e.g. ``list_dir("a/")`` gives ``"a/b"`` and ``"a/d/"``."""
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
    def no_node(self, path: str, documents: str) -> str:
        """Why there is no node at ``path``, in a user's words (what the errors of opening say):
        that ``path`` has none of ``documents`` (e.g. ``"zarr.json, .zarray or .zgroup"``).  A
        store with a place on a file system says whether the place exists or is a file."""
        url = getattr(self, "url", None)   # remote stores: the URL of their root
        if isinstance(url, str):
            return f"'{url.rstrip('/')}/{path}' has no {documents}" if path else f"'{url}' has no {documents}"
        return f"'{path or '/'}' in {self!r} has no {documents}"

    @abstractmethod
    def with_read_only(self, read_only: bool = True) -> Store:
        """A view of the same data, read-only (or writable with ``read_only=False``)."""

    def close(self) -> None:
        """Release resources (nothing to release for local and in-memory stores)."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InMemoryReads:
    """The reading half of a :class:`Store` whose values are buffers in memory, found by one
    lookup: ``_value(key)`` (a bytes-like that slices without copying, e.g. ``bytes`` or a
    ``memoryview``; None when absent) is all a store supplies.  Reads copy from the value
    straight into the caller's buffer, every range of a key with one lookup."""

    def _value(self, key: str) -> Any:  # pragma: no cover - supplied by the store
        raise NotImplementedError

    def get(self, key: str, byte_range: ByteRequest = None) -> Any:
        v = self._value(key)
        if v is None or byte_range is None:
            return v
        a, b = resolve_range(byte_range, len(v))
        return v[a:b]

    def get_into(self, key: str, buffer: Any, offset: int = 0) -> int | None:
        offset = check_offset(offset)
        mv = writable_view(buffer)
        v = self._value(key)
        if v is None:
            return None
        src = memoryview(v)[offset: offset + len(mv)]
        mv[: len(src)] = src
        return len(src)

    def read_into(self, key: str, buffer: Any) -> int | None:
        mv = writable_view(buffer)
        v = self._value(key)
        if v is None:
            return None
        if len(v) > len(mv):
            return -len(v)
        mv[: len(v)] = v
        return len(v)

    def get_ranges_into(self, key: str, ranges: Any, buffer: Any) -> list[int] | None:
        """One lookup for all the ranges (see :meth:`Store.get_ranges_into`)."""
        mv = writable_view(buffer)
        ranges = check_ranges(ranges, len(mv))
        v = self._value(key)
        if v is None:
            return None
        src = memoryview(v)
        counts: list[int] = []
        pos = 0
        for start, end in ranges:
            part = src[start:end]
            mv[pos: pos + len(part)] = part
            counts.append(len(part))
            pos += end - start
        return counts

    def getsize(self, key: str) -> int:
        v = self._value(key)
        if v is None:
            raise StoreError(f"key {key!r} not found in {self!r}")
        return len(v)


def _group_partial_values(key_start_values: Iterable[tuple[str, int, Any]]) -> dict[str, list[tuple[int, bytes]]]:
    """Validate ``(key, start, bytes)`` triples and group them by key, keeping their order."""
    by_key: dict[str, list[tuple[int, bytes]]] = {}
    for key, start, value in key_start_values:
        start = _index(start, "start")
        if start < 0:
            raise ValueError(f"negative start {start} for key {key!r}")
        by_key.setdefault(check_key(key), []).append((start, as_bytes(value)))
    return by_key


def _apply_parts(current: bytes | None, parts: list[tuple[int, bytes]]) -> bytes:
    cur = bytearray(current or b"")
    for start, data in parts:
        end = start + len(data)
        if end > len(cur):
            cur.extend(bytes(end - len(cur)))
        cur[start:end] = data
    return bytes(cur)
