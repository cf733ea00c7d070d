"""Downsampling by 2 for image pyramids: the Python face of the C kernels (csrc/downsample.c).

``downsample(block, halve, method)`` halves ``block`` along the axes flagged in ``halve``
(``ceil(n / 2)`` elements remain); every output element reduces its 2 x 2 x ... window.  On an
odd axis the last window is partial (it holds the one remaining element: no padding, no edge
replication), so a mean never mixes in values that are not in the image.

Methods: ``mean`` (integers: the exact mean rounded half to even, accumulated wide; floats:
summed in double), ``nearest`` (the window's first element, any dtype), ``min``, ``max`` (NaN
propagates) and ``mode`` (the most frequent value, ties to the smallest; integers, for labels).
``float16`` runs through ``float32``; ``bool`` through ``uint8`` (not for ``mean``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import CodecError

METHODS = ("mean", "nearest", "min", "max", "mode")


def _ext() -> Any:
    from .._ext import _downsample

    return _downsample


def default_threads() -> int:
    """Threads the kernels use by default: zarrbolt's ``threads`` setting
    (``zarrbolt.config.set(threads=N)``, ``ZARRBOLT_NUM_THREADS``; the processors by default)."""
    from .. import config

    return max(1, int(config.get("threads")))


def check_method(method: str, dtype: Any) -> None:
    """Raise ValueError for an unknown method, CodecError when ``method`` cannot reduce ``dtype``."""
    if method not in METHODS:
        raise ValueError(f"unknown downsampling method {method!r} (choose from {', '.join(METHODS)})")
    dt = np.dtype(dtype)
    if not _ext().supported(_work_dtype(dt, method), method):
        raise CodecError(f"downsampling method {method!r} does not support data type {dt} "
                         f"({'nearest, min, max or mode' if dt.kind in 'iub' else 'nearest, mean, min or max'} do)")


def _work_dtype(dt: np.dtype, method: str) -> np.dtype:
    if dt == np.float16 and method != "nearest":
        return np.dtype(np.float32)
    if dt == np.bool_ and method != "nearest":
        return np.dtype(np.uint8) if method != "mean" else dt
    return dt


def downsample(block: Any, halve: Sequence[bool], method: str = "mean", *, threads: int | None = None) -> np.ndarray:
    """``block`` (array-like) halved along the axes flagged in ``halve`` with ``method``, in C
    with the GIL released on up to ``threads`` threads (default: zarrbolt's ``threads`` setting)."""
    arr = np.asarray(block)
    check_method(method, arr.dtype)
    work = _work_dtype(arr.dtype, method)
    nthreads = default_threads() if threads is None else int(threads)
    if work != arr.dtype:
        src = arr.view(work) if arr.dtype == np.bool_ else arr.astype(work)
        res: np.ndarray = _ext().downsample2(src, list(halve), method, nthreads)
        return res.view(arr.dtype) if arr.dtype == np.bool_ else res.astype(arr.dtype)
    out: np.ndarray = _ext().downsample2(arr, list(halve), method, nthreads)
    return out


def output_shape(shape: Sequence[int], halve: Sequence[bool]) -> tuple[int, ...]:
    """The shape :func:`downsample` gives for a block of ``shape``."""
    return tuple((int(n) + 1) // 2 if h else int(n) for n, h in zip(shape, halve))
