"""Public Python face of zarrbolt's C kernels.

Every function here makes one call into C with the GIL released, so several Python threads can
run them in parallel.  See ``docs/kernels.md`` for the algorithms and measured speeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._ext import _kernels

if TYPE_CHECKING:
    import numpy as np

    # Any object exporting a C-contiguous buffer (collections.abc.Buffer on Python >= 3.12).
    Buffer = bytes | bytearray | memoryview | np.ndarray

__all__ = [
    "SHARD_INDEX_EMPTY",
    "coalesce_ranges",
    "crc32c",
    "crc32c_implementations",
    "parse_shard_index",
    "shard_windows",
    "strided_copy",
    "transpose",
]


def crc32c(data: Buffer, value: int = 0, *, impl: str | None = None) -> int:
    """CRC-32C (Castagnoli) of the bytes of ``data``, continuing from ``value``.

    The value is the one of the Zarr v3 ``crc32c`` codec and of the ``crc32c`` /
    ``google-crc32c`` packages (``crc32c(b"123456789") == 0xE3069283``).  ``data`` is any
    C-contiguous buffer (bytes, bytearray, memoryview, numpy array); its raw bytes are used.
    Continuation: ``crc32c(a + b) == crc32c(b, value=crc32c(a))``.

    ``impl`` forces one implementation (a name from :func:`crc32c_implementations`, or
    ``"auto"``); by default the fastest one available on this CPU is used.

    Raises ``TypeError`` for objects without the buffer protocol (or ``str``), ``ValueError``
    for non-contiguous buffers, a ``value`` outside ``[0, 2**32)``, or an unknown or unavailable
    ``impl``.
    """
    return _kernels.crc32c(data, value, impl=impl)


def crc32c_implementations() -> list[str]:
    """Names of the CRC-32C implementations usable on this CPU; the dispatched one comes first.

    Possible names: ``"sse42_pclmul"``, ``"sse42"`` (x86-64), ``"armv8"`` (aarch64),
    ``"portable"`` (always available).
    """
    return _kernels.crc32c_implementations()


def strided_copy(dst: np.ndarray, src: np.ndarray, *, stream: bool = False, src_order: bool = False) -> None:
    """``dst[...] = src`` as a raw element copy, for any strides (negative included).

    ``dst`` and ``src`` must be numpy arrays of the same shape and the same itemsize (the
    elements are copied bit for bit, so e.g. ``float32`` into ``int32`` reinterprets the bits;
    no casting is done), ``dst`` must be writable, and neither may hold Python objects.
    When the two arrays may share memory (``numpy.may_share_memory``), ``src`` is first copied
    to a temporary, so overlapping views give the same result as ``dst[...] = src.copy()``.

    Raises ``TypeError`` (not arrays, different itemsizes, object dtypes) or ``ValueError``
    (different shapes, read-only ``dst``).

    ``stream=True`` writes contiguous destination rows of 64 bytes or more with non-temporal
    stores (x86): faster for destinations much larger than the CPU caches that are not read
    again right away; the result is the same.  ``src_order=True`` walks ``src`` in memory order
    instead of ``dst``: faster for gathers out of a large strided source (say a row of chunks
    out of a big array into one buffer per chunk); the result is the same.
    """
    _kernels.strided_copy(dst, src, stream, src_order)


def transpose(src: np.ndarray, order: Sequence[int], out: np.ndarray | None = None) -> np.ndarray:
    """A C-contiguous copy of ``src.transpose(order)``, as ``numpy.ascontiguousarray`` gives.

    ``order`` must be a permutation of ``range(src.ndim)``.  ``out``, if given, must be a
    writable C-contiguous array of shape ``src.transpose(order).shape`` and dtype ``src.dtype``;
    it is filled and returned.  Transposes use a cache-blocked tiled kernel several times faster
    than numpy's copy.

    Raises ``TypeError`` (``src``/``out`` not arrays, non-int entries in ``order``, wrong
    ``out`` dtype, object dtypes) or ``ValueError`` (``order`` not a permutation, wrong ``out``
    shape, ``out`` not C-contiguous or read-only).
    """
    return _kernels.transpose(src, order, out)


SHARD_INDEX_EMPTY = 2**64 - 1


def parse_shard_index(
    index: Buffer,
    chunks_per_shard: Sequence[int],
    *,
    shard_nbytes: int,
    index_location: str = "end",
    checksum: bool = True,
    allow_overlap: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Decode and validate the index of a ``sharding_indexed`` shard.

    ``index`` holds the encoded index as the recommended index codecs ``[bytes(little), crc32c]``
    write it (``checksum=False`` for ``[bytes(little)]`` alone): one little-endian uint64
    ``(offset, nbytes)`` pair per inner chunk in C order, then the CRC-32C.  ``shard_nbytes`` is
    the size of the whole shard, index included; every entry must lie inside the shard and outside
    the index.  Returns ``(offsets, nbytes)``, two uint64 arrays of shape ``chunks_per_shard``;
    empty inner chunks hold :data:`SHARD_INDEX_EMPTY` in both.

    Raises ``ChecksumError`` on a CRC mismatch and ``CorruptChunkError`` on a wrong index size,
    an entry that overflows, points outside the shard or into the index, or is half empty, and,
    with ``allow_overlap=False``, on two entries sharing bytes (valid per the spec: a writer may
    store identical inner chunks once).
    """
    import numpy as np

    from ._ext import _shard
    from .errors import CorruptChunkError

    shape = tuple(int(c) for c in chunks_per_shard)
    if any(c < 0 for c in shape):
        raise ValueError(f"chunks_per_shard must not be negative: {shape}")
    n = 1
    for c in shape:
        n *= c
    index_nbytes = 16 * n + (4 if checksum else 0)
    if shard_nbytes < index_nbytes:
        raise CorruptChunkError(f"shard of {shard_nbytes} bytes is smaller than its {index_nbytes}-byte index")
    if index_location == "end":
        begin, end = 0, shard_nbytes - index_nbytes
    elif index_location == "start":
        begin, end = index_nbytes, shard_nbytes
    else:
        raise ValueError(f"index_location must be 'start' or 'end', got {index_location!r}")
    pairs = _shard.parse_index(index, n, checksum, begin, end)
    if not allow_overlap:
        hit = _shard.find_overlap(pairs)
        if hit is not None:
            raise CorruptChunkError(f"shard index entries {hit[0]} and {hit[1]} overlap")
    pairs = pairs.reshape(shape + (2,))
    return np.ascontiguousarray(pairs[..., 0]), np.ascontiguousarray(pairs[..., 1])


