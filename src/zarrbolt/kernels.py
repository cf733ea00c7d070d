"""Public Python face of zarrbolt's C kernels.

Every function here makes one call into C with the GIL released, so several Python threads can
run them in parallel.  See ``docs/kernels.md`` for the algorithms and measured speeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._ext import _kernels

if TYPE_CHECKING:
    import numpy as np

    # Any object exporting a C-contiguous buffer (collections.abc.Buffer on Python >= 3.12).
    Buffer = bytes | bytearray | memoryview | np.ndarray

__all__ = ["crc32c", "crc32c_implementations", "strided_copy", "transpose"]


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


def strided_copy(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[...] = src`` as a raw element copy, for any strides (negative included).

    ``dst`` and ``src`` must be numpy arrays of the same shape and the same itemsize (the
    elements are copied bit for bit, so e.g. ``float32`` into ``int32`` reinterprets the bits;
    no casting is done), ``dst`` must be writable, and neither may hold Python objects.
    When the two arrays may share memory (``numpy.may_share_memory``), ``src`` is first copied
    to a temporary, so overlapping views give the same result as ``dst[...] = src.copy()``.

    Raises ``TypeError`` (not arrays, different itemsizes, object dtypes) or ``ValueError``
    (different shapes, read-only ``dst``).
    """
    _kernels.strided_copy(dst, src)


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