def coalesce_ranges(
    offsets: np.ndarray, nbytes: np.ndarray, wanted: Sequence[int] | np.ndarray, *, max_gap: int = 0, max_read: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Plan the reads for the ``wanted`` inner chunks (flat C-order entry numbers) of a shard.

    Byte ranges closer than ``max_gap`` bytes are merged into one read, as long as the read stays
    within ``max_read`` bytes (0: no limit; one entry larger than that is read alone).  Returns ``(order,
    read_of, begins, ends)``: the non-empty wanted entries sorted by offset, the read each one
    belongs to, and the ``[begin, end)`` byte range of every read."""
    import numpy as np

    from ._ext import _shard

    pairs = np.stack([np.asarray(offsets, dtype=np.uint64).reshape(-1), np.asarray(nbytes, dtype=np.uint64).reshape(-1)], axis=1)
    return _shard.coalesce(pairs, np.asarray(wanted, dtype=np.int64), int(max_gap), int(max_read))


def shard_windows(
    offsets: np.ndarray, nbytes: np.ndarray, entries: Sequence[int], arena_cap: int, max_gap: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The I/O plan of a sharded read (``zb_shard_windows``, the one local shard reads use).

    ``offsets`` / ``nbytes``: the shard's validated index (one pair per inner chunk, offset
    2^64-1 for an empty one); ``entries``: the wanted inner chunks (flat C-order entry numbers,
    each at most once) in task order.  They are cut into windows: a window is a run of
    consecutive entries whose inner chunks add up to at most ``arena_cap`` bytes (empty ones
    count 0; the first one alone may be more).  A window's non-empty entries are read in file
    order (equal offsets in task order), neighbours at most ``max_gap`` bytes apart coalesced
    into one read of at most ``arena_cap`` bytes (0: no limit; an entry larger than that is read
    alone).  A window's reads may together exceed ``arena_cap`` by their gaps.

    Returns ``(window_ends, order, read_of, begins, ends)``: ``window_ends[w]`` is one past the
    last position (in ``entries``) of window w; ``order`` the positions in ``entries`` of the
    non-empty entries, window after window and in file order within each; ``read_of`` the read
    each belongs to (numbered across all windows); ``begins`` / ``ends`` the ``[begin, end)``
    byte range of every read.  Raises ``IndexError`` for an entry outside the index."""
    from ._ext import _shard

    return _shard.shard_windows(offsets, nbytes, entries, int(arena_cap), int(max_gap))


# ---------------------------------------------------------------------------------------------
# cast_value / scale_offset (../shared/spec/v3/codecs/scale_offset-cast_value.md)

def cast_value(
    src: np.ndarray,
    dtype: Any,
    *,
    rounding: str = "nearest-even",
    out_of_range: str | None = None,
    scalar_map: Sequence[tuple[Any, Any]] | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Convert the values of ``src`` to ``dtype`` exactly as the ``cast_value`` codec defines.

    Per element: a ``scalar_map`` entry ``(input, output)`` whose input equals the value (NaN
    matches any NaN) gives the output; otherwise a value the target represents exactly is kept;
    otherwise it is rounded with ``rounding`` ("nearest-even", "towards-zero", "towards-positive",
    "towards-negative", "nearest-away") and, if still out of the target's range, ``out_of_range``
    decides: None / "error" raise ``CodecError`` (naming the element), "clamp" saturates (±inf
    clamp too; for float targets to ±max), "wrap" (integer targets only) keeps the low bits.
    NaN or infinity reaching an integer type raises unless mapped (infinities clamp under
    "clamp").  Between IEEE types NaN propagates and the sign of zero is kept.  Results are
    correctly rounded for every input, 64-bit integers included (no double rounding).

    Types: bool, int8..int64, uint8..uint64, float16/32/64."""
    from ._ext import _numeric

    return _numeric.cast_value(src, dtype, rounding, out_of_range, scalar_map, out)


def scale_offset_encode(src: np.ndarray, offset: Any, scale: Any, out: np.ndarray | None = None) -> np.ndarray:
    """``(src - offset) * scale`` in ``src``'s own dtype.  Integer arithmetic is exact and any
    intermediate outside the dtype raises ``CodecError``; floats follow IEEE arithmetic of that
    precision, and a finite value overflowing to infinity raises ``CodecError``."""
    from ._ext import _numeric

    return _numeric.scale_offset(src, offset, scale, False, out)


def scale_offset_decode(src: np.ndarray, offset: Any, scale: Any, out: np.ndarray | None = None) -> np.ndarray:
    """``src / scale + offset`` in ``src``'s own dtype (integer division must be exact)."""
    from ._ext import _numeric

    return _numeric.scale_offset(src, offset, scale, True, out)


def scale_offset_cast(
    src: np.ndarray, offset: Any, scale: Any, dtype: Any, *, rounding: str = "nearest-even",
    out_of_range: str | None = None, scalar_map: Sequence[tuple[Any, Any]] | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Fused ``cast_value(scale_offset_encode(src, offset, scale), dtype, ...)`` in one pass."""
    from ._ext import _numeric

    return _numeric.scale_offset_cast(src, offset, scale, dtype, rounding, out_of_range, scalar_map, out)


def cast_scale_offset_decode(
    src: np.ndarray, dtype: Any, offset: Any, scale: Any, *, rounding: str = "nearest-even",
    out_of_range: str | None = None, scalar_map: Sequence[tuple[Any, Any]] | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Fused ``scale_offset_decode(cast_value(src, dtype, ...), offset, scale)`` in one pass."""
    from ._ext import _numeric

    return _numeric.cast_scale_offset_decode(src, dtype, offset, scale, rounding, out_of_range, scalar_map, out)
